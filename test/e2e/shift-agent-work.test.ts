// An agent's day with the work around the calls, in one test, in Debian Chromium against serve
// mode: agent1's console is the agent, agent2's the colleague (with auto-answer), the
// supervisor's console watches the board. Sales requires a disposition before Ready and the
// account has a CRM link. Login, Away for a break, Ready; a first call with no history, refused
// Ready until the disposition is given; a rejected offer that the colleague's auto-answer takes; the
// same customer again, whose offer shows the first call's disposition and note before anyone
// answers; a caller who asks to be called back, offered to the agent once Ready and dialled by the
// server; do not disturb refusing a colleague's direct call while queue offers still come; a
// direct call missed, counted in the navigation and the title; Away for lunch and a server
// restart, after which the reason, the time it began, the missed call and the agent's own day
// (calls handled, missed offers) are all still there;
// call back from the missed list; sign out. At every step: agent1's console, the colleague's
// directory, the board and the API agree.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { SCREENSHOTS, waitRegistered } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { accept, card, expectState, hangUp, offerOn, openView, panelOf, useFloor, type Agent, type Floor } from "../helpers/shift.js";

const DISPOSITIONS = [
  { code: "sale", label: "Sale" },
  { code: "complaint", label: "Complaint" },
  { code: "wrong_number", label: "Wrong number" },
];
const CASEY = { caller_id_name: "Casey Customer", caller_id_number: "+14155550123" };

const setup = useFloor();

/** The board's row of a recipient, once it shows `state`. */
function boardRow(board: Page, userId: string, state: string) {
  return board.locator(`tr[data-recipient-id="${userId}"][data-state="${state}"]`);
}

/** Waits until `watcher`'s directory shows the user with `presence`. */
async function presenceOn(watcher: Page, userId: string, presence: string): Promise<void> {
  await watcher.locator(`li.colleague[data-user-id="${userId}"][data-presence="${presence}"]`).waitFor({ timeout: 20_000 });
}

/** Ends a wrap-up: the disposition and note, saved, then Ready (refused first if `tryReadyFirst`). */
async function dispose(f: Floor, agent: Agent, code: string, label: string, note: string, tryReadyFirst = false): Promise<void> {
  const p = agent.page;
  expect(await expectState(f, agent, "Wrapup-Time")).toMatchObject({ disposition_pending: true });
  const form = p.getByTestId("disposition");
  await form.getByTestId("disposition-required").waitFor();
  if (tryReadyFirst) {
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await panelOf(p).getByRole("alert").filter({ hasText: "disposition" }).waitFor();
    expect((await f.status(agent.username)).availability_state).toBe("Wrapup-Time");
  }
  await form.getByLabel("How did the call end?").selectOption(code);
  await form.getByLabel("Note").fill(note);
  await form.getByRole("button", { name: "Save disposition" }).click();
  await form.getByTestId("disposition-saved").filter({ hasText: label }).waitFor();
  await panelOf(p).getByRole("button", { name: "Ready" }).click();
  await expectState(f, agent, "Ready");
}

/** Away for `reason` from the reasons menu. */
async function awayFor(f: Floor, agent: Agent, label: string, code: string): Promise<number> {
  const p = agent.page;
  await panelOf(p).getByRole("button", { name: "Reason…" }).click();
  await p.getByRole("menu", { name: "Go Away for" }).getByRole("menuitemradio", { name: label }).click();
  const away = await expectState(f, agent, "Away");
  expect(away).toMatchObject({ away_reason: code, away_since: expect.any(Number) });
  await p.getByTestId("agent-state-reason").filter({ hasText: `Away: ${label}` }).waitFor();
  return Number((away as unknown as { away_since: number }).away_since);
}

interface Cdr {
  call_id: string;
  caller_id_number?: string;
  disposition?: { code: string; note: string };
}

describe("an agent's day with the work around the calls", () => {
  it("reasons, dispositions, the screen pop, a reject taken by auto-answer, a queue callback, do not disturb, a missed call, My day, a restart, call back, sign out", async () => {
    const f = setup.floor();
    const signedIn = setup.signedIn;
    const sales = await f.queuePath("Sales");
    expect((await f.v2("PATCH", sales, { dispositions: DISPOSITIONS, disposition_required: true, wrapup_policy: "required", ring_timeout: 10 })).status).toBe(200);
    expect((await f.v2("PATCH", "", { crm_link: "https://crm.example/search?q={number}" })).status).toBe(200);
    const id1 = f.userId("agent1");
    const id2 = f.userId("agent2");

    const board = await signedIn("supervisor");
    await openView(board, "Supervisor");
    const agent1: Agent = { page: await signedIn("agent1"), username: "agent1", name: "Alex Agent" };
    const agent2: Agent = { page: await signedIn("agent2"), username: "agent2", name: "Blair Agent" };
    const p = agent1.page;
    const q = agent2.page;

    // The colleague answers queue offers by themself after a second, and watches the directory.
    await openView(q, "Directory");
    await q.getByLabel("after (seconds)").fill("1");
    await q.getByLabel("Answer queue offers by myself").check();
    await poll("the colleague's auto-answer stored", async () => {
      const res = await f.v2<{ auto_answer: { enabled: boolean; delay_s: number } }>("GET", `/users/${id2}/preferences`);
      return res.body.data.auto_answer.enabled && res.body.data.auto_answer.delay_s === 1 ? true : undefined;
    });
    await presenceOn(q, id1, "available");

    // Login (Away), then Away for a break: the reason on the console, the board, the API and
    // the colleague's directory.
    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent1, "Away");
    await awayFor(f, agent1, "Break", "break");
    await boardRow(board, id1, "Away").getByTestId("agent-reason").filter({ hasText: "Break" }).waitFor({ timeout: 20_000 });
    await presenceOn(q, id1, "away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    expect(await expectState(f, agent1, "Ready")).not.toHaveProperty("away_reason");
    await presenceOn(q, id1, "ready");

    // The first call of a new customer: nothing in the history; on a call for colleagues; Ready
    // refused until the disposition; the board says a disposition is needed meanwhile.
    await f.simCall("5001", CASEY);
    await offerOn(p).getByText("No previous calls.").waitFor({ timeout: 20_000 });
    await accept(p, "Casey Customer");
    await expectState(f, agent1, "On-A-Call");
    await presenceOn(q, id1, "on_call");
    await hangUp(p, "Casey Customer");
    await boardRow(board, id1, "Wrapup-Time").getByTestId("agent-reason").filter({ hasText: "Disposition needed" }).waitFor({ timeout: 20_000 });
    await dispose(f, agent1, "complaint", "Complaint", "Line noisy since Monday", true);
    await presenceOn(q, id1, "ready");

    // A reject: the colleague, Ready now, takes the caller by auto-answer; agent1 is not rung again.
    const missedBefore = (await f.status("agent1")).stats.missed_calls;
    const riley = await f.simCall("5001", { caller_id_name: "Riley Rejected", caller_id_number: "+14155550101" });
    await offerOn(p).getByRole("button", { name: "Reject" }).waitFor({ timeout: 20_000 });
    await openView(q, "Agent");
    await panelOf(q).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent2, "Away");
    await panelOf(q).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent2, "Ready");
    await offerOn(p).getByRole("button", { name: "Reject" }).click();
    await poll("the colleague's auto-answer to take the caller", async () => ((await f.channels("agent2")).some((c) => c.answered) ? true : undefined));
    await card(q, "Riley Rejected").getByText("Connected").waitFor({ timeout: 20_000 });
    await expectState(f, agent2, "On-A-Call");
    await expectState(f, agent1, "Ready");
    expect((await f.status("agent1")).stats.missed_calls).toBe(missedBefore + 1);
    expect(await offerOn(p).count()).toBe(0);
    await f.hangupSim(riley);
    await dispose(f, agent2, "wrong_number", "Wrong number", "Wanted the bakery");
    await panelOf(q).getByRole("button", { name: "Logout" }).click();
    await expectState(f, agent2, "Not-Logged-In");
    await openView(q, "Directory");

    // The same customer again: while it rings, the offer shows the first call's disposition and
    // note, who took it, and the CRM link for the number.
    await f.simCall("5001", CASEY);
    const history = offerOn(p).getByRole("region", { name: /History of|Caller history/ });
    await history.getByText("Line noisy since Monday").waitFor({ timeout: 20_000 });
    expect(await history.innerText()).toContain("Complaint");
    expect(await history.innerText()).toContain("Alex Agent");
    expect(await history.getByRole("link", { name: "Open in CRM" }).getAttribute("href")).toBe("https://crm.example/search?q=%2B14155550123");
    expect((await f.status("agent1")).availability_state).toBe("Call-Offer");
    await accept(p, "Casey Customer");
    await card(p, "Casey Customer").getByText("Line noisy since Monday").waitFor();
    await hangUp(p, "Casey Customer");
    await dispose(f, agent1, "sale", "Sale", "Upgraded the line");
    const cdrs = await poll("the two calls of the customer, disposed, on both legs", async () => {
      const res = await f.v2<Cdr[]>("GET", "/cdrs?paginate=false");
      const marked = res.body.data.filter((c) => c.disposition !== undefined && ["complaint", "sale"].includes(c.disposition.code));
      return marked.length === 4 ? marked : undefined;
    });
    expect(cdrs.filter((c) => c.disposition?.code === "sale").map((c) => c.disposition?.note)).toEqual(["Upgraded the line", "Upgraded the line"]);

    // A caller asks to be called back while agent1 is in a meeting: the callback keeps its place
    // on the board; Ready, agent1 is offered "Callback to" the number, accepts, the server dials
    // the caller's phone, which answers; then the usual disposition.
    expect((await f.v2("PATCH", sales, { callback: { enabled: true, digit: "5" } })).status).toBe(200);
    await awayFor(f, agent1, "Meeting", "meeting");
    const callbackNumber = "+14155550177";
    const asking = await f.v2<{ id: string }>("POST", "/sim/calls", {
      to: "5001",
      caller_id_name: "Cameron Callback",
      caller_id_number: callbackNumber,
      script: { steps: [{ digits: "5", after_s: 1 }, { wait_s: 30 }] },
      phone: { answer: "answer", audio: "tone_stream://700" },
    });
    expect(asking.status).toBe(201);
    await poll("the asking caller's line to end", async () => ((await f.v2("GET", `/sim/calls/${asking.body.data.id}`)).status === 404 ? true : undefined), 20_000, 500);
    const tile = board.getByRole("region", { name: "Queues" }).getByRole("region", { name: "Sales" });
    await tile.getByTestId("board-callbacks").filter({ hasText: "1" }).waitFor({ timeout: 20_000 });
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    const callbackOffer = p.getByRole("region", { name: `Callback to ${callbackNumber}` });
    await callbackOffer.getByRole("button", { name: "Accept" }).click({ timeout: 20_000 });
    await card(p, "Cameron Callback").getByText("Connected").waitFor({ timeout: 20_000 });
    await poll("the callback connected", async () => {
      const status = await f.v2<{ stats: { callbacks_connected?: number } }>("GET", `${sales}/status`);
      return status.body.data.stats.callbacks_connected === 1 ? true : undefined;
    }, 20_000);
    await tile.getByTestId("board-callbacks").filter({ hasText: "0" }).waitFor({ timeout: 20_000 });
    await hangUp(p, "Cameron Callback");
    await dispose(f, agent1, "sale", "Sale", "Called back about the quote");

    // Do not disturb: the colleague's direct call is refused (their console says so, agent1's
    // does not ring), while a queue offer still comes.
    await openView(p, "Directory");
    await p.getByLabel(/Do not disturb/).check();
    await presenceOn(q, id1, "do_not_disturb");
    await q.locator(`li.colleague[data-user-id="${id1}"]`).getByRole("button", { name: "Call Alex Agent" }).click();
    const refused = q.locator(".call-failure");
    await refused.waitFor({ timeout: 15_000 });
    expect(await refused.innerText()).toContain("Unavailable");
    expect(await offerOn(p).count()).toBe(0);
    await refused.getByRole("button", { name: /Dismiss/ }).click();
    await openView(p, "Agent");
    const queued = await f.simCall("5001", { caller_id_name: "Quinn Queue", caller_id_number: "+14155550102" });
    await accept(p, "Quinn Queue");
    await expectState(f, agent1, "On-A-Call");
    await f.hangupSim(queued);
    await dispose(f, agent1, "sale", "Sale", "Took the offer while in do not disturb");
    await openView(p, "Directory");
    await p.getByLabel(/Do not disturb/).uncheck();
    await presenceOn(q, id1, "ready");

    // A direct call missed: the colleague gives up before agent1 answers. The count shows on the
    // navigation and in the title.
    await openView(p, "Agent");
    await q.locator(`li.colleague[data-user-id="${id1}"]`).getByRole("button", { name: "Call Alex Agent" }).click();
    await offerOn(p).waitFor({ timeout: 20_000 });
    await openView(q, "Agent");
    await q.getByRole("button", { name: "Hang up" }).click();
    const count = p.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: /^Directory/ }).locator(".nav-count");
    await count.waitFor({ timeout: 15_000 });
    expect(await count.innerText()).toContain("1");
    await poll("the title counting the missed call", async () => ((await p.title()).startsWith("(1 missed)") ? true : undefined));
    await f.noChannels("agent1", "agent2");

    // The agent's own day so far, as the server counts it and as My day shows it: four queue
    // calls handled (Casey twice, the callback, the call taken in do not disturb), one missed offer
    // (the reject).
    const dayPath = `/callq_recipients/${id1}/day`;
    const dayBefore = (await f.v2<{ calls_handled: number; missed_offers: number }>("GET", dayPath)).body.data;
    expect(dayBefore).toMatchObject({ calls_handled: 4, missed_offers: 1 });
    const myDay = p.getByTestId("my-day");
    await myDay.getByTestId("day-calls").filter({ hasText: /^4$/ }).waitFor({ timeout: 20_000 });
    await myDay.getByTestId("day-missed").filter({ hasText: /^1$/ }).waitFor();

    // Away for lunch, then the server restarts: the reason and the time it began survive, the
    // console and the board show them again, and the missed call is still counted.
    const since = await awayFor(f, agent1, "Lunch", "lunch");
    await f.restart();
    await waitRegistered(p, 45_000);
    await waitRegistered(q, 45_000);
    const after = await expectState(f, agent1, "Away");
    expect(after).toMatchObject({ away_reason: "lunch", away_since: since });
    await p.getByTestId("agent-state-reason").filter({ hasText: "Away: Lunch" }).waitFor({ timeout: 20_000 });
    await boardRow(board, id1, "Away").getByTestId("agent-reason").filter({ hasText: "Lunch" }).waitFor({ timeout: 30_000 });
    await count.waitFor({ timeout: 15_000 });
    expect(await count.innerText()).toContain("1");
    // The day survives the restart too.
    expect((await f.v2<{ calls_handled: number; missed_offers: number }>("GET", dayPath)).body.data).toMatchObject({ calls_handled: 4, missed_offers: 1 });
    await myDay.getByTestId("day-calls").filter({ hasText: /^4$/ }).waitFor({ timeout: 20_000 });
    await p.screenshot({ path: join(SCREENSHOTS, "shift-work-after-restart.png") });

    // Call back from the missed list (seen there, the count goes); the colleague answers.
    await openView(p, "Directory");
    const missed = p.getByRole("list", { name: "Missed calls" });
    await missed.getByRole("button", { name: /Call back/ }).first().click();
    await poll("the count cleared once seen", async () => ((await count.count()) === 0 ? true : undefined));
    expect(await p.title()).not.toContain("missed");
    await accept(q, agent1.name);
    await card(q, agent1.name).getByText("Connected").waitFor({ timeout: 20_000 });
    await poll("agent1 and agent2 bridged", async () => {
      const [one, two] = [await f.channels("agent1"), await f.channels("agent2")];
      return one.length === 1 && two.length === 1 && one[0]?.other_leg !== undefined ? true : undefined;
    });
    await hangUp(q, agent1.name);
    await f.noChannels("agent1", "agent2");
    expect(await f.status("agent1")).toMatchObject({ availability_state: "Away", away_reason: "lunch" });
    await openView(q, "Directory");
    await presenceOn(q, id1, "away");

    // Sign out, logging out of the queues: logged out on the server, gone from the board's Away row.
    await openView(p, "Agent");
    await p.getByRole("button", { name: "Sign out" }).click();
    await p.getByTestId("sign-out-dialog").getByRole("button", { name: "Sign out and log out of queues" }).click();
    await p.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await f.status("agent1")).toMatchObject({ availability_state: "Not-Logged-In", available: false });
    await presenceOn(q, id1, "offline");
    expect(setup.errors(), "uncaught errors in the consoles").toEqual([]);
  }, 400_000);
});
