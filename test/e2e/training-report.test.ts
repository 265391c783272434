// A finished training run read back in Debian Chromium against serve mode: a short run whose
// callers the Sales queue offers to agent1 (real SIP and WebRTC; the trainee rejects what rings)
// and to a simulated agent. Then the trainer opens the ended run: its replay, scrubbed to a chosen
// moment, shows the counts and states the stored timeline implies there, and plays to the end at
// 10x; its printable report, printed (emulated print media, A4's width), shows the scenario, seed,
// targets, totals and every person compared, without the console's header and navigation, its
// tables within the page. The trainee's Scorecards view shows their own row of the run, as the
// API's; the report page is refused to them.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import type { OwnScorecard, RunReplay, Scorecard } from "../../contract/training.js";
import { SCREENSHOTS, seriousAxeViolations } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { expectState, offerOn, openView, panelOf, useFloor, type Agent } from "../helpers/shift.js";

const setup = useFloor();

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

const SCENARIO = "Report e2e";
const PATIENT = { name: "Pat Patient", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 20 }, talk_time: { distribution: "fixed", mean_s: 2 } };
const IMPATIENT = { name: "Ivy Impatient", weight: 1, number: "+1415666####", patience: { distribution: "fixed", mean_s: 3 }, talk_time: { distribution: "fixed", mean_s: 2 } };
/** A4's width less 12 mm margins each side, in CSS pixels (96 per inch). */
const A4_PRINTABLE_PX = Math.floor(((210 - 24) / 25.4) * 96);

/** The counts at run second `at`, worked out here from the timeline alone. */
function countsAt(replay: RunReplay, at: number): { waiting: number; answered: number; abandoned: number; arrived: number } {
  const seen = replay.timeline.filter((e) => e.at_s <= at);
  const named = (name: string) => seen.filter((e) => e.name === name).map((e) => e.index);
  const gone = new Set([...named("caller_answered"), ...named("caller_abandoned"), ...named("caller_left")]);
  const ended = seen.some((e) => e.name === "ended");
  return {
    waiting: ended ? 0 : named("caller_waiting").filter((i) => !gone.has(i)).length,
    answered: named("caller_answered").length,
    abandoned: named("caller_abandoned").length,
    arrived: named("caller_arrived").length,
  };
}

let runId = "";
/**
 * The file's two console pages, each opened and signed in once (a page load and a sign-in cost
 * seconds on a loaded machine): agent1's, registered, for the run and then the Scorecards view;
 * the trainer's (admin), for the replay and then the printable report.
 */
let traineePage: Page | undefined;
let trainerPage: Page | undefined;
const traineeConsole = async (): Promise<Page> => (traineePage ??= await setup.signedIn("agent1", true));
const trainerConsole = async (): Promise<Page> => (trainerPage ??= await setup.signedIn("admin", false));

describe("a finished run's replay, printable report and the trainee's scorecards", () => {
  it("runs a short scenario: agent1 rejects what rings, the simulated agent takes callers", async () => {
    const f = setup.floor();
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.slice(salesPath.lastIndexOf("/") + 1);
    const created = await f.v2<{ id: string }>("PUT", "/training_scenarios", {
      name: SCENARIO,
      duration_s: 60,
      seed: 11,
      queues: [{ queue_id: salesId, rate_per_hour: 0, bursts: [{ at_s: 1, count: 3, within_s: 0.5 }] }],
      personas: [PATIENT, IMPATIENT],
      agents: { count: 1, ring_delay_s: 1, handle_time: { distribution: "fixed", mean_s: 2 }, wrapup_s: 1 },
      targets: { service_level: { answered_within_s: 5, percent: 90 }, handle_time_s: 30 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    const trainee = await traineeConsole();
    const agent1: Agent = { page: trainee, username: "agent1", name: "Alex Agent" };
    await openView(trainee, "Agent");
    await panelOf(trainee).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent1, "Away");
    await panelOf(trainee).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent1, "Ready");

    const started = await f.v2<{ id: string }>("POST", `/training_scenarios/${created.body.data.id}/runs`, {});
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    runId = started.body.data.id;
    let rejected = 0;
    // The run lasts its minimum of 60 s; once its three callers are gone the trainer stops it, as
    // they would (or at 40 s of run time, with whoever the queue still holds).
    const status = await poll(
      "the run's callers gone and the run stopped",
      async () => {
        const reject = offerOn(trainee).getByRole("button", { name: "Reject" });
        if ((await reject.count()) > 0) {
          await reject.click().catch(() => undefined);
          rejected += 1;
        }
        const run = (await f.v2<{ status: string; run_seconds: number; callers: { state: string }[] }>("GET", `/training_runs/${runId}`)).body.data;
        const drained = run.callers.length === 3 && run.callers.every((c) => c.state === "ended");
        if (run.status !== "ended" && (drained || run.run_seconds > 40)) await f.v2("POST", `/training_runs/${runId}`, { action: "stop" });
        return run.status === "ended" ? run.status : undefined;
      },
      55_000,
      200,
    );
    expect(status).toBe("ended");
    const card = (await f.v2<Scorecard>("GET", `/training_runs/${runId}/scorecard`)).body.data;
    const me = card.people.find((p) => p.user_id === f.userId("agent1"));
    expect(me?.offered, `agent1 rejected ${rejected} offers; the card: ${JSON.stringify(card.people)}`).toBeGreaterThan(0);
    expect(card.people.some((p) => p.simulated)).toBe(true);
  });

  it("the trainer replays the ended run: at a chosen moment and at its end the view shows what the timeline implies", async () => {
    if (runId === "") throw new Error("the first test made no run");
    const f = setup.floor();
    const replay = (await f.v2<RunReplay>("GET", `/training_runs/${runId}/replay`)).body.data;
    const trainer = await trainerConsole();
    await openView(trainer, "Training");
    await trainer.locator(`tr[data-run-id="${runId}"]`).getByRole("button", { name: /^Open the run of / }).click();
    const run = trainer.getByRole("region", { name: `Run of ${SCENARIO}` });
    await run.getByText(/^Ended: /).waitFor();
    await run.getByRole("button", { name: "Replay the run" }).click();
    const player = run.getByRole("region", { name: "Replay" });
    const scrubber = player.getByLabel("Run time (s)");
    await scrubber.waitFor();
    const counts = player.getByRole("group", { name: "Callers at this moment" }).or(player.locator('[aria-label="Callers at this moment"]'));
    const shown = async () => ({
      waiting: Number(await counts.locator('[data-count="waiting"]').innerText()),
      answered: Number(await counts.locator('[data-count="answered"]').innerText()),
      abandoned: Number(await counts.locator('[data-count="abandoned"]').innerText()),
      arrived: Number(await counts.locator('[data-count="arrived"]').innerText()),
    });

    // The moment every planned caller has joined the queue, to the tenth the scrubber moves by.
    const lastJoin = Math.max(...replay.timeline.filter((e) => e.name === "caller_waiting").map((e) => e.at_s));
    const chosen = Math.ceil(lastJoin * 10) / 10;
    await scrubber.fill(String(chosen));
    await player.locator(`[data-replay-at="${chosen}"]`).waitFor();
    const expected = countsAt(replay, chosen);
    expect(expected.arrived).toBe(3);
    expect(await shown()).toEqual(expected);
    // agent1's state there is their last step before it, as the queue engine reported it.
    const mine = replay.agent_steps.filter((s) => s.user_id === f.userId("agent1") && s.at_s <= chosen);
    const state = mine[mine.length - 1]?.availability_state ?? "—";
    expect(await player.locator(`tr[data-user-id="${f.userId("agent1")}"] [data-cell="state"]`).innerText()).toBe(state);
    await trainer.screenshot({ path: join(SCREENSHOTS, "training-replay.png"), fullPage: true });
    expect(await seriousAxeViolations(trainer)).toEqual([]);

    // Played from there at 10x, it stops at the run's end, where the counts are the run's.
    await player.getByLabel("Speed").selectOption({ label: "10x" });
    await player.getByRole("button", { name: "Play replay" }).click();
    await player.getByRole("button", { name: "Play replay" }).waitFor({ timeout: 20_000 });
    const length = Math.ceil(Math.max(replay.run_seconds, ...replay.timeline.map((e) => e.at_s)) * 10) / 10;
    await player.locator(`[data-replay-at="${length}"]`).waitFor();
    const atEnd = countsAt(replay, length);
    expect(await shown()).toEqual(atEnd);
    const card = (await f.v2<Scorecard>("GET", `/training_runs/${runId}/scorecard`)).body.data;
    expect([atEnd.answered, atEnd.abandoned]).toEqual([card.run.answered, card.run.abandoned]);
  });

  it("the trainer's printable report: printed, the report alone within A4's width, every person and the run's totals", async () => {
    if (runId === "") throw new Error("the first test made no run");
    const f = setup.floor();
    const card = (await f.v2<Scorecard>("GET", `/training_runs/${runId}/scorecard`)).body.data;
    const trainer = await trainerConsole();
    await openView(trainer, "Training");
    await trainer.locator(`tr[data-run-id="${runId}"]`).getByRole("button", { name: /^Open the run of / }).click();
    await trainer.getByRole("region", { name: `Run of ${SCENARIO}` }).getByRole("link", { name: "Printable report" }).click();
    const report = trainer.getByRole("region", { name: `Run report: ${SCENARIO}` });
    await report.locator('table[data-table="people"]').waitFor();
    expect(await report.locator('[data-fact="seed"]').innerText()).toBe("11");
    expect(await report.locator('[data-fact="targets"]').innerText()).toBe("Service level 90 % answered within 5 s; handle time 30 s");
    const totals = await report.locator('table[data-table="totals"] tbody td').allInnerTexts();
    expect(totals.slice(0, 6).map(Number)).toEqual([card.run.callers, card.run.offered, card.run.answered, card.run.abandoned, card.run.timed_out, card.run.abandoned_while_ringing]);
    for (const person of card.people) {
      const row = report.locator(`table[data-table="people"] tr[data-user-id="${person.user_id}"] td`);
      expect((await row.allInnerTexts()).slice(0, 3).map(Number)).toEqual([person.offered, person.answered, person.missed]);
    }

    const csv = await report.getByRole("link", { name: "Export as CSV" }).getAttribute("href");
    expect(csv).toContain(`/training_runs/${runId}/scorecard`);
    const rows = (await (await fetch(new URL(csv ?? "", f.url))).text()).trim().split("\r\n");
    expect(rows).toHaveLength(card.people.length + 2);
    expect(rows[rows.length - 1]).toContain("(run)");

    // Print calls the browser's print; what it prints is the print media's layout.
    await trainer.evaluate('window.print = () => document.body.setAttribute("data-printed", "yes")');
    await report.getByRole("button", { name: "Print" }).click();
    expect(await trainer.locator("body").getAttribute("data-printed")).toBe("yes");

    await trainer.setViewportSize({ width: A4_PRINTABLE_PX, height: 1000 });
    await trainer.emulateMedia({ media: "print" });
    for (const hidden of ["#console-nav", ".console-header", ".skip-link"]) expect(await trainer.locator(hidden).isVisible(), hidden).toBe(false);
    expect(await report.getByRole("button", { name: "Print" }).isVisible()).toBe(false);
    expect(await report.getByRole("heading", { name: `Run report: ${SCENARIO}` }).isVisible()).toBe(true);
    for (const table of ["totals", "people"]) {
      const box = await report.locator(`table[data-table="${table}"]`).evaluate((t) => ({ right: t.getBoundingClientRect().right, width: t.scrollWidth, room: t.parentElement?.clientWidth ?? 0 }));
      expect(box.right, `the ${table} table's right edge`).toBeLessThanOrEqual(A4_PRINTABLE_PX);
      expect(box.width, `the ${table} table's width`).toBeLessThanOrEqual(box.room);
    }
    const pdf = await trainer.pdf({ format: "A4", margin: { top: "12mm", bottom: "12mm", left: "12mm", right: "12mm" } });
    expect(pdf.subarray(0, 5).toString("latin1")).toBe("%PDF-");
    await trainer.screenshot({ path: join(SCREENSHOTS, "training-report-print.png"), fullPage: true });
    await trainer.emulateMedia({ media: "screen" });
  });

  it("the trainee's Scorecards view shows their own row of the run, as the API's; the report is not theirs", async () => {
    if (runId === "") throw new Error("the first test made no run");
    const f = setup.floor();
    const trainee = await traineeConsole();
    const own = (await f.v2<OwnScorecard[]>("GET", `/users/${f.userId("agent1")}/training_scorecards`)).body.data;
    const mine = own.find((r) => r.run_id === runId);
    if (mine === undefined) throw new Error(`agent1's scorecards lack the run: ${JSON.stringify(own)}`);
    await openView(trainee, "Scorecards");
    const row = trainee.locator(`tr[data-run-id="${runId}"]`);
    await row.waitFor();
    expect(await row.getByRole("rowheader").innerText()).toBe(SCENARIO);
    const cells = await row.locator("td").allInnerTexts();
    expect(cells.slice(1, 4).map(Number)).toEqual([mine.person.offered, mine.person.answered, mine.person.missed]);
    expect(await row.locator('[data-figure="handle-time"]').innerText()).toContain("(target 30");
    // Only their row: the simulated agent's figures are nowhere on the page.
    expect(await trainee.locator("tr[data-run-id]").count()).toBe(own.length);
    expect(await seriousAxeViolations(trainee)).toEqual([]);

    await trainee.evaluate(`window.location.hash = "#/training/runs/${runId}/report"`);
    await trainee.getByText("Run reports are for trainers", { exact: false }).waitFor();
    expect(await trainee.locator('table[data-table="people"]').count()).toBe(0);
  });
});
