// A trainee's training shift in Debian Chromium against serve mode, with real audio: agent1's
// console (real SIP and WebRTC) works a 2-minute scenario of five callers at the Sales queue
// beside a simulated agent. Every caller who is answered speaks two stock lines (espeak-ng
// renderings); at the trainee's page, Chromium's receive statistics show each call's speech with
// the energy and span of the lines' WAV files. One caller abandons while both agents are busy,
// one answers the prompt with digits, the scenario's timeline injects a burst of two callers, and
// the bot takes the callers the trainee cannot. The run's scorecard equals what the CDRs, the
// queue and recipient events and the run's own timeline say.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Scorecard as Card } from "../../contract/training.js";
import { decodeWav } from "../../server/media/player.js";
import { plannedCallers, withDefaults, type Scenario } from "../../server/training/index.js";
import { decibelsOf, heardCalls, inboundReadings, speechRange, startHearing } from "../helpers/heard-speech.js";
import { EventsClient } from "../helpers/events-client.js";
import { demoGrant, REPO_ROOT } from "../helpers/serve.js";
import { expectState, offerOn, openView, panelOf, useFloor, type Agent } from "../helpers/shift.js";
import { trainingRuns } from "../helpers/training.js";

// The server runs on a clock the test moves: the run's idle stretches (before its first callers,
// and from the first three callers' end to the burst at 30 s, the wrap-ups ending inside it) are
// skipped; every call's talk, and so the speech the trainee hears, keeps real time.
const setup = useFloor([], { clock: true });

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

interface RunCaller {
  state: string;
  outcome: string | null;
  call_id: string | null;
  persona: string;
  left: string | null;
  digits_sent: boolean;
}
interface RunDoc {
  id: string;
  status: string;
  callers: RunCaller[];
  timeline: { name: string; [field: string]: unknown }[];
}

/** The two stock phrases every answered caller says, in this order (assets/phrases/). */
const LINES = [
  { text: "Hi, I'm calling about my order.", file: "hi-order.wav" },
  { text: "I have a question about my bill.", file: "bill.wav" },
];
const lines = LINES.map((l) => ({ text: l.text }));
/** Long enough to say both lines (about 4 s) after the caller's 1 s of letting the agent greet them. */
const talk = { distribution: "fixed", mean_s: 9 };
const SPEAKER = { name: "Sam Speaker", weight: 2, number: "+1415555####", lines, patience: { distribution: "fixed", mean_s: 120 }, talk_time: talk };
const DIGITS = { ...SPEAKER, name: "Dee Digits", weight: 1, number: "+1415444####", digits: "42" };
const IMPATIENT = { name: "Ivy Impatient", weight: 1, number: "+1415666####", lines, patience: { distribution: "fixed", mean_s: 4 }, talk_time: talk };

/**
 * Two callers at 5 s (the digits caller and a speaker: the trainee and the bot take one each),
 * the impatient one at 12 s while both are busy (talking, then the queue's 10 s wrap-up), and
 * the scenario's burst fault at 30 s with two speakers, once both are back: a seed whose
 * personas come in that order.
 */
function scenarioFor(salesId: string): Record<string, unknown> {
  const wanted = [[DIGITS.name, SPEAKER.name].sort().join(), IMPATIENT.name, SPEAKER.name, SPEAKER.name];
  for (let seed = 1; seed < 1000; seed += 1) {
    const doc = {
      name: "Training shift e2e",
      duration_s: 120,
      seed,
      queues: [
        {
          queue_id: salesId,
          rate_per_hour: 0,
          bursts: [
            { at_s: 5, count: 2, within_s: 0.5 },
            { at_s: 12, count: 1, within_s: 0.1 },
          ],
        },
      ],
      personas: [SPEAKER, DIGITS, IMPATIENT],
      faults: [{ at_s: 30, kind: "burst", count: 2, target: salesId }],
      agents: { count: 1, ring_delay_s: 1, handle_time: { distribution: "fixed", mean_s: 60 }, wrapup_s: 10 },
    };
    const names = plannedCallers(withDefaults(doc) as unknown as Scenario).map((c) => c.persona_name);
    const got = [names.slice(0, 2).sort().join(), ...names.slice(2)];
    if (got.join("|") === wanted.join("|")) return doc;
  }
  throw new Error("no seed gives the callers this test needs");
}

describe("a trainee's shift with speaking callers", () => {
  it("the trainee hears each caller's lines; one abandons, one presses digits, a burst comes, the bot takes the overflow; the scorecard equals the CDRs and events", async () => {
    const f = setup.floor();
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.slice(salesPath.lastIndexOf("/") + 1);
    const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => f.v2<T>(method, path, data));
    const scenarioId = await runs.scenario(scenarioFor(salesId));

    // A cold server's first call can lose its media while the media workers warm up on a loaded
    // machine: one caller waits in Support a moment first, so the run's callers meet a warm server.
    const warm = await f.simCall("5002", { caller_id_name: "Warm Up", caller_id_number: "+14155550000" });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await f.hangupSim(warm);

    const grant = await demoGrant(f.url, "admin");
    const socket = await EventsClient.connect(`${f.url.replace(/^http/, "ws")}/events`);
    expect(await socket.subscribe(grant.accountId, ["callq.queue.*", "callq.recipient.*"], { auth_token: grant.token })).toMatchObject({ status: "success" });

    const trainee: Agent = { page: await setup.signedIn("agent1", true), username: "agent1", name: "Alex Agent" };
    const p = trainee.page;
    await startHearing(p);
    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, trainee, "Away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await expectState(f, trainee, "Ready");

    const runId = await runs.startRun(scenarioId);
    const move = (ms: number) => f.clock.advance(ms);
    // Nobody calls before 5 s of run time.
    await runs.skipTo(runId, 4, move);

    // The trainee takes what is offered until every caller is gone. The first two callers talk
    // and the impatient one leaves; the clock then passes both agents' 10 s wrap-ups (they are
    // Ready by themselves) to just before the burst at 30 s.
    const accepting = async () => {
      const accept = offerOn(p).getByRole("button", { name: "Accept" });
      if ((await accept.count()) > 0) await accept.click().catch(() => undefined);
    };
    await runs.awaitCallers<RunDoc>(runId, {
      what: "the first three callers gone",
      each: accepting,
      // The first three by their place in the plan: on a slow machine the burst may already have
      // come (two callers more) before they are gone; the move below then moves nothing.
      done: (now) => now.callers.length >= 3 && now.callers.slice(0, 3).every((c) => c.state === "ended"),
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    await runs.skipTo(runId, 28, move);
    await runs.awaitCallers<RunDoc>(runId, {
      each: accepting,
      done: (now) => now.callers.length === 5 && now.callers.every((c) => c.state === "ended"),
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    const stopped = await runs.act(runId, { action: "stop" });
    expect(stopped.status).toBe(200);
    const ended = await runs.readRun<RunDoc>(runId);
    const callerLegs = (await f.v2<{ call_id?: string; hangup_cause?: string }[]>("GET", "/cdrs?paginate=false")).body.data.filter((c) => ended.callers.some((x) => x.call_id === c.call_id));
    expect(callerLegs.filter((c) => c.hangup_cause === "MEDIA_TIMEOUT").map((c) => c.call_id), "callers whose media failed").toEqual([]);
    expect(ended.callers.map((c) => c.outcome), JSON.stringify(ended.callers)).toEqual(["answered", "answered", "abandoned", "answered", "answered"]);
    // The impatient caller left by the run's patience; the others by their talk time.
    expect(ended.callers.map((c) => c.left)).toEqual(["talk_time", "talk_time", null, "talk_time", "talk_time"]);

    // The burst came from the scenario's timeline, applied, as the last two callers.
    const faults = ended.timeline.filter((e) => e.name === "fault_injected");
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatchObject({ source: "scenario", applied: true, fault: { kind: "burst", count: 2 } });

    // The digits caller pressed its digits once it heard the prompt (the hold music giving way
    // to whoever answered), credited to that person.
    const digitsCaller = ended.callers.findIndex((c) => c.persona === DIGITS.name);
    expect(ended.callers[digitsCaller]?.digits_sent).toBe(true);
    const pressed = ended.timeline.filter((e) => e.name === "caller_digits");
    expect(pressed).toHaveLength(1);
    expect(pressed[0]).toMatchObject({ index: digitsCaller, digits: "42" });

    // Every leg has hung up and written its CDR before the card is read.
    await f.noChannels("agent1");
    const card = (await f.v2<Card>("GET", `/training_runs/${runId}/scorecard`)).body.data;
    const me = card.people.find((x) => x.user_id === f.userId("agent1"));
    const bot = card.people.find((x) => x.simulated);
    if (!me || !bot) throw new Error(`the scorecard lacks the trainee or the bot: ${JSON.stringify(card.people)}`);
    const callIds = new Set(ended.callers.map((c) => c.call_id));
    const queueEvents = socket.events.filter((e) => e.routing_key === `callq.queue.${salesId}` && callIds.has(String(e.data.call_id)));
    expect(card.run.offered).toBe(queueEvents.filter((e) => e.name === "join").length);
    expect(card.run.offered).toBe(5);
    expect(card.run.answered).toBe(queueEvents.filter((e) => e.name === "answered").length);
    expect(card.run.answered).toBe(4);
    expect(card.run.abandoned).toBe(queueEvents.filter((e) => e.name === "abandoned").length);
    expect(card.run.abandoned).toBe(1);
    expect(card.run.digits_collected).toBe(1);
    expect(me.answered).toBeGreaterThan(0);
    // The overflow: the bot took the callers the trainee was too busy for.
    expect(bot.answered).toBeGreaterThan(0);
    expect(me.answered + bot.answered).toBe(4);
    const cdrs = (await f.v2<{ owner_id?: string; billing_seconds?: number | string }[]>("GET", "/cdrs?paginate=false")).body.data;
    for (const person of [me, bot]) {
      const recipient = socket.events.filter((e) => e.routing_key === `callq.recipient.${person.user_id}`);
      expect(person.offered).toBe(recipient.filter((e) => e.name === "offer").length);
      expect(person.answered).toBe(recipient.filter((e) => e.name === "delivered").length);
      expect(person.answered).toBe(queueEvents.filter((e) => e.name === "answered" && e.data.recipient_id === person.user_id).length);
      expect(person.missed).toBe(recipient.filter((e) => e.name === "reject").length);
      const legs = cdrs.filter((c) => c.owner_id === person.user_id && Number(c.billing_seconds) > 0);
      expect(legs).toHaveLength(person.answered);
      expect(person.talk_s).toBe(legs.reduce((sum, c) => sum + Number(c.billing_seconds), 0));
      expect(person.digits_collected).toBe(pressed.filter((e) => e.agent_id === person.user_id).length);
    }

    // What the trainee heard: each of their calls carried both lines, as loud and as long as
    // the WAV files say, measured as Chromium measures (speechRange: its level's 11-frame update
    // falls anywhere in a stream, so the WAVs give a range). The span is known to a reading's
    // window at each end; the energy to a decibel (G.711 and Chromium's resampling).
    const wavs = await Promise.all(LINES.map(async (l) => decodeWav(await readFile(join(REPO_ROOT, "assets/phrases", l.file)))));
    const reference = speechRange(Int16Array.from(wavs.flatMap((w) => [...w])));
    const heard = heardCalls(await inboundReadings(p));
    const spoken = heard.filter((c) => c.energy > 0);
    expect(spoken, JSON.stringify(heard)).toHaveLength(me.answered);
    for (const call of spoken) {
      const detail = `${JSON.stringify(call)} against ${JSON.stringify(reference)}`;
      expect(decibelsOf(call.energy, reference.energy[0]), detail).toBeGreaterThan(-1);
      expect(decibelsOf(call.energy, reference.energy[1]), detail).toBeLessThan(1);
      // Plus what Chromium's jitter buffer said it inserted or took out meanwhile: a loaded machine
      // delays packets, and that moves the bounds, never the verdict.
      expect(call.spanS, detail).toBeGreaterThanOrEqual(reference.spanS[0] - 2 * call.widestWindowS - call.shortenedS);
      expect(call.spanS, detail).toBeLessThanOrEqual(reference.spanS[1] + 2 * call.widestWindowS + call.stretchedS);
    }
    await socket.close();
  }, 120_000);
});
