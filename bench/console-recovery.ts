// The console after a server restart (issue 13): from the phone registered again to the console's
// calls reconciled with the server's (the card of the call the restart ended gone). Serve mode in
// a child process on a fixed port and data directory, the built console (out/renderer: run
// `npm run build` first) in Chromium signed in as agent1. Each round: a simulated caller reaches
// agent1, who accepts; the server is stopped and started again; the bench presses "Reconnect now"
// (the back-off wait is not what is measured); the page stamps, on its own clock, the moment the
// phone shows Registered and the moment the last call card leaves. BENCH_RESTARTS (default 5).
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser } from "../test/helpers/browser.js";
import { openConsole, signIn, waitRegistered } from "../test/helpers/console-page.js";
import { poll } from "../test/helpers/poll.js";
import { demoGrant, serve, type Served } from "../test/helpers/serve.js";
import { percentile, report } from "./report.js";

const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 5);

// Page-side (as text: no DOM types here): the last moment the phone became Registered, and the
// last moment the page went from some call card to none.
const WATCH = `(() => {
  const stamps = (globalThis.__recovery = { registeredAt: 0, cardsGoneAt: 0 });
  let registered = false;
  let cards = 0;
  new MutationObserver(() => {
    const at = Date.now();
    const now = document.querySelector('[data-testid="registration-state"]')?.textContent === "Registration: Registered";
    if (now && !registered) stamps.registeredAt = at;
    registered = now;
    const count = document.querySelectorAll(".active-call").length;
    if (count === 0 && cards > 0) stamps.cardsGoneAt = at;
    cards = count;
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
})()`;

const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-console-recovery-"));
let server: Served = await serve({ args: ["--data-dir", dataDir] });
const port = new URL(server.url).port;
const browser = await launchBrowser();
try {
  const { page } = await openConsole(browser.browser, server.url);
  await signIn(page, "agent1");
  await waitRegistered(page);
  await page.evaluate(WATCH);
  const delays: number[] = [];
  const registrations: number[] = [];
  for (let i = 0; i < RESTARTS; i++) {
    const admin = await demoGrant(server.url);
    const res = await fetch(`${server.url}/v2/accounts/${admin.accountId}/sim/calls`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Auth-Token": admin.token },
      body: JSON.stringify({ data: { to: "1002", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "silence_stream://" } }),
    });
    if (res.status !== 201) throw new Error(`sim call refused: ${res.status}`);
    await page.getByRole("region", { name: "Incoming call" }).getByRole("button", { name: "Accept" }).click();
    await page.getByRole("region", { name: "Call with Casey Customer" }).getByText("Connected").waitFor();

    await server.stop();
    const restartedAt = Date.now();
    server = await serve({ args: ["--port", port, "--data-dir", dataDir] });
    const reconnect = page.getByRole("button", { name: "Reconnect now" });
    if (await reconnect.isVisible()) await reconnect.click();
    await waitRegistered(page, 45_000);
    await page.locator(".active-call").waitFor({ state: "detached", timeout: 15_000 });
    const stamps = await poll("the page's stamps", async () => {
      const s = (await page.evaluate("globalThis.__recovery")) as { registeredAt: number; cardsGoneAt: number };
      return s.cardsGoneAt >= restartedAt && s.registeredAt >= restartedAt ? s : undefined;
    });
    delays.push(stamps.cardsGoneAt - stamps.registeredAt);
    registrations.push(stamps.registeredAt - restartedAt);
  }
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  report(`console recovery: ${RESTARTS} server restarts mid-call, Chromium on serve mode, load ${loadavg()[0].toFixed(1)}`, [
    ["registered again → calls reconciled, p50", ms(percentile(delays, 50))],
    ["registered again → calls reconciled, p95", ms(percentile(delays, 95))],
    ["registered again → calls reconciled, min / max", `${ms(Math.min(...delays))} / ${ms(Math.max(...delays))}`],
    ["server restarted → registered again (Reconnect now pressed), p50", ms(percentile(registrations, 50))],
  ]);
} finally {
  await browser.close();
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
