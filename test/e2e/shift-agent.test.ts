// One agent's whole day in one test, in Debian Chromium against serve mode: agent1's console is
// the agent, agent2's the colleague beside them, simulated callers and the admin's API calls the
// rest of the floor. Sign in, Login, Ready; queue calls accepted, rejected (the colleague gets it)
// and not answered, until the misses set the agent Away with the reason shown; a second call
// while on a queue call (the first held), swap by key, merge into a conference and leave it;
// attended and blind transfers both ways, with wrap-up only once the agent leaves the call and
// the receiving card naming the customer; a call out; Away and Ready by key; a server restart in
// the middle of a call; failed outgoing calls said in words; sign out, logging out of the queues.
// At every step: what agent1's console shows, the recipient status from the API, and the channels.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole, SCREENSHOTS, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import {
  accept,
  card,
  connectedLeg,
  expectPassing,
  expectState,
  failedCall,
  Floor,
  hangUp,
  historyRow,
  offerOn,
  openView,
  panelOf,
  startTransfer,
  type Agent,
  type Caller,
} from "../helpers/shift.js";

/**
 * Sales' settings for the day. The server runs on a clock this test moves (Floor.open with
 * `clock`): an offer rings out and a wrap-up ends when the test moves the clock past them, so
 * both can be long enough for a loaded machine (a console sees every state) and cost no wait.
 * The moves add up on the server's clock: kept well inside the phones' 300 s registrations.
 */
const RING_S = 20;
const WRAPUP_S = 10;
const MAX_MISSED = 3;
/**
 * How long the call before the restart talks on the server's clock (moved on, not waited for), so
 * its length in the history can be told.
 */
const TALK_S = 3;

function caller(name: string, number: string): Caller {
  return { caller_id_name: name, caller_id_number: number };
}

let floor: Floor | undefined;
let browser: LaunchedBrowser | undefined;
const consoles: ConsolePage[] = [];

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  floor = await Floor.open([], { clock: true });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await floor?.close();
});

/** Waits until the dock's line with `name` shows `state`, and the server agrees about its leg's hold. */
async function lineIs(f: Floor, page: Page, name: string, state: "Connected" | "On hold"): Promise<void> {
  await page.locator(".line-dock .line").filter({ hasText: name }).locator(".line-state", { hasText: state }).waitFor();
  const uuid = (await card(page, name).getAttribute("data-call-id")) ?? "";
  await poll(`${name}'s leg ${state} on the server`, async () => {
    const res = await f.v2<{ is_onhold: boolean }>("GET", `/channels/${encodeURIComponent(uuid)}`);
    return res.status === 200 && res.body.data.is_onhold === (state === "On hold") ? true : undefined;
  });
}

/**
 * The offer ringing on the page rings out unanswered once the server's clock passes its ring
 * timeout. Its leg's id tells it from the next offer, which may follow at once.
 */
async function ringsOut(f: Floor, page: Page): Promise<void> {
  await offerOn(page).getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
  const id = await offerOn(page).getAttribute("data-call-id");
  if (id === null) throw new Error("an offer without its leg's id");
  await f.clock.advance(RING_S * 1000);
  await page.locator(`section.call-offer[data-call-id="${id}"]`).waitFor({ state: "detached", timeout: 20_000 });
}

/** The agent is in wrap-up (or past it); the server's clock passes the wrap-up, and they are Ready by themselves. */
async function wrapsUp(f: Floor, agent: Agent): Promise<void> {
  await expectPassing(f, agent, "Wrapup-Time", "Ready");
  await f.clock.advance(WRAPUP_S * 1000);
  await expectState(f, agent, "Ready");
}

/** Waits until the console's agent state and the API's agree (a state the test does not choose). */
async function stateAgrees(f: Floor, agent: Agent): Promise<string> {
  return poll(`${agent.username}'s console and API agreeing`, async () => {
    const shown = await agent.page.getByTestId("agent-state-name").getAttribute("data-state");
    return shown !== null && shown === (await f.status(agent.username)).availability_state ? shown : undefined;
  });
}

describe("an agent's shift", () => {
  it("sign in, Login, Ready, queue calls taken, rejected and missed, two lines, merge, transfers both ways, Away, a restart mid-call, a failed call, sign out", async () => {
    if (floor === undefined || browser === undefined) throw new Error("beforeAll did not start the floor");
    const f = floor;
    const one = await openConsole(browser.browser, f.url);
    const two = await openConsole(browser.browser, f.url);
    consoles.push(one, two);
    const agent1: Agent = { page: one.page, username: "agent1", name: "Alex Agent" };
    const agent2: Agent = { page: two.page, username: "agent2", name: "Blair Agent" };
    const p = agent1.page;
    const q = agent2.page;
    const sales = await f.queuePath("Sales");
    const patched = await f.v2("PATCH", sales, { ring_timeout: RING_S, agent_wrapup_time: WRAPUP_S, max_missed_offers: MAX_MISSED });
    expect(patched.status).toBe(200);

    // Sign in: both phones registered, logged out of the queues, nothing live.
    await signIn(p, "agent1");
    await signIn(q, "agent2");
    await waitRegistered(p);
    await waitRegistered(q);
    await openView(p, "Agent");
    await openView(q, "Agent");
    expect((await expectState(f, agent1, "Not-Logged-In")).available).toBe(false);
    await f.noChannels("agent1", "agent2");
    await panelOf(q).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent2, "Away");

    // Login (Away), then Ready.
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent1, "Away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    expect((await expectState(f, agent1, "Ready")).available).toBe(true);

    // A queue call accepted: offered, On a call on one bridged leg, the agent hangs up, wrap-up,
    // then Ready by itself.
    await f.simCall("5001", caller("Casey Customer", "+14155550100"));
    await offerOn(p).getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    await expectState(f, agent1, "Call-Offer");
    await accept(p, "Casey Customer");
    expect((await expectState(f, agent1, "On-A-Call")).available).toBe(false);
    await connectedLeg(f, agent1, "Casey Customer");
    await hangUp(p, "Casey Customer");
    await expectPassing(f, agent1, "Wrapup-Time", "Ready");
    await p.getByTestId("wrapup").waitFor();
    await f.noChannels("agent1");
    await wrapsUp(f, agent1);
    expect((await f.status("agent1")).stats.total_calls).toBe(1);
    await historyRow(p, /Casey Customer/).waitFor();

    // A call rejected goes to the colleague, and agent1 is not rung for it again. Counted from
    // here: missed_calls also counts offers no device could take.
    const missedBefore = (await f.status("agent1")).stats.missed_calls;
    const riley = await f.simCall("5001", caller("Riley Rejected", "+14155550101"));
    await offerOn(p).getByRole("button", { name: "Reject" }).waitFor({ timeout: 20_000 });
    await panelOf(q).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent2, "Ready");
    await offerOn(p).getByRole("button", { name: "Reject" }).click();
    await accept(q, "Riley Rejected");
    await expectState(f, agent1, "Ready");
    expect((await f.status("agent1")).stats.missed_calls).toBe(missedBefore + 1);
    await expectState(f, agent2, "On-A-Call");
    expect(await offerOn(p).count()).toBe(0);
    await f.noChannels("agent1");
    await f.hangupSim(riley);
    await wrapsUp(f, agent2);
    await panelOf(q).getByRole("button", { name: "Away" }).click();
    await expectState(f, agent2, "Away");

    // Ring-no-answer twice (the reject made one miss): the third miss in a row sets agent1 Away,
    // and the console says why. One history row per missed offer.
    const noel = await f.simCall("5001", caller("Noel Noanswer", "+14155550102"));
    await offerOn(p).getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    await expectState(f, agent1, "Call-Offer");
    await ringsOut(f, p);
    await poll("the second miss", async () => ((await f.status("agent1")).stats.missed_calls === missedBefore + 2 ? true : undefined));
    await ringsOut(f, p);
    const away = await expectState(f, agent1, "Away");
    expect(away).toMatchObject({ available: false, away_reason: "missed_offers", missed_offers: MAX_MISSED, stats: { missed_calls: missedBefore + 3 } });
    const reason = panelOf(p).getByTestId("agent-state-reason");
    expect(await reason.innerText()).toContain(`Set Away after ${MAX_MISSED} missed offers`);
    await p.screenshot({ path: join(SCREENSHOTS, "shift-away-after-misses.png") });
    const rows = p.getByRole("region", { name: "Recent calls" }).getByRole("row");
    await poll("one history row per missed offer", async () => ((await rows.filter({ hasText: "Noel Noanswer" }).count()) === 2 && (await rows.filter({ hasText: "Riley Rejected" }).count()) === 1 ? true : undefined));
    // Away: the caller waits, offered to nobody.
    const waiting = await f.v2<{ session_list: { caller_id_name: string; state: string }[] }[]>("GET", `${sales}/sessions`);
    expect(waiting.body.data[0]?.session_list).toMatchObject([{ caller_id_name: "Noel Noanswer", state: "waiting" }]);
    await f.hangupSim(noel);

    // Ready again: the reason goes.
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    expect(await expectState(f, agent1, "Ready")).not.toHaveProperty("away_reason");
    expect(await reason.count()).toBe(0);

    // A second call while on a queue call: accepting it (by key) holds the first; the dock lists
    // both; Swap (key) changes which is held; Merge (key) makes one conference; the agent leaves
    // it and the two callers stay connected; wrap-up follows the agent leaving.
    const lee = await f.simCall("5001", caller("Lee Lines", "+14155550103"));
    await accept(p, "Lee Lines");
    await expectState(f, agent1, "On-A-Call");
    await connectedLeg(f, agent1, "Lee Lines");
    const dana = await f.simCall("1002", caller("Dana Douglas", "+14155550199"));
    await p.locator(".line-dock .line").filter({ hasText: "Dana Douglas" }).getByText("Ringing").waitFor({ timeout: 20_000 });
    expect(await offerOn(p).innerText()).toContain("Accepting puts your call with");
    await p.keyboard.press("Alt+KeyA");
    await offerOn(p).waitFor({ state: "detached" });
    await lineIs(f, p, "Lee Lines", "On hold");
    await lineIs(f, p, "Dana Douglas", "Connected");
    expect(await f.channels("agent1")).toHaveLength(2);
    await expectState(f, agent1, "On-A-Call");
    await p.keyboard.press("Alt+KeyS");
    await lineIs(f, p, "Lee Lines", "Connected");
    await lineIs(f, p, "Dana Douglas", "On hold");
    await p.keyboard.press("Alt+KeyJ");
    const conference = p.getByRole("region", { name: /^Conference with / });
    await conference.getByText("Connected").waitFor();
    await p.locator(".line-dock").waitFor({ state: "detached" });
    expect(await conference.innerText()).toMatch(/Lee Lines[\s\S]*Dana Douglas|Dana Douglas[\s\S]*Lee Lines/);
    await poll("agent1 on one leg after the merge", async () => ((await f.channels("agent1")).length === 1 ? true : undefined));
    await expectState(f, agent1, "On-A-Call");
    await p.screenshot({ path: join(SCREENSHOTS, "shift-conference.png") });
    await p.keyboard.press("Alt+KeyE");
    await conference.waitFor({ state: "detached" });
    await f.noChannels("agent1");
    await wrapsUp(f, agent1);
    // The two callers still talk to each other: both their legs up, answered.
    const callers = await f.v2<{ uuid: string; answered: boolean }[]>("GET", "/channels");
    expect(callers.body.data.map((c) => c.answered)).toEqual([true, true]);
    await f.hangupSim(lee);
    await f.hangupSim(dana);
    await poll("no channel left", async () => ((await f.v2<unknown[]>("GET", "/channels")).body.data.length === 0 ? true : undefined));
    await expectState(f, agent1, "Ready");

    // Attended transfer of a queue call to the colleague: agent1 stays On a call through the
    // consultation (longer than the wrap-up) and wraps up only once they complete it; the
    // colleague's card then names the customer.
    const terry = await f.simCall("5001", caller("Terry Transfer", "+14155550104"));
    await accept(p, "Terry Transfer");
    await expectState(f, agent1, "On-A-Call");
    await connectedLeg(f, agent1, "Terry Transfer");
    await startTransfer(p, "Terry Transfer", "Attended (consult first)", "1003");
    await accept(q, agent1.name);
    await card(q, agent1.name).getByText("Connected").waitFor();
    await card(p, "Terry Transfer").getByRole("group", { name: "Attended transfer" }).waitFor();
    await f.clock.advance((WRAPUP_S + 2) * 1000);
    await expectState(f, agent1, "On-A-Call");
    // agent1's own leg; the consult legs (a loopback) carry no owner and are not listed.
    expect(await f.channels("agent1")).toHaveLength(1);
    await card(p, "Terry Transfer").getByRole("button", { name: "Complete transfer" }).click();
    await card(p, "Terry Transfer").waitFor({ state: "detached" });
    await expectPassing(f, agent1, "Wrapup-Time", "Ready");
    await connectedLeg(f, agent2, "Terry Transfer");
    await f.noChannels("agent1");
    await wrapsUp(f, agent1);
    expect((await f.status("agent1")).stats.total_calls).toBe(3);

    // And back: the colleague consults agent1 (shown as the colleague), completes, and agent1's
    // card, leg and history name the customer.
    await startTransfer(q, "Terry Transfer", "Attended (consult first)", "1002");
    await accept(p, agent2.name);
    await card(p, agent2.name).getByText("Connected").waitFor();
    expect(await f.channels("agent2")).toHaveLength(1);
    await stateAgrees(f, agent1);
    await card(q, "Terry Transfer").getByRole("button", { name: "Complete transfer" }).click();
    await card(q, "Terry Transfer").waitFor({ state: "detached" });
    await connectedLeg(f, agent1, "Terry Transfer");
    await f.noChannels("agent2");
    await stateAgrees(f, agent1);
    await hangUp(p, "Terry Transfer");
    await f.noChannels("agent1", "agent2");
    await f.hangupSim(terry);
    await historyRow(p, /Terry Transfer/).waitFor();
    await historyRow(q, /Terry Transfer/).waitFor();
    // Whatever wrap-up the call left (the clock passes it, as the wall's would).
    await f.clock.advance(WRAPUP_S * 1000);
    await expectState(f, agent1, "Ready");

    // Blind transfer of a queue call to the colleague: agent1 leaves at once and wraps up; the
    // colleague is offered the customer; then they send the customer back to agent1.
    await f.simCall("5001", caller("Bailey Blind", "+14155550105"));
    await accept(p, "Bailey Blind");
    await expectState(f, agent1, "On-A-Call");
    await connectedLeg(f, agent1, "Bailey Blind");
    await startTransfer(p, "Bailey Blind", "Blind", "1003");
    await card(p, "Bailey Blind").waitFor({ state: "detached" });
    await f.noChannels("agent1");
    await expectPassing(f, agent1, "Wrapup-Time", "Ready");
    await accept(q, "Bailey Blind");
    await connectedLeg(f, agent2, "Bailey Blind");
    await wrapsUp(f, agent1);
    await startTransfer(q, "Bailey Blind", "Blind", "1002");
    await card(q, "Bailey Blind").waitFor({ state: "detached" });
    await f.noChannels("agent2");
    await accept(p, "Bailey Blind");
    await connectedLeg(f, agent1, "Bailey Blind");
    await stateAgrees(f, agent1);
    await hangUp(p, "Bailey Blind");
    await f.noChannels("agent1", "agent2");
    await historyRow(p, /Bailey Blind/).waitFor();
    await historyRow(q, /Bailey Blind/).waitFor();
    await f.clock.advance(WRAPUP_S * 1000);

    // A call out to the colleague: one bridge, agent1's leg and agent2's named by each other.
    await p.getByLabel("Number or extension").fill("1003");
    await p.getByRole("button", { name: "Call", exact: true }).click();
    await accept(q, agent1.name);
    const out = await connectedLeg(f, agent1, "1003");
    const taken = await connectedLeg(f, agent2, agent1.name);
    expect(out.other_leg).toBe(taken.uuid);
    await stateAgrees(f, agent1);
    await hangUp(p, "1003");
    await card(q, agent1.name).waitFor({ state: "detached" });
    await f.noChannels("agent1", "agent2");

    // Away and Ready again, by key.
    await p.keyboard.press("Alt+KeyW");
    expect(await expectState(f, agent1, "Away")).not.toHaveProperty("away_reason");
    await p.keyboard.press("Alt+KeyY");
    expect((await expectState(f, agent1, "Ready")).available).toBe(true);

    // The server restarts in the middle of a call: once the phone is registered again the card
    // goes, nothing is live, the history tells the call's length up to the restart, and the agent
    // is back to the availability they had.
    await f.simCall("1002", caller("Rory Restart", "+14155550106"));
    await accept(p, "Rory Restart");
    await connectedLeg(f, agent1, "Rory Restart");
    await f.clock.advance(TALK_S * 1000);
    await f.restart();
    await waitRegistered(p, 45_000);
    await card(p, "Rory Restart").waitFor({ state: "detached", timeout: 10_000 });
    await f.noChannels("agent1");
    const row = historyRow(p, /Rory Restart/);
    await row.waitFor({ timeout: 15_000 });
    const length = /(\d+):(\d{2})/.exec(await row.innerText());
    expect(length, "the history row shows the call's length").not.toBeNull();
    expect(Number(length?.[1]) * 60 + Number(length?.[2]), "the length the history shows, up to the restart").toBeGreaterThanOrEqual(TALK_S);
    expect(await stateAgrees(f, agent1)).toBe("Ready");
    expect((await f.status("agent1")).available).toBe(true);
    await p.screenshot({ path: join(SCREENSHOTS, "shift-after-restart.png") });

    // Failed outgoing calls say why, in the dock and in the history; nothing stays live.
    await failedCall(p, "1099", "No such number");
    await failedCall(p, "1005", "Unavailable");
    await f.noChannels("agent1");
    await expectState(f, agent1, "Ready");

    // Sign out, logging out of the queues: the server has agent1 logged out and the phone gone,
    // no offer follows, and signing in again does not land in Ready.
    await p.getByRole("button", { name: "Sign out" }).click();
    const dialog = p.getByTestId("sign-out-dialog");
    expect(await dialog.innerText()).toContain("You are logged in to your queues (Ready)");
    await p.screenshot({ path: join(SCREENSHOTS, "shift-sign-out.png") });
    await dialog.getByRole("button", { name: "Sign out and log out of queues" }).click();
    await p.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await f.status("agent1")).toMatchObject({ availability_state: "Not-Logged-In", available: false });
    const queueStatus = await f.v2<{ available_recipient_count: number }>("GET", `${sales}/status`);
    expect(queueStatus.body.data.available_recipient_count).toBe(0);
    await f.noChannels("agent1");
    await poll("agent1's phone unregistered", async () => ((await f.deviceRegistered("agent1")) ? undefined : true));
    await signIn(p, "agent1");
    await waitRegistered(p);
    await openView(p, "Agent");
    await expectState(f, agent1, "Not-Logged-In");
    expect([...one.errors, ...two.errors], "uncaught errors in the consoles").toEqual([]);
  }, 400_000);
});
