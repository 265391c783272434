// A simulated customer calls a real softphone: sip.js in Chromium registers as agent1, the test
// starts a simulated caller to 1002 over the API, the page sees the caller id, answers, and hears
// the caller's 1200 Hz tone; the API's hang-up ends the call on the page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { MEASURING_AUDIO, openPhoneLab, phoneLabDir, startLabPhone, type LabWindow } from "../helpers/phone-page.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";

// Not in the hold music (its notes stay under 1.1 kHz) nor near the fake microphone's beep.
const CALLER_TONE = 1200;
const FLOOR = 2900;

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let page: Page;

const lab = (p: Page) => ({
  calls: () => p.evaluate(() => (globalThis as unknown as LabWindow).lab.calls()),
  answer: (id: string) => p.evaluate((i) => (globalThis as unknown as LabWindow).lab.phone().answer(i), id),
  level: (id: string, f: number) => p.evaluate(([i, q]) => (globalThis as unknown as LabWindow).lab.level(i, q, 1500), [id, f] as [string, number]),
});

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await phoneLabDir() } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();
  page = await openPhoneLab(browser.browser, api.url);
  await startLabPhone(page, api, accountId, "agent1", { audio: MEASURING_AUDIO });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe("a simulated caller to a softphone", () => {
  it("rings the registered softphone with its caller id; once answered the agent hears its audio", async () => {
    const started = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      token,
      data: { to: "1002", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: `tone_stream://${CALLER_TONE}` },
    });
    expect(started.status, started.text).toBe(201);
    const simId = started.body.data.id;

    const phone = lab(page);
    const incoming = await poll("the call offered to agent1", async () => (await phone.calls()).find((c) => c.state === "incoming"));
    expect(incoming).toMatchObject({ direction: "inbound", remoteUser: "+14155550100", remoteName: "Casey Customer" });
    await phone.answer(incoming.id);
    await poll("the call active", async () => ((await phone.calls()).find((c) => c.id === incoming.id)?.state === "active" ? true : undefined));

    const heard = await phone.level(incoming.id, CALLER_TONE);
    const floor = await phone.level(incoming.id, FLOOR);
    expect(heard - floor, `agent1 hears the simulated caller's ${CALLER_TONE} Hz`).toBeGreaterThan(20);
    const sim = await api.call<{ state: string }>("GET", `/v2/accounts/${accountId}/sim/calls/${simId}`, { token });
    expect(sim.body.data.state).toBe("answered");

    const hangup = await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${simId}`, { token, data: { action: "hangup" } });
    expect(hangup.status).toBe(202);
    await poll("the page's call to end", async () => ((await phone.calls()).length === 0 ? true : undefined));
  });
});
