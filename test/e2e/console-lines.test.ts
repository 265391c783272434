// Several lines in the console (Chromium, real server, real SIP and WebRTC): accepting a second
// call holds the first (the server's channel is on hold), the dock lists both lines with their
// states, Swap (key and button) changes which line is held, a line hangs up alone, dialling out
// holds the call in progress, and Merge makes one three-way conference the server mixes, which
// the two others keep when the agent leaves.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { conferenceOf } from "../../server/calls/conference.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, heardLevel, openConsole, SCREENSHOTS, seriousAxeViolations, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { simCallsOf, type SimCallsOf } from "../helpers/sim-calls.js";

const TONE_A = 1200;
const TONE_B = 700;
const FLOOR = 2900;

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let agent1: ConsolePage;
let agent2: ConsolePage;
let sim: SimCallsOf;

/** Accepts the call ringing on agent1's console with the keyboard, once its offer shows. */
async function acceptWithKey(caller: string): Promise<void> {
  const offer = agent1.page.getByRole("region", { name: "Incoming call" }).filter({ hasText: caller });
  await offer.getByRole("button", { name: "Accept" }).waitFor();
  await agent1.page.keyboard.press("Alt+KeyA");
  await offer.waitFor({ state: "detached" });
}

/** The SIP Call-ID (channel uuid) of agent1's line with `caller`, from its card. */
async function legOf(caller: string): Promise<string> {
  const id = await agent1.page.getByRole("region", { name: `Call with ${caller}` }).getAttribute("data-call-id");
  if (id === null) throw new Error(`no call card for ${caller}`);
  return id;
}

async function onHold(uuid: string): Promise<boolean | undefined> {
  const res = await api.call<{ is_onhold: boolean }>("GET", `/v2/accounts/${accountId}/channels/${encodeURIComponent(uuid)}`, { token });
  return res.status === 200 ? res.body.data.is_onhold : undefined;
}

/** Waits until the dock's line with `caller` shows `state`, and the server agrees about its hold. */
async function lineIs(caller: string, state: "Connected" | "On hold"): Promise<void> {
  await agent1.page.locator(".line-dock .line").filter({ hasText: caller }).locator(".line-state", { hasText: state }).waitFor();
  const uuid = await legOf(caller);
  expect(await poll(`${caller}'s channel ${state}`, async () => ((await onHold(uuid)) === (state === "On hold") ? true : undefined))).toBe(true);
}

async function hears(page: ConsolePage["page"], tone: number): Promise<number> {
  return (await heardLevel(page, tone)) - (await heardLevel(page, FLOOR));
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  sim = simCallsOf(api, token, accountId);
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
  // Whatever a failed test left up.
  for (const c of (await api.call<{ uuid: string }[]>("GET", `/v2/accounts/${accountId}/channels`, { token })).body.data) {
    await api.call("POST", `/v2/accounts/${accountId}/channels/${encodeURIComponent(c.uuid)}`, { token, data: { action: "hangup" } });
  }
  await poll("no channel left", async () => ((api.server.calls?.channels.all().length ?? 0) === 0 ? true : undefined));
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe("several lines", () => {
  it("a second call holds the first; the dock lists both; swap by key and by button; one line hangs up alone", async () => {
    const { page } = agent1;
    await sim.start("Casey Customer", "+14155550100", "1002", `tone_stream://${TONE_A}`);
    await acceptWithKey("Casey Customer");
    await page.getByRole("region", { name: "Call with Casey Customer" }).getByText("Connected").waitFor();
    expect(await page.locator(".line-dock").count()).toBe(0);

    await sim.start("Dana Douglas", "+14155550199", "1002", `tone_stream://${TONE_B}`);
    // While the second rings, the dock already lists both lines.
    await page.locator(".line-dock .line").filter({ hasText: "Dana Douglas" }).getByText("Ringing").waitFor();
    expect(await page.getByRole("region", { name: "Incoming call" }).innerText()).toContain("Accepting puts your call with Casey Customer on hold.");
    await acceptWithKey("Dana Douglas");
    await lineIs("Casey Customer", "On hold");
    await lineIs("Dana Douglas", "Connected");
    expect(await page.locator(".line-dock .line").allInnerTexts()).toEqual([expect.stringContaining("Line 1"), expect.stringContaining("Line 2")]);
    expect(await hears(page, TONE_B), "agent1 hears the second caller").toBeGreaterThan(20);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-two-lines.png") });
    // Docked narrow, each line still fits: nothing in the dock is wider than the dock.
    await page.setViewportSize({ width: 360, height: 800 });
    const overflow = await page.evaluate(`(() => {
      const dock = document.querySelector(".line-dock").getBoundingClientRect();
      return [...document.querySelectorAll(".line-dock *")].filter((e) => e.getBoundingClientRect().right > dock.right + 0.5).map((e) => e.className || e.tagName);
    })()`);
    expect(overflow).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-two-lines-narrow.png") });
    await page.setViewportSize({ width: 1280, height: 860 });

    await page.keyboard.press("Alt+KeyS");
    await lineIs("Casey Customer", "Connected");
    await lineIs("Dana Douglas", "On hold");

    await page.locator(".line-dock").getByRole("button", { name: "Swap" }).click();
    await lineIs("Casey Customer", "On hold");
    await lineIs("Dana Douglas", "Connected");

    const first = await legOf("Casey Customer");
    await page.locator(".line-dock").getByRole("button", { name: "Hang up Dana Douglas" }).click();
    await page.getByRole("region", { name: "Call with Dana Douglas" }).waitFor({ state: "detached" });
    await page.locator(".line-dock").waitFor({ state: "detached" });
    // The first line is untouched: still up, still held, until the agent resumes it.
    expect(await onHold(first)).toBe(true);
    const card = page.getByRole("region", { name: "Call with Casey Customer" });
    await card.getByText("On hold").waitFor();
    await card.getByRole("button", { name: "Resume" }).click();
    await card.getByText("Connected").waitFor();
    expect(await hears(page, TONE_A), "agent1 hears the first caller again").toBeGreaterThan(20);
    await page.keyboard.press("Alt+KeyE");
  });

  it("merge: one conference the server mixes; the agent leaving leaves the caller and agent2 talking", async () => {
    const { page } = agent1;
    await sim.start("Casey Customer", "+14155550100", "1002", `tone_stream://${TONE_A}`);
    await acceptWithKey("Casey Customer");
    // Dialling out while on a call holds it first.
    await page.getByLabel("Number or extension").fill("1003");
    await page.getByRole("button", { name: "Call", exact: true }).click();
    await lineIs("Casey Customer", "On hold");
    const offer = agent2.page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).click();
    await agent2.page.getByRole("region", { name: "Call with Alex Agent" }).getByText("Connected").waitFor();
    await page.getByRole("region", { name: "Call to 1003" }).getByText("Connected").waitFor();
    const kept = await page.getByRole("region", { name: "Call to 1003" }).getAttribute("data-call-id");
    if (kept === null) throw new Error("no card for the call to 1003");

    await page.keyboard.press("Alt+KeyJ");
    const conference = page.getByRole("region", { name: "Conference with 1003 and Casey Customer" });
    await conference.getByText("Connected").waitFor();
    await page.locator(".line-dock").waitFor({ state: "detached" });
    expect(await page.locator(".active-call").count()).toBe(1);
    const channel = api.server.calls?.channels.get(kept);
    expect(channel && conferenceOf(channel)?.members.length).toBe(3);
    await page.screenshot({ path: join(SCREENSHOTS, "console-conference.png") });
    // The caller's voice reaches both agents through the server's mix.
    expect(await hears(page, TONE_A), "agent1 hears the caller").toBeGreaterThan(20);
    expect(await hears(agent2.page, TONE_A), "agent2 hears the caller").toBeGreaterThan(20);

    await page.keyboard.press("Alt+KeyE");
    await conference.waitFor({ state: "detached" });
    expect(await agent2.page.locator(".active-call").getByText("Connected").count()).toBe(1);
    expect(await hears(agent2.page, TONE_A), "agent2 still hears the caller once agent1 left").toBeGreaterThan(20);
    expect(api.server.calls?.channels.all().length).toBe(2);
    await agent2.page.keyboard.press("Alt+KeyE");
  });
});
