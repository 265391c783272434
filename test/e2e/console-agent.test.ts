// The agent's queue work in Chromium against the built server: Login, Ready and Away through the
// buttons (and Ready/Away from the keyboard), the state on screen always the one GET status
// answers; a simulated caller to the Sales queue shows in the queues view, is offered to the agent
// when Ready and accepted; after the call the wrap-up counts down, is extended and cancelled; with
// the queue's force_away_on_reject, rejecting an offer leaves the agent Away and the caller waiting.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { seriousAxeViolations } from "../helpers/console-page.js";
import { EventsClient, type EventMessage } from "../helpers/events-client.js";
import { poll } from "../helpers/poll.js";
import { REPO_ROOT, serve, type Served } from "../helpers/serve.js";

const SCREENSHOTS = join(REPO_ROOT, "test-results/screenshots");

let server: Served | undefined;
let launched: LaunchedBrowser | undefined;
let page: Page | undefined;
const pageErrors: string[] = [];
let auth: { token: string; accountId: string; ownerId: string } | undefined;

interface Envelope<T> {
  status: string;
  data: T;
  auth_token?: string;
}

function served(): Served {
  if (server === undefined) throw new Error("beforeAll did not start the server");
  return server;
}

function thePage(): Page {
  if (page === undefined) throw new Error("beforeAll did not open the page");
  return page;
}

function who(): { token: string; accountId: string; ownerId: string } {
  if (auth === undefined) throw new Error("not signed in over REST");
  return auth;
}

/** A REST call as agent1, or with `token` (the admin's, for the simulated caller). */
async function rest<T>(method: string, path: string, body?: unknown, token = auth?.token): Promise<{ status: number; body: Envelope<T> }> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (token !== undefined && token !== "") headers["X-Auth-Token"] = token;
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

/** What the server says agent1's state is. */
async function serverState(): Promise<{ availability_state: string; wrapup_time_seconds: number }> {
  const { accountId, ownerId } = who();
  const res = await rest<{ availability_state: string; wrapup_time_seconds: number }>("GET", `/v2/accounts/${accountId}/callq_recipients/${ownerId}/status`);
  expect(res.status).toBe(200);
  return res.body.data;
}

async function shownState(p: Page): Promise<string> {
  return (await p.getByTestId("agent-state-name").getAttribute("data-state")) ?? "";
}

/** Waits until the state on screen is `state`, then checks the server says the same. */
async function expectState(p: Page, state: string): Promise<void> {
  await p.locator(`[data-testid="agent-state-name"][data-state="${state}"]`).waitFor({ timeout: 15_000 });
  expect((await serverState()).availability_state).toBe(state);
  expect(await shownState(p)).toBe(state);
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await serve();
  launched = await launchBrowser();
  auth = await signInRest("agent1");
  page = await launched.browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(server.url);
  await page.getByLabel("Account name", { exact: true }).fill("demo");
  await page.getByLabel("Username", { exact: true }).fill("agent1");
  await page.getByLabel("Password", { exact: true }).fill("switchboard");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
});

afterAll(async () => {
  await launched?.close();
  await server?.stop();
  expect(pageErrors, "uncaught errors in the page").toEqual([]);
});

describe("the agent's queue state", () => {
  it("shows the server's state and changes it with Login, Ready, Away and Logout", async () => {
    const p = thePage();
    const panel = p.getByTestId("agent-state");
    await panel.waitFor();
    await expectState(p, "Not-Logged-In");
    expect(await panel.getByRole("button", { name: "Ready" }).count()).toBe(0);

    await panel.getByRole("button", { name: "Login" }).click();
    // Logging in leaves the recipient Away (the engine's rule); the console shows what the server did.
    await expectState(p, "Away");
    expect(await panel.getByRole("button", { name: "Away" }).getAttribute("aria-pressed")).toBe("true");
    // Both demo queues, each taking this agent's calls.
    const queues = panel.getByRole("group", { name: "Take calls from" });
    expect(await queues.getByRole("checkbox").count()).toBe(2);

    await panel.getByRole("button", { name: "Ready" }).click();
    await expectState(p, "Ready");
    expect(await panel.getByRole("button", { name: "Ready" }).getAttribute("aria-pressed")).toBe("true");
    // The timer runs from the server's time of the change.
    await poll("the state timer to pass two seconds", async () => ((await p.getByTestId("agent-state-timer").innerText()) >= "0:02" ? true : undefined));
    await p.screenshot({ path: join(SCREENSHOTS, "agent-ready.png") });

    await panel.getByRole("button", { name: "Away" }).click();
    await expectState(p, "Away");

    // Ready and Away from the keyboard.
    await p.keyboard.press("Alt+KeyY");
    await expectState(p, "Ready");
    await p.keyboard.press("Alt+KeyW");
    await expectState(p, "Away");

    // Per-queue availability: the server reports it, the checkbox follows.
    const sales = queues.getByRole("checkbox", { name: "Sales" });
    await sales.click();
    await poll("Sales to be unchecked", async () => ((await sales.isChecked()) ? undefined : true));
    const { accountId, ownerId } = who();
    const status = await rest<{ queue_availability?: Record<string, boolean> }>("GET", `/v2/accounts/${accountId}/callq_recipients/${ownerId}/status`);
    expect(Object.values(status.body.data.queue_availability ?? {})).toEqual([false]);
    await sales.click();
    await poll("Sales to be checked", async () => ((await sales.isChecked()) ? true : undefined));

    await panel.getByRole("button", { name: "Logout" }).click();
    await expectState(p, "Not-Logged-In");

    // A change made elsewhere (the REST API, a feature code) shows without any click.
    await rest("POST", `/v2/accounts/${accountId}/callq_recipients/${ownerId}/status`, { status: "login" });
    await expectState(p, "Away");
  });

  it("shows a caller waiting in Sales, offers them when Ready, and counts the wrap-up down after the call", async () => {
    const p = thePage();
    const { accountId } = who();
    // Simulated callers are an admin's tool.
    const admin = (await signInRest("admin")).token;
    await p.getByTestId("registration-state").filter({ hasText: "Registered" }).waitFor({ timeout: 20_000 });
    // Logged in and Away (as the first test leaves it), so the caller waits.
    await rest("POST", `/v2/accounts/${accountId}/callq_recipients/${who().ownerId}/status`, { status: "login" });
    await rest("POST", `/v2/accounts/${accountId}/callq_recipients/${who().ownerId}/status`, { status: "away" });
    await expectState(p, "Away");

    const started = await rest<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      to: "5001",
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      audio: "tone_stream://440",
    }, admin);
    expect(started.status).toBe(201);
    const simId = started.body.data.id;

    await p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Queues" }).click();
    const card = p.getByRole("region", { name: "Sales" });
    await card.getByRole("cell", { name: /Casey Customer/ }).waitFor({ timeout: 15_000 });
    expect(await card.getByTestId("queue-waiting").innerText()).toBe("1");
    // The agent's state stays in sight on every view.
    expect(await p.getByTestId("agent-state-badge").getAttribute("data-state")).toBe("Away");
    await poll("the longest wait to pass a second", async () => ((await card.getByTestId("queue-longest").innerText()) >= "0:01" ? true : undefined));
    const sessions = await rest<{ session_list: { caller_id_name: string }[] }[]>("GET", `/v2/accounts/${accountId}/callq_queues/${await card.getAttribute("data-queue-id")}/sessions`);
    expect(sessions.body.data[0]?.session_list.map((s) => s.caller_id_name)).toEqual(["Casey Customer"]);
    expect(await card.getByTestId("queue-available").innerText()).toBe("0 of 1");
    await p.screenshot({ path: join(SCREENSHOTS, "queues-waiting.png") });
    expect(await seriousAxeViolations(p)).toEqual([]);

    await p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Agent" }).click();
    await p.getByTestId("agent-state").getByRole("button", { name: "Ready" }).click();
    const offer = p.locator(".call-offer");
    await offer.waitFor({ timeout: 20_000 });
    expect(await offer.innerText()).toContain("Casey Customer");
    await expectState(p, "Call-Offer");
    await offer.getByRole("button", { name: "Accept" }).click();
    await expectState(p, "On-A-Call");
    await p.screenshot({ path: join(SCREENSHOTS, "agent-on-call.png") });

    // The caller hangs up: wrap-up (the demo queues' agent_wrapup_time is 10 s).
    const hangup = await rest("POST", `/v2/accounts/${accountId}/sim/calls/${simId}`, { action: "hangup" }, admin);
    expect(hangup.status).toBe(202);
    await expectState(p, "Wrapup-Time");
    const left = p.getByTestId("wrapup-left");
    const before = await left.innerText();
    expect(before).toMatch(/^0:(0\d|10)$/);
    await p.screenshot({ path: join(SCREENSHOTS, "agent-wrapup.png") });
    expect(await seriousAxeViolations(p)).toEqual([]);

    await p.getByRole("button", { name: "Extend wrap-up" }).click();
    await poll("the countdown to grow", async () => (seconds(await left.innerText()) > seconds(before) + 5 ? true : undefined));
    expect((await serverState()).wrapup_time_seconds).toBeGreaterThan(seconds(before) + 5);
    expect(await shownState(p)).toBe("Wrapup-Time");

    await p.getByRole("button", { name: "Cancel wrap-up" }).click();
    await expectState(p, "Ready");
    expect(await p.getByTestId("wrapup").count()).toBe(0);
  });

  it("rejecting an offer from a queue with force_away_on_reject leaves the agent Away, counts the miss and keeps the caller waiting", async () => {
    const p = thePage();
    const { accountId, ownerId } = who();
    const admin = (await signInRest("admin")).token;
    await p.getByTestId("registration-state").filter({ hasText: "Registered" }).waitFor({ timeout: 20_000 });
    const queues = await rest<{ id: string; name: string }[]>("GET", `/v2/accounts/${accountId}/callq_queues`, undefined, admin);
    const salesId = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
    expect(salesId).not.toBe("");
    const queuePath = `/v2/accounts/${accountId}/callq_queues/${salesId}`;
    const patched = await rest<{ force_away_on_reject: boolean }>("PATCH", queuePath, { force_away_on_reject: true }, admin);
    expect(patched.status).toBe(200);
    expect(patched.body.data.force_away_on_reject).toBe(true);

    const events = await EventsClient.connect(`${served().url.replace(/^http/, "ws")}/events`);
    let simId: string | undefined;
    try {
      expect(await events.subscribe(accountId, `callq.recipient.${ownerId}`, { auth_token: who().token })).toMatchObject({ status: "success" });

      // Of the Sales members only agent1 may take the call: every other one logged out.
      const members = await rest<{ id: string }[]>("GET", `${queuePath}/recipients`, undefined, admin);
      const others = members.body.data.map((m) => m.id).filter((id) => id !== ownerId);
      expect(others.length).toBeGreaterThan(0);
      for (const id of others) {
        const status = `/v2/accounts/${accountId}/callq_recipients/${id}/status`;
        const now = await rest<{ availability_state: string }>("GET", status, undefined, admin);
        if (now.body.data.availability_state !== "Not-Logged-In") expect((await rest("POST", status, { status: "logout" }, admin)).status).toBe(200);
        expect((await rest<{ availability_state: string }>("GET", status, undefined, admin)).body.data.availability_state).toBe("Not-Logged-In");
      }

      // Login and Ready through the console's buttons, from logged out.
      const panel = p.getByTestId("agent-state");
      await p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Agent" }).click();
      await panel.waitFor();
      if ((await shownState(p)) !== "Not-Logged-In") {
        await panel.getByRole("button", { name: "Logout" }).click();
        await expectState(p, "Not-Logged-In");
      }
      await panel.getByRole("button", { name: "Login" }).click();
      await expectState(p, "Away");
      await panel.getByRole("button", { name: "Ready" }).click();
      await expectState(p, "Ready");
      expect(await panel.getByRole("group", { name: "Take calls from" }).getByRole("checkbox", { name: "Sales" }).isChecked()).toBe(true);
      const before = await missedCalls();

      const started = await rest<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
        to: "5001",
        caller_id_name: "Riley Rejected",
        caller_id_number: "+14155550123",
        audio: "tone_stream://%(1000,0,1200)",
      }, admin);
      expect(started.status).toBe(201);
      simId = started.body.data.id;

      const offer = p.getByRole("region", { name: "Incoming call" });
      await offer.getByRole("button", { name: "Reject" }).waitFor({ timeout: 20_000 });
      const offered = await offer.innerText();
      expect(offered).toContain("Riley Rejected");
      expect(offered).toMatch(/Queue\s+Sales/);
      await expectState(p, "Call-Offer");
      await offer.getByRole("button", { name: "Reject" }).click();
      await offer.waitFor({ state: "detached", timeout: 15_000 });

      // The queue forces the agent Away: the console shows the server's state, and the miss counts.
      await expectState(p, "Away");
      expect(await panel.getByRole("button", { name: "Away" }).getAttribute("aria-pressed")).toBe("true");
      expect(await missedCalls()).toBe(before + 1);
      const rejected = (await events.next((m) => m.action === "event" && m.name === "reject", 15_000)) as EventMessage;
      expect(rejected.data.availability_state).toBe("Away");
      await p.screenshot({ path: join(SCREENSHOTS, "agent-rejected-away.png") });

      // The caller was not given up: still waiting in Sales, offered to nobody.
      const waiting = await poll("the caller waiting in Sales again", async () => {
        const res = await rest<{ session_list: { session_id: string; caller_id_name: string; state: string }[] }[]>("GET", `${queuePath}/sessions`, undefined, admin);
        const session = res.body.data[0]?.session_list.find((s) => s.caller_id_name === "Riley Rejected");
        return session?.state === "waiting" ? session : undefined;
      });
      const removed = await rest("POST", `${queuePath}/sessions/${waiting.session_id}`, { action: "remove" }, admin);
      expect(removed.status).toBe(200);
      // Still Away after the caller is gone; nothing else was offered meanwhile.
      expect((await serverState()).availability_state).toBe("Away");
      expect(await missedCalls()).toBe(before + 1);
    } finally {
      if (simId !== undefined) await rest("POST", `/v2/accounts/${accountId}/sim/calls/${simId}`, { action: "hangup" }, admin);
      await events.close();
      const restored = await rest<{ force_away_on_reject: boolean }>("PATCH", queuePath, { force_away_on_reject: false }, admin);
      expect(restored.body.data.force_away_on_reject).toBe(false);
    }
  });
});

describe("signing out", () => {
  it("asks a logged-in agent what becomes of their queues; 'stay Away' leaves them Away, and signing in again does not land in Ready", async () => {
    const p = thePage();
    const { accountId, ownerId } = who();
    await rest("POST", `/v2/accounts/${accountId}/callq_recipients/${ownerId}/status`, { status: "login" });
    await rest("POST", `/v2/accounts/${accountId}/callq_recipients/${ownerId}/status`, { status: "ready" });
    await p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Agent" }).click();
    await expectState(p, "Ready");

    // Asked first; Escape keeps the agent signed in, as they were.
    await p.getByRole("button", { name: "Sign out" }).click();
    const dialog = p.getByRole("dialog", { name: "Sign out" });
    await dialog.waitFor();
    // The default has the focus: Enter takes it, without a mouse. (Page-side code as text: the
    // node project has no DOM types.)
    expect(await p.evaluate("document.activeElement && document.activeElement.textContent")).toBe("Sign out and log out of queues");
    expect(await seriousAxeViolations(p)).toEqual([]);
    await p.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    expect((await serverState()).availability_state).toBe("Ready");

    await p.getByRole("button", { name: "Sign out" }).click();
    await p.getByRole("dialog", { name: "Sign out" }).getByRole("button", { name: "Sign out, stay Away" }).click();
    await p.getByRole("button", { name: "Sign in" }).waitFor();
    expect((await serverState()).availability_state).toBe("Away");

    await p.getByLabel("Password", { exact: true }).fill("switchboard");
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Agent" }).click();
    await expectState(p, "Away");
  });
});

/** agent1's count of offers missed (rejected or not answered), as the server keeps it. */
async function missedCalls(): Promise<number> {
  const { accountId, ownerId } = who();
  const res = await rest<{ stats: { missed_calls: number } }>("GET", `/v2/accounts/${accountId}/callq_recipients/${ownerId}/status`);
  return res.body.data.stats.missed_calls;
}

function seconds(text: string): number {
  const [m, s] = text.split(":").map(Number);
  return (m ?? 0) * 60 + (s ?? 0);
}
