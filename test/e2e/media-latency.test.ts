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
// window: 50-90 ms measured. The median must stay near that; single switches get room for a
// loaded machine. Audio piling up in the jitter buffer (issue 4's hold lag) was seconds.
const MEDIAN_SWITCH_MS = 150;
const MAX_SWITCH_MS = 300;
// Chromium's jitter buffer target after the server's event loop stalled 150 ms: 40-60 ms when
// the leg drops the frames it could only send late, 145-160 ms when it sent them in a burst.
const TARGET_AFTER_STALL_MS = 100;

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
function between(a: JitterSums, b: JitterSums): { meanMs: number; targetMs: number } {
  const n = b.emitted - a.emitted;
  return { meanMs: ((b.delay - a.delay) / n) * 1000, targetMs: ((b.target - a.target) / n) * 1000 };
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
  it("is heard within about 100 ms of a source switch, through a jitter buffer of a few frames", async () => {
    const before = await jitter();
    const lags = await switchLags(4);
    const buffer = between(before, await jitter());
    console.log(`switch heard after ${lags.map((l) => l.toFixed(0)).join(", ")} ms; jitter buffer ${buffer.meanMs.toFixed(0)} ms mean, target ${buffer.targetMs.toFixed(0)} ms`);
    expect(median(lags)).toBeLessThan(MEDIAN_SWITCH_MS);
    expect(Math.max(...lags)).toBeLessThan(MAX_SWITCH_MS);
  });

  it("stays that quick after the server's event loop stalls: late frames are dropped, not burst", async () => {
    const skippedBefore = leg.stats().staleFramesSkipped;
    // A stall the clock catches up from (under its 10-tick skip-ahead limit).
    const end = performance.now() + 150;
    while (performance.now() < end);
    await sleep(300);
    const before = await jitter();
    const lags = await switchLags(3);
    const buffer = between(before, await jitter());
    console.log(`after a 150 ms stall: switch heard after ${lags.map((l) => l.toFixed(0)).join(", ")} ms; jitter buffer ${buffer.meanMs.toFixed(0)} ms mean, target ${buffer.targetMs.toFixed(0)} ms`);
    expect(buffer.targetMs, "Chromium's jitter buffer target after the stall").toBeLessThan(TARGET_AFTER_STALL_MS);
    expect(median(lags)).toBeLessThan(MEDIAN_SWITCH_MS);
    expect(leg.stats().staleFramesSkipped - skippedBefore, "frames the leg did not send late").toBeGreaterThanOrEqual(3);
  });
});
