// Call features with real softphones in Chromium: DTMF from a softphone reaches the server's call
// logic (RFC 4733 and SIP INFO), and a blind transfer through the channels API moves the caller to
// a third softphone, which then hears the caller.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { ChannelDtmf } from "../../server/calls/channel.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { MEASURING_AUDIO, openPhoneLab, phoneLabDir, startLabPhone, toneWav, type LabWindow } from "../helpers/phone-page.js";
import { poll } from "../helpers/poll.js";
import { startApi, type TestApi } from "../helpers/api.js";

// Not in the hold music (its notes and octaves stay under 1.1 kHz).
const TONE_CALLER = 1500;
const FLOOR = 2900;

const lab = (page: Page) => ({
  calls: () => page.evaluate(() => (globalThis as unknown as LabWindow).lab.calls()),
  level: (id: string, f: number) => page.evaluate(([i, q]) => (globalThis as unknown as LabWindow).lab.level(i, q, 1500), [id, f] as [string, number]),
});

let api: TestApi;
let token: string;
let accountId: string;
const browsers: LaunchedBrowser[] = [];
const pages: Record<string, Page> = {};

async function phone(username: string, toneHz?: number): Promise<Page> {
  const browser = await launchBrowser(toneHz ? [`--use-file-for-fake-audio-capture=${await toneWav(toneHz)}`] : []);
  browsers.push(browser);
  const page = await openPhoneLab(browser.browser, api.url);
  await startLabPhone(page, api, accountId, username, { audio: MEASURING_AUDIO });
  pages[username] = page;
  return page;
}

/** agent1 calls agent2 (1003) and agent2 answers: the ids of both softphones' calls. */
async function connect(): Promise<{ caller: string; callee: string }> {
  const a = pages.agent1 as Page;
  const b = pages.agent2 as Page;
  const caller = await a.evaluate(() => (globalThis as unknown as LabWindow).lab.phone().call("1003"));
  const incoming = await poll("agent2 rung", async () => (await lab(b).calls()).find((c) => c.state === "incoming"));
  await b.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().answer(id), incoming.id);
  await poll("connected", async () => ((await lab(a).calls()).find((c) => c.id === caller)?.state === "active" ? true : undefined));
  return { caller, callee: incoming.id };
}

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await phoneLabDir() } });
  ({ token, accountId } = await api.login("admin"));
  await phone("agent1", TONE_CALLER);
  await phone("agent2");
  await phone("agent3");
});
afterEach(async () => {
  // Every test starts with no call up, whatever the last one left behind.
  for (const page of Object.values(pages)) {
    await page.evaluate(async () => {
      const l = (globalThis as unknown as LabWindow).lab;
      for (const c of l.calls()) await l.phone().hangup(c.id).catch(() => undefined);
    });
  }
  await poll("no channel left", async () => (api.server.calls.channels.all().length === 0 ? true : undefined));
});

afterAll(async () => {
  for (const b of browsers) await b.close();
  await api?.close();
});

describe("call features from real softphones", () => {
  it("delivers DTMF to the call logic both as RFC 4733 and as SIP INFO", async () => {
    const { caller } = await connect();
    const channel = api.server.calls.channels.all().find((c) => c.direction === "inbound");
    expect(channel).toBeDefined();
    const digits: ChannelDtmf[] = [];
    channel?.on("dtmf", (d) => digits.push(d));
    const a = pages.agent1 as Page;
    // The browser can insert RFC 4733 digits only once its media transport is up.
    await poll("a DTMF sender", async () =>
      (await a.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().sendDtmf(id, "159#"), caller)) ? true : undefined,
    );
    await poll("four RFC 4733 digits", async () => (digits.length >= 4 ? true : undefined));
    await a.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().sendInfoDtmf(id, "7"), caller);
    await poll("the INFO digit", async () => (digits.length >= 5 ? true : undefined));
    expect(digits.map((d) => d.digit).join("")).toBe("159#7");
    expect(digits.map((d) => d.via)).toEqual(["rfc4733", "rfc4733", "rfc4733", "rfc4733", "info"]);
    await a.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().hangup(id), caller);
    await poll("calls ended", async () => (api.server.calls.channels.all().length === 0 ? true : undefined));
  });

  it("blind-transfers the caller to a third softphone through the channels API; the third hears the caller", async () => {
    const { caller } = await connect();
    const calleeLeg = api.server.calls.channels.all().find((c) => c.direction === "outbound");
    // Transfer agent2's leg (self): agent2 drops out, agent1 is sent to 1004 (agent3).
    const res = await api.call("POST", `/v2/accounts/${accountId}/channels/${calleeLeg?.id ?? ""}`, {
      token,
      data: { action: "transfer", target: "1004", "transfer-type": "blind" },
    });
    expect(res.status, res.text).toBe(202);
    const c = pages.agent3 as Page;
    const offered = await poll("agent3 rung", async () => (await lab(c).calls()).find((x) => x.state === "incoming"));
    await c.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().answer(id), offered.id);
    await poll("agent2 dropped", async () => ((await lab(pages.agent2 as Page).calls()).length === 0 ? true : undefined));
    const heard = await lab(c).level(offered.id, TONE_CALLER);
    const floor = await lab(c).level(offered.id, FLOOR);
    expect(heard - floor, "agent3 hears agent1's tone").toBeGreaterThan(20);
    expect((await lab(pages.agent1 as Page).calls()).find((x) => x.id === caller)?.state).toBe("active");
    await (pages.agent1 as Page).evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().hangup(id), caller);
  });
});
