// The directory in Debian Chromium with two consoles (agent1 watches, agent2 is the colleague):
// agent2's presence changes on agent1's screen as they register, go Away and Ready and take a call;
// agent2 in do not disturb refuses agent1's direct call (agent1's console shows it failed); a call
// agent1 misses counts on the navigation and in the title, and Call back rings agent2; agent2's
// auto-answer takes a queue offer by itself after the delay.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, openConsole, seriousAxeViolations, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let watcher: ConsolePage;
let colleague: ConsolePage;
let agent2Id = "";

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  const users = await api.call<{ id: string; username: string }[]>("GET", `/v2/accounts/${accountId}/users`, { token, query: { paginate: "false" } });
  agent2Id = users.body.data.find((u) => u.username === "agent2")?.id ?? "";
  browser = await launchBrowser();
  watcher = await openConsole(browser.browser, api.url);
  await signIn(watcher.page, "agent1");
  await waitRegistered(watcher.page);
});

afterEach(() => {
  expect(watcher.errors, "uncaught errors in agent1's console").toEqual([]);
  expect(colleague?.errors ?? [], "uncaught errors in agent2's console").toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

async function openView(page: Page, name: string): Promise<void> {
  await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: new RegExp(`^${name}`) }).click();
}

/** agent2's row in agent1's directory. */
function agent2Row(page: Page) {
  return page.locator(`li.colleague[data-user-id="${agent2Id}"]`);
}

async function presenceIs(page: Page, presence: string, timeout = 10_000): Promise<void> {
  await page.locator(`li.colleague[data-user-id="${agent2Id}"][data-presence="${presence}"]`).waitFor({ timeout });
}

async function setStatus(status: string): Promise<void> {
  const res = await api.call("POST", `/v2/accounts/${accountId}/callq_recipients/${agent2Id}/status`, { token, data: { status } });
  expect(res.status, res.text).toBe(200);
}

describe("the directory", () => {
  it("shows a colleague's presence change as they register, go Away, Ready and take a call", async () => {
    const { page } = watcher;
    await openView(page, "Directory");
    await presenceIs(page, "offline");
    expect(await agent2Row(page).innerText()).toContain("Blair Agent");

    // The search finds by extension and by name.
    const search = page.getByLabel("Search by name, username or extension");
    await search.fill("1003");
    expect(await page.locator("li.colleague").count()).toBe(1);
    await search.fill("blair");
    expect(await page.locator("li.colleague").count()).toBe(1);
    await search.fill("");

    colleague = await openConsole(browser.browser, api.url);
    await signIn(colleague.page, "agent2");
    await waitRegistered(colleague.page);
    await presenceIs(page, "available");

    await setStatus("login");
    await presenceIs(page, "away");
    await setStatus("ready");
    await presenceIs(page, "ready");
    expect(await agent2Row(page).getByTestId("presence").innerText()).toBe("Ready");
    await setStatus("logout");
    await presenceIs(page, "available");

    // agent1 calls agent2 from the directory: ringing, then on a call once agent2 accepts.
    await agent2Row(page).getByRole("button", { name: "Call Blair Agent" }).click();
    await presenceIs(page, "ringing");
    const offer = colleague.page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).click();
    await colleague.page.getByText("Connected").waitFor();
    await presenceIs(page, "on_call");
    await colleague.page.getByRole("button", { name: "Hang up" }).click();
    await presenceIs(page, "available");
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it("refuses a direct call to a colleague in do not disturb: the caller's console says it failed", async () => {
    const { page } = watcher;
    await openView(colleague.page, "Directory");
    await colleague.page.getByLabel(/Do not disturb/).check();
    await presenceIs(page, "do_not_disturb");
    await agent2Row(page).getByRole("button", { name: "Call Blair Agent" }).click();
    const failure = page.locator(".call-failure");
    await failure.waitFor({ timeout: 10_000 });
    expect(await failure.innerText()).toContain("Unavailable");
    expect(await colleague.page.getByRole("region", { name: "Incoming call" }).count()).toBe(0);
    await failure.getByRole("button", { name: /Dismiss/ }).click();
    await colleague.page.getByLabel(/Do not disturb/).uncheck();
    await presenceIs(page, "available");
  });

  it("counts a missed direct call on the navigation and in the title, and Call back rings the caller", async () => {
    const { page } = watcher;
    await openView(page, "Agent");
    // agent2 calls agent1 and gives up before agent1 answers.
    await colleague.page.getByRole("button", { name: "Call Alex Agent" }).click();
    await page.getByRole("region", { name: "Incoming call" }).waitFor();
    await openView(colleague.page, "Agent");
    await colleague.page.getByRole("button", { name: "Hang up" }).click();
    const count = page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: /^Directory/ }).locator(".nav-count");
    await count.waitFor({ timeout: 10_000 });
    expect(await count.innerText()).toContain("1");
    await poll("the title to count the missed call", async () => ((await page.title()).startsWith("(1 missed)") ? true : undefined));

    // A reload asks for the password again (the token is not kept); the count comes back from the server.
    await page.reload();
    await signIn(page, "agent1");
    await count.waitFor({ timeout: 15_000 });
    await waitRegistered(page);

    await openView(page, "Directory");
    const missed = page.getByRole("list", { name: "Missed calls" });
    await missed.getByRole("button", { name: /Call back/ }).waitFor();
    // Seen here: the count goes.
    await poll("the count to clear", async () => ((await count.count()) === 0 ? true : undefined));
    expect(await page.title()).not.toContain("missed");
    await missed.getByRole("button", { name: /Call back/ }).first().click();
    const ringing = colleague.page.getByRole("region", { name: "Incoming call" });
    await ringing.waitFor();
    await ringing.getByRole("button", { name: "Reject" }).click();
    await page.locator(".call-failure").waitFor();
    await page.locator(".call-failure").getByRole("button", { name: /Dismiss/ }).click();
  });

  it("answers a queue offer by itself after the agent's auto-answer delay", async () => {
    const page = colleague.page;
    await openView(page, "Directory");
    const auto = page.getByLabel("Answer queue offers by myself");
    await page.getByLabel("after (seconds)").fill("1");
    await auto.check();
    await poll("auto-answer to be stored", async () => {
      const res = await api.call<{ auto_answer: { enabled: boolean; delay_s: number } }>("GET", `/v2/accounts/${accountId}/users/${agent2Id}/preferences`, { token });
      return res.body.data.auto_answer.enabled && res.body.data.auto_answer.delay_s === 1 ? true : undefined;
    });
    await setStatus("login");
    await setStatus("ready");
    const sim = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      token,
      data: { to: "5001", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "tone_stream://700" },
    });
    expect(sim.status, sim.text).toBe(201);
    // Offered, then connected without a click.
    await page.getByRole("region", { name: "Incoming call" }).waitFor({ timeout: 20_000 });
    await poll("the offer to be answered with no click", async () => {
      const state = await api.call<{ state: string }>("GET", `/v2/accounts/${accountId}/sim/calls/${sim.body.data.id}`, { token });
      return state.body.data.state === "answered" ? true : undefined;
    });
    await page.getByRole("region", { name: "Incoming call" }).waitFor({ state: "detached" });
    await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${sim.body.data.id}`, { token, data: { action: "hangup" } });
    await setStatus("logout");
  });
});
