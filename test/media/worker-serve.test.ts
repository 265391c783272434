// Media workers in the built server: serve mode (out/main/server.js) starts its media worker from
// out/main/media-worker.js (one per core by default), and a real call goes through it: a simulated
// caller's tone reaches a sip.js softphone in Chromium, through legs whose RTP runs in the workers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { ConfigError, parseArgs, type ServerConfig } from "../../server/config.js";
import { credentials, DEMO_PASSWORD } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { MEASURING_AUDIO, openPhoneLab, phoneLabDir, type LabWindow } from "../helpers/phone-page.js";
import { freshRequest, type FreshAnswer } from "../helpers/fresh-request.js";
import { poll } from "../helpers/poll.js";
import { serve, type Served } from "../helpers/serve.js";

const CALLER_TONE = 1200;
const FLOOR = 2900;

let served: Served;
let browser: LaunchedBrowser;
let page: Page;
let token = "";
let accountId = "";

/** One request on a connection of its own (a kept-alive one may be closed by the server meanwhile). */
function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<FreshAnswer> {
  return freshRequest(served.url, method, path, body, headers);
}

async function call<T>(method: string, path: string, data?: unknown): Promise<{ status: number; data: T; text: string }> {
  const { status, text } = await request(method, path, data, { "X-Auth-Token": token });
  return { status, data: (JSON.parse(text) as { data: T }).data, text };
}

const lab = (p: Page) => ({
  calls: () => p.evaluate(() => (globalThis as unknown as LabWindow).lab.calls()),
  answer: (id: string) => p.evaluate((i) => (globalThis as unknown as LabWindow).lab.phone().answer(i), id),
  level: (id: string, f: number) => p.evaluate(([i, q]) => (globalThis as unknown as LabWindow).lab.level(i, q, 1500), [id, f] as [string, number]),
});

beforeAll(async () => {
  // No --media-workers: the default, one worker per core.
  served = await serve({ args: ["--renderer-dir", await phoneLabDir()] });
  const login = await request("PUT", "/v2/user_auth", { credentials: credentials("admin", DEMO_PASSWORD), account_name: "demo" });
  const body = JSON.parse(login.text) as { auth_token: string; data: { account_id: string } };
  token = body.auth_token;
  accountId = body.data.account_id;
  const devices = await call<{ id: string; username?: string }[]>("GET", `/v2/accounts/${accountId}/devices`);
  const listed = devices.data.find((d) => d.username === "agent1");
  if (!listed) throw new Error(`no agent1 device: ${devices.text}`);
  const device = await call<{ sip: { username: string; password: string } }>("GET", `/v2/accounts/${accountId}/devices/${listed.id}`);
  browser = await launchBrowser();
  page = await openPhoneLab(browser.browser, served.url);
  await page.evaluate((o) => (globalThis as unknown as LabWindow).lab.start(o), {
    server: `${served.url.replace(/^http/, "ws")}/sip`,
    username: device.data.sip.username,
    password: device.data.sip.password,
    realm: "demo.switchboard.local",
    audio: MEASURING_AUDIO,
  });
});

afterAll(async () => {
  await browser?.close();
  await served?.stop();
});

describe("serve mode with media workers", () => {
  it("carries a simulated caller's tone to a softphone through the built media worker", async () => {
    const started = await call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      to: "1002",
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      audio: `tone_stream://${CALLER_TONE}`,
    });
    expect(started.status, `${started.text}\n${served.output()}`).toBe(201);
    const phone = lab(page);
    const incoming = await poll("the call offered to agent1", async () => (await phone.calls()).find((c) => c.state === "incoming"));
    await phone.answer(incoming.id);
    await poll("the call active", async () => ((await phone.calls()).find((c) => c.id === incoming.id)?.state === "active" ? true : undefined));
    const heard = (await phone.level(incoming.id, CALLER_TONE)) - (await phone.level(incoming.id, FLOOR));
    expect(heard, `agent1 hears the simulated caller's ${CALLER_TONE} Hz\n${served.output()}`).toBeGreaterThan(20);
    const hangup = await call("POST", `/v2/accounts/${accountId}/sim/calls/${started.data.id}`, { action: "hangup" });
    expect(hangup.status).toBe(202);
    await poll("the page's call to end", async () => ((await phone.calls()).length === 0 ? true : undefined));
    expect(served.output()).not.toMatch(/media worker/);
  });
});

describe("--media-workers", () => {
  const defaults: ServerConfig = {
    host: "127.0.0.1",
    port: 8000,
    portExplicit: false,
    dataDir: "/tmp/d",
    assetsDir: "/tmp/a",
    rendererDir: null,
    demo: true,
    allowOrigins: [],
    logLevel: "info",
  };

  it("takes a worker count (0 keeps media in the main thread) and refuses anything else", () => {
    expect(parseArgs([], defaults).mediaWorkers).toBeUndefined();
    expect(parseArgs(["--media-workers", "0"], defaults).mediaWorkers).toBe(0);
    expect(parseArgs(["--media-workers=4"], defaults).mediaWorkers).toBe(4);
    expect(() => parseArgs(["--media-workers", "two"], defaults)).toThrow(ConfigError);
    expect(() => parseArgs(["--media-workers", "-1"], defaults)).toThrow(/0\.\.64/);
    expect(() => parseArgs(["--media-workers", "65"], defaults)).toThrow(/0\.\.64/);
  });
});
