// The agent's own day and the board's row for them, in Chromium against serve mode. agent1 takes
// a Sales caller (3 s of wrap-up after), rejects the next (Sales sets Away on a refusal), then
// chooses Away for lunch. Their My day panel and the supervisor's board row (a second page) show
// exactly the figures the server counted (GET callq_recipients/{id}/day), and those agree with
// the agent's legs in the CDRs: one answered (its talk plus the wrap-up is the handle time), one
// not (the missed offer). The server runs on a clock the test moves: the talk and the wrap-up are
// moved on, not waited for.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { SCREENSHOTS, seriousAxeViolations } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { accept, expectPassing, expectState, formatDuration, hangUp, offerOn, openView, panelOf, useFloor, type Agent } from "../helpers/shift.js";

/** Sales's wrap-up after each call, seconds. */
const WRAPUP_S = 3;

const setup = useFloor([], { clock: true });
const signedIn = setup.signedIn;

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

interface Day {
  calls_handled: number;
  average_handle_time: number;
  missed_offers: number;
  occupancy: number | null;
  time_in_state: Record<"Ready" | "Call-Offer" | "On-A-Call" | "Wrapup-Time" | "Away", number>;
  away_by_reason: { reason: string | null; seconds: number }[];
  current: { state: string; away_reason?: string } | null;
}

/** Matches the whole text and nothing more. */
function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
}

interface Cdr {
  owner_id?: string;
  billing_seconds: number;
  caller_id_name: string;
}

describe("the agent's day", () => {
  it("a call taken, one rejected, Away for lunch: My day and the board row show the server's figures", async () => {
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    expect((await f.v2("PATCH", sales, { agent_wrapup_time: WRAPUP_S, force_away_on_reject: true })).status).toBe(200);

    const board = await signedIn("supervisor");
    await openView(board, "Supervisor");
    await board.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();

    const agent: Agent = { page: await signedIn("agent1"), username: "agent1", name: "Alex Agent" };
    const p = agent.page;
    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent, "Away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent, "Ready");
    const myDay = p.getByTestId("my-day");
    await myDay.getByTestId("day-calls").filter({ hasText: "0" }).waitFor();

    // A call taken: talk, then the queue's wrap-up, then Ready by itself.
    const first = await f.simCall("5001", { caller_id_name: "Casey Customer", caller_id_number: "+14155550123" });
    await accept(p, "Casey Customer");
    await expectState(f, agent, "On-A-Call");
    // Some talk to count, on the server's clock (no time is asserted: the server's own count is
    // the oracle below); then the wrap-up, moved past once it has begun.
    await f.clock.advance(2000);
    await hangUp(p, "Casey Customer");
    await expectPassing(f, agent, "Wrapup-Time", "Ready");
    await f.clock.advance(WRAPUP_S * 1000);
    await poll("agent1 Ready after the wrap-up", async () => ((await f.status("agent1")).availability_state === "Ready" ? true : undefined), 20_000);
    await myDay.getByTestId("day-calls").filter({ hasText: "1" }).waitFor({ timeout: 20_000 });
    await f.hangupSim(first);

    // A call rejected: a missed offer, and Sales sets the agent Away for it.
    const second = await f.simCall("5001", { caller_id_name: "Robin Rejected", caller_id_number: "+14155550124" });
    const offer = offerOn(p);
    await offer.getByRole("button", { name: "Reject" }).waitFor({ timeout: 20_000 });
    await offer.getByRole("button", { name: "Reject" }).click();
    await expectState(f, agent, "Away");
    await f.hangupSim(second);

    // Away for lunch, from the reasons menu.
    await panelOf(p).getByRole("button", { name: "Reason…" }).click();
    await p.getByRole("menu", { name: "Go Away for" }).getByRole("menuitemradio", { name: "Lunch" }).click();
    expect(await expectState(f, agent, "Away")).toMatchObject({ away_reason: "lunch" });

    // The server's figures, once the lunch is counted.
    const dayPath = `/callq_recipients/${f.userId("agent1")}/day`;
    const day = await poll("the day with the lunch in progress", async () => {
      const read = await f.v2<Day>("GET", dayPath);
      return read.body.data.current?.away_reason === "lunch" ? read.body.data : undefined;
    });
    expect(day).toMatchObject({ calls_handled: 1, missed_offers: 1 });
    expect(day.time_in_state["Wrapup-Time"]).toBe(WRAPUP_S);
    expect(day.away_by_reason.map((a) => a.reason)).toEqual(expect.arrayContaining(["lunch", null]));
    expect(day.occupancy).not.toBeNull();

    // The same counts in the CDRs: of the agent's legs, one answered, one not; the answered one's
    // talk plus the wrap-up is the handle time (billing seconds are whole, the day's to 0.1 s).
    const legs = await poll("the agent's two legs in the CDRs", async () => {
      const cdrs = (await f.v2<Cdr[]>("GET", "/cdrs?paginate=false")).body.data.filter((c) => c.owner_id === f.userId("agent1"));
      return cdrs.length === 2 ? cdrs : undefined;
    });
    const answered = legs.filter((c) => c.billing_seconds > 0 || c.caller_id_name.includes("Casey"));
    expect(answered).toHaveLength(1);
    expect(legs.filter((c) => c.caller_id_name.includes("Robin"))).toHaveLength(1);
    expect(Math.abs(day.average_handle_time - WRAPUP_S - (answered[0]?.billing_seconds ?? 0))).toBeLessThan(1.5);

    // My day: every figure that no longer moves while Away, exactly as the server has it.
    const shows = (page: Page, testId: string, text: string) => page.getByTestId(testId).filter({ hasText: exactly(text) }).waitFor({ timeout: 20_000 });
    const occupancy = day.occupancy === null ? "–" : `${day.occupancy}%`;
    await shows(p, "day-calls", "1");
    await shows(p, "day-missed", "1");
    await shows(p, "day-aht", formatDuration(day.average_handle_time * 1000));
    await shows(p, "day-occupancy", occupancy);
    for (const state of ["Ready", "Call-Offer", "On-A-Call", "Wrapup-Time"] as const) await shows(p, `day-time-${state}`, formatDuration(day.time_in_state[state] * 1000));
    await myDay.getByTestId("day-current").filter({ hasText: /^Now: Away · Lunch for \d+:\d\d$/ }).waitFor();
    await myDay.getByTestId("day-away-lunch").filter({ hasText: /^Lunch: \d+:\d\d$/ }).waitFor();
    await myDay.getByTestId("day-away-none").filter({ hasText: /^No reason given: \d+:\d\d$/ }).waitFor();
    await p.screenshot({ path: join(SCREENSHOTS, "agent-my-day.png") });
    expect(await seriousAxeViolations(p)).toEqual([]);

    // The board's row: the same figures, the state, its reason and its time.
    const row = board.locator(`tr[data-recipient-id="${f.userId("agent1")}"][data-state="Away"]`);
    await row.getByTestId("agent-reason").filter({ hasText: "Lunch" }).waitFor({ timeout: 20_000 });
    const rowId = `tr[data-recipient-id="${f.userId("agent1")}"]`;
    const cell = (testId: string, text: string) => board.locator(`${rowId} [data-testid="${testId}"]`).filter({ hasText: exactly(text) }).waitFor({ timeout: 20_000 });
    await cell("agent-handled", "1");
    await cell("agent-missed", "1");
    await cell("agent-aht", formatDuration(day.average_handle_time * 1000));
    await cell("agent-occupancy", occupancy);
    expect(await board.locator(`${rowId} .state-timer`).innerText()).toMatch(/^\d+:\d\d$/);
    await board.screenshot({ path: join(SCREENSHOTS, "board-agent-day.png"), fullPage: true });
    expect(await seriousAxeViolations(board)).toEqual([]);
  }, 120_000);
});
