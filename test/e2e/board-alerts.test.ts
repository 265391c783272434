// A queue's alert on the supervisor's board in Chromium against the built server: with nobody
// Ready, a simulated caller waits past the queue's longest-wait limit, the board shows the alert
// on the queue's card; the caller hangs up and the alert clears. The status agrees each time.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole as openConsolePage, signIn, waitRegistered } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { demoGrant, serve, type Served } from "../helpers/serve.js";

let server: Served | undefined;
let launched: LaunchedBrowser | undefined;
const pageErrors: string[] = [];

function served(): Served {
  if (server === undefined) throw new Error("beforeAll did not start the server");
  return server;
}

async function rest<T>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; data: T }> {
  const headers: Record<string, string> = { Accept: "application/json", "X-Auth-Token": token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(served().url + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify({ data: body }) }) });
  return { status: res.status, data: ((await res.json()) as { data: T }).data };
}

async function openConsole(username: string): Promise<Page> {
  if (launched === undefined) throw new Error("beforeAll did not launch the browser");
  const { page } = await openConsolePage(launched.browser, served().url);
  page.on("pageerror", (error) => pageErrors.push(`${username}: ${error.message}`));
  await signIn(page, username);
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  await waitRegistered(page);
  return page;
}

beforeAll(async () => {
  server = await serve();
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
  await server?.stop();
  expect(pageErrors, "uncaught errors in the pages").toEqual([]);
});

describe("the board's alerts", () => {
  it("shows a caller waiting past the queue's limit on its card, and clears it when they hang up", async () => {
    const admin = await demoGrant(served().url, "admin");
    const account = `/v2/accounts/${admin.accountId}`;
    const queues = await rest<{ id: string; name: string }[]>("GET", `${account}/callq_queues?paginate=false`, admin.token);
    const salesId = queues.data.find((q) => q.name === "Sales")?.id ?? "";
    const limitS = 3;
    expect((await rest("PATCH", `${account}/callq_queues/${salesId}`, admin.token, { alerts: { longest_wait_s: limitS } })).status).toBe(200);
    const status = async () => (await rest<{ alerts: { kind: string }[]; stats: { active_session_count: number } }>("GET", `${account}/callq_queues/${salesId}/status`, admin.token)).data;
    expect((await status()).alerts).toEqual([]);

    const supervisorPage = await openConsole("supervisor");
    await supervisorPage.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Supervisor" }).click();
    const tile = supervisorPage.getByRole("region", { name: "Queues" }).getByRole("region", { name: "Sales" });
    await tile.waitFor();
    expect(await tile.getByTestId("board-alerts").count()).toBe(0);

    // Nobody of the demo account is logged in: the caller waits.
    const started = await rest<{ id: string }>("POST", `${account}/sim/calls`, admin.token, { to: "5001", caller_id_name: "Wally Waiting", caller_id_number: "+14155550301", audio: "tone_stream://440" });
    expect(started.status).toBe(201);
    await tile.getByTestId("board-waiting").filter({ hasText: /^1$/ }).waitFor({ timeout: 15_000 });
    const alert = tile.getByTestId("board-alerts").locator('[data-alert-kind="longest_wait"]');
    await alert.waitFor({ timeout: 15_000 });
    expect(await alert.innerText()).toBe("A caller has waited over 0:03");
    expect(await tile.getAttribute("data-alerting")).toBe("true");
    expect((await status()).alerts).toMatchObject([{ kind: "longest_wait" }]);

    expect((await rest("POST", `${account}/sim/calls/${started.data.id}`, admin.token, { action: "hangup" })).status).toBeLessThan(300);
    await tile.getByTestId("board-alerts").waitFor({ state: "detached", timeout: 15_000 });
    expect(await tile.getAttribute("data-alerting")).toBeNull();
    await poll("the status without the alert", async () => ((await status()).alerts.length === 0 ? true : undefined));
  });
});
