// A run's scorecard: per person who took calls in it (trainees and the simulated agents) and for
// the run, computed from what the server itself recorded in the run's window: the queue and
// recipient events the run kept, its call events (bridges, holds) and the CDRs of the legs the
// people answered. Pure: the same run and CDRs give the same card.
import type { CardFigures, PersonCard, RunCard, RunStatus, Scorecard } from "../../contract/training.js";
import type { ObservedEvent, RunEvent } from "./live.js";
import type { Targets } from "./scenario.js";

// The card's shape is the API's contract, written once for the server and the console.
export type { CardFigures, PersonCard, RunCard, Scorecard };

export interface ScorecardInput {
  runId: string;
  scenarioName: string;
  status: RunStatus;
  targets: Targets;
  startedMs: number;
  /** The run's end, or now for a live run. */
  endedMs: number;
  callers: number;
  timeline: readonly RunEvent[];
  observed: readonly ObservedEvent[];
  /** The account's CDRs (their data) whose call started in the run's window. */
  cdrs: readonly Record<string, unknown>[];
  /** The run's simulated agents. */
  bots: ReadonlySet<string>;
  /** A user's display name, when they still have a document. */
  nameOf(userId: string): string | undefined;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const idOf = (key: string): string => key.slice(key.lastIndexOf(".") + 1);

export function scorecard(input: ScorecardInput): Scorecard {
  const { observed, targets } = input;
  const queueEvents = observed.filter((e) => e.routing_key.startsWith("callq.queue."));
  const recipientEvents = observed.filter((e) => e.routing_key.startsWith("callq.recipient."));
  const abandonedSessions = new Set(queueEvents.filter((e) => e.name === "abandoned").map((e) => str(e.data.session_id)));

  const texted = input.timeline.filter((e) => e.name === "caller_texted");
  const answeredTexts = input.timeline.filter((e) => e.name === "text_answered");
  const textsOf = (userId: string | undefined): Pick<CardFigures, "texts_received" | "texts_answered" | "average_text_response_s" | "text_response_met"> => {
    const mine = (list: readonly RunEvent[]) => (userId === undefined ? list : list.filter((e) => e.user_id === userId));
    const responses = mine(answeredTexts).map((e) => num(e.response_s));
    const average = mean(responses);
    return {
      texts_received: mine(texted).length,
      texts_answered: responses.length,
      average_text_response_s: average,
      text_response_met: average === null || targets.text_response_s === undefined ? null : average <= targets.text_response_s,
    };
  };

  const people = new Set<string>();
  for (const e of recipientEvents) if (e.name === "offer") people.add(idOf(e.routing_key));
  // Who only texted with personas has a card too.
  for (const e of texted) if (typeof e.user_id === "string") people.add(e.user_id);

  const cards = [...people].map((id): PersonCard => {
    const mine = recipientEvents.filter((e) => idOf(e.routing_key) === id);
    let offeredSession: string | undefined;
    let abandonedWhileRinging = 0;
    let wrapupMs = 0;
    let wrapupFrom: number | undefined;
    for (const e of mine) {
      if (wrapupFrom !== undefined && e.name !== "wrapup") {
        wrapupMs += e.at_ms - wrapupFrom;
        wrapupFrom = undefined;
      }
      if (e.name === "offer") offeredSession = str(e.data.session_id);
      else if (e.name === "wrapup") wrapupFrom ??= e.at_ms;
      else if ((e.name === "ready" || e.name === "away" || e.name === "logout") && e.data.previous_state === "Call-Offer" && abandonedSessions.has(offeredSession)) abandonedWhileRinging += 1;
    }
    if (wrapupFrom !== undefined) wrapupMs += Math.max(0, input.endedMs - wrapupFrom);
    const waits = queueEvents.filter((e) => e.name === "answered" && e.data.recipient_id === id).map((e) => num(e.data.wait_time));
    const legs = input.cdrs.filter((c) => c.owner_id === id && num(c.billing_seconds) > 0);
    const talkS = legs.reduce((sum, c) => sum + num(c.billing_seconds), 0);
    const answered = mine.filter((e) => e.name === "delivered").length;
    const wrapupS = round(wrapupMs / 1000, 1);
    const aht = answered ? round((talkS + wrapupS) / answered, 1) : null;
    return {
      user_id: id,
      name: input.nameOf(id) ?? id,
      simulated: input.bots.has(id),
      offered: mine.filter((e) => e.name === "offer").length,
      answered,
      missed: mine.filter((e) => e.name === "reject").length,
      abandoned_while_ringing: abandonedWhileRinging,
      average_speed_of_answer_s: mean(waits),
      talk_s: talkS,
      hold_s: round(holdMs(observed, id, input.endedMs) / 1000, 1),
      wrapup_s: wrapupS,
      average_handle_time_s: aht,
      handle_time_met: aht === null ? null : aht <= targets.handle_time_s,
      transfers: transfersBy(observed, id),
      digits_collected: input.timeline.filter((e) => e.name === "caller_digits" && e.agent_id === id).length,
      ...textsOf(id),
    };
  });
  cards.sort((a, b) => Number(a.simulated) - Number(b.simulated) || a.name.localeCompare(b.name));

  const joined = queueEvents.filter((e) => e.name === "join").length;
  const answered = queueEvents.filter((e) => e.name === "answered");
  const within = answered.filter((e) => num(e.data.wait_time) <= targets.service_level.answered_within_s).length;
  const sl = joined ? round((within / joined) * 100, 1) : null;
  const runTexts = textsOf(undefined);
  return {
    run_id: input.runId,
    scenario_name: input.scenarioName,
    status: input.status,
    targets,
    run: {
      callers: input.callers,
      offered: joined,
      answered: answered.length,
      abandoned: queueEvents.filter((e) => e.name === "abandoned").length,
      timed_out: queueEvents.filter((e) => e.name === "timeout").length,
      abandoned_while_ringing: cards.reduce((sum, c) => sum + c.abandoned_while_ringing, 0),
      service_level: { answered_within_s: targets.service_level.answered_within_s, target_percent: targets.service_level.percent, percent: sl, met: sl === null ? null : sl >= targets.service_level.percent },
      average_speed_of_answer_s: mean(answered.map((e) => num(e.data.wait_time))),
      digits_collected: input.timeline.filter((e) => e.name === "caller_digits").length,
      texts: runTexts.texts_received,
      texts_answered: runTexts.texts_answered,
      average_text_response_s: runTexts.average_text_response_s,
      text_response_met: runTexts.text_response_met,
    },
    people: cards,
  };
}

/** Time the person's legs spent holding their party: each CHANNEL_HOLD until that leg's next call event. */
function holdMs(observed: readonly ObservedEvent[], userId: string, endMs: number): number {
  const held = new Map<string, number>();
  let total = 0;
  for (const e of observed) {
    if (!e.routing_key.startsWith("call.")) continue;
    const leg = idOf(e.routing_key);
    const since = held.get(leg);
    if (since !== undefined && e.name !== "CHANNEL_HOLD") {
      total += e.at_ms - since;
      held.delete(leg);
    }
    if (e.name === "CHANNEL_HOLD" && e.data.owner_id === userId && since === undefined) held.set(leg, e.at_ms);
  }
  for (const since of held.values()) total += Math.max(0, endMs - since);
  return total;
}

/** Callers the person had on a bridge who were next bridged with someone else: the person passed them on. */
function transfersBy(observed: readonly ObservedEvent[], userId: string): number {
  const lastOwner = new Map<string, string | undefined>();
  let count = 0;
  for (const e of observed) {
    if (e.name !== "CHANNEL_BRIDGE") continue;
    const party = str(e.data.other_leg_call_id);
    const owner = str(e.data.owner_id);
    // The agent's side of a bridge names the caller as its other leg and carries its owner.
    if (party === undefined || owner === undefined) continue;
    const before = lastOwner.get(party);
    if (before === userId && owner !== userId) count += 1;
    lastOwner.set(party, owner);
  }
  return count;
}

function mean(values: readonly number[]): number | null {
  return values.length ? round(values.reduce((a, b) => a + b, 0) / values.length, 1) : null;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const SCORECARD_COLUMNS = [
  "name",
  "user_id",
  "simulated",
  "offered",
  "answered",
  "missed",
  "abandoned_while_ringing",
  "average_speed_of_answer_s",
  "talk_s",
  "hold_s",
  "wrapup_s",
  "average_handle_time_s",
  "handle_time_met",
  "transfers",
  "digits_collected",
  "texts_received",
  "texts_answered",
  "average_text_response_s",
  "text_response_met",
] as const;

/** The card as rows for CSV: one per person, then the run's, every row with the same columns in order. */
export function scorecardRows(card: Scorecard): Record<string, unknown>[] {
  const row = (values: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(SCORECARD_COLUMNS.map((k) => [k, values[k] ?? null]));
  const r = card.run;
  return [
    ...card.people.map((p) => row({ ...p })),
    row({ name: "(run)", user_id: card.run_id, offered: r.offered, answered: r.answered, abandoned_while_ringing: r.abandoned_while_ringing, average_speed_of_answer_s: r.average_speed_of_answer_s, digits_collected: r.digits_collected, texts_received: r.texts, texts_answered: r.texts_answered, average_text_response_s: r.average_text_response_s, text_response_met: r.text_response_met }),
  ];
}
