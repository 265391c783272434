// Call setup (issue 4): how long a Chromium agent takes to answer the server's INVITE. An
// in-process server (serve mode's startServer, temp data dir, demo account, the phone lab as
// renderer) and two sip.js softphones in one Chromium: agent1 dials agent2's extension (1003),
// agent2's lab auto-answers. Timed on the server from the outbound INVITE (its channel is created
// as the INVITE leaves) to the 200 OK, and on to the server leg's ICE+DTLS being up (audio can
// flow). BENCH_CALLS sets the number of calls (default 30). Until the simulated caller exists,
// the calls come from the second softphone; only the server → agent leg is timed.
import { loadavg } from "node:os";
import type { Page } from "playwright-core";
import type { Channel } from "../server/calls/index.js";
import { DEMO_ACCOUNT_NAME } from "../server/demo.js";
import { launchBrowser } from "../test/helpers/browser.js";
import { openPhoneLab, phoneLabDir } from "../test/helpers/phone-page.js";
import { poll } from "../test/helpers/poll.js";
import { startBenchServer } from "./lib/server.js";
import { percentile, report } from "./report.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 30);
const REALM = "demo.switchboard.local";

interface LabWindow {
  lab: {
    start(o: unknown): Promise<void>;
    calls(): { id: string; state: string }[];
    phone(): { call(t: string): Promise<string>; hangup(id: string): Promise<void> };
  };
}

interface Timing {
  /** ms from the INVITE leaving to the 200 OK arriving. */
  answered?: number;
  /** ms from the INVITE to the server leg's ICE and DTLS being up. */
  connected?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const until = async (what: string, check: () => Promise<boolean> | boolean): Promise<void> => {
  await poll(what, async () => ((await check()) ? true : undefined), 15_000, 20);
};

const bench = await startBenchServer("call-setup", { rendererDir: await phoneLabDir() });
const { server } = bench;
const browser = await launchBrowser();
try {
  const account = (await server.store.global("accounts")).all().find((a) => a.data.name === DEMO_ACCOUNT_NAME);
  if (!account) throw new Error("no demo account");
  const devices = (await server.store.account(account.id, "devices")).all();
  const phone = async (username: string, autoAnswer: boolean): Promise<Page> => {
    const sip = devices.map((d) => d.data.sip as { username?: string; password?: string }).find((s) => s.username === username);
    if (!sip) throw new Error(`no device for ${username}`);
    const page = await openPhoneLab(browser.browser, server.url);
    await page.evaluate((o) => (globalThis as unknown as LabWindow).lab.start(o), {
      server: `${server.url.replace(/^http/, "ws")}/sip`,
      username: sip.username,
      password: sip.password,
      realm: REALM,
      autoAnswer,
    });
    return page;
  };
  const caller = await phone("agent1", false);
  const agent = await phone("agent2", true);

  // The outbound leg is created as its INVITE is sent; its signalling reports the 200 OK.
  const timings: Timing[] = [];
  server.calls.channels.on("added", (channel: Channel) => {
    if (channel.sip.direction !== "outbound") return;
    const start = performance.now();
    const timing: Timing = {};
    timings.push(timing);
    channel.sip.call.once("answered", () => (timing.answered = performance.now() - start));
    channel.media.on("state", (change) => {
      if (change.to === "connected") timing.connected = performance.now() - start;
    });
  });

  const callerCalls = () => caller.evaluate(() => (globalThis as unknown as LabWindow).lab.calls());
  const agentCalls = () => agent.evaluate(() => (globalThis as unknown as LabWindow).lab.calls());
  for (let i = 0; i < CALLS; i++) {
    const id = await caller.evaluate(() => (globalThis as unknown as LabWindow).lab.phone().call("1003"));
    await until("the call to be up", async () => (await callerCalls()).some((c) => c.id === id && c.state === "active"));
    await until("the agent leg's media", () => timings[i]?.connected !== undefined);
    await sleep(200);
    await caller.evaluate((callId) => (globalThis as unknown as LabWindow).lab.phone().hangup(callId), id);
    await until("the call to end", async () => (await agentCalls()).length === 0 && (await callerCalls()).length === 0 && server.calls.channels.size === 0);
    await sleep(100);
  }

  const answered = timings.map((t) => t.answered ?? Number.NaN);
  const connected = timings.map((t) => t.connected ?? Number.NaN);
  const ms = (v: number) => `${v.toFixed(0)} ms`;
  report(`call-setup: ${timings.length} calls, server → Chromium agent (sip.js, auto-answer), load ${loadavg()[0].toFixed(1)}`, [
    ["INVITE → 200 OK, median", ms(percentile(answered, 50))],
    ["INVITE → 200 OK, p95", ms(percentile(answered, 95))],
    ["INVITE → 200 OK, min / max", `${ms(Math.min(...answered))} / ${ms(Math.max(...answered))}`],
    ["INVITE → media up (ICE+DTLS), median", ms(percentile(connected, 50))],
    ["INVITE → media up (ICE+DTLS), p95", ms(percentile(connected, 95))],
  ]);
} finally {
  await browser.close();
  await bench.close();
}
