// The callers of a scenario, drawn from its seed: each queue's arrivals as a non-homogeneous
// Poisson process (the base rate times the profile's multiplier, piece by piece), its bursts, the
// burst faults, and for every caller in arrival order a persona and its draws. Pure: the same
// scenario gives the same callers, every time.
import { draw } from "./distributions.js";
import { Prng } from "./prng.js";
import { queueKey, type Persona, type Scenario, type ScenarioQueue } from "./scenario.js";

/** Independent streams of one seed: one per queue's arrivals, one for the callers' draws, ... */
export const STREAMS = { callers: 0, faults: 1, sessions: 2, trainerFaults: 3, firstQueue: 100, firstAgent: 1000 } as const;

/** A burst fault's callers arrive within this many seconds of its time. */
export const FAULT_BURST_WITHIN_S = 10;

export type ArrivalSource = "arrival" | "burst" | "fault";

export interface PlannedCaller {
  /** Position in arrival order, from 0. */
  index: number;
  /** The queue's key (queue_id, else number). */
  queue: string;
  /** Seconds from the run's start. */
  arrival_s: number;
  source: ArrivalSource;
  persona: number;
  persona_name: string;
  caller_id: { name: string; number: string };
  language: string;
  /** Seconds they wait before hanging up; null when they never abandon. */
  patience_s: number | null;
  /** Seconds they talk once answered; null when they talk until the agent ends the call. */
  talk_s: number | null;
  digits?: string;
  asks_for_supervisor: boolean;
  texts_instead: boolean;
}

export class ScenarioTooBigError extends Error {
  constructor(
    readonly callers: number,
    readonly limit: number,
  ) {
    super(`the scenario holds ${Math.round(callers)} callers; at most ${limit} are allowed`);
    this.name = "ScenarioTooBigError";
  }
}

interface Arrival {
  at: number;
  queue: number;
  source: ArrivalSource;
}

/** Every caller of the run, in arrival order. `limit` bounds how many may be drawn. */
export function plannedCallers(s: Scenario, limit = Infinity): PlannedCaller[] {
  const arrivals: Arrival[] = [];
  const keep = (a: Arrival): void => {
    arrivals.push(a);
    if (arrivals.length > limit) throw new ScenarioTooBigError(arrivals.length, limit);
  };
  s.queues.forEach((q, i) => {
    const rng = new Prng(s.seed, STREAMS.firstQueue + i);
    for (const at of poissonArrivals(q, s.duration_s, rng)) keep({ at, queue: i, source: "arrival" });
    for (const b of q.bursts ?? []) for (let n = 0; n < b.count; n += 1) keep({ at: b.at_s + b.within_s * rng.next(), queue: i, source: "burst" });
  });
  const faults = new Prng(s.seed, STREAMS.faults);
  for (const f of s.faults) {
    if (f.kind !== "burst") continue;
    const queue = Math.max(0, s.queues.findIndex((q) => queueKey(q) === f.target));
    for (let n = 0; n < (f.count ?? 0); n += 1) keep({ at: f.at_s + FAULT_BURST_WITHIN_S * faults.next(), queue, source: "fault" });
  }
  // A stable sort: equal times keep queue order, then the order drawn.
  arrivals.sort((a, b) => a.at - b.at);
  const rng = new Prng(s.seed, STREAMS.callers);
  return arrivals.map((a, index) => callerOf(s, a, index, rng));
}

/**
 * `count` callers more at `queue` (its index in the scenario), arriving at `atS`, numbered from
 * `firstIndex`, their draws from `rng`: a burst the trainer asks for during a live run.
 */
export function extraCallers(s: Scenario, queue: number, count: number, atS: number, firstIndex: number, rng: Prng): PlannedCaller[] {
  const out: PlannedCaller[] = [];
  for (let n = 0; n < count; n += 1) out.push(callerOf(s, { at: atS, queue, source: "fault" }, firstIndex + n, rng));
  return out;
}

/** One caller's persona and draws, in the order every caller takes them. */
function callerOf(s: Scenario, a: Arrival, index: number, rng: Prng): PlannedCaller {
  const totalWeight = s.personas.reduce((sum, p) => sum + p.weight, 0);
  const personaIndex = pickPersona(s.personas, totalWeight, rng);
  const p = s.personas[personaIndex] ?? s.personas[0];
  if (p === undefined) throw new RangeError("a scenario has at least one persona");
  const number = p.number.replace(/#/g, () => String(rng.int(10)));
  // Every caller takes the same draws whatever their persona says, so one persona's change
  // moves no other caller's numbers.
  const patience = draw(p.patience, rng);
  const talk = p.talk_time ? draw(p.talk_time, rng) : null;
  const queue = s.queues[a.queue];
  return {
    index,
    queue: (queue && queueKey(queue)) ?? String(a.queue),
    arrival_s: a.at,
    source: a.source,
    persona: personaIndex,
    persona_name: p.name,
    caller_id: { name: p.name, number },
    language: p.language,
    patience_s: p.abandons ? patience : null,
    talk_s: talk,
    ...(p.digits === undefined ? {} : { digits: p.digits }),
    asks_for_supervisor: p.asks_for_supervisor,
    texts_instead: p.texts_instead,
  };
}

/**
 * Arrival times of one queue over [0, durationS): on each piece of constant rate, exponential
 * gaps at that rate. Starting afresh at each piece's start is exact: the process is memoryless.
 */
export function poissonArrivals(q: ScenarioQueue, durationS: number, rng: Prng): number[] {
  const out: number[] = [];
  for (const piece of ratePieces(q, durationS)) {
    const perSecond = (q.rate_per_hour * piece.multiplier) / 3600;
    if (perSecond <= 0) continue;
    let t = piece.from;
    for (;;) {
      t += -Math.log(rng.nextOpen()) / perSecond;
      if (t >= piece.to) break;
      out.push(t);
    }
  }
  return out;
}

/** The run cut into pieces of constant multiplier: the profile's intervals, 1 in the gaps. */
export function ratePieces(q: ScenarioQueue, durationS: number): { from: number; to: number; multiplier: number }[] {
  const pieces: { from: number; to: number; multiplier: number }[] = [];
  let at = 0;
  for (const p of [...(q.profile ?? [])].sort((a, b) => a.from_s - b.from_s)) {
    const from = Math.min(p.from_s, durationS);
    const to = Math.min(p.to_s, durationS);
    if (from > at) pieces.push({ from: at, to: from, multiplier: 1 });
    if (to > from) pieces.push({ from, to, multiplier: p.multiplier });
    at = Math.max(at, to);
  }
  if (at < durationS) pieces.push({ from: at, to: durationS, multiplier: 1 });
  return pieces;
}

function pickPersona(personas: readonly Persona[], totalWeight: number, rng: Prng): number {
  let x = rng.next() * totalWeight;
  for (let i = 0; i < personas.length; i += 1) {
    x -= personas[i]?.weight ?? 0;
    if (x < 0) return i;
  }
  return personas.length - 1;
}
