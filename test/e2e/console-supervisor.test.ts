// The supervisor's board in Chromium against the built server: only supervisors see it; it lists
// every queue with today's figures and every agent with their state, and follows changes made
// anywhere (here through the REST API, as another agent's console would) without a reload. Then
// a real queue call: the supervisor listens (hears the caller), switches to whisper on the same
// call (the agent hears the supervisor, who is heard by nobody else before), and stops.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { heardLevel, openConsole as openConsolePage, SCREENSHOTS, seriousAxeViolations, signIn, waitRegistered } from "../helpers/console-page.js";
import { toneWav } from "../helpers/phone-page.js";
import { poll } from "../helpers/poll.js";
import { serve, type Served } from "../helpers/serve.js";

/** What the simulated caller plays, what the agent's and the supervisor's microphones send, and a frequency nobody sends. */
const CALLER_TONE = 1200;
const AGENT_TONE = 2000;
const SUPERVISOR_TONE = 700;
const FLOOR = 2900;

let server: Served | undefined;
let launched: LaunchedBrowser | undefined;
let agentBrowser: LaunchedBrowser | undefined;
let supervisorBrowser: LaunchedBrowser | undefined;
const pageErrors: string[] = [];

interface Grant {
  token: string;
  accountId: string;
  ownerId: string;
}

function served(): Served {
  if (server === undefined) throw new Error("beforeAll did not start the server");
  return server;
}

async function rest<T>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; data: T }> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (token !== "") headers["X-Auth-Token"] = token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(served().url + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify({ data: body }) }) });
  const envelope = (await res.json()) as { data: T; auth_token?: string };
  return { status: res.status, data: method === "PUT" ? ({ ...envelope.data, token: envelope.auth_token } as T) : envelope.data };
}

async function grant(username: string): Promise<Grant> {
  const credentials = createHash("md5").update(`${username}:switchboard`).digest("hex");
  const res = await rest<{ account_id: string; owner_id: string; token: string }>("PUT", "/v2/user_auth", "", { credentials, account_name: "demo" });
  expect(res.status).toBe(201);
  return { token: res.data.token, accountId: res.data.account_id, ownerId: res.data.owner_id };
}

async function openConsole(username: string, browser = launched): Promise<Page> {
  if (browser === undefined) throw new Error("beforeAll did not launch the browser");
  const { page } = await openConsolePage(browser.browser, served().url);
  await page.setViewportSize({ width: 1280, height: 1000 });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await signIn(page, username);
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  return page;
}

async function openBoard(page: Page): Promise<void> {
  await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Supervisor" }).click();
  await page.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await serve();
  launched = await launchBrowser();
  agentBrowser = await launchBrowser([`--use-file-for-fake-audio-capture=${await toneWav(AGENT_TONE, 60)}`]);
  supervisorBrowser = await launchBrowser([`--use-file-for-fake-audio-capture=${await toneWav(SUPERVISOR_TONE, 60)}`]);
});

afterAll(async () => {
  await launched?.close();
  await agentBrowser?.close();
  await supervisorBrowser?.close();
  await server?.stop();
  expect(pageErrors, "uncaught errors in the page").toEqual([]);
});

describe("the supervisor's board", () => {
  it("is offered to supervisors only", async () => {
    const agent = await openConsole("agent1");
    const nav = agent.getByRole("navigation", { name: "Console views" });
    await nav.getByRole("link", { name: "Queues" }).waitFor();
    // The profile (with the permissions) has been read once the phone shows its device.
    await agent.getByTestId("registration-state").waitFor();
    expect(await nav.getByRole("link", { name: "Supervisor" }).count()).toBe(0);
    await agent.close();
  });

  it("lists every queue and agent and follows their changes live", async () => {
    const page = await openConsole("supervisor");
    await openBoard(page);

    const queues = page.getByRole("region", { name: "Queues" });
    for (const name of ["Sales", "Support"]) await queues.getByRole("region", { name }).waitFor();
    const sales = queues.getByRole("region", { name: "Sales" });
    await sales.getByTestId("board-available").filter({ hasText: /of/ }).waitFor();
    for (const figure of ["waiting", "longest", "answered", "missed", "abandoned", "average", "total"]) {
      expect(await sales.getByTestId(`board-${figure}`).innerText(), figure).not.toBe("…");
    }
    // The chart of the day is drawn on a canvas, with words for screen readers.
    expect(await sales.locator("canvas").count()).toBeGreaterThan(0);
    expect(await sales.getByRole("img").getAttribute("aria-label")).toMatch(/^Sales today: /);

    // Every recipient of the account, as the REST API lists them.
    const admin = await grant("admin");
    const recipients = await rest<{ id: string; name: string }[]>("GET", `/v2/accounts/${admin.accountId}/callq_recipients?paginate=false`, admin.token);
    const agents = page.getByRole("region", { name: "Agents" });
    await agents.getByRole("row").nth(recipients.data.length).waitFor();
    // Each by their name from the users documents, with the username beside it.
    const users = await rest<{ id: string; first_name?: string; last_name?: string }[]>("GET", `/v2/accounts/${admin.accountId}/users?paginate=false`, admin.token);
    for (const r of recipients.data) {
      const user = users.data.find((u) => u.id === r.id);
      const name = [user?.first_name, user?.last_name].filter((part) => part !== undefined && part !== "").join(" ");
      const header = agents.locator(`tr[data-recipient-id="${r.id}"] th`);
      await header.filter({ hasText: name === "" ? r.name : name }).waitFor();
      expect(await header.innerText(), r.name).toBe(name === "" ? r.name : `${name} ${r.name}`);
    }
    const agent2 = recipients.data.find((r) => r.name === "agent2");
    if (agent2 === undefined) throw new Error("the demo has no agent2");
    const row = agents.locator(`tr[data-recipient-id="${agent2.id}"]`);
    expect(await row.getAttribute("data-state")).toBe("Not-Logged-In");

    // agent2 logs in and goes Ready elsewhere: the board follows, with the state's timer.
    const other = await grant("agent2");
    const statusPath = `/v2/accounts/${other.accountId}/callq_recipients/${other.ownerId}/status`;
    expect((await rest("POST", statusPath, other.token, { status: "login" })).status).toBe(200);
    await agents.locator(`tr[data-recipient-id="${agent2.id}"][data-state="Away"]`).waitFor();
    expect((await rest("POST", statusPath, other.token, { status: "ready" })).status).toBe(200);
    await agents.locator(`tr[data-recipient-id="${agent2.id}"][data-state="Ready"]`).waitFor();
    expect(await row.getByRole("cell").nth(1).innerText()).toMatch(/^\d+:\d\d$/);
    const shown = await rest<{ availability_state: string }>("GET", statusPath, other.token);
    expect(shown.data.availability_state).toBe("Ready");
    // Available now counts agent2 in both queues.
    await sales.getByTestId("board-available").filter({ hasText: /^1 of 1$/ }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "supervisor-board.png"), fullPage: true });
    expect(await seriousAxeViolations(page)).toEqual([]);

    expect((await rest("POST", statusPath, other.token, { status: "logout" })).status).toBe(200);
    await agents.locator(`tr[data-recipient-id="${agent2.id}"][data-state="Not-Logged-In"]`).waitFor();
    await sales.getByTestId("board-available").filter({ hasText: /^0 of 0$/ }).waitFor();
    await page.close();
  });

  it("listens to an agent's call, whispers on the same call, and stops", async () => {
    const agentPage = await openConsole("agent1", agentBrowser);
    const supervisorPage = await openConsole("supervisor", supervisorBrowser);
    await waitRegistered(agentPage);
    await waitRegistered(supervisorPage);
    const agent1 = await grant("agent1");
    const supervisor = await grant("supervisor");
    const admin = await grant("admin");
    const account = `/v2/accounts/${admin.accountId}`;
    for (const status of ["login", "ready"]) {
      expect((await rest("POST", `${account}/callq_recipients/${agent1.ownerId}/status`, agent1.token, { status })).status).toBe(200);
    }

    const started = await rest<{ id: string }>("POST", `${account}/sim/calls`, admin.token, {
      to: "5001",
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      audio: `tone_stream://${CALLER_TONE}`,
    });
    expect(started.status).toBe(201);
    const offer = agentPage.locator(".call-offer");
    await offer.waitFor({ timeout: 20_000 });
    await offer.getByRole("button", { name: "Accept" }).click();
    await agentPage.locator('[data-testid="agent-state-name"][data-state="On-A-Call"]').waitFor();

    await openBoard(supervisorPage);
    const row = supervisorPage.locator(`tr[data-recipient-id="${agent1.ownerId}"][data-state="On-A-Call"]`);
    await row.waitFor();
    expect(await row.innerText()).toContain("Casey Customer");
    await row.getByRole("button", { name: "Listen: agent1" }).click();

    // The server rings the supervisor's phone; the console answers it and shows the supervision.
    const bar = supervisorPage.getByTestId("monitor-bar");
    await bar.getByText("Listen: agent1").waitFor({ timeout: 20_000 });
    const statusPath = `${account}/callq_recipients/${supervisor.ownerId}/status`;
    const listening = await rest<{ wiretapping_recipient?: string; wiretap_mode?: string }>("GET", statusPath, supervisor.token);
    expect(listening.data).toMatchObject({ wiretapping_recipient: agent1.ownerId, wiretap_mode: "eavesdrop" });
    const callerHeard = await heardLevel(supervisorPage, CALLER_TONE);
    const supervisorFloor = await heardLevel(supervisorPage, FLOOR);
    expect(callerHeard - supervisorFloor, `the supervisor hears the caller's ${CALLER_TONE} Hz`).toBeGreaterThan(20);
    // Listening only: what the agent gets at the supervisor's frequency now (the line's own noise there).
    const agentFloor = await heardLevel(agentPage, FLOOR);
    const beforeWhisper = await heardLevel(agentPage, SUPERVISOR_TONE);
    await supervisorPage.screenshot({ path: join(SCREENSHOTS, "supervisor-listening.png"), fullPage: true });

    // Whisper, on the same call: the agent hears the supervisor now.
    await bar.getByRole("button", { name: "Whisper" }).click();
    await bar.getByText("Whisper: agent1").waitFor();
    await poll("the wiretap mode to be whisper", async () => {
      const s = await rest<{ wiretap_mode?: string }>("GET", statusPath, supervisor.token);
      return s.data.wiretap_mode === "whisper" ? true : undefined;
    });
    expect(await bar.getByRole("button", { name: "Whisper" }).getAttribute("aria-pressed")).toBe("true");
    const whispered = await heardLevel(agentPage, SUPERVISOR_TONE);
    expect(whispered - agentFloor, `the agent hears the supervisor's ${SUPERVISOR_TONE} Hz`).toBeGreaterThan(20);
    expect(whispered - beforeWhisper, "the agent did not hear the supervisor before the whisper").toBeGreaterThan(15);
    expect(await supervisorPage.locator(".call-offer").count()).toBe(0);

    await bar.getByRole("button", { name: "Stop" }).click();
    await bar.waitFor({ state: "detached" });
    await poll("the wiretap to end", async () => {
      const s = await rest<{ wiretapping_recipient?: string }>("GET", statusPath, supervisor.token);
      return s.data.wiretapping_recipient === undefined ? true : undefined;
    });
    await rest("POST", `${account}/sim/calls/${started.data.id}`, admin.token, { action: "hangup" });
    await agentPage.close();
    await supervisorPage.close();
  });
});
