// A real call between two consoles' softphones (sip.js in two Chromium browsers, each with its
// own fake microphone tone) through the server's B2BUA: ringing, answer, audio both ways measured
// at the far ends, hold and unhold, hang-up; the channel and its CDR seen through the API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { bufferWindow, MEASURING_AUDIO, openPhoneLab, phoneLabDir, startLabPhone, toneWav, type BufferWindow, type LabWindow, type ReceiveStats } from "../helpers/phone-page.js";
import { poll } from "../helpers/poll.js";
import { startApi, type TestApi } from "../helpers/api.js";

// Neither tone nor the floor probe is in the hold music (its notes and their octaves stay
// under 1.1 kHz), so hold can be heard as the caller's tone going away.
const TONE_A = 1500;
const TONE_B = 2200;
const FLOOR = 2900;
// What this test holds about the held party's audio is states, not times (issue 16: a test that
// fails when the machine is busy is a broken test; the times are bench/hold-switch.ts's, beside a
// direct peer connection's in the same run: hold heard 60-120 ms after the server's switch, unhold
// 90-150 ms, measured when this test still asserted them). The bug they were written for: audio
// left unplayed piled up in Chromium's jitter buffer (up to 4 s) and was heard that late, the
// hold 2-5 s after the button (fixed in 11e96be: the softphone plays each call's audio from answer
// to hang-up). Such a backlog is the buffer holding far more than it aims to: its samples' mean
// wait is seconds while its own target stays at 40-60 ms. Chromium's target follows the arrival
// jitter a busy machine makes, so the wait is held against that target, not against a time: over
// each window below, the samples' mean wait is at most BACKLOG_RATIO times the buffer's own
// target. Session 26: bench/hold-switch.ts at load 5-15, 0-2 busy processes: 0.78-1.77 for our
// calls, 1.18-1.80 for direct ones; this test beside two busy processes, 84 ms against a 193 ms
// target; the old bug (the lab's audio played only while it measured) 476 ms against 26 ms from
// answer to hold, 2,281 ms against 20 ms over the hold.
const BACKLOG_RATIO = 3;

let api: TestApi;
let token: string;
let accountId: string;
let browserA: LaunchedBrowser;
let browserB: LaunchedBrowser;
let pageA: Page;
let pageB: Page;

const calls = (page: Page) => page.evaluate(() => (globalThis as unknown as LabWindow).lab.calls());
const level = (page: Page, id: string, f: number) => page.evaluate(([i, q]) => (globalThis as unknown as LabWindow).lab.level(i, q, 1500), [id, f] as [string, number]);
/** The level of `f` in what the page hears, read every 20 ms for `ms`. */
const trace = (page: Page, id: string, f: number, ms: number) =>
  page.evaluate(([i, q, t]) => (globalThis as unknown as LabWindow).lab.trace(i, q, t), [id, f, ms] as [string, number, number]);
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? -200;
const receiveStats = async (page: Page, id: string): Promise<ReceiveStats> => {
  const stats = await page.evaluate((i) => (globalThis as unknown as LabWindow).lab.receiveStats(i), id);
  if (!stats) throw new Error(`no receive stats for ${id}`);
  return stats;
};
/** Waits until every reading of `f`'s level over 200 ms is on the given side of `db`. */
const steadily = (page: Page, id: string, f: number, side: "above" | "below", db: number) =>
  poll(`${f} Hz steadily ${side} ${db.toFixed(0)} dB`, async () => {
    const samples = await trace(page, id, f, 200);
    return samples.length > 0 && samples.every((s) => (side === "above" ? s.level > db : s.level < db)) ? true : undefined;
  });
/** The buffer played out in the window and held no backlog: its samples waited about what it aimed for. */
function expectNoBacklog(window: BufferWindow, when: string): void {
  console.log(`agent2's jitter buffer ${when}: ${window.meanMs.toFixed(0)} ms mean wait, target ${window.targetMs.toFixed(0)} ms, ${window.emitted} samples`);
  expect(window.emitted, `agent2's audio is played out ${when}`).toBeGreaterThan(0);
  expect(window.meanMs, `agent2's jitter buffer holds no backlog ${when} (${JSON.stringify(window)})`).toBeLessThanOrEqual(BACKLOG_RATIO * window.targetMs);
}

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await phoneLabDir() } });
  ({ token, accountId } = await api.login("admin"));
  browserA = await launchBrowser([`--use-file-for-fake-audio-capture=${await toneWav(TONE_A)}`]);
  browserB = await launchBrowser([`--use-file-for-fake-audio-capture=${await toneWav(TONE_B)}`]);
  pageA = await openPhoneLab(browserA.browser, api.url);
  pageB = await openPhoneLab(browserB.browser, api.url);
  await startLabPhone(pageA, api, accountId, "agent1", { audio: MEASURING_AUDIO });
  await startLabPhone(pageB, api, accountId, "agent2", { audio: MEASURING_AUDIO });
});
afterAll(async () => {
  await browserA?.close();
  await browserB?.close();
  await api?.close();
});

describe("a call between two softphones", () => {
  it("rings, connects with audio both ways, holds, unholds, and hangs up with a CDR", async () => {
    // agent1 dials agent2's extension (1003): the demo callflow rings agent2's registered devices.
    const outgoing = await pageA.evaluate(() => (globalThis as unknown as LabWindow).lab.phone().call("1003"));
    const incoming = await poll("the call offered to agent2", async () => (await calls(pageB)).find((c) => c.state === "incoming"));
    expect(incoming.direction).toBe("inbound");
    await pageB.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().answer(id), incoming.id);
    await poll("agent1's call active", async () => ((await calls(pageA)).find((c) => c.id === outgoing)?.state === "active" ? true : undefined));

    const channels = await api.call<{ uuid: string; answered: boolean }[]>("GET", `/v2/accounts/${accountId}/channels`, { token });
    expect(channels.body.data.length).toBe(2);
    expect(channels.body.data.every((c) => c.answered)).toBe(true);

    // Each side hears the other's tone, well above the other frequency's floor.
    const heardAtB = await level(pageB, incoming.id, TONE_A);
    const otherAtB = await level(pageB, incoming.id, FLOOR);
    const heardAtA = await level(pageA, outgoing, TONE_B);
    const otherAtA = await level(pageA, outgoing, FLOOR);
    expect(heardAtB - otherAtB, `agent2 hears agent1's ${TONE_A} Hz`).toBeGreaterThan(20);
    expect(heardAtA - otherAtA, `agent1 hears agent2's ${TONE_B} Hz`).toBeGreaterThan(20);

    // Hold: agent2 stops hearing agent1's tone and hears the music instead; unhold brings the
    // tone back. Through both, agent2's jitter buffer holds no backlog (BACKLOG_RATIO above).
    const musicBefore = await level(pageB, incoming.id, 523.25);
    const toneAtB = median((await trace(pageB, incoming.id, TONE_A, 400)).map((s) => s.level));
    expect(toneAtB, `agent2 hears agent1's ${TONE_A} Hz before the hold`).toBeGreaterThan(-40);
    // From here (not from the answer: a loaded machine can leave the call's first packets
    // waiting for its playout to start, which the buffer then trims, as it should).
    const beforeHold = await receiveStats(pageB, incoming.id);
    await pageA.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().hold(id, true), outgoing);
    await steadily(pageB, incoming.id, TONE_A, "below", toneAtB - 30);
    const musicHeld = await level(pageB, incoming.id, 523.25);
    expect(musicHeld - musicBefore, "the held party hears the hold music").toBeGreaterThan(15);
    expectNoBacklog(bufferWindow(beforeHold, await receiveStats(pageB, incoming.id)), "over the hold");
    const legs = await Promise.all(
      channels.body.data.map(async (c) => (await api.call<{ is_onhold: boolean; username: string }>("GET", `/v2/accounts/${accountId}/channels/${c.uuid}`, { token })).body.data),
    );
    // The holder's leg (agent1's) is the one on hold, as the hosted service reports it.
    expect(legs.find((l) => l.username === "agent1")?.is_onhold).toBe(true);

    const beforeResume = await receiveStats(pageB, incoming.id);
    await pageA.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().hold(id, false), outgoing);
    await steadily(pageB, incoming.id, TONE_A, "above", toneAtB - 10);
    expect((await level(pageA, outgoing, TONE_B)) - otherAtA, "agent1 still hears agent2 after unhold").toBeGreaterThan(20);
    expectNoBacklog(bufferWindow(beforeResume, await receiveStats(pageB, incoming.id)), "after the resume");

    await pageA.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().hangup(id), outgoing);
    await poll("agent2's call ended", async () => ((await calls(pageB)).length === 0 ? true : undefined));
    const after = await api.call<unknown[]>("GET", `/v2/accounts/${accountId}/channels`, { token });
    expect(after.body.data).toEqual([]);
    const cdrs = await poll("a CDR", async () => {
      const res = await api.call<{ call_id: string; duration_seconds: number }[]>("GET", `/v2/accounts/${accountId}/cdrs`, { token });
      return res.body.data.length > 0 ? res.body.data : undefined;
    });
    expect(cdrs[0]?.duration_seconds).toBeGreaterThanOrEqual(1);
  });
});
