// The supervisor's board in Chromium against the built server: only supervisors see it; it lists
// every queue with today's figures and every agent with their state, and follows changes made
// anywhere (here through the REST API, as another agent's console would) without a reload.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { REPO_ROOT, serve, type Served } from "../helpers/serve.js";

const SCREENSHOTS = join(REPO_ROOT, "test-results/screenshots");

let server: Served | undefined;
let launched: LaunchedBrowser | undefined;
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

async function openConsole(username: string): Promise<Page> {
  if (launched === undefined) throw new Error("beforeAll did not launch the browser");
  const page = await launched.browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(served().url);
  await page.getByLabel("Account name", { exact: true }).fill("demo");
  await page.getByLabel("Username", { exact: true }).fill(username);
  await page.getByLabel("Password", { exact: true }).fill("switchboard");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  return page;
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await serve();
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
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
    await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Supervisor" }).click();
    await page.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();

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
    for (const r of recipients.data) {
      expect(await agents.getByRole("rowheader", { name: r.name, exact: true }).count(), r.name).toBe(1);
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

    expect((await rest("POST", statusPath, other.token, { status: "logout" })).status).toBe(200);
    await agents.locator(`tr[data-recipient-id="${agent2.id}"][data-state="Not-Logged-In"]`).waitFor();
    await sales.getByTestId("board-available").filter({ hasText: /^0 of 0$/ }).waitFor();
    await page.close();
  });
});
