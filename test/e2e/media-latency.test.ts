// How late a server leg's audio is heard in Chromium: the server switches what a leg plays
// (silence to a tone and back) when the page asks, and the page times, polling its analyser
// every 5 ms, when the change reaches it; Chromium's jitter buffer figures come from getStats().
// The far end is a bare RTCPeerConnection in the phone lab page: no SIP, no softphone, only the
// media path (werift leg -> UDP -> Chromium's jitter buffer -> WebAudio).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { MediaEngine, silence, type AudioSource, type WebRtcLeg } from "../../server/media/index.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { phoneLabDir } from "../helpers/phone-page.js";

// From the page asking for a switch to the change read in its analyser: the binding's round
// trip (~5 ms), a 20-60 ms jitter buffer, the WebAudio path (~10 ms) and the 10.7 ms analysis
// window: 50-90 ms measured on a quiet machine (printed below; bench/hold-switch.ts measures the
// same switch, a server leg's source to Chromium's ear, against a direct call). What this test
// holds is that no audio piles up anywhere (issue 4's hold lag was seconds, growing with each
// hold). Until session 26 that was a switch heard under a second; it is now two states that hold
// whatever the machine's load:
// - Chromium's side: over the switches, the jitter buffer's samples waited at most BACKLOG_RATIO
//   times its own target (as test/e2e/call does: a backlog is the buffer holding far more than it
//   aims to, and its target follows the arrival jitter a busy machine makes).
// - The server's side: the leg sent one frame per tick of its clock, every tick's frame sent or
//   counted as not sent (too late to be worth hearing, staleFramesSkipped), none held back to go
//   later (the tick reads its source and sends at once: no queue between the two). A queue that
//   holds frames, a FIFO that never drops, sends fewer than the ticks while it grows.
const BACKLOG_RATIO = 3;
interface JitterSums {
  delay: number;
  target: number;
  emitted: number;
}
interface LabWindow {
  lab: {
    bare: {
      answer(offer: string): Promise<string>;
      playing(): boolean;
      switchLags(times: number): Promise<number[]>;
      jitter(): Promise<JitterSums>;
    };
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? Infinity;

let engine: MediaEngine;
let leg: WebRtcLeg;
let tone: AudioSource;
let browser: LaunchedBrowser;
let page: Page;

const switchLags = (times: number) => page.evaluate((n) => (globalThis as unknown as LabWindow).lab.bare.switchLags(n), times);
const jitter = () => page.evaluate(() => (globalThis as unknown as LabWindow).lab.bare.jitter());

/** Mean buffer delay and target (ms) over the samples played between two readings. */
function between(a: JitterSums, b: JitterSums): { emitted: number; meanMs: number; targetMs: number } {
  const n = b.emitted - a.emitted;
  return { emitted: n, meanMs: ((b.delay - a.delay) / n) * 1000, targetMs: ((b.target - a.target) / n) * 1000 };
}

/** The leg's frames sent and not sent (late), and its clock's ticks: read together, in one turn. */
function sendCounts(): { sent: number; stale: number; ticks: number } {
  const stats = leg.stats();
  return { sent: stats.packetsSent, stale: stats.staleFramesSkipped, ticks: engine.clock.stats().ticks };
}

/** Both states of the header, over a window of switches. */
function expectNoBacklog(when: string, buffer: ReturnType<typeof between>, from: ReturnType<typeof sendCounts>, lags: number[]): void {
  const to = sendCounts();
  // Heard at all: the page gives up on a switch after 10 s (Infinity).
  expect(lags.every(Number.isFinite), `every switch heard ${when}: ${lags.join(", ")}`).toBe(true);
  expect(buffer.emitted, `Chromium played the leg's audio out ${when}`).toBeGreaterThan(0);
  expect(buffer.meanMs, `Chromium's jitter buffer holds no backlog ${when} (${JSON.stringify(buffer)})`).toBeLessThanOrEqual(BACKLOG_RATIO * buffer.targetMs);
  const counts = { sent: to.sent - from.sent, stale: to.stale - from.stale, ticks: to.ticks - from.ticks };
  expect(counts.sent + counts.stale, `the leg sent each tick's frame or dropped it, none held ${when} (${JSON.stringify(counts)})`).toBe(counts.ticks);
}

beforeAll(async () => {
  engine = new MediaEngine();
  leg = engine.createLeg();
  tone = await engine.player("tone_stream://1000");
  browser = await launchBrowser();
  page = await browser.browser.newPage();
  await page.exposeFunction("switchTo", (what: string) => leg.play(what === "tone" ? tone : silence));
  // The lab's script on a blank page: a bare peer connection needs no server origin.
  await page.addScriptTag({ content: await readFile(join(await phoneLabDir(), "phone-lab.js"), "utf8") });
  const answer = await page.evaluate((offer) => (globalThis as unknown as LabWindow).lab.bare.answer(offer), await leg.createOffer());
  await leg.acceptAnswer(answer);
  for (let i = 0; leg.state !== "connected" && i < 500; i++) await sleep(10);
  await page.waitForFunction(() => (globalThis as unknown as LabWindow).lab.bare.playing());
  await sleep(1000);
});

afterAll(async () => {
  await browser?.close();
  await engine?.close();
});

describe("a server leg's audio in Chromium", () => {
  it("is heard without a backlog after a source switch (the lags printed: about 70 ms on a quiet machine)", async () => {
    const counts = sendCounts();
    const before = await jitter();
    const lags = await switchLags(4);
    const buffer = between(before, await jitter());
    console.log(`switch heard after ${lags.map((l) => l.toFixed(0)).join(", ")} ms (median ${median(lags).toFixed(0)}); jitter buffer ${buffer.meanMs.toFixed(0)} ms mean, target ${buffer.targetMs.toFixed(0)} ms`);
    expectNoBacklog("over the switches", buffer, counts, lags);
  });

  it("has no backlog after the server's event loop stalls: late frames are dropped, not burst", async () => {
    const skippedBefore = leg.stats().staleFramesSkipped;
    const clockSkippedBefore = engine.clock.stats().skipped;
    // A stall the clock catches up from (under its 10-tick skip-ahead limit).
    const end = performance.now() + 150;
    while (performance.now() < end);
    await sleep(300);
    const counts = sendCounts();
    const before = await jitter();
    const lags = await switchLags(3);
    const buffer = between(before, await jitter());
    console.log(`after a 150 ms stall: switch heard after ${lags.map((l) => l.toFixed(0)).join(", ")} ms (median ${median(lags).toFixed(0)}); jitter buffer ${buffer.meanMs.toFixed(0)} ms mean, target ${buffer.targetMs.toFixed(0)} ms`);
    // The frames the stall made late were not sent (a burst of them would have taught Chromium's
    // jitter buffer to wait ~150 ms for every frame after; dropped, its target stays at 40-60 ms
    // on a quiet machine, printed above), and no backlog followed. On a quiet machine the leg
    // drops them (stale frames); on a loaded one the process can stay off the CPU past the clock's
    // 200 ms skip-ahead limit, and the clock skips those ticks itself (fresh51: 0 stale frames):
    // either way they are not sent.
    const notSent = leg.stats().staleFramesSkipped - skippedBefore + (engine.clock.stats().skipped - clockSkippedBefore);
    expect(notSent, "frames the leg did not send late, or ticks the clock skipped").toBeGreaterThanOrEqual(3);
    expectNoBacklog("after the stall", buffer, counts, lags);
  });
});
