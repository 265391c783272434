// The console as an agent works it, in Chromium against the real server serving the built
// console: sign in, the softphone registers; a simulated caller rings, the agent accepts with the
// keyboard and hears the caller; hold and resume reach the server; the keypad's digits reach the
// call logic; mute, hang-up, recent calls with click-to-call; the views pass axe.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ChannelDtmf } from "../../server/calls/channel.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import {
  CONSOLE_DIR,
  heardLevel,
  openConsole,
  RECORD_NOTIFICATIONS,
  recordedNotifications,
  SCREENSHOTS,
  seriousAxeViolations,
  signIn,
  waitRegistered,
  type ConsolePage,
} from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { simCallsOf, type SimCallsOf } from "../helpers/sim-calls.js";

const CALLER_TONE = 1200;
const FLOOR = 2900;

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let agent: ConsolePage;
let sim: SimCallsOf;
/** The token the console got at sign-in, read off the wire. */
let consoleToken = "";
const sockets: WebSocketLike[] = [];

interface WebSocketLike {
  on(event: "framesent", listener: (frame: { payload: string | Buffer }) => void): unknown;
}

/** The agent's leg on the server: the channel to agent1's device. */
function agentLeg() {
  return api.server.calls?.channels.all().find((c) => c.direction === "outbound" && c.identity.username !== undefined && c.state !== "hungup");
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  sim = simCallsOf(api, token, accountId);
  browser = await launchBrowser();
  agent = await openConsole(browser.browser, api.url);
  // Offers raise a desktop notification: the tab's Notification API, recorded as it is made.
  await agent.page.context().grantPermissions(["notifications"], { origin: api.url });
  await agent.page.addInitScript(RECORD_NOTIFICATIONS);
  await agent.page.reload();
  agent.page.on("websocket", (socket) => {
    if (socket.url().endsWith("/sip")) sockets.push(socket);
  });
  agent.page.on("response", (res) => {
    if (res.url().endsWith("/v2/user_auth") && res.status() === 201) {
      void res.json().then((body: { auth_token: string }) => (consoleToken = body.auth_token));
    }
  });
});

afterEach(() => {
  expect(agent.errors, "uncaught errors in the console").toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe("the console at work", () => {
  it("signs in, registers the user's softphone and shows it, with no serious accessibility violation", async () => {
    const { page } = agent;
    await signIn(page, "agent1");
    await page.waitForURL(/#\/agent$/);
    await waitRegistered(page);
    expect(await page.getByText("Device: agent1 softphone").isVisible()).toBe(true);
    const registered = await poll("the server to list the registration", async () => {
      const res = await api.call<{ device_id: string }[]>("GET", `/v2/accounts/${accountId}/devices/status`, { token });
      return res.body.data.length > 0 ? res.body.data : undefined;
    });
    expect(registered).toHaveLength(1);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-agent-idle.png") });
  });

  it("rings with the caller's name and number; Alt+A accepts and the agent hears the caller", async () => {
    const { page } = agent;
    const simId = await sim.start("Casey Customer", "+14155550100", "1002", `tone_stream://${CALLER_TONE}`);
    const offer = page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).waitFor();
    expect(await offer.innerText()).toContain("Casey Customer");
    expect(await offer.innerText()).toContain("+14155550100");
    // One desktop notification for the offer, tagged with the call.
    const raised = await poll("the offer's desktop notification", async () => {
      const list = await recordedNotifications(page);
      return list.length > 0 ? list : undefined;
    });
    expect(raised).toEqual([{ title: "Incoming call", body: "Casey Customer (+14155550100)", tag: expect.any(String), closed: false }]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-offer.png") });

    await page.keyboard.press("Alt+KeyA");
    const call = page.getByRole("region", { name: "Call with Casey Customer" });
    await call.getByText("Connected").waitFor();
    // Focus follows the call, so the keyboard user carries on from there.
    expect(await page.evaluate("document.activeElement.textContent")).toContain("Call with Casey Customer");
    expect(await sim.state(simId)).toBe("answered");
    // Answered: the notification is taken down.
    expect(await recordedNotifications(page)).toMatchObject([{ title: "Incoming call", closed: true }]);

    const heard = await heardLevel(page, CALLER_TONE);
    const floor = await heardLevel(page, FLOOR);
    expect(heard - floor, `the agent hears the caller's ${CALLER_TONE} Hz`).toBeGreaterThan(20);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-in-call.png") });
  });

  it("sends keypad digits to the call as DTMF, none lost to quick key presses", async () => {
    const { page } = agent;
    const leg = agentLeg();
    expect(leg).toBeDefined();
    const digits: ChannelDtmf[] = [];
    leg?.on("dtmf", (d) => digits.push(d));

    const call = page.getByRole("region", { name: "Call with Casey Customer" });
    await call.getByText("Keypad", { exact: true }).click();
    for (const key of ["4", "2", "#"]) await call.getByRole("button", { name: `Digit ${key}` }).click();
    await poll("three digits at the server", async () => (digits.length >= 3 ? true : undefined));
    expect(digits.map((d) => d.digit).join("")).toBe("42#");
    expect(await call.getByRole("status", { name: "Digits sent" }).innerText()).toBe("42#");
  });

  it("holds and resumes: the server's channel follows", async () => {
    const { page } = agent;
    const call = page.getByRole("region", { name: "Call with Casey Customer" });
    await call.getByRole("button", { name: "Hold" }).click();
    await call.getByText("On hold").waitFor();
    await poll("the agent's leg held", async () => (agentLeg()?.state === "held" ? true : undefined));
    expect(await call.getByRole("button", { name: "Resume" }).getAttribute("aria-pressed")).toBe("true");
    await page.screenshot({ path: join(SCREENSHOTS, "console-on-hold.png") });
    await page.keyboard.press("Alt+KeyH");
    await call.getByText("Connected").waitFor();
    await poll("the agent's leg back", async () => (agentLeg()?.state === "bridged" ? true : undefined));
  });

  it("mutes with Alt+M, hangs up with Alt+E, and lists the call in recent calls to call back", async () => {
    const { page } = agent;
    const call = page.getByRole("region", { name: "Call with Casey Customer" });
    await page.keyboard.press("Alt+KeyM");
    await call.getByRole("button", { name: "Unmute" }).waitFor();
    const muted = await page.evaluate(`[...globalThis.__peerConnections].reverse()[0].getSenders().map((s) => s.track && s.track.enabled)`);
    expect(muted).toEqual([false]);
    await page.keyboard.press("Alt+KeyM");
    await call.getByRole("button", { name: "Mute" }).waitFor();

    await page.keyboard.press("Alt+KeyE");
    await call.waitFor({ state: "detached" });
    await poll("the call over on the server", async () => (agentLeg() === undefined ? true : undefined));
    const recent = page.getByRole("region", { name: "Recent calls" });
    const row = recent.getByRole("row", { name: /Casey Customer/ });
    await row.waitFor();
    expect(await row.innerText()).toMatch(/In\s+Casey Customer \(\+14155550100\)/);
    await page.screenshot({ path: join(SCREENSHOTS, "console-recent-calls.png") });

    // Click-to-call: the console sends an INVITE for the number over its SIP WebSocket.
    const invite = new Promise<string>((resolve) => {
      for (const socket of sockets) {
        socket.on("framesent", (frame) => {
          const text = typeof frame.payload === "string" ? frame.payload : frame.payload.toString("utf8");
          if (text.startsWith("INVITE ")) resolve(text.split("\r\n")[0] ?? "");
        });
      }
    });
    await row.getByRole("button", { name: /Call Casey Customer/ }).click();
    expect(await invite).toMatch(/^INVITE sip:\+14155550100@demo\.switchboard\.local SIP\/2\.0$/);
    // No callflow answers that number on the demo account: the call ends by itself, and the
    // console says why, in the dock and (once its record is read) in the history.
    await page.getByRole("region", { name: /^Call to/ }).waitFor({ state: "detached" });
    await page.getByRole("alert").filter({ hasText: "Call to +14155550100 failed: No such number" }).waitFor();
    await recent.getByRole("row", { name: /No such number/ }).waitFor();
  });

  it("keeps the view when the token expires: back to sign-in, then the same view with the phone still registered", async () => {
    const { page } = agent;
    // The server forgets the token, as on expiry: the console's next request is refused.
    const revoked = await fetch(`${api.url}/v2/token_auth`, { method: "DELETE", headers: { "X-Auth-Token": consoleToken } });
    expect(revoked.status).toBe(200);
    await page.getByRole("region", { name: "Recent calls" }).getByRole("button", { name: "Refresh" }).click();
    await page.getByRole("heading", { name: "Sign in to Switchboard" }).waitFor();
    expect(await page.getByRole("status").filter({ hasText: "Your session has ended" }).isVisible()).toBe(true);
    expect(await page.getByLabel("Username", { exact: true }).inputValue()).toBe("agent1");
    // The phone stays registered meanwhile: calls can still reach the agent.
    const registered = await api.call<unknown[]>("GET", `/v2/accounts/${accountId}/devices/status`, { token });
    expect(registered.body.data).toHaveLength(1);
    await page.getByLabel("Password", { exact: true }).fill("switchboard");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/#\/agent$/);
    await waitRegistered(page);
    expect(await page.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: /Casey Customer/ }).count()).toBeGreaterThan(0);
  });

  it("shows the connection settings, with no serious accessibility violation", async () => {
    const { page } = agent;
    await page.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
    expect(await page.getByLabel("SIP WebSocket URL").getAttribute("placeholder")).toBe(`${api.url.replace("http", "ws")}/sip`);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-settings.png") });
  });
});
