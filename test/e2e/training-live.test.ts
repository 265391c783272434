// A live training run in Debian Chromium against serve mode: the trainer (the admin's console)
// starts a scenario from the Training view, pauses it before its first caller (nobody calls while
// paused) and resumes it; the trainee (agent1's console, real SIP and WebRTC) takes the Sales
// queue's callers beside a simulated agent: one caller abandons while both are busy, callers press
// their digits once the hold music gives way to whoever answers, the bot takes the overflow. The
// trainer stops the run and
// the scorecard table shows what the API's scorecard says, whose figures equal the CDRs and the
// queue and recipient events seen on the event websocket; the runs list keeps the run.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Scorecard as Card } from "../../contract/training.js";
import { plannedCallers, withDefaults, type Scenario } from "../../server/training/index.js";
import { SCREENSHOTS, seriousAxeViolations } from "../helpers/console-page.js";
import { EventsClient } from "../helpers/events-client.js";
import { poll } from "../helpers/poll.js";
import { demoGrant } from "../helpers/serve.js";
import { expectState, offerOn, openView, panelOf, useFloor, type Agent } from "../helpers/shift.js";
import { trainingRuns } from "../helpers/training.js";

// The server runs on a clock the test moves: while the run is paused the clock passes its first
// callers' time, and the run's idle stretches (before its first callers, and from their end to the
// third caller) are skipped; the calls themselves keep real time.
const setup = useFloor([], { clock: true });
const signedIn = setup.signedIn;

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

interface RunDoc {
  id: string;
  status: string;
  agents: { id: string }[];
  callers: { state: string; outcome: string | null; call_id: string | null; persona: string; left: string | null }[];
}

const PATIENT = { name: "Pat Patient", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 120 }, talk_time: { distribution: "fixed", mean_s: 3 }, digits: "5" };
const IMPATIENT = { name: "Ivy Impatient", weight: 1, number: "+1415666####", patience: { distribution: "fixed", mean_s: 4 }, talk_time: { distribution: "fixed", mean_s: 3 } };

/**
 * Two patient callers first (the trainee and the bot take one each), the impatient one once both
 * are busy (talking, then the queue's 10 s wrap-up), and a patient one after it, whom the first
 * agent back takes: a seed whose personas come in that order.
 */
function scenarioFor(salesId: string): Record<string, unknown> {
  for (let seed = 1; seed < 1000; seed += 1) {
    const doc = {
      name: "Live shift e2e",
      duration_s: 60,
      seed,
      queues: [
        {
          queue_id: salesId,
          rate_per_hour: 0,
          bursts: [
            { at_s: 6, count: 2, within_s: 0.5 },
            { at_s: 14, count: 1, within_s: 0.1 },
            { at_s: 15, count: 1, within_s: 0.1 },
          ],
        },
      ],
      personas: [PATIENT, IMPATIENT],
      agents: { count: 1, ring_delay_s: 1, handle_time: { distribution: "fixed", mean_s: 30 }, wrapup_s: 10 },
    };
    const names = plannedCallers(withDefaults(doc) as unknown as Scenario).map((c) => c.persona_name);
    if (names.join() === [PATIENT.name, PATIENT.name, IMPATIENT.name, PATIENT.name].join()) return doc;
  }
  throw new Error("no seed gives the callers this test needs");
}

describe("a live training run in the console", () => {
  it("the trainer starts, pauses, resumes and stops it; the trainee's scorecard equals the CDRs and events", async () => {
    const f = setup.floor();
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.slice(salesPath.lastIndexOf("/") + 1);
    const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => f.v2<T>(method, path, data));
    await runs.scenario(scenarioFor(salesId));

    // A cold server's first call can lose its media while the media workers warm up on a loaded
    // machine (MEDIA_TIMEOUT): one caller waits in Support until its media is up (the sim call's
    // `media`: the server's workers carry a call), so the run's callers meet a warm server.
    const warm = await f.simCall("5002", { caller_id_name: "Warm Up", caller_id_number: "+14155550000" });
    await poll(
      "the warm-up caller's media",
      async () => ((await f.v2<{ media: string }>("GET", `/sim/calls/${warm}`)).body.data.media === "connected" ? true : undefined),
      60_000,
    );
    await f.hangupSim(warm);

    // The account's queue and recipient events, as any client of the event websocket sees them.
    const grant = await demoGrant(f.url, "admin");
    const socket = await EventsClient.connect(`${f.url.replace(/^http/, "ws")}/events`);
    expect(await socket.subscribe(grant.accountId, ["callq.queue.*", "callq.recipient.*"], { auth_token: grant.token })).toMatchObject({ status: "success" });

    const trainee: Agent = { page: await signedIn("agent1", true), username: "agent1", name: "Alex Agent" };
    const p = trainee.page;
    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, trainee, "Away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await expectState(f, trainee, "Ready");

    const trainer = await signedIn("admin", false);
    await openView(trainer, "Training");
    await trainer.getByRole("button", { name: "Start run of Live shift e2e" }).click();
    const live = trainer.getByRole("region", { name: "Run of Live shift e2e" });
    await live.getByText(/^Running: /).waitFor();
    // Paused before its first caller's time (6 s of run time), nobody calls: the four are still to call.
    await live.getByRole("button", { name: "Pause run" }).click();
    await live.getByText(/^Paused: /).waitFor();
    const list = await f.v2<{ id: string }[]>("GET", "/training_runs");
    const runId = list.body.data[0]?.id ?? "";
    const run = (): Promise<RunDoc> => runs.readRun<RunDoc>(runId);
    // The server's clock passes the first callers' 6 s of run time (10 s) while the run holds its own.
    await f.clock.advance(10_000);
    expect((await run()).callers.map((c) => c.state)).toEqual(["planned", "planned", "planned", "planned"]);
    const callers = live.getByRole("group", { name: "The run's callers" });
    expect(await callers.getByRole("cell", { name: "Still to call" }).count()).toBe(4);
    await live.getByRole("button", { name: "Resume run" }).click();
    await live.getByText(/^Running: /).waitFor();
    const move = (ms: number) => f.clock.advance(ms);
    await runs.skipTo(runId, 5, move);

    // The trainee takes what is offered until every caller is gone. Once the first two have
    // talked (both agents then in their 10 s wrap-up), the clock moves on to just before the third.
    let taken = 0;
    const accepting = async () => {
      const accept = offerOn(p).getByRole("button", { name: "Accept" });
      if ((await accept.count()) > 0) {
        await accept.click().catch(() => undefined);
        taken += 1;
      }
    };
    await runs.awaitCallers<RunDoc>(runId, {
      what: "the first two callers gone",
      each: accepting,
      done: (now) => now.callers.slice(0, 2).every((c) => c.state === "ended"),
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    await runs.skipTo(runId, 13, move);
    const done = await runs.awaitCallers<RunDoc>(runId, {
      each: accepting,
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    expect(taken).toBeGreaterThan(0);
    // A caller whose media failed (MEDIA_TIMEOUT: ICE never came up on a machine loaded far past its
    // cores) leaves the queue as if it abandoned, and upsets the rest of the plan: said as such.
    const callerLegs = (await f.v2<{ call_id?: string; hangup_cause?: string }[]>("GET", "/cdrs?paginate=false")).body.data.filter((c) => done.callers.some((x) => x.call_id === c.call_id));
    expect(callerLegs.filter((c) => c.hangup_cause === "MEDIA_TIMEOUT").map((c) => c.call_id), "callers whose media failed").toEqual([]);
    expect(done.callers.map((c) => c.outcome), JSON.stringify(done.callers)).toEqual(["answered", "answered", "abandoned", "answered"]);
    // The impatient caller left by the run's patience, not by itself or a failure.
    expect(done.callers[2]?.left).toBeNull();
    await live.locator('[aria-label="Callers so far"] [data-count="abandoned"]').filter({ hasText: /^1$/ }).waitFor();
    await live.getByRole("button", { name: "Stop run" }).click();
    await live.getByText(/^Ended: /).waitFor();
    await live.getByRole("heading", { name: "Scorecard", exact: true }).waitFor();
    await trainer.screenshot({ path: join(SCREENSHOTS, "training-live-scorecard.png"), fullPage: true });
    expect(await seriousAxeViolations(trainer)).toEqual([]);

    const ended = await run();
    expect(ended.callers.map((c) => c.outcome)).toEqual(["answered", "answered", "abandoned", "answered"]);
    const card = (await f.v2<Card>("GET", `/training_runs/${runId}/scorecard`)).body.data;
    const me = card.people.find((x) => x.user_id === f.userId("agent1"));
    const bot = card.people.find((x) => x.simulated);
    if (!me || !bot) throw new Error(`the scorecard lacks the trainee or the bot: ${JSON.stringify(card.people)}`);

    // The figures against the CDRs and the events the websocket delivered.
    const callIds = new Set(ended.callers.map((c) => c.call_id));
    const queueEvents = socket.events.filter((e) => e.routing_key === `callq.queue.${salesId}` && callIds.has(String(e.data.call_id)));
    expect(card.run.offered).toBe(queueEvents.filter((e) => e.name === "join").length);
    expect(card.run.answered).toBe(3);
    expect(card.run.abandoned).toBe(1);
    expect(me.answered + bot.answered).toBe(3);
    expect(bot.answered).toBeGreaterThan(0);
    const cdrs = (await f.v2<{ owner_id?: string; billing_seconds?: number | string }[]>("GET", "/cdrs?paginate=false")).body.data;
    for (const person of [me, bot]) {
      const recipient = socket.events.filter((e) => e.routing_key === `callq.recipient.${person.user_id}`);
      expect(person.offered).toBe(recipient.filter((e) => e.name === "offer").length);
      expect(person.answered).toBe(recipient.filter((e) => e.name === "delivered").length);
      expect(person.missed).toBe(recipient.filter((e) => e.name === "reject").length);
      const legs = cdrs.filter((c) => c.owner_id === person.user_id && Number(c.billing_seconds) > 0);
      expect(legs).toHaveLength(person.answered);
      expect(person.talk_s).toBe(legs.reduce((sum, c) => sum + Number(c.billing_seconds), 0));
    }
    // A caller presses its 5 once it hears sound then quiet (the hold music giving way to a voice):
    // the card credits whoever it was bridged with then.
    expect(me.digits_collected + bot.digits_collected).toBe(card.run.digits_collected);

    // The table on the page shows the API's figures, row by row.
    const table = live.getByRole("group", { name: "Scorecard per person" });
    for (const person of card.people) {
      const cells = await table.locator(`tr[data-user-id="${person.user_id}"] td`).allInnerTexts();
      expect(cells.slice(0, 3)).toEqual([String(person.offered), String(person.answered), String(person.missed)]);
      expect(cells[5]).toBe(String(person.talk_s));
      expect(cells[10]).toBe(String(person.digits_collected));
    }
    const csv = live.getByRole("link", { name: "Export the scorecard as CSV" });
    const href = (await csv.getAttribute("href")) ?? "";
    const exported = await (await fetch(href)).text();
    expect(exported.split("\r\n")[0]).toMatch(/^name,user_id,simulated,offered,answered/);
    expect(exported).toContain(me.user_id);

    const history = trainer.getByRole("group", { name: "Training runs" });
    await history.locator(`tr[data-run-id="${runId}"]`).getByText("Ended").waitFor();
    await socket.close();
  }, 150_000);
});
