// One agent's queue day in Chromium against serve mode, in one test: sign in, Login, Ready, a
// queue call accepted and wrapped up, a call rejected that goes to a colleague, ring-no-answer,
// repeated misses that set the agent Away with the reason shown, Ready again, an attended
// transfer to the colleague with wrap-up only once it is completed, and Sign out, which logs the
// agent out of the queues. At every step the console, the recipient status from the API and the
// agent's channels agree.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole, SCREENSHOTS, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { serve, type Served } from "../helpers/serve.js";

interface Envelope<T> {
  data: T;
  auth_token?: string;
}

interface Status {
  availability_state: string;
  available: boolean;
  away_reason?: string;
  missed_offers?: number;
  unavailable_reason?: string;
  stats: { missed_calls: number; total_calls: number };
}

/** Sales' settings for the day: short rings and wrap-up, so the test does not wait for the defaults. */
const RING_S = 8;
const WRAPUP_S = 3;

let server: Served | undefined;
let browser: LaunchedBrowser | undefined;
let one: ConsolePage | undefined;
let two: ConsolePage | undefined;
let admin = "";
let accountId = "";
const ids: Record<string, string> = {};
let salesPath = "";

function served(): Served {
  if (server === undefined) throw new Error("beforeAll did not start the server");
  return server;
}

async function rest<T>(method: string, path: string, body?: unknown, token = admin): Promise<{ status: number; body: Envelope<T> }> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (token !== "") headers["X-Auth-Token"] = token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(served().url + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify({ data: body }) }) });
  return { status: res.status, body: (await res.json()) as Envelope<T> };
}

async function signInRest(username: string): Promise<{ token: string; accountId: string; ownerId: string }> {
  const credentials = createHash("md5").update(`${username}:switchboard`).digest("hex");
  const res = await rest<{ account_id: string; owner_id: string }>("PUT", "/v2/user_auth", { credentials, account_name: "demo" }, "");
  expect(res.status).toBe(201);
  return { token: res.body.auth_token ?? "", accountId: res.body.data.account_id, ownerId: res.body.data.owner_id };
}

async function status(username: string): Promise<Status> {
  const res = await rest<Status>("GET", `/v2/accounts/${accountId}/callq_recipients/${ids[username] ?? ""}/status`);
  expect(res.status).toBe(200);
  return res.body.data;
}

/** The agent's live channels (their phone's legs) as the API lists them. */
async function channels(username: string): Promise<number> {
  const res = await rest<unknown[]>("GET", `/v2/accounts/${accountId}/users/${ids[username] ?? ""}/channels`);
  expect(res.status).toBe(200);
  return res.body.data.length;
}

/** Waits until the console shows `state`, then checks the API says the same. */
async function expectState(page: Page, username: string, state: string): Promise<Status> {
  await page.locator(`[data-testid="agent-state-name"][data-state="${state}"]`).waitFor({ timeout: 20_000 });
  const now = await status(username);
  expect(now.availability_state).toBe(state);
  return now;
}

/**
 * A state that ends by itself (wrap-up): the console shows it, and the API says it or the state
 * after it (the wrap-up may be over by the time the API is asked).
 */
async function expectPassing(page: Page, username: string, state: string, after: string): Promise<void> {
  await page.locator(`[data-testid="agent-state-name"][data-state="${state}"]`).waitFor({ timeout: 20_000 });
  expect([state, after]).toContain((await status(username)).availability_state);
}

async function simCall(name: string): Promise<string> {
  const res = await rest<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, { to: "5001", caller_id_name: name, caller_id_number: "+14155550100", audio: "tone_stream://440" });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function hangupSim(id: string): Promise<void> {
  await rest("POST", `/v2/accounts/${accountId}/sim/calls/${id}`, { action: "hangup" });
}

function offerOn(page: Page) {
  return page.getByRole("region", { name: "Incoming call" });
}

function panelOf(page: Page) {
  return page.getByTestId("agent-state");
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await serve();
  const signedIn = await signInRest("admin");
  admin = signedIn.token;
  accountId = signedIn.accountId;
  const users = await rest<{ id: string; username: string }[]>("GET", `/v2/accounts/${accountId}/users`);
  for (const u of users.body.data) ids[u.username] = u.id;
  const queues = await rest<{ id: string; name: string }[]>("GET", `/v2/accounts/${accountId}/callq_queues`);
  const sales = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
  salesPath = `/v2/accounts/${accountId}/callq_queues/${sales}`;
  const patched = await rest("PATCH", salesPath, { ring_timeout: RING_S, agent_wrapup_time: WRAPUP_S, max_missed_offers: 3 });
  expect(patched.status).toBe(200);
  browser = await launchBrowser();
  one = await openConsole(browser.browser, served().url);
  two = await openConsole(browser.browser, served().url);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  expect([...(one?.errors ?? []), ...(two?.errors ?? [])], "uncaught errors in the consoles").toEqual([]);
});

describe("an agent's shift on the Sales queue", () => {
  it("sign in, Login, Ready, calls accepted, rejected, not answered, Away after misses, attended transfer, sign out", async () => {
    if (one === undefined || two === undefined) throw new Error("beforeAll did not open the consoles");
    const p = one.page;
    const q = two.page;

    // Sign in: logged out of the queues, phone registered, no channel.
    await signIn(p, "agent1");
    await waitRegistered(p);
    await p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Agent" }).click();
    expect((await expectState(p, "agent1", "Not-Logged-In")).available).toBe(false);
    expect(await channels("agent1")).toBe(0);
    await signIn(q, "agent2");
    await waitRegistered(q);
    await q.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Agent" }).click();
    await panelOf(q).getByRole("button", { name: "Login" }).click();
    await expectState(q, "agent2", "Away");

    // Login (Away), then Ready.
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(p, "agent1", "Away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    expect((await expectState(p, "agent1", "Ready")).available).toBe(true);

    // A queue call accepted: On a call with one channel, then wrap-up, then Ready by itself.
    const casey = await simCall("Casey Customer");
    await offerOn(p).getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    expect(await offerOn(p).innerText()).toContain("Casey Customer");
    await expectState(p, "agent1", "Call-Offer");
    await offerOn(p).getByRole("button", { name: "Accept" }).click();
    expect((await expectState(p, "agent1", "On-A-Call")).available).toBe(false);
    expect(await channels("agent1")).toBe(1);
    await hangupSim(casey);
    await expectPassing(p, "agent1", "Wrapup-Time", "Ready");
    await p.getByTestId("wrapup").waitFor();
    await poll("agent1's channel gone", async () => ((await channels("agent1")) === 0 ? true : undefined));
    await expectState(p, "agent1", "Ready");
    expect((await status("agent1")).stats.total_calls).toBe(1);

    // A call rejected goes to the colleague, and agent1 is not rung for it again.
    // Counted from here: missed_calls also counts offers no device could take.
    const missedBefore = (await status("agent1")).stats.missed_calls;
    const riley = await simCall("Riley Rejected");
    await offerOn(p).getByRole("button", { name: "Reject" }).waitFor({ timeout: 20_000 });
    await panelOf(q).getByRole("button", { name: "Ready" }).click();
    await expectState(q, "agent2", "Ready");
    await offerOn(p).getByRole("button", { name: "Reject" }).click();
    await offerOn(q).getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    expect(await offerOn(q).innerText()).toContain("Riley Rejected");
    await expectState(p, "agent1", "Ready");
    expect((await status("agent1")).stats.missed_calls).toBe(missedBefore + 1);
    await offerOn(q).getByRole("button", { name: "Accept" }).click();
    await expectState(q, "agent2", "On-A-Call");
    expect(await offerOn(p).count()).toBe(0);
    expect(await channels("agent1")).toBe(0);
    await hangupSim(riley);
    await expectPassing(q, "agent2", "Wrapup-Time", "Ready");
    await panelOf(q).getByRole("button", { name: "Away" }).click();
    await expectState(q, "agent2", "Away");

    // Ring-no-answer twice (the reject made one miss): the third miss in a row sets agent1 Away,
    // and the console says why.
    const noel = await simCall("Noel Noanswer");
    await offerOn(p).getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    await expectState(p, "agent1", "Call-Offer");
    await offerOn(p).waitFor({ state: "detached", timeout: (RING_S + 5) * 1000 });
    await poll("the second miss", async () => ((await status("agent1")).stats.missed_calls === missedBefore + 2 ? true : undefined));
    await offerOn(p).getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    await offerOn(p).waitFor({ state: "detached", timeout: (RING_S + 5) * 1000 });
    const away = await expectState(p, "agent1", "Away");
    expect(away).toMatchObject({ available: false, away_reason: "missed_offers", missed_offers: 3, stats: { missed_calls: missedBefore + 3 } });
    const reason = panelOf(p).getByTestId("agent-state-reason");
    expect(await reason.innerText()).toContain("Set Away after 3 missed offers");
    await p.screenshot({ path: join(SCREENSHOTS, "shift-away-after-misses.png") });
    // Away: the caller waits, offered to nobody.
    const waiting = await rest<{ session_list: { caller_id_name: string; state: string }[] }[]>("GET", `${salesPath}/sessions`);
    expect(waiting.body.data[0]?.session_list).toMatchObject([{ caller_id_name: "Noel Noanswer", state: "waiting" }]);
    await hangupSim(noel);

    // Ready again: the reason goes.
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    expect(await expectState(p, "agent1", "Ready")).not.toHaveProperty("away_reason");
    expect(await reason.count()).toBe(0);

    // Attended transfer to the colleague: agent1 stays On a call through the consultation (longer
    // than the wrap-up time) and wraps up only once they complete it.
    const tess = await simCall("Tess Transfer");
    await offerOn(p).getByRole("button", { name: "Accept" }).click({ timeout: 20_000 });
    await expectState(p, "agent1", "On-A-Call");
    const call1 = p.getByRole("region", { name: /^Call with .*Tess Transfer/ });
    await call1.getByText("Connected").waitFor();
    await call1.locator("summary", { hasText: "Transfer" }).click();
    await call1.getByLabel("Transfer to (extension, user or number)").fill("1003");
    await call1.getByLabel("Attended (consult first)").check();
    await call1.getByRole("button", { name: "Transfer", exact: true }).click();
    await offerOn(q).getByRole("button", { name: "Accept" }).click({ timeout: 20_000 });
    await call1.getByRole("group", { name: "Attended transfer" }).waitFor();
    await p.waitForTimeout((WRAPUP_S + 2) * 1000);
    await expectState(p, "agent1", "On-A-Call");
    // agent1's own leg; the consult legs (a loopback) carry no owner and are not listed.
    expect(await channels("agent1")).toBe(1);
    await call1.getByRole("button", { name: "Complete transfer" }).click();
    await call1.waitFor({ state: "detached" });
    await expectPassing(p, "agent1", "Wrapup-Time", "Ready");
    await poll("agent1's channels gone", async () => ((await channels("agent1")) === 0 ? true : undefined));
    await expectState(p, "agent1", "Ready");
    expect((await status("agent1")).stats.total_calls).toBe(2);
    await hangupSim(tess);
    await poll("agent2 off the call", async () => ((await channels("agent2")) === 0 ? true : undefined));

    // Sign out, logging out of the queues: the server has agent1 logged out, no offer follows,
    // and signing in again does not land in Ready.
    await p.getByRole("button", { name: "Sign out" }).click();
    const dialog = p.getByTestId("sign-out-dialog");
    expect(await dialog.innerText()).toContain("You are logged in to your queues (Ready)");
    await p.screenshot({ path: join(SCREENSHOTS, "shift-sign-out.png") });
    await dialog.getByRole("button", { name: "Sign out and log out of queues" }).click();
    await p.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await status("agent1")).toMatchObject({ availability_state: "Not-Logged-In", available: false });
    const queueStatus = await rest<{ available_recipient_count: number }>("GET", `${salesPath}/status`);
    expect(queueStatus.body.data.available_recipient_count).toBe(0);
    await signIn(p, "agent1");
    await waitRegistered(p);
    await p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Agent" }).click();
    await expectState(p, "agent1", "Not-Logged-In");
  }, 300_000);
});
