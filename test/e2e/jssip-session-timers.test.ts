// JsSIP in Chromium, with its defaults (session timers on, 90 s asked, refreshed by UPDATE at half
// the interval), keeps a call to a queue for three refresh intervals: every UPDATE is answered 200
// with the timer, no request of the call gets an error response, and the call is still up on
// the server until JsSIP hangs up. The page's clock is Playwright's fake clock, run forward, so
// three 45 s intervals take seconds; the server runs on real time (it never refreshes itself).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { labPageDir } from "../helpers/phone-page.js";
import { startApi, type TestApi } from "../helpers/api.js";

const REALM = "demo.switchboard.local";
/** JsSIP's default Session-Expires; it refreshes at half of it. */
const INTERVAL_S = 90;

/** What the page's lab (test/e2e/fixtures/jssip-lab.ts) tells: every SIP frame, and the call's state. */
interface LabState {
  frames: { dir: "in" | "out"; text: string }[];
  confirmed: boolean;
  ended: string | null;
}

let api: TestApi;
let browser: LaunchedBrowser;
let token: string;
let accountId: string;

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await labPageDir("jssip-lab") } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

function labState(page: Page): Promise<LabState> {
  return page.evaluate(() => (globalThis as unknown as { lab: { state(): LabState } }).lab.state());
}

/** Runs the page's clock forward in small steps (letting real network events in between) until `done`. */
async function runUntil(page: Page, done: (s: LabState) => boolean, maxFakeMs: number): Promise<LabState> {
  for (let ran = 0; ran <= maxFakeMs; ran += 1000) {
    const s = await labState(page);
    if (done(s)) return s;
    await page.clock.runFor(1000);
    await new Promise((r) => setTimeout(r, 5));
  }
  return labState(page);
}

interface SipResponse {
  status: number;
  method: string;
  cseq: number;
  text: string;
}

function responses(s: LabState): SipResponse[] {
  return s.frames
    .filter((f) => f.dir === "in" && f.text.startsWith("SIP/2.0 "))
    .map((f) => {
      const cseq = /^CSeq:\s*(\d+)\s+(\w+)/im.exec(f.text);
      return { status: Number(f.text.slice(8, 11)), method: cseq?.[2] ?? "", cseq: Number(cseq?.[1] ?? 0), text: f.text };
    });
}

function requestsSent(s: LabState, method: string): string[] {
  return s.frames.filter((f) => f.dir === "out" && f.text.startsWith(`${method} `)).map((f) => f.text);
}

async function deviceOf(username: string): Promise<{ username: string; password: string }> {
  const devices = (await api.server.store.account(accountId, "devices")).all();
  const d = devices.find((x) => (x.data.sip as { username?: string }).username === username);
  if (!d) throw new Error(`no device for ${username}`);
  return d.data.sip as { username: string; password: string };
}

describe("JsSIP with session timers (its defaults)", () => {
  it("keeps a call for three refresh intervals, every UPDATE answered 200, no error response", async () => {
    const sip = await deviceOf("admin");
    const page = await browser.browser.newPage();
    await page.clock.install();
    await page.goto(`${api.url}/`);
    await page.waitForFunction(() => "lab" in globalThis);
    // Started, not awaited: the page's timers run only as the test runs the clock.
    const calling = page.evaluate(
      (o) => (globalThis as unknown as { lab: { call(o: unknown): Promise<void> } }).lab.call(o).then(() => "confirmed", (e: Error) => e.message),
      { server: `${api.url.replace(/^http/, "ws")}/sip`, username: sip.username, password: sip.password, realm: REALM, target: "5001" },
    );
    let s = await runUntil(page, (x) => x.confirmed || x.ended !== null, 30_000);
    expect(await calling).toBe("confirmed");
    expect(s.ended).toBeNull();

    // The INVITE asked for the timer; the 200 gave it back with JsSIP as the refresher.
    const invite = requestsSent(s, "INVITE").at(-1) ?? "";
    expect(invite).toMatch(new RegExp(`^Session-Expires: ${INTERVAL_S}`, "im"));
    const answered = responses(s).find((r) => r.method === "INVITE" && r.status === 200);
    expect(answered?.text).toMatch(new RegExp(`^Session-Expires: ${INTERVAL_S};refresher=uac`, "im"));

    const channels = async () => (await api.call<{ uuid: string }[]>("GET", `/v2/accounts/${accountId}/channels`, { token })).body.data.length;
    expect(await channels()).toBeGreaterThan(0);

    // Three intervals and a little more on the page's clock: JsSIP refreshes at each half.
    s = await runUntil(page, (x) => x.ended !== null, (3 * INTERVAL_S + 10) * 1000);
    expect(s.ended, "the call is still up after three intervals").toBeNull();
    const updates = requestsSent(s, "UPDATE");
    // Refreshes at 45, 90, 135 and 180 s of the 280 run: at least three, each answered.
    expect(updates.length).toBeGreaterThanOrEqual(3);
    for (const u of updates) expect(u).toMatch(/^Session-Expires: \d+;refresher=uac/im);
    const updateAnswers = responses(s).filter((r) => r.method === "UPDATE");
    expect(updateAnswers.map((r) => r.status)).toEqual(updates.map(() => 200));
    for (const r of updateAnswers) expect(r.text).toMatch(/^Session-Expires: \d+;refresher=uac/im);
    // No error response to anything JsSIP sent (the INVITE's digest challenge aside).
    const errors = responses(s).filter((r) => r.status >= 300 && !(r.method === "INVITE" && (r.status === 401 || r.status === 407)));
    expect(errors.map((r) => `${r.status} ${r.method}`)).toEqual([]);
    expect(await channels()).toBeGreaterThan(0);

    // JsSIP hangs up: BYE answered 200, and the server's call is gone.
    await page.evaluate(() => (globalThis as unknown as { lab: { hangup(): void } }).lab.hangup());
    s = await runUntil(page, (x) => responses(x).some((r) => r.method === "BYE"), 10_000);
    expect(responses(s).find((r) => r.method === "BYE")?.status).toBe(200);
    for (let i = 0; i < 50 && (await channels()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await channels()).toBe(0);
    await page.close();
  }, 120_000);
});
