// What the console shows about calls has to be the truth, in Chromium against the real server:
// after an attended transfer (to a user, or to a queue) the receiving agent's card and history
// name the customer (not the colleague who transferred); a failed outgoing call says why in the
// dock and in the history (no such number, busy, unavailable, declined, no answer); and after a
// server restart the card of a call the server lost goes away once the phone is registered again,
// with a history that tells how long the call really lasted.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, openConsole, SCREENSHOTS, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { demoGrant, serve, type Served } from "../helpers/serve.js";
import { newDevice, responseTo, SipPhone, SipSocket, type SipMessage } from "../helpers/sip-client.js";

/** How long the call talks before the restart. */
const TALK_MS = 4000;

/** The uuids of the account's live channels, as the server has them. */
async function liveChannels(url: string, admin: { token: string; accountId: string }): Promise<string[]> {
  const res = await fetch(`${url}/v2/accounts/${admin.accountId}/channels`, { headers: { "X-Auth-Token": admin.token } });
  return ((await res.json()) as { data: { uuid: string }[] }).data.map((row) => row.uuid);
}

const CUSTOMER = { caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "tone_stream://1200" };

let browser: LaunchedBrowser;
const consoles: ConsolePage[] = [];

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  browser = await launchBrowser();
});

afterEach(async () => {
  for (const c of consoles) expect(c.errors, "uncaught errors in the console").toEqual([]);
});

afterAll(async () => {
  for (const c of consoles) await c.page.close();
  await browser?.close();
});

async function agentConsole(url: string, username: string): Promise<Page> {
  const c = await openConsole(browser.browser, url);
  consoles.push(c);
  await signIn(c.page, username);
  await waitRegistered(c.page);
  return c.page;
}

/** The newest row of the agent's recent calls that mentions `who`. */
function historyRow(page: Page, who: string | RegExp) {
  return page.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: who }).first();
}

describe("on the in-process server", () => {
  let api: TestApi;
  let token: string;
  let accountId: string;
  let agent1: Page;
  let agent2: Page;

  beforeAll(async () => {
    api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
    ({ token, accountId } = await api.login("admin"));
    agent1 = await agentConsole(api.url, "agent1");
    agent2 = await agentConsole(api.url, "agent2");
  });

  afterEach(async () => {
    await poll("no channel left", async () => ((api.server.calls?.channels.all().length ?? 0) === 0 ? true : undefined));
  });

  afterAll(async () => {
    await api?.close();
  });

  async function customerCallsAgent1(): Promise<void> {
    const res = await api.call("POST", `/v2/accounts/${accountId}/sim/calls`, { token, data: { to: "1002", ...CUSTOMER } });
    expect(res.status, res.text).toBe(201);
    await agent1.getByRole("region", { name: "Incoming call" }).getByRole("button", { name: "Accept" }).click();
    await agent1.getByRole("region", { name: "Call with Casey Customer" }).getByText("Connected").waitFor();
  }

  it("after an attended transfer, the receiving agent's card and history name the customer", async () => {
    await customerCallsAgent1();
    const call1 = agent1.getByRole("region", { name: "Call with Casey Customer" });
    await call1.locator("summary", { hasText: "Transfer" }).click();
    await call1.getByLabel("Transfer to (extension, user or number)").fill("1003");
    await call1.getByLabel("Attended (consult first)").check();
    await call1.getByRole("button", { name: "Transfer", exact: true }).click();
    await agent2.getByRole("region", { name: "Incoming call" }).getByRole("button", { name: "Accept" }).click();
    // During the consultation agent2 talks with agent1, and is shown so.
    await agent2.getByRole("region", { name: "Call with Alex Agent" }).getByText("Connected").waitFor();
    await call1.getByRole("button", { name: "Complete transfer" }).click();
    await call1.waitFor({ state: "detached" });
    const card = agent2.getByRole("region", { name: "Call with Casey Customer" });
    await card.getByText("Connected").waitFor();
    expect(await card.innerText()).toContain("+14155550100");
    await agent2.screenshot({ path: join(SCREENSHOTS, "console-transfer-receiver.png") });
    await card.getByRole("button", { name: "Hang up" }).click();
    await card.waitFor({ state: "detached" });
    const row = historyRow(agent2, /Casey Customer/);
    await row.waitFor();
    expect(await row.innerText()).toMatch(/^In\b/);
    expect(await agent2.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Alex Agent/ }).count()).toBe(0);
  });

  it("after an attended transfer to a queue, the queue's agent's card and history name the customer", async () => {
    const agent2Id = (await api.login("agent2")).ownerId;
    const recipient = `/v2/accounts/${accountId}/callq_recipients/${agent2Id}`;
    expect((await api.call("POST", recipient, { token, data: { action: "login_ready" } })).status).toBe(200);
    const customerRows = await agent2.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Casey Customer/ }).count();
    await customerCallsAgent1();
    const call1 = agent1.getByRole("region", { name: "Call with Casey Customer" });
    await call1.locator("summary", { hasText: "Transfer" }).click();
    await call1.getByLabel("Transfer to (extension, user or number)").fill("5001");
    await call1.getByLabel("Attended (consult first)").check();
    await call1.getByRole("button", { name: "Transfer", exact: true }).click();
    await agent2.getByRole("region", { name: "Incoming call" }).getByRole("button", { name: "Accept" }).click();
    // The queue offers the consult call as agent1's.
    await agent2.getByRole("region", { name: "Call with Sales: Alex Agent" }).getByText("Connected").waitFor();
    await call1.getByRole("button", { name: "Complete transfer" }).click();
    await call1.waitFor({ state: "detached" });
    const card = agent2.getByRole("region", { name: "Call with Casey Customer" });
    await card.getByText("Connected").waitFor();
    await card.getByRole("button", { name: "Hang up" }).click();
    await card.waitFor({ state: "detached" });
    // One more row naming the customer (and none naming agent1), newest first.
    const rows = agent2.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Casey Customer/ });
    await poll("agent2's new history row naming the customer", async () => ((await rows.count()) > customerRows ? true : undefined));
    expect(await rows.first().innerText()).toMatch(/^In\b/);
    expect(await agent2.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Alex Agent/ }).count()).toBe(0);
    expect((await api.call("POST", recipient, { token, data: { action: "logout" } })).status).toBe(200);
  });

  /** agent1 dials `number`; `during` does what the far end does; the dock and the history then say `words`. */
  async function failedCall(number: string, words: string, during: () => Promise<void> = async () => undefined): Promise<void> {
    await agent1.getByLabel("Number or extension").fill(number);
    await agent1.getByRole("button", { name: "Call", exact: true }).click();
    await during();
    const notice = agent1.getByRole("alert").filter({ hasText: `Call to ${number} failed` });
    await notice.waitFor({ timeout: 15_000 });
    expect(await notice.innerText()).toContain(words);
    const row = historyRow(agent1, new RegExp(`\\b${number}\\b`));
    await poll(`the history row of ${number} saying ${words}`, async () => ((await row.innerText().catch(() => "")).includes(words) ? true : undefined));
    expect(await row.innerText()).toMatch(/^Out\b/);
    await notice.getByRole("button", { name: /Dismiss/ }).click();
    await notice.waitFor({ state: "detached" });
  }

  it("a failed outgoing call says why in the dock and the history: no such number, busy, unavailable, declined, no answer", async () => {
    await failedCall("1099", "No such number");
    await failedCall("1003", "Busy", async () => {
      await agent2.getByRole("region", { name: "Incoming call" }).getByRole("button", { name: "Reject" }).click();
    });
    // The supervisor (1005) has no phone registered.
    await failedCall("1005", "Unavailable");

    // A desk phone that declines every call (603).
    const device = await newDevice(api, { token, accountId });
    const flows = await api.call("PUT", `/v2/accounts/${accountId}/callflows`, { token, data: { numbers: ["2603"], flow: { module: "device", data: { id: device.id }, children: {} } } });
    expect(flows.status, flows.text).toBe(201);
    const socket = await SipSocket.connect(api.url);
    const desk = new SipPhone(socket, { username: device.username, password: device.password, realm: "demo.switchboard.local" });
    expect((await desk.register()).status).toBe(200);
    await failedCall("2603", "Declined", async () => {
      let invite: SipMessage;
      do invite = await socket.next(10_000);
      while (invite.method !== "INVITE");
      socket.send(responseTo(invite, 603, { reason: "Decline", toTag: "desk" }));
    });
    socket.close();

    // agent2 rung for 2 s and not answering.
    const agent2Id = (await api.login("agent2")).ownerId;
    await api.call("PUT", `/v2/accounts/${accountId}/callflows`, { token, data: { numbers: ["2480"], flow: { module: "user", data: { id: agent2Id, timeout: 2 }, children: {} } } });
    await failedCall("2480", "No answer", async () => {
      await agent2.getByRole("region", { name: "Incoming call" }).waitFor();
    });
    await agent1.screenshot({ path: join(SCREENSHOTS, "console-failed-call.png") });
  });
});

describe("in serve mode, across a server restart", () => {
  const servers: Served[] = [];
  let dataDir = "";

  afterAll(async () => {
    for (const s of servers) await s.stop();
    if (dataDir !== "") await rm(dataDir, { recursive: true, force: true });
  });

  it("the card of a call the restart ended goes once the phone is registered again, and the history tells the call's real length", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "sb-call-truth-"));
    // On a clock this test moves: the call's seconds before the restart are moved on, not waited for.
    const first = await serve({ args: ["--data-dir", dataDir], clock: true });
    servers.push(first);
    const page = await agentConsole(first.url, "agent1");
    const before = await demoGrant(first.url);
    const placed = await fetch(`${first.url}/v2/accounts/${before.accountId}/sim/calls`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Auth-Token": before.token },
      body: JSON.stringify({ data: { to: "1002", ...CUSTOMER } }),
    });
    expect(placed.status).toBe(201);
    await page.getByRole("region", { name: "Incoming call" }).getByRole("button", { name: "Accept" }).click();
    const card = page.getByRole("region", { name: "Call with Casey Customer" });
    await card.getByText("Connected").waitFor();
    // A call of a few seconds on the server's clock, so that its length in the history can be told
    // from a stamp at the start; the restarted server's clock goes on from the first's time.
    await first.clock.advance(TALK_MS);
    const startMs = await first.clock.now();
    await first.stop();
    const second = await serve({ args: ["--port", new URL(first.url).port, "--data-dir", dataDir], clock: { startMs } });
    servers.push(second);
    await waitRegistered(page, 45_000);
    await card.waitFor({ state: "detached", timeout: 10_000 });
    const after = await demoGrant(second.url);
    expect(await liveChannels(second.url, after)).toEqual([]);

    const row = historyRow(page, /Casey Customer/);
    await row.waitFor({ timeout: 15_000 });
    const length = /(\d+):(\d{2})/.exec(await row.innerText());
    expect(length, "the history row shows the call's length").not.toBeNull();
    const seconds = Number(length?.[1]) * 60 + Number(length?.[2]);
    expect(seconds, "the length the history shows, up to the restart").toBeGreaterThanOrEqual(TALK_MS / 1000);
  });
});
