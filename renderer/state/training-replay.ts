// A finished run replayed in the console from what the server stored of it (its timeline and its
// recipients' steps, GET .../training_runs/{id}/replay): the floor at any run second, as the live
// view showed it then. Pure, so the view, the scrubber and the tests read the same moment.
import type { RunReplay } from "../../contract/training.js";

export type ReplayCallerState = "calling" | "waiting" | "talking" | "ended";

export interface ReplayCaller {
  index: number;
  persona: string;
  caller_id_number: string;
  state: ReplayCallerState;
  /** Seconds waited in the queue at this moment, or until answered or gone. */
  wait_s: number | null;
  outcome: string | null;
  /** Who answered them. */
  agent_id: string | null;
}

export interface ReplayPerson {
  user_id: string;
  name: string;
  simulated: boolean;
  /** The state the queue engine last reported for them, null before their first step. */
  state: string | null;
  /** The caller they are talking to (their index), if any. */
  call: number | null;
}

export interface ReplayMoment {
  at_s: number;
  arrived: number;
  waiting: number;
  answered: number;
  abandoned: number;
  callers: ReplayCaller[];
  people: ReplayPerson[];
}

/** The replay's speeds, times real time. */
export const REPLAY_SPEEDS = [1, 2, 5, 10] as const;

const numberOr = (v: unknown, fallback: number): number => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
const textOr = (v: unknown, fallback: string): string => (typeof v === "string" ? v : fallback);

/**
 * How long the replay runs: the run's own length, or its last entry when that came later, up to
 * the next tenth (the scrubber's step), so its end shows every entry.
 */
export function replayLength(replay: RunReplay): number {
  const last = replay.timeline.reduce((max, e) => Math.max(max, e.at_s), 0);
  return Math.ceil(Math.max(replay.run_seconds, last) * 10) / 10;
}

/** The run as it stood at run second `atS`: every timeline entry and step up to it applied in order. */
export function replayAt(replay: RunReplay, atS: number): ReplayMoment {
  const callers = new Map<number, ReplayCaller & { joined_s: number | null }>();
  let answered = 0;
  let abandoned = 0;
  for (const entry of replay.timeline) {
    if (entry.at_s > atS) break;
    const index = numberOr(entry.index, -1);
    const caller = callers.get(index);
    switch (entry.name) {
      case "caller_arrived":
        callers.set(index, { index, persona: textOr(entry.persona, ""), caller_id_number: textOr(entry.caller_id_number, ""), state: "calling", wait_s: null, outcome: null, agent_id: null, joined_s: null });
        break;
      case "caller_waiting":
        if (caller) Object.assign(caller, { state: "waiting", joined_s: entry.at_s });
        break;
      case "caller_answered":
        answered += 1;
        if (caller) Object.assign(caller, { state: "talking", outcome: "answered", agent_id: typeof entry.agent_id === "string" ? entry.agent_id : null, wait_s: numberOr(entry.wait_s, entry.at_s - (caller.joined_s ?? entry.at_s)) });
        break;
      case "caller_abandoned":
        abandoned += 1;
        if (caller) Object.assign(caller, { state: "ended", outcome: "abandoned", wait_s: numberOr(entry.wait_s, entry.at_s - (caller.joined_s ?? entry.at_s)) });
        break;
      case "caller_left":
        if (caller) {
          if (caller.state === "waiting") caller.wait_s = round(entry.at_s - (caller.joined_s ?? entry.at_s));
          Object.assign(caller, { state: "ended", outcome: caller.outcome ?? textOr(entry.outcome, "hung_up") });
        }
        break;
      case "ended":
        for (const c of callers.values()) {
          if (c.state === "ended") continue;
          if (c.state === "waiting") c.wait_s = round(entry.at_s - (c.joined_s ?? entry.at_s));
          Object.assign(c, { state: "ended", outcome: c.outcome ?? "stopped" });
        }
        break;
    }
  }
  for (const c of callers.values()) if (c.state === "waiting") c.wait_s = round(atS - (c.joined_s ?? atS));

  const states = new Map<string, string | null>();
  for (const step of replay.agent_steps) {
    if (step.at_s > atS) break;
    states.set(step.user_id, step.availability_state);
  }
  const list = [...callers.values()].sort((a, b) => a.index - b.index).map(({ joined_s: _joined, ...c }) => c);
  const talking = new Map(list.filter((c) => c.state === "talking" && c.agent_id !== null).map((c) => [c.agent_id, c.index]));
  return {
    at_s: atS,
    arrived: list.length,
    waiting: list.filter((c) => c.state === "waiting").length,
    answered,
    abandoned,
    callers: list,
    people: replay.people.map((p) => ({ ...p, state: states.get(p.user_id) ?? null, call: talking.get(p.user_id) ?? null })),
  };
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
