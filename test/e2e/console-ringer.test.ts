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
import { simCallsOf, type SimCallsOf } from "../helpers/sim-calls.js";

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let agent: ConsolePage;
let sim: SimCallsOf;

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

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  sim = simCallsOf(api, token, accountId);
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
    const first = await sim.start("Rita Ringer", "+14155550150");
    const offer = page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Accept" }).waitFor();
    expect(await poll("the ring to play", async () => ((await contextStates(page)).includes("running") ? true : undefined))).toBe(true);

    await offer.getByRole("button", { name: "Accept" }).click();
    expect(await poll("the caller to be answered", async () => ((await sim.state(first)) === "answered" ? true : undefined))).toBe(true);
    const answered = await poll("the ringer suspended on the call", async () => {
      const states = await contextStates(page);
      return states.length > 0 && states.every((s) => s === "suspended") ? states : undefined;
    });
    expect(answered).toEqual(["suspended"]);
    await page.keyboard.press("Alt+KeyE");
    await sim.noneLeft();

    // The next offer rings on the same context, and refusing it quiets it again.
    await sim.start("Sam Second", "+14155550150");
    await offer.getByRole("button", { name: "Reject" }).waitFor();
    expect(await poll("the ring to play again", async () => ((await contextStates(page)).includes("running") ? true : undefined))).toBe(true);
    await page.keyboard.press("Alt+KeyR");
    await page.getByText("No calls right now.").waitFor();
    const refused = await poll("the ringer suspended after the refusal", async () => {
      const states = await contextStates(page);
      return states.every((s) => s === "suspended") ? states : undefined;
    });
    expect(refused).toEqual(["suspended"]);
    await sim.noneLeft();
  });
});
