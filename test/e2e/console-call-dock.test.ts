// Calls ringing while the agent is on another view than the agent's: the console frame's call dock
// shows the offer (caller, Accept, Reject) on whichever view is open, accepting there answers the
// call, and the dock leaves once the call is answered or gone. On the agent view the offer shows in
// the view itself, once. The navigation keeps following the view meanwhile.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, openConsole, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { simCallsOf, type SimCallsOf } from "../helpers/sim-calls.js";

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let agent: ConsolePage;
let sim: SimCallsOf;

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  sim = simCallsOf(api, token, accountId);
  browser = await launchBrowser();
  agent = await openConsole(browser.browser, api.url);
  await signIn(agent.page, "agent1");
  await agent.page.waitForURL(/#\/agent$/);
  await waitRegistered(agent.page);
});

afterEach(() => {
  expect(agent.errors, "uncaught errors in the console").toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe("the call dock", () => {
  it("rings on the Queues view, is accepted there, and leaves once the call is answered", async () => {
    const { page } = agent;
    const nav = page.getByRole("navigation", { name: "Console views" });
    await nav.getByRole("link", { name: "Queues" }).click();
    await page.waitForURL(/#\/queues$/);
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();

    const simId = await sim.start("Dana Dockside", "+14155550142");
    const offer = page.locator(".call-dock").getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).waitFor();
    expect(await offer.innerText()).toContain("Dana Dockside");
    expect(await offer.innerText()).toContain("+14155550142");
    // Still on the Queues view, and the navigation says so.
    expect(page.url()).toMatch(/#\/queues$/);
    expect(await nav.getByRole("link", { name: "Queues" }).getAttribute("aria-current")).toBe("page");

    await offer.getByRole("button", { name: "Accept" }).click();
    expect(await poll("the caller to be answered", async () => ((await sim.state(simId)) === "answered" ? true : undefined))).toBe(true);
    await page.locator(".call-dock").waitFor({ state: "detached" });
    expect(page.url()).toMatch(/#\/queues$/);

    await page.keyboard.press("Alt+KeyE");
    await sim.noneLeft();
  });

  it("leaves when the caller gives up before anyone answers", async () => {
    const { page } = agent;
    expect(page.url()).toMatch(/#\/queues$/);
    const simId = await sim.start("Eli Early", "+14155550143");
    const offer = page.locator(".call-dock").getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).waitFor();

    const hangup = await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${simId}`, { token, data: { action: "hangup" } });
    expect(hangup.status, hangup.text).toBeLessThan(300);
    await page.locator(".call-dock").waitFor({ state: "detached" });
    await sim.noneLeft();
  });

  it("shows no dock on the agent view: the offer is there once, in the view", async () => {
    const { page } = agent;
    const nav = page.getByRole("navigation", { name: "Console views" });
    await nav.getByRole("link", { name: "Agent" }).click();
    await page.waitForURL(/#\/agent$/);
    expect(await nav.getByRole("link", { name: "Agent" }).getAttribute("aria-current")).toBe("page");

    await sim.start("Fran Front", "+14155550144");
    const offers = page.getByRole("region", { name: "Incoming call" });
    await offers.getByRole("button", { name: "Accept" }).waitFor();
    expect(await offers.count()).toBe(1);
    expect(await page.locator(".call-dock").count()).toBe(0);
    expect(await offers.innerText()).toContain("Fran Front");

    // Reject, and the view is idle again.
    await page.keyboard.press("Alt+KeyR");
    await page.getByText("No calls right now.").waitFor();
    await sim.noneLeft();
  });
});
