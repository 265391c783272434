// JsSIP in Chromium transfers its call with its own transfer (RTCSession.refer, blind): agent1's
// JsSIP calls admin (a sip.js phone in Node), then refers admin to 1003 (agent2, another sip.js
// phone). JsSIP hears 202 and the NOTIFYs (trying, then accepted), the server ends its call, and
// admin, the transferee, hears agent2's voice once agent2 answers. On a server without REFER the
// REFER is answered 501 and JsSIP reports requestFailed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { SessionState } from "sip.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { labPageDir } from "../helpers/phone-page.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { callIdOf, DEMO_REALM, SipjsPhones, until } from "../helpers/sipjs-phones.js";

const PARTY = 1300;
const TARGET = 2300;

/** What the page's lab (test/e2e/fixtures/jssip-lab.ts) tells. */
interface LabState {
  frames: { dir: "in" | "out"; text: string }[];
  confirmed: boolean;
  ended: string | null;
  refer: string[];
}

let api: TestApi;
let browser: LaunchedBrowser;
let phones: SipjsPhones;
let token: string;
let accountId: string;

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await labPageDir("jssip-lab") } });
  ({ token, accountId } = await api.login("admin"));
  phones = new SipjsPhones(api, accountId);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await phones?.close();
  await api?.close();
});

function labState(page: Page): Promise<LabState> {
  return page.evaluate(() => (globalThis as unknown as { lab: { state(): LabState } }).lab.state());
}

async function labUntil(page: Page, done: (s: LabState) => boolean, what: string): Promise<LabState> {
  for (let i = 0; i < 200; i++) {
    const s = await labState(page);
    if (done(s)) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never happened: ${what}`);
}

async function deviceOf(username: string): Promise<{ username: string; password: string }> {
  const devices = (await api.server.store.account(accountId, "devices")).all();
  const d = devices.find((x) => (x.data.sip as { username?: string }).username === username);
  if (!d) throw new Error(`no device for ${username}`);
  return d.data.sip as { username: string; password: string };
}

describe("JsSIP's blind transfer (RTCSession.refer)", () => {
  it("202, NOTIFY trying then accepted, its call ended by the server, and the transferee hears the target", async () => {
    const [admin, agent2] = [await phones.phone("admin"), await phones.phone("agent2")];
    const sip = await deviceOf("agent1");
    const page = await browser.browser.newPage();
    await page.goto(`${api.url}/`);
    await page.waitForFunction(() => "lab" in globalThis);
    const before = admin.invitations.length;
    const calling = page.evaluate(
      (o) => (globalThis as unknown as { lab: { call(o: unknown): Promise<void> } }).lab.call(o).then(() => "confirmed", (e: Error) => e.message),
      { server: `${api.url.replace(/^http/, "ws")}/sip`, username: sip.username, password: sip.password, realm: DEMO_REALM, target: "1001" },
    );
    const party = await phones.answer(admin, before);
    expect(await calling).toBe("confirmed");
    await phones.say(party, PARTY);

    const offered = agent2.invitations.length;
    await page.evaluate((realm) => (globalThis as unknown as { lab: { refer(t: string, r: string): void } }).lab.refer("1003", realm), DEMO_REALM);
    const s = await labUntil(page, (x) => x.refer.some((e) => e.startsWith("accepted") || e.startsWith("failed") || e.startsWith("requestFailed")), "JsSIP's REFER settled");
    expect(s.refer).toEqual(["requestSucceeded 202", "trying 100", "accepted 200"]);
    // Every NOTIFY was answered 200 by JsSIP: it matched them to its REFER (Event: refer;id=<CSeq>).
    const notifyAnswers = s.frames.filter((f) => f.dir === "out" && /^SIP\/2\.0 \d{3}/.test(f.text) && /^CSeq:\s*\d+\s+NOTIFY/im.test(f.text));
    expect(notifyAnswers.map((f) => f.text.slice(8, 11))).toEqual(["200", "200"]);
    // The server releases JsSIP's call after the final NOTIFY.
    await labUntil(page, (x) => x.ended !== null, "JsSIP's call ended");

    // The transferee rings agent2, who answers; admin hears agent2 and agent2 hears admin.
    const target = await phones.answer(agent2, offered);
    await phones.say(target, TARGET);
    const [atParty, atTarget] = await phones.talking(party, PARTY, target, TARGET);
    expect(atParty, "the transferee hears the target").toBeGreaterThan(0.9);
    expect(atTarget, "the target hears the transferee").toBeGreaterThan(0.9);
    const rows = (await api.call<{ uuid: string; other_leg?: string }[]>("GET", `/v2/accounts/${accountId}/channels`, { token })).body.data;
    expect(rows.find((r) => r.uuid === callIdOf(party))?.other_leg).toBe(callIdOf(target));

    await target.bye();
    await until(() => party.state === SessionState.Terminated, "the transferee's call ended");
    await page.close();
  }, 60_000);
});
