// The console (issue 7): how fast an agent sees a call and how fast the console is ready after
// sign-in. An in-process server serving the built console (out/renderer: run `npm run build`
// first) and the console in Chromium, signed in as agent1. Offer → Accept visible: from the server
// creating the outbound leg to agent1's device (its INVITE leaves then) to the Accept button
// appearing in the page (a MutationObserver stamps Date.now(); same machine, same clock); each
// offer is then rejected. Time to interactive: from the Sign in click to the agent view showing the
// phone registered (the console can take calls). BENCH_CALLS (default 30), BENCH_SIGNINS (default 5).
import { loadavg } from "node:os";
import type { Channel } from "../server/calls/index.js";
import { launchBrowser } from "../test/helpers/browser.js";
import { poll } from "../test/helpers/poll.js";
import { CONSOLE_DIR, openConsole, signIn, waitRegistered } from "../test/helpers/console-page.js";
import { benchLogin, startBenchServer } from "./lib/server.js";
import { percentile, report } from "./report.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 30);
const SIGNINS = Number(process.env.BENCH_SIGNINS ?? 5);

// Stamps the moment an Accept button is added to the page (page-side code, as text: no DOM types here).
const WATCH_ACCEPT = `(() => {
  globalThis.__acceptSeen = [];
  new MutationObserver(() => {
    const at = Date.now();
    for (const b of document.querySelectorAll("button")) {
      const callId = b.closest("[data-call-id]")?.dataset.callId;
      if (b.textContent !== "Accept" || !callId || globalThis.__acceptSeen.some((s) => s.callId === callId)) continue;
      globalThis.__acceptSeen.push({ callId, at });
    }
  }).observe(document.body, { childList: true, subtree: true });
})()`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const until = <T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> => poll(what, check, 15_000, 10);

const bench = await startBenchServer("console", { rendererDir: CONSOLE_DIR });
const { server } = bench;
const browser = await launchBrowser();
try {
  const admin = await benchLogin(server.url);
  const { page } = await openConsole(browser.browser, server.url);

  // Time to interactive, over several sign-ins (the first includes loading the page's code).
  const interactive: number[] = [];
  for (let i = 0; i < SIGNINS; i++) {
    const started = Date.now();
    await signIn(page, "agent1");
    await waitRegistered(page);
    interactive.push(Date.now() - started);
    if (i < SIGNINS - 1) {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("heading", { name: "Sign in to Switchboard" }).waitFor();
      await until("the device to unregister", async () => {
        const res = await fetch(`${server.url}/v2/accounts/${admin.accountId}/devices/status`, { headers: { "X-Auth-Token": admin.token } });
        return ((await res.json()) as { data: unknown[] }).data.length === 0 ? true : undefined;
      });
    }
  }

  // The agent's leg: its uuid is the SIP Call-ID the page shows on the offer.
  const offeredAt = new Map<string, number>();
  server.calls.channels.on("added", (channel: Channel) => {
    if (channel.sip.direction === "outbound") offeredAt.set(channel.id, channel.createdAt);
  });
  await page.evaluate(WATCH_ACCEPT);
  const delays: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const res = await fetch(`${server.url}/v2/accounts/${admin.accountId}/sim/calls`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Auth-Token": admin.token },
      body: JSON.stringify({ data: { to: "1002", caller_id_number: "+14155550100", audio: "silence_stream://" } }),
    });
    if (res.status !== 201) throw new Error(`sim call refused: ${res.status}`);
    const seen = await until("the Accept button", async () => {
      const stamps: unknown = await page.evaluate("globalThis.__acceptSeen");
      return Array.isArray(stamps) && stamps.length > i ? (stamps[i] as { callId: string; at: number }) : undefined;
    });
    const offered = await until("the offer leg", () => offeredAt.get(seen.callId));
    delays.push(seen.at - offered);
    await page.getByRole("button", { name: "Reject" }).click();
    await until("the call to end", () => (server.calls.channels.size === 0 ? true : undefined));
    await sleep(100);
  }

  const ms = (v: number) => `${v.toFixed(0)} ms`;
  report(`console: ${CALLS} offers and ${SIGNINS} sign-ins, Chromium on the local server, load ${loadavg()[0].toFixed(1)}`, [
    ["offer → Accept visible, p50", ms(percentile(delays, 50))],
    ["offer → Accept visible, p95", ms(percentile(delays, 95))],
    ["offer → Accept visible, min / max", `${ms(Math.min(...delays))} / ${ms(Math.max(...delays))}`],
    ["sign-in → registered (interactive), first", ms(interactive[0] ?? Number.NaN)],
    ["sign-in → registered (interactive), p50", ms(percentile(interactive, 50))],
    ["sign-in → registered (interactive), max", ms(Math.max(...interactive))],
  ]);
} finally {
  await browser.close();
  await bench.close();
}
