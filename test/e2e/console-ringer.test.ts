// The ringer's audio between rings, in Chromium against the real server serving the built console:
// while a call is offered the ringer's Web Audio context runs (the ring is heard); once the offer
// is answered or refused it is suspended, so an idle console or one on a call renders no silent
// audio every 10 ms (a running context costs a page's audio thread and the browser's audio
// service as long as the page lives); and the next offer rings again.
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, openConsole, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let agent: ConsolePage;

/** Keeps every AudioContext the page makes in globalThis.__audioContexts (page-side code as text: no DOM types here). */
const KEEP_AUDIO_CONTEXTS = `(() => {
  const Original = globalThis.AudioContext;
  const kept = (globalThis.__audioContexts = []);
  globalThis.AudioContext = class extends Original {
    constructor(...args) { super(...args); kept.push(this); }
  };
})();`;

async function contextStates(page: Page): Promise<string[]> {
  return (await page.evaluate("(globalThis.__audioContexts || []).map((c) => c.state)")) as string[];
}

async function simCall(name: string): Promise<string> {
  const res = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
    token,
    data: { to: "1002", caller_id_name: name, caller_id_number: "+14155550150", audio: "tone_stream://%(1000,0,1200)" },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

async function simState(id: string): Promise<string | undefined> {
  const res = await api.call<{ state: string }>("GET", `/v2/accounts/${accountId}/sim/calls/${id}`, { token });
  return res.status === 200 ? res.body.data.state : undefined;
}

async function noCallsLeft(): Promise<void> {
  await poll("the calls to end on the server", async () => (api.server.calls?.channels.size === 0 ? true : undefined));
}

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();
  agent = await openConsole(browser.browser, api.url);
  await agent.page.addInitScript(KEEP_AUDIO_CONTEXTS);
  await agent.page.reload();
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

describe("the ringer between rings", () => {
  it("runs while a call is offered, is suspended once it is answered, and rings again for the next offer", async () => {
    const { page } = agent;
    const first = await simCall("Rita Ringer");
    const offer = page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).waitFor();
    expect(await poll("the ring to play", async () => ((await contextStates(page)).includes("running") ? true : undefined))).toBe(true);

    await offer.getByRole("button", { name: "Accept" }).click();
    expect(await poll("the caller to be answered", async () => ((await simState(first)) === "answered" ? true : undefined))).toBe(true);
    const answered = await poll("the ringer suspended on the call", async () => {
      const states = await contextStates(page);
      return states.length > 0 && states.every((s) => s === "suspended") ? states : undefined;
    });
    expect(answered).toEqual(["suspended"]);
    await page.keyboard.press("Alt+KeyE");
    await noCallsLeft();

    // The next offer rings on the same context, and refusing it quiets it again.
    await simCall("Sam Second");
    await offer.getByRole("button", { name: "Reject" }).waitFor();
    expect(await poll("the ring to play again", async () => ((await contextStates(page)).includes("running") ? true : undefined))).toBe(true);
    await page.keyboard.press("Alt+KeyR");
    await page.getByText("No calls right now.").waitFor();
    const refused = await poll("the ringer suspended after the refusal", async () => {
      const states = await contextStates(page);
      return states.every((s) => s === "suspended") ? states : undefined;
    });
    expect(refused).toEqual(["suspended"]);
    await noCallsLeft();
  });
});
