// One agent's call-handling day in one test, in Chromium against serve mode, with a colleague's
// console beside it: sign in, a direct call in and one out, attended and blind transfers both ways,
// failed outgoing calls, a server restart in the middle of a call, sign out. At every step the
// console (cards, dock, history) and the server's channels API must agree.
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole, SCREENSHOTS, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { serve, type Served } from "../helpers/serve.js";

const CUSTOMER = { caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "tone_stream://1200" };

interface ChannelRow {
  uuid: string;
  other_leg?: string;
  answered: boolean;
}

let browser: LaunchedBrowser;
const consoles: ConsolePage[] = [];
const servers: Served[] = [];
let dataDir = "";
let url = "";
let admin = { token: "", accountId: "" };
const userIds = new Map<string, string>();

async function signInAdmin(): Promise<void> {
  const res = await fetch(`${url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: createHash("md5").update("admin:switchboard").digest("hex"), account_name: "demo" } }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { auth_token: string; data: { account_id: string } };
  admin = { token: body.auth_token, accountId: body.data.account_id };
}

async function v2<T>(method: string, path: string, data?: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(`${url}/v2/accounts/${admin.accountId}${path}`, {
    method,
    headers: { "Content-Type": "application/json", "X-Auth-Token": admin.token },
    body: data === undefined ? undefined : JSON.stringify({ data }),
  });
  return { status: res.status, data: ((await res.json()) as { data: T }).data };
}

/** The user's live call legs as the server has them. */
async function channelsOf(username: string): Promise<ChannelRow[]> {
  const res = await v2<ChannelRow[]>("GET", `/users/${userIds.get(username) ?? ""}/channels`);
  expect(res.status).toBe(200);
  return res.data;
}

async function noChannels(...usernames: string[]): Promise<void> {
  for (const username of usernames) await poll(`${username} without a live channel`, async () => ((await channelsOf(username)).length === 0 ? true : undefined));
}

async function customerCalls(extension: string): Promise<void> {
  const res = await v2("POST", "/sim/calls", { to: extension, ...CUSTOMER });
  expect(res.status).toBe(201);
}

/** The card of a call with `name` (a call the agent dialled is "Call to" what they dialled). */
function card(page: Page, name: string) {
  return page.getByRole("region", { name: new RegExp(`^Call (with|to) ${name}$`) });
}

async function accept(page: Page, shows: string): Promise<void> {
  const offer = page.getByRole("region", { name: "Incoming call" });
  await offer.getByRole("button", { name: "Accept" }).waitFor();
  expect(await offer.innerText()).toContain(shows);
  await offer.getByRole("button", { name: "Accept" }).click();
}

/** The card `name` is connected, and its leg (the card's Call-ID) is the user's one live channel. */
async function connectedLeg(page: Page, name: string, username: string): Promise<ChannelRow> {
  const shown = card(page, name);
  await shown.getByText("Connected").waitFor();
  const callId = (await shown.getAttribute("data-call-id")) ?? "";
  let row: ChannelRow | undefined;
  await poll(`${username}'s leg bridged on the server`, async () => {
    const rows = await channelsOf(username);
    row = rows.length === 1 && rows[0]?.uuid === callId && rows[0].other_leg !== undefined ? rows[0] : undefined;
    return row;
  });
  expect(row?.answered).toBe(true);
  return row ?? { uuid: "", answered: false };
}

async function hangUp(page: Page, name: string): Promise<void> {
  const shown = card(page, name);
  await shown.getByRole("button", { name: "Hang up" }).click();
  await shown.waitFor({ state: "detached" });
}

async function startTransfer(page: Page, name: string, type: "Blind" | "Attended (consult first)", target: string): Promise<void> {
  const shown = card(page, name);
  await shown.locator("summary", { hasText: "Transfer" }).click();
  await shown.getByLabel("Transfer to (extension, user or number)").fill(target);
  await shown.getByLabel(type).check();
  await shown.getByRole("button", { name: "Transfer", exact: true }).click();
}

/** `from` (showing the customer) consults `to` at `extension`, then completes: `to` shows the customer. */
async function attended(from: { page: Page; username: string; name: string }, to: { page: Page; username: string }, extension: string): Promise<void> {
  await startTransfer(from.page, "Casey Customer", "Attended (consult first)", extension);
  await accept(to.page, from.name);
  // The consultation: the colleague's card names the transferor.
  await card(to.page, from.name).getByText("Connected").waitFor();
  const consulting = await channelsOf(from.username);
  expect(consulting).toHaveLength(1);
  await card(from.page, "Casey Customer").getByRole("button", { name: "Complete transfer" }).click();
  await card(from.page, "Casey Customer").waitFor({ state: "detached" });
  // Completed: the colleague's card names the customer, and their leg is the call's.
  const leg = await connectedLeg(to.page, "Casey Customer", to.username);
  expect(leg.other_leg).toBeTruthy();
  await noChannels(from.username);
}

async function blind(from: { page: Page; username: string }, to: { page: Page; username: string }, extension: string): Promise<void> {
  await startTransfer(from.page, "Casey Customer", "Blind", extension);
  await card(from.page, "Casey Customer").waitFor({ state: "detached" });
  await noChannels(from.username);
  await accept(to.page, "Casey Customer");
  await connectedLeg(to.page, "Casey Customer", to.username);
}

async function failedCall(page: Page, number: string, words: string): Promise<void> {
  await page.getByLabel("Number or extension").fill(number);
  await page.getByRole("button", { name: "Call", exact: true }).click();
  const notice = page.getByRole("alert").filter({ hasText: `Call to ${number} failed` });
  await notice.waitFor({ timeout: 15_000 });
  expect(await notice.innerText()).toContain(words);
  const row = page.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: new RegExp(`\\b${number}\\b`) }).first();
  await poll(`the history row of ${number}`, async () => ((await row.innerText().catch(() => "")).includes(words) ? true : undefined));
  await notice.getByRole("button", { name: /Dismiss/ }).click();
  await notice.waitFor({ state: "detached" });
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  browser = await launchBrowser();
  dataDir = await mkdtemp(join(tmpdir(), "sb-shift-calls-"));
  const first = await serve({ args: ["--data-dir", dataDir] });
  servers.push(first);
  url = first.url;
  await signInAdmin();
  for (const user of (await v2<{ id: string; username: string }[]>("GET", "/users")).data) userIds.set(user.username, user.id);
});

afterAll(async () => {
  for (const c of consoles) await c.page.close();
  await browser?.close();
  for (const s of servers) await s.stop();
  if (dataDir !== "") await rm(dataDir, { recursive: true, force: true });
});

describe("an agent's day of calls", () => {
  it("direct calls, transfers both ways, failed calls, a server restart mid-call, sign out", async () => {
    const one = await openConsole(browser.browser, url);
    const two = await openConsole(browser.browser, url);
    consoles.push(one, two);
    const agent1 = { page: one.page, username: "agent1", name: "Alex Agent" };
    const agent2 = { page: two.page, username: "agent2", name: "Blair Agent" };

    // Sign in: both phones registered, nothing live.
    await signIn(agent1.page, "agent1");
    await signIn(agent2.page, "agent2");
    await waitRegistered(agent1.page);
    await waitRegistered(agent2.page);
    await noChannels("agent1", "agent2");

    // A direct call in.
    await customerCalls("1002");
    await accept(agent1.page, "Casey Customer");
    await connectedLeg(agent1.page, "Casey Customer", "agent1");
    await hangUp(agent1.page, "Casey Customer");
    await noChannels("agent1");
    await agent1.page.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Casey Customer/ }).first().waitFor();

    // A direct call out, to the colleague.
    await agent1.page.getByLabel("Number or extension").fill("1003");
    await agent1.page.getByRole("button", { name: "Call", exact: true }).click();
    await accept(agent2.page, "Alex Agent");
    const out = await connectedLeg(agent1.page, "1003", "agent1");
    const taken = await connectedLeg(agent2.page, "Alex Agent", "agent2");
    expect(out.other_leg).toBe(taken.uuid);
    await hangUp(agent1.page, "1003");
    await card(agent2.page, "Alex Agent").waitFor({ state: "detached" });
    await noChannels("agent1", "agent2");

    // Attended transfer, agent1 to agent2, then back from agent2 to agent1.
    await customerCalls("1002");
    await accept(agent1.page, "Casey Customer");
    await connectedLeg(agent1.page, "Casey Customer", "agent1");
    await attended(agent1, agent2, "1003");
    await attended(agent2, agent1, "1002");
    await hangUp(agent1.page, "Casey Customer");
    await noChannels("agent1", "agent2");
    await agent2.page.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Casey Customer/ }).first().waitFor();

    // Blind transfer, agent1 to agent2, then back.
    await customerCalls("1002");
    await accept(agent1.page, "Casey Customer");
    await connectedLeg(agent1.page, "Casey Customer", "agent1");
    await blind(agent1, agent2, "1003");
    await blind(agent2, agent1, "1002");
    await hangUp(agent1.page, "Casey Customer");
    await noChannels("agent1", "agent2");

    // Failed outgoing calls say why.
    await failedCall(agent1.page, "1099", "No such number");
    await failedCall(agent1.page, "1005", "Unavailable");
    await noChannels("agent1");

    // The server restarts in the middle of a call: once registered again, the card goes.
    await customerCalls("1002");
    await accept(agent1.page, "Casey Customer");
    await connectedLeg(agent1.page, "Casey Customer", "agent1");
    const first = servers[0];
    if (first === undefined) throw new Error("no server");
    await first.stop();
    const second = await serve({ args: ["--port", new URL(first.url).port, "--data-dir", dataDir] });
    servers.push(second);
    await waitRegistered(agent1.page, 45_000);
    await card(agent1.page, "Casey Customer").waitFor({ state: "detached", timeout: 10_000 });
    await signInAdmin();
    await noChannels("agent1");
    await agent1.page.screenshot({ path: join(SCREENSHOTS, "shift-agent-calls-after-restart.png") });

    // Sign out: the phone leaves, nothing live.
    await agent1.page.getByRole("button", { name: "Sign out" }).click();
    await agent1.page.getByRole("button", { name: "Sign in" }).waitFor();
    await noChannels("agent1");
    await poll("agent1's phone unregistered", async () => {
      const status = await v2<{ device_id: string }[]>("GET", "/devices/status");
      const mine = (await v2<{ id: string }[]>("GET", `/users/${userIds.get("agent1") ?? ""}/devices`)).data.map((d) => d.id);
      return status.data.some((row) => mine.includes(row.device_id)) ? undefined : true;
    });
    expect([...one.errors, ...two.errors], "uncaught errors in the consoles").toEqual([]);
  });
});
