// The recording of a real call between two Chromium softphones (sip.js, each page with its own
// fake-microphone tone): the callee's user records inbound calls, agent1 calls agent2, both talk,
// agent1 hangs up; the recording is then listed and fetched through the REST API as audio/wav,
// and each tone is found dominant on its own channel: the caller's left, the callee's right.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { toneShare } from "../../server/media/index.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { MEASURING_AUDIO, openPhoneLab, phoneLabDir, startLabPhone, toneWav, type LabWindow } from "../helpers/phone-page.js";
import { poll } from "../helpers/poll.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { middleShare, readStereoWav } from "../helpers/stereo-wav.js";

// Above the hold music (its notes and octaves stay under 1.1 kHz), and neither a harmonic of the
// other, so each channel's share of the other tone stays near zero.
const TONE_A = 1500;
const TONE_B = 2200;
const FLOOR = 2900;
/** How long the two talk once each hears the other. */
const TALK_MS = 3000;

interface ChannelRow {
  uuid: string;
  direction: string;
  username: string;
}

let api: TestApi;
let token: string;
let accountId: string;
let base: string;
const browsers: LaunchedBrowser[] = [];
let pageA: Page;
let pageB: Page;

const lab = (page: Page) => ({
  calls: () => page.evaluate(() => (globalThis as unknown as LabWindow).lab.calls()),
  level: (id: string, f: number) => page.evaluate(([i, q]) => (globalThis as unknown as LabWindow).lab.level(i, q, 1000), [id, f] as [string, number]),
});

async function softphone(username: string, toneHz: number): Promise<Page> {
  const browser = await launchBrowser([`--use-file-for-fake-audio-capture=${await toneWav(toneHz)}`]);
  browsers.push(browser);
  const page = await openPhoneLab(browser.browser, api.url);
  await startLabPhone(page, api, accountId, username, { audio: MEASURING_AUDIO });
  return page;
}

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await phoneLabDir() } });
  ({ token, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}`;
  pageA = await softphone("agent1", TONE_A);
  pageB = await softphone("agent2", TONE_B);
});
afterAll(async () => {
  for (const b of browsers) await b.close();
  await api?.close();
});

describe("the recording of a call between two softphones", () => {
  it("holds the caller's tone on the left channel and the callee's on the right", async () => {
    // The callee's user asks for its inbound calls from inside the account to be recorded.
    const users = await api.call<{ id: string; username: string }[]>("GET", `${base}/users`, { token });
    const agent2 = users.body.data.find((u) => u.username === "agent2")?.id ?? "";
    const patched = await api.call("PATCH", `${base}/users/${agent2}`, { token, data: { call_recording: { inbound: { onnet: { enabled: true } } } } });
    expect(patched.status, patched.text).toBe(200);

    const callFrom = performance.now();
    const outgoing = await pageA.evaluate(() => (globalThis as unknown as LabWindow).lab.phone().call("1003"));
    const incoming = await poll("the call offered to agent2", async () => (await lab(pageB).calls()).find((c) => c.state === "incoming"));
    await pageB.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().answer(id), incoming.id);
    await poll("agent1's call active", async () => ((await lab(pageA).calls()).find((c) => c.id === outgoing)?.state === "active" ? true : undefined));
    const channels = await api.call<ChannelRow[]>("GET", `${base}/channels`, { token });
    // The caller's leg: the recording document is filed under its call id.
    const callerLeg = channels.body.data.find((c) => c.direction === "inbound" && c.username === "agent1");
    expect(callerLeg, JSON.stringify(channels.body.data)).toBeDefined();
    const callId = callerLeg?.uuid ?? "";

    // Each side hears the other before the conversation that the test then reads back.
    const heardAtB = (await lab(pageB).level(incoming.id, TONE_A)) - (await lab(pageB).level(incoming.id, FLOOR));
    const heardAtA = (await lab(pageA).level(outgoing, TONE_B)) - (await lab(pageA).level(outgoing, FLOOR));
    expect(heardAtB, `agent2 hears agent1's ${TONE_A} Hz`).toBeGreaterThan(20);
    expect(heardAtA, `agent1 hears agent2's ${TONE_B} Hz`).toBeGreaterThan(20);
    await new Promise((resolve) => setTimeout(resolve, TALK_MS));
    await pageA.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().hangup(id), outgoing);
    await poll("agent2's call ended", async () => ((await lab(pageB).calls()).length === 0 ? true : undefined));
    // The server ended the bridge, and the recording with it, before it ended agent2's call.
    const callWallMs = performance.now() - callFrom;

    // The recording is stored once the bridge is over, its document and audio together.
    const row = await poll("the recording listed", async () => {
      const list = await api.call<Record<string, unknown>[]>("GET", `${base}/recordings`, { token, query: { filter_call_id: callId } });
      return list.body.data[0];
    });
    expect(JSON.stringify(row._read_only)).toContain("audio/wav");
    expect(row).toMatchObject({
      call_id: callId,
      caller_id_number: "1002",
      callee_id_number: "1003",
      direction: "inbound",
      origin: "inbound from onnet to user",
      owner_id: agent2,
      media_type: "wav",
    });
    const durationMs = Number(row.duration_ms);
    // Ringing is not recorded; the conversation is (the level checks above took 4 s or more).
    expect(durationMs).toBeGreaterThanOrEqual(TALK_MS);
    // Its frames are the frame clock's, which never runs ahead of real time: no longer than the
    // call took here from the dial to agent2's call ended, a frame aside (not "under TALK_MS + 20 s").
    expect(durationMs).toBeLessThanOrEqual(callWallMs + 20);

    const audio = await fetch(`${api.url}${base}/recordings/${String(row.id)}`, { headers: { "X-Auth-Token": token, Accept: "audio/wav" } });
    expect(audio.status).toBe(200);
    expect(audio.headers.get("content-type")).toBe("audio/wav");
    const wav = readStereoWav(Buffer.from(await audio.arrayBuffer()));
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000, bitsPerSample: 16 });
    expect(wav.left.length).toBe((durationMs * 8000) / 1000);

    const shares = {
      leftA: middleShare(wav.left, TONE_A),
      leftB: middleShare(wav.left, TONE_B),
      rightA: middleShare(wav.right, TONE_A),
      rightB: middleShare(wav.right, TONE_B),
    };
    console.log(`recording of a ${durationMs} ms call, tone shares: ${JSON.stringify(Object.fromEntries(Object.entries(shares).map(([k, v]) => [k, Number(v.toFixed(3))])))}`);
    expect(shares.leftA, `left: agent1's ${TONE_A} Hz`).toBeGreaterThan(0.8);
    expect(shares.leftB, "left: not agent2").toBeLessThan(0.05);
    expect(shares.rightB, `right: agent2's ${TONE_B} Hz`).toBeGreaterThan(0.8);
    expect(shares.rightA, "right: not agent1").toBeLessThan(0.05);
    // Both tones run through the whole conversation: every second of its middle half carries them.
    for (const [channel, samples, tone] of [
      ["left", wav.left, TONE_A],
      ["right", wav.right, TONE_B],
    ] as const) {
      const seconds = Math.floor(samples.length / 8000);
      for (let s = Math.floor(seconds / 4); s < Math.ceil((seconds * 3) / 4); s++) {
        expect(toneShare(samples.subarray(s * 8000, (s + 1) * 8000), tone), `${channel} channel, second ${s}`).toBeGreaterThan(0.5);
      }
    }
  });
});
