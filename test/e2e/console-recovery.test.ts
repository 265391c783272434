// The console against serve mode (out/main/server.js in its own process): a server restart in the
// middle of a shift is ridden out without a reload (offline banner, re-registration with back-off,
// events resumed, a call taken afterwards; an agent Ready before it is Ready after it, as the server
// restored them, and is offered a queue call), and remote mode: a console served by one server,
// pointed at a second started with --allow-origin, signs in, registers and takes a call there.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { heardLevel, openConsole, SCREENSHOTS, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { demoGrant, serve, type Served } from "../helpers/serve.js";
import { simCallsAt } from "../helpers/sim-calls.js";

const CALLER_TONE = 1200;
const FLOOR = 2900;
const CALLER_AUDIO = `tone_stream://${CALLER_TONE}`;

let browser: LaunchedBrowser;
const servers: Served[] = [];
const dirs: string[] = [];
let consoles: ConsolePage[] = [];

async function registeredDevices(url: string): Promise<number> {
  const { token, accountId } = await demoGrant(url);
  const res = await fetch(`${url}/v2/accounts/${accountId}/devices/status`, { headers: { "X-Auth-Token": token } });
  return ((await res.json()) as { data: unknown[] }).data.length;
}

/** What the server says a demo recipient's queue state is. */
async function recipientState(url: string, username: string): Promise<string> {
  const { token, accountId } = await demoGrant(url);
  const users = await fetch(`${url}/v2/accounts/${accountId}/users`, { headers: { "X-Auth-Token": token } });
  const id = ((await users.json()) as { data: { id: string; username: string }[] }).data.find((u) => u.username === username)?.id ?? "";
  const res = await fetch(`${url}/v2/accounts/${accountId}/callq_recipients/${id}/status`, { headers: { "X-Auth-Token": token } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { availability_state: string } }).data.availability_state;
}

/** Waits until the console shows the queue state `state`. */
async function shownState(page: Page, state: string): Promise<void> {
  await page.locator(`[data-testid="agent-state-name"][data-state="${state}"]`).waitFor({ timeout: 20_000 });
}

async function takeCall(c: ConsolePage): Promise<void> {
  const offer = c.page.getByRole("region", { name: "Incoming call" });
  await offer.getByRole("button", { name: "Accept" }).click();
  await c.page.getByRole("region", { name: "Call with Casey Customer" }).getByText("Connected").waitFor();
  const heard = (await heardLevel(c.page, CALLER_TONE)) - (await heardLevel(c.page, FLOOR));
  expect(heard, "the agent hears the caller").toBeGreaterThan(20);
  await c.page.getByRole("button", { name: "Hang up" }).click();
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  browser = await launchBrowser();
});

afterEach(async () => {
  for (const c of consoles) {
    expect(c.errors, "uncaught errors in the console").toEqual([]);
    await c.page.close();
  }
  consoles = [];
});

afterAll(async () => {
  await browser?.close();
  for (const s of servers) await s.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A serve-mode server on a fresh data directory and agent1 signed in and registered there. */
async function agentOnFreshServer(prefix: string) {
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dataDir);
  const first = await serve({ args: ["--data-dir", dataDir] });
  servers.push(first);
  const agent = await openConsole(browser.browser, first.url);
  consoles.push(agent);
  const { page } = agent;
  await signIn(page, "agent1");
  await waitRegistered(page);
  // Gone if the page reloads.
  await page.evaluate("globalThis.__sameDocument = true");
  return { dataDir, first, agent, page };
}

describe("the console rides out a server restart", () => {
  it("shows the offline banner, registers again with back-off and takes a call, without a reload", async () => {
    const { dataDir, first, agent, page } = await agentOnFreshServer("sb-console-restart-");

    await first.stop();
    const banner = page.getByRole("status").filter({ hasText: "Offline" });
    await banner.waitFor({ timeout: 15_000 });
    expect(await page.getByTestId("registration-state").innerText()).toMatch(/Reconnecting/);
    await page.screenshot({ path: join(SCREENSHOTS, "console-offline.png") });

    const port = new URL(first.url).port;
    const second = await serve({ args: ["--port", port, "--data-dir", dataDir] });
    servers.push(second);
    expect(second.url).toBe(first.url);
    await waitRegistered(page, 45_000);
    await banner.waitFor({ state: "detached", timeout: 45_000 });
    expect(await page.evaluate("globalThis.__sameDocument === true")).toBe(true);
    expect(await registeredDevices(second.url)).toBe(1);

    await (await simCallsAt(second.url)).start("Casey Customer", "+14155550100", "1002", CALLER_AUDIO);
    await takeCall(agent);
    // The new call's record reached the console through the resumed event websocket.
    await page.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Casey Customer/ }).waitFor();
  });

  it("keeps the agent Ready across the restart (the server's saved state, read again) and offers them a queue call, without a reload", async () => {
    const { dataDir, first, page } = await agentOnFreshServer("sb-console-shift-");

    // Login and Ready through the console's buttons; the server agrees.
    const panel = page.getByTestId("agent-state");
    await shownState(page, "Not-Logged-In");
    await panel.getByRole("button", { name: "Login" }).click();
    await shownState(page, "Away");
    await panel.getByRole("button", { name: "Ready" }).click();
    await shownState(page, "Ready");
    expect(await recipientState(first.url, "agent1")).toBe("Ready");

    await first.stop();
    await page.getByRole("status").filter({ hasText: "Offline" }).waitFor({ timeout: 15_000 });
    // Meanwhile the console says the state it shows is the last one the server gave.
    await page.getByText(/^Not live:/).waitFor({ timeout: 15_000 });

    // The console reads the state again from the restarted server once its events are back.
    const reread = page.waitForResponse(
      (res) => res.request().method() === "GET" && /\/callq_recipients\/[^/]+\/status$/.test(new URL(res.url()).pathname) && res.status() === 200,
      { timeout: 60_000 },
    );
    const port = new URL(first.url).port;
    const second = await serve({ args: ["--port", port, "--data-dir", dataDir] });
    servers.push(second);
    expect(second.url).toBe(first.url);
    const answer = (await (await reread).json()) as { data: { availability_state: string } };
    expect(answer.data.availability_state, "the state the restarted server restored").toBe("Ready");
    await waitRegistered(page, 45_000);
    await page.getByRole("status").filter({ hasText: "Offline" }).waitFor({ state: "detached", timeout: 45_000 });
    await page.getByText(/^Not live:/).waitFor({ state: "detached", timeout: 15_000 });
    await shownState(page, "Ready");
    expect(await recipientState(second.url, "agent1")).toBe("Ready");
    expect(await page.evaluate("globalThis.__sameDocument === true")).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, "console-ready-after-restart.png") });

    // A caller to Sales reaches this console, which takes the call and hears them.
    await (await simCallsAt(second.url)).start("Casey Customer", "+14155550100", "5001", CALLER_AUDIO);
    const offer = page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).waitFor({ timeout: 30_000 });
    expect(await offer.innerText()).toMatch(/Queue\s+Sales/);
    await shownState(page, "Call-Offer");
    await offer.getByRole("button", { name: "Accept" }).click();
    await page.getByRole("region", { name: /^Call with .*Casey Customer/ }).getByText("Connected").waitFor({ timeout: 20_000 });
    await shownState(page, "On-A-Call");
    expect(await recipientState(second.url, "agent1")).toBe("On-A-Call");
    const heard = (await heardLevel(page, CALLER_TONE)) - (await heardLevel(page, FLOOR));
    expect(heard, "the agent hears the queue caller").toBeGreaterThan(20);
    await page.getByRole("button", { name: "Hang up" }).click();
    await shownState(page, "Wrapup-Time");
    await second.stop();
  });
});

describe("remote mode", () => {
  it("a console served by one server signs in, registers and takes a call on another", async () => {
    const home = await serve();
    servers.push(home);
    const remote = await serve({ args: ["--allow-origin", home.url] });
    servers.push(remote);
    const agent = await openConsole(browser.browser, home.url);
    consoles.push(agent);
    const { page } = agent;

    await page.locator("summary", { hasText: "Server:" }).click();
    await page.getByLabel("API base URL").fill(remote.url);
    await page.getByRole("button", { name: "Save server settings" }).click();
    await page.locator("summary", { hasText: `Server: ${remote.url}` }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "console-remote-settings.png") });
    await signIn(page, "agent2");
    await waitRegistered(page);
    expect(await registeredDevices(remote.url)).toBe(1);
    expect(await registeredDevices(home.url)).toBe(0);

    await (await simCallsAt(remote.url)).start("Casey Customer", "+14155550100", "1003", CALLER_AUDIO);
    await takeCall(agent);
  });
});
