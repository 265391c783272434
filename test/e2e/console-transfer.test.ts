// Transfers from the console, between two agents' consoles in Chromium on the real server: blind
// (the caller goes straight to agent2, who hears them), attended completed (agent1 consults agent2,
// then leaves them talking) and attended taken back (agent1 returns to the caller).
import { join } from "node:path";
import { mkdir } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, heardLevel, openConsole, SCREENSHOTS, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";

const CALLER_TONE = 1200;
const FLOOR = 2900;

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let agent1: ConsolePage;
let agent2: ConsolePage;

async function callAgent1(): Promise<void> {
  const res = await api.call("POST", `/v2/accounts/${accountId}/sim/calls`, {
    token,
    data: { to: "1002", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: `tone_stream://${CALLER_TONE}` },
  });
  expect(res.status, res.text).toBe(201);
  const offer = agent1.page.getByRole("region", { name: "Incoming call" });
  await offer.getByRole("button", { name: "Accept" }).click();
  await agent1.page.getByRole("region", { name: "Call with Casey Customer" }).getByText("Connected").waitFor();
}

async function transfer(type: "Blind" | "Attended (consult first)", target: string): Promise<void> {
  const call = agent1.page.getByRole("region", { name: "Call with Casey Customer" });
  await call.locator("summary", { hasText: "Transfer" }).click();
  await call.getByLabel("Transfer to (extension, user or number)").fill(target);
  await call.getByLabel(type).check();
  await call.getByRole("button", { name: "Transfer", exact: true }).click();
}

async function hearsCaller(page: ConsolePage["page"]): Promise<number> {
  return (await heardLevel(page, CALLER_TONE)) - (await heardLevel(page, FLOOR));
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();
  agent1 = await openConsole(browser.browser, api.url);
  agent2 = await openConsole(browser.browser, api.url);
  await signIn(agent1.page, "agent1");
  await signIn(agent2.page, "agent2");
  await waitRegistered(agent1.page);
  await waitRegistered(agent2.page);
});

afterEach(async () => {
  expect([...agent1.errors, ...agent2.errors], "uncaught errors in the consoles").toEqual([]);
  for (const s of (await api.call<{ id: string }[]>("GET", `/v2/accounts/${accountId}/sim/calls`, { token })).body.data) {
    await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${s.id}`, { token, data: { action: "hangup" } });
  }
  await poll("no channel left", async () => ((api.server.calls?.channels.all().length ?? 0) === 0 ? true : undefined));
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe("transfers from the console", () => {
  it("blind: the caller rings agent2, agent1's call ends, agent2 accepts and hears the caller", async () => {
    await callAgent1();
    await transfer("Blind", "1003");
    await agent1.page.getByRole("region", { name: "Call with Casey Customer" }).waitFor({ state: "detached" });
    const offer = agent2.page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).waitFor();
    expect(await offer.innerText()).toContain("Casey Customer");
    await offer.getByRole("button", { name: "Accept" }).click();
    await agent2.page.getByRole("region", { name: "Call with Casey Customer" }).getByText("Connected").waitFor();
    expect(await hearsCaller(agent2.page), "agent2 hears the caller").toBeGreaterThan(20);
    await agent2.page.getByRole("button", { name: "Hang up" }).click();
  });

  it("attended, completed: agent1 consults agent2, then leaves the caller with agent2", async () => {
    await callAgent1();
    await transfer("Attended (consult first)", "1003");
    const consult = agent2.page.getByRole("region", { name: "Incoming call" });
    await consult.getByRole("button", { name: "Accept" }).click();
    const call1 = agent1.page.getByRole("region", { name: "Call with Casey Customer" });
    await call1.getByRole("group", { name: "Attended transfer" }).waitFor();
    expect(await call1.getByRole("status").innerText()).toMatch(/Consulting .*1003/);
    await agent1.page.screenshot({ path: join(SCREENSHOTS, "console-attended-transfer.png") });
    await call1.getByRole("button", { name: "Complete transfer" }).click();
    await call1.waitFor({ state: "detached" });
    expect(await hearsCaller(agent2.page), "agent2 hears the caller after the transfer").toBeGreaterThan(20);
    await agent2.page.getByRole("button", { name: "Hang up" }).click();
  });

  it("attended, taken back: agent1 returns to the caller and agent2's consultation ends", async () => {
    await callAgent1();
    await transfer("Attended (consult first)", "1003");
    const consult = agent2.page.getByRole("region", { name: "Incoming call" });
    await consult.getByRole("button", { name: "Accept" }).click();
    const call1 = agent1.page.getByRole("region", { name: "Call with Casey Customer" });
    await call1.getByRole("button", { name: "Return to caller" }).click();
    await poll("agent2's consultation over", async () => ((await agent2.page.locator(".active-call").count()) === 0 ? true : undefined));
    expect(await call1.getByRole("group", { name: "Attended transfer" }).count()).toBe(0);
    expect(await hearsCaller(agent1.page), "agent1 hears the caller again").toBeGreaterThan(20);
    await call1.getByRole("button", { name: "Hang up" }).click();
  });
});
