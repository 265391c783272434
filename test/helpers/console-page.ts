// The built console (out/renderer) in Chromium, driven as an agent would: sign in, wait for the
// phone to register, and measure what the agent hears. The page keeps its peer connections in
// reach of the test (an init script, nothing in the console itself), so audio can be analysed.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import type { Browser, Download, Page } from "playwright-core";
import { REPO_ROOT } from "./serve.js";

export const SCREENSHOTS = join(REPO_ROOT, "test-results/screenshots");
export const CONSOLE_DIR = join(REPO_ROOT, "out/renderer");

/** Keeps every RTCPeerConnection the page makes in globalThis.__peerConnections. */
const KEEP_PEER_CONNECTIONS = `(() => {
  const Original = globalThis.RTCPeerConnection;
  const kept = (globalThis.__peerConnections = []);
  globalThis.RTCPeerConnection = class extends Original {
    constructor(...args) { super(...args); kept.push(this); }
  };
})();`;

/**
 * Records each desktop notification the page raises in globalThis.recordedNotifications (the real
 * one is still made, so the page needs the notifications permission): title, body, tag, and
 * whether the page closed it. A string: it runs in the page, whose DOM types this project lacks.
 */
export const RECORD_NOTIFICATIONS = `(() => {
  const recorded = (globalThis.recordedNotifications = []);
  const Real = globalThis.Notification;
  class Recording extends Real {
    constructor(title, options) {
      super(title, options);
      this.record = { title, body: (options && options.body) || "", tag: (options && options.tag) || "", closed: false };
      recorded.push(this.record);
    }
    close() {
      this.record.closed = true;
      super.close();
    }
  }
  Object.defineProperty(globalThis, "Notification", { value: Recording, configurable: true, writable: true });
})();`;

export interface RecordedNotification {
  title: string;
  body: string;
  tag: string;
  closed: boolean;
}

/** What RECORD_NOTIFICATIONS has recorded in the page so far. */
export async function recordedNotifications(page: Page): Promise<RecordedNotification[]> {
  return (await page.evaluate("globalThis.recordedNotifications")) as RecordedNotification[];
}

export interface ConsolePage {
  page: Page;
  errors: string[];
}

export interface OpenConsoleOptions {
  /**
   * Installs Playwright's page clock before the console loads (page.clock.install): its time runs
   * as the wall's until the test moves it on (page.clock.fastForward), with every timer the page
   * sets. For a test that moves the server's clock by the same amount (serve mode's movable
   * clock), so that the page and the server keep agreeing on the time.
   */
  movableClock?: boolean;
}

export async function openConsole(browser: Browser, url: string, options: OpenConsoleOptions = {}): Promise<ConsolePage> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  if (options.movableClock === true) await page.clock.install();
  await page.addInitScript(KEEP_PEER_CONNECTIONS);
  await page.goto(url);
  return { page, errors };
}

export async function signIn(page: Page, username: string, password = "switchboard", account = "demo"): Promise<void> {
  await page.getByLabel("Account name", { exact: true }).fill(account);
  await page.getByLabel("Username", { exact: true }).fill(username);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

export async function waitRegistered(page: Page, timeout = 20_000): Promise<void> {
  await page.getByTestId("registration-state").filter({ hasText: /^Registration: Registered$/ }).waitFor({ timeout });
}

/**
 * The level (dB) of `frequency` in what the page receives on its newest live call, averaged over
 * `ms`, as the phone lab measures it (the console's own player keeps the stream flowing).
 */
// Page-side code as text: the node project has no DOM types, and this runs only in Chromium.
const LEVEL_IN_PAGE = `async (f, duration) => {
  const pc = [...globalThis.__peerConnections].reverse().find((p) => p.connectionState === "connected" || p.iceConnectionState === "connected");
  const track = pc && pc.getReceivers().map((r) => r.track).find((t) => t.kind === "audio");
  if (!track) throw new Error("no call with audio in the page");
  const context = new AudioContext();
  await context.resume();
  const source = context.createMediaStreamSource(new MediaStream([track]));
  const analyser = context.createAnalyser();
  analyser.fftSize = 4096;
  source.connect(analyser);
  const bins = new Float32Array(analyser.frequencyBinCount);
  const bin = Math.round((f / context.sampleRate) * analyser.fftSize);
  const floor = -200;
  // Wait for the first audio (a busy machine may take seconds to start a call's media: how
  // soon is bench/'s figure, not this check's) before averaging the level.
  const started = performance.now();
  while (performance.now() - started < 20000) {
    analyser.getFloatFrequencyData(bins);
    if (bins.some((b) => Number.isFinite(b))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  let sum = 0;
  let n = 0;
  const until = performance.now() + duration;
  while (performance.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    analyser.getFloatFrequencyData(bins);
    const v = Math.max(bins[bin - 1] ?? floor, bins[bin] ?? floor, bins[bin + 1] ?? floor);
    sum += Number.isFinite(v) ? v : floor;
    n++;
  }
  source.disconnect();
  await context.close();
  return n ? sum / n : floor;
}`;

/**
 * The level (dB) of `frequency` in what the page receives on its newest live call, averaged over
 * `ms`, as the phone lab measures it (the console's own player keeps the stream flowing).
 */
export async function heardLevel(page: Page, frequency: number, ms = 1500): Promise<number> {
  const level: unknown = await page.evaluate(`(${LEVEL_IN_PAGE})(${frequency}, ${ms})`);
  if (typeof level !== "number") throw new Error("the page measured no level");
  return level;
}

/** Runs axe-core in the page; answers the serious and critical violations, described. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  const source = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  // Evaluated by the debugger protocol: the console's Content-Security-Policy refuses inline scripts.
  await page.evaluate(source);
  const found: unknown = await page.evaluate(`(async () => {
    const results = await axe.run(document, { resultTypes: ["violations"] });
    return results.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => v.id + " (" + v.impact + "): " + v.help + " - " + v.nodes.map((n) => n.target.join(" ")).join(", "));
  })()`);
  if (!Array.isArray(found)) throw new Error("axe gave no results");
  return found.map(String);
}

/**
 * A finished download's content as text. Read through Playwright's stream, not download.path():
 * a browser reached over launchServer's WebSocket (the tiers' shared Chromium) has no local path.
 */
export async function downloadText(download: Download): Promise<string> {
  return text(await download.createReadStream());
}
