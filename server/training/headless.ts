// A headless run: the scenario's callers against simulated agents only, no audio, on the real
// queue engine driven by a ManualClock as fast as the CPU allows. The engine's ports are
// implemented here for such a run: a directory of the scenario's queues and bot recipients, a
// ledger in memory, an event sink that counts, and each caller's QueuedCall, which abandons when
// its patience runs out, and is answered by the bot it rings after the bot's ring delay.
import { CallqEngine } from "../callq/engine.js";
import type { CallqEventSink, CallqUser, OfferOutcome, OfferRequest, QueuedCall, RecipientLedger } from "../callq/ports.js";
import { queueConfigOf, type QueueConfig } from "../callq/queue-config.js";
import type { SavedRecipient } from "../callq/recipient.js";
import type { Cancel } from "../clock.js";
import { ManualClock } from "../clock-control.js";
import { draw } from "./distributions.js";
import { plannedCallers, STREAMS, type PlannedCaller } from "./generator.js";
import { Prng } from "./prng.js";
import { queueKey, type Scenario } from "./scenario.js";

/** The account a headless run's engine holds: one run, one engine, no store. */
const ACCOUNT = "training-headless";

/** 2025-05-14 08:00 UTC: a fixed start, so a run's times repeat. */
const START_MS = Date.UTC(2025, 4, 14, 8, 0, 0);

/** Simulated time a run may take past its last arrival before it is called stuck (a bug, not a scenario). */
const DRAIN_LIMIT_MS = 7 * 86_400_000;

export type CallerOutcome = "answered" | "abandoned" | "timeout" | "texted" | "no_queue";

export interface CallerRecord {
  index: number;
  queue: string;
  arrival_s: number;
  source: PlannedCaller["source"];
  persona: string;
  caller_id_number: string;
  patience_s: number | null;
  outcome: CallerOutcome;
  /** Seconds from arrival until answered, or until they left unanswered; null for a text. */
  wait_s: number | null;
  agent_id: string | null;
  talk_s: number | null;
  wrapup_s: number | null;
  /** Bots rung for this caller. */
  offers: number;
  /** They hung up while a bot's phone rang for them. */
  abandoned_while_ringing: boolean;
}

export interface AgentFigures {
  agent_id: string;
  name: string;
  answered: number;
  talk_s: number;
  wrapup_s: number;
  average_handle_time_s: number | null;
  /** Share of the run's duration spent talking or wrapping up. */
  occupancy_percent: number;
}

export interface QueueFigures {
  queue: string;
  offered: number;
  answered: number;
  abandoned: number;
  timed_out: number;
  service_level_percent: number | null;
  average_speed_of_answer_s: number | null;
}

export interface RunSummary {
  name: string;
  seed: number;
  duration_s: number;
  callers: number;
  /** Callers who entered a queue (texts are not offered). */
  offered: number;
  answered: number;
  abandoned: number;
  timed_out: number;
  texted: number;
  abandoned_while_ringing: number;
  service_level: { answered_within_s: number; target_percent: number; percent: number | null; met: boolean | null };
  abandoned_percent: number | null;
  average_speed_of_answer_s: number | null;
  longest_wait_s: number | null;
  average_talk_s: number | null;
  average_handle_time_s: number | null;
  handle_time_target_s: number;
  /** Offered traffic: arrivals per second of the run times the mean handle time (talk and wrap-up). */
  offered_load_erlangs: number;
  /** When the last caller left, in seconds from the run's start. */
  ended_at_s: number;
  queues: QueueFigures[];
  agents: AgentFigures[];
  /** A headless run has no trainee, phone, webhook or text: only burst faults act in it. */
  faults: { at_s: number; kind: string; target: string | null; applied: boolean }[];
}

/** What the engine said, counted: a run's records are checked against them. */
export interface EngineCounts {
  /** callq.queue.* events by name (answered, abandoned, timeout, join ...). */
  queue: Record<string, number>;
  /** `delivered` recipient events by recipient id. */
  delivered: Record<string, number>;
}

export interface HeadlessRun {
  callers: CallerRecord[];
  summary: RunSummary;
  engine: EngineCounts;
  /** Timers the run's clock ran: a measure of the work done. */
  steps: number;
}

export interface HeadlessOptions {
  /** Stored callq_queues documents by queue id: a scenario queue naming one takes its settings. */
  queueSettings?: ReadonlyMap<string, Record<string, unknown>>;
  /** At most this many callers (ScenarioTooBigError past it). */
  maxCallers?: number;
}

/** A bot recipient: answers what rings it after its ring delay; its handle times come from its own stream. */
class SimulatedAgent {
  readonly #rng: Prng;
  answered = 0;
  talkMs = 0;
  wrapupMs = 0;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly ringDelayMs: number,
    private readonly scenario: Scenario,
    index: number,
  ) {
    this.#rng = new Prng(scenario.seed, STREAMS.firstAgent + index);
  }

  /** How long the bot keeps its next call before it ends it. */
  nextHandleMs(): number {
    return draw(this.scenario.agents.handle_time, this.#rng) * 1000;
  }
}

/** One simulated caller's call, as the engine sees it. */
class SimulatedCall implements QueuedCall {
  readonly callId: string;
  readonly caller: { name: string; number: string };
  readonly #listeners: (() => void)[] = [];
  #gone = false;
  #ringing = false;
  #cancelPatience: Cancel | undefined;
  answeredAt: number | undefined;
  goneAt: number | undefined;
  agent: SimulatedAgent | undefined;
  talkMs: number | undefined;
  offers = 0;
  abandonedWhileRinging = false;

  constructor(
    readonly planned: PlannedCaller,
    private readonly clock: ManualClock,
    private readonly agents: ReadonlyMap<string, SimulatedAgent>,
  ) {
    this.callId = `training-${planned.index}`;
    this.caller = planned.caller_id;
  }

  /** The caller has entered the queue: their patience starts. */
  waiting(): void {
    const patience = this.planned.patience_s;
    if (patience === null) return;
    this.#cancelPatience = this.clock.after(patience * 1000, () => {
      if (this.answeredAt !== undefined) return;
      this.abandonedWhileRinging = this.#ringing;
      this.#hangUp();
    });
  }

  offer(request: OfferRequest, signal: AbortSignal): Promise<OfferOutcome> {
    const agent = this.agents.get(request.recipientId);
    if (agent === undefined) return Promise.resolve({ kind: "unreachable" });
    if (this.#gone) return Promise.resolve({ kind: "cancelled" });
    this.offers += 1;
    this.#ringing = true;
    return new Promise((resolve) => {
      const settle = (outcome: OfferOutcome): void => {
        this.#ringing = false;
        signal.removeEventListener("abort", onAbort);
        resolve(outcome);
      };
      const answers = agent.ringDelayMs < request.timeoutMs;
      const cancelRing = this.clock.after(answers ? agent.ringDelayMs : request.timeoutMs, () => (answers ? settle(this.#answer(agent)) : settle({ kind: "timeout" })));
      const onAbort = (): void => {
        cancelRing();
        settle({ kind: "cancelled" });
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  onGone(listener: () => void): void {
    if (this.#gone) listener();
    else this.#listeners.push(listener);
  }

  /** The bot picks up: the call lasts until the caller is done or the bot ends it, whichever first. */
  #answer(agent: SimulatedAgent): OfferOutcome {
    this.#cancelPatience?.();
    this.answeredAt = this.clock.now();
    this.agent = agent;
    const handleMs = agent.nextHandleMs();
    const talkMs = Math.min(handleMs, this.planned.talk_s === null ? Infinity : this.planned.talk_s * 1000);
    this.talkMs = talkMs;
    agent.answered += 1;
    agent.talkMs += talkMs;
    const ended = new Promise<void>((resolve) => {
      this.clock.after(talkMs, () => {
        this.#hangUp();
        resolve();
      });
    });
    return { kind: "answered", ended };
  }

  #hangUp(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.goneAt = this.clock.now();
    for (const listener of this.#listeners.splice(0)) listener();
  }
}

/** Recipient states of one run, kept in memory: a run starts from nobody logged in. */
class RunLedger implements RecipientLedger {
  readonly #states = new Map<string, SavedRecipient>();
  async load(): Promise<ReadonlyMap<string, SavedRecipient>> {
    return new Map();
  }
  async save(_accountId: string, recipientId: string, state: SavedRecipient): Promise<void> {
    this.#states.set(recipientId, state);
  }
}

/** Counts the engine's events; a run publishes nowhere else. */
class CountingSink implements CallqEventSink {
  readonly counts: EngineCounts = { queue: {}, delivered: {} };
  publish(event: { routing_key: string; name: string; data: Record<string, unknown> }): void {
    if (event.routing_key.startsWith("callq.queue.")) this.counts.queue[event.name] = (this.counts.queue[event.name] ?? 0) + 1;
    else if (event.routing_key.startsWith("callq.recipient.") && event.name === "delivered") {
      const id = String(event.data.recipient_id);
      this.counts.delivered[id] = (this.counts.delivered[id] ?? 0) + 1;
    }
  }
}

const silent = (): void => undefined;

export async function runHeadless(scenario: Scenario, options: HeadlessOptions = {}): Promise<HeadlessRun> {
  const planned = plannedCallers(scenario, options.maxCallers);
  const clock = new ManualClock(START_MS);
  const agents = new Map<string, SimulatedAgent>();
  for (let i = 0; i < scenario.agents.count; i += 1) {
    const id = `sim-agent-${String(i + 1).padStart(3, "0")}`;
    agents.set(id, new SimulatedAgent(id, `Simulated agent ${i + 1}`, scenario.agents.ring_delay_s * 1000, scenario, i));
  }
  const members = Object.fromEntries([...agents.keys()].map((id) => [id, ""]));
  const queues: QueueConfig[] = scenario.queues.map((q, i) => {
    const key = queueKey(q) ?? String(i);
    const stored = q.queue_id === undefined ? undefined : options.queueSettings?.get(q.queue_id);
    // The scenario's bots answer every queue and wrap up as the scenario says.
    return queueConfigOf(key, { ...stored, name: q.name ?? stored?.name ?? key, members, agent_wrapup_time: scenario.agents.wrapup_s });
  });
  const users: CallqUser[] = [...agents.values()].map((a) => ({ id: a.id, recipient: true, name: a.name }));
  const sink = new CountingSink();
  const engine = new CallqEngine({
    directory: { load: async () => ({ queues, users }) },
    ledger: new RunLedger(),
    bus: sink,
    scheduler: clock,
    random: new Prng(scenario.seed, STREAMS.sessions).randomSource(),
    logger: { info: silent, warn: silent, error: silent },
    node: "training@headless",
  });
  const wrapupMs = new Map(queues.map((q) => [q.id, q.wrapupS * 1000]));
  try {
    await engine.ensureStarted(ACCOUNT);
    for (const id of agents.keys()) await engine.recipientAction(ACCOUNT, id, "login_ready");
    const records: (CallerRecord | undefined)[] = new Array<CallerRecord | undefined>(planned.length);
    let left = 0;
    const calling: PlannedCaller[] = [];
    for (const p of planned) {
      if (p.texts_instead) {
        records[p.index] = recordOf(p, "texted", null, undefined);
        left += 1;
      } else calling.push(p);
    }
    const arrive = (p: PlannedCaller): void => {
      const call = new SimulatedCall(p, clock, agents);
      const enteredAt = clock.now();
      call.waiting();
      void engine.join(ACCOUNT, p.queue, call).then((end) => {
        const outcome: CallerOutcome = end.kind === "handled" ? "answered" : end.kind === "abandoned" ? "abandoned" : end.kind === "no_queue" ? "no_queue" : "timeout";
        const wrapup = outcome === "answered" ? (wrapupMs.get(p.queue) ?? 0) : 0;
        if (call.agent) call.agent.wrapupMs += wrapup;
        const waitedUntil = call.answeredAt ?? call.goneAt ?? clock.now();
        records[p.index] = recordOf(p, outcome, (waitedUntil - enteredAt) / 1000, call, wrapup / 1000);
        left += 1;
      });
    };
    // One arrival timer at a time, each setting the next: the clock's queue holds the run's live
    // timers, not every caller still to come (its inserts cost what it holds).
    let next = 0;
    const arriveNext = (): void => {
      const p = calling[next];
      if (p === undefined) return;
      next += 1;
      arrive(p);
      const following = calling[next];
      if (following !== undefined) clock.after(START_MS + following.arrival_s * 1000 - clock.now(), arriveNext);
    };
    const first = calling[0];
    if (first !== undefined) clock.after(first.arrival_s * 1000, arriveNext);
    let steps = 0;
    const lastArrivalMs = (planned.at(-1)?.arrival_s ?? 0) * 1000;
    const done = await clock.runUntil(() => {
      steps += 1;
      return left === planned.length;
    }, lastArrivalMs + DRAIN_LIMIT_MS);
    if (!done) throw new Error(`a headless run of "${scenario.name}" did not drain: ${planned.length - left} callers still in it`);
    const callers = records.filter((r): r is CallerRecord => r !== undefined);
    const endedAt = (clock.now() - START_MS) / 1000;
    return { callers, summary: summarise(scenario, callers, [...agents.values()], endedAt), engine: sink.counts, steps };
  } finally {
    await engine.close();
  }
}

function recordOf(p: PlannedCaller, outcome: CallerOutcome, waitS: number | null, call: SimulatedCall | undefined, wrapupS = 0): CallerRecord {
  const answered = outcome === "answered" ? call : undefined;
  return {
    index: p.index,
    queue: p.queue,
    arrival_s: round(p.arrival_s, 3),
    source: p.source,
    persona: p.persona_name,
    caller_id_number: p.caller_id.number,
    patience_s: p.patience_s === null ? null : round(p.patience_s, 3),
    outcome,
    wait_s: waitS === null ? null : round(waitS, 3),
    agent_id: answered?.agent?.id ?? null,
    talk_s: answered?.talkMs === undefined ? null : round(answered.talkMs / 1000, 3),
    wrapup_s: answered ? wrapupS : null,
    offers: call?.offers ?? 0,
    abandoned_while_ringing: call?.abandonedWhileRinging ?? false,
  };
}

/** The run's figures, from its per-caller records alone (and the bots' own tallies). */
export function summarise(scenario: Scenario, callers: readonly CallerRecord[], agents: readonly { id: string; name: string; answered: number; talkMs: number; wrapupMs: number }[], endedAtS: number): RunSummary {
  const target = scenario.targets.service_level;
  const offered = callers.filter((c) => c.outcome !== "texted");
  const answered = offered.filter((c) => c.outcome === "answered");
  const handle = answered.map((c) => (c.talk_s ?? 0) + (c.wrapup_s ?? 0));
  const sl = percent(answered.filter((c) => (c.wait_s ?? 0) <= target.answered_within_s).length, offered.length);
  const handleMean = mean(handle);
  return {
    name: scenario.name,
    seed: scenario.seed,
    duration_s: scenario.duration_s,
    callers: callers.length,
    offered: offered.length,
    answered: answered.length,
    abandoned: count(offered, "abandoned"),
    timed_out: count(offered, "timeout") + count(offered, "no_queue"),
    texted: callers.length - offered.length,
    abandoned_while_ringing: offered.filter((c) => c.abandoned_while_ringing).length,
    service_level: { answered_within_s: target.answered_within_s, target_percent: target.percent, percent: sl, met: sl === null ? null : sl >= target.percent },
    abandoned_percent: percent(count(offered, "abandoned"), offered.length),
    average_speed_of_answer_s: roundOrNull(mean(answered.map((c) => c.wait_s ?? 0)), 1),
    longest_wait_s: offered.length ? round(Math.max(...offered.map((c) => c.wait_s ?? 0)), 1) : null,
    average_talk_s: roundOrNull(mean(answered.map((c) => c.talk_s ?? 0)), 1),
    average_handle_time_s: roundOrNull(handleMean, 1),
    handle_time_target_s: scenario.targets.handle_time_s,
    offered_load_erlangs: round(((offered.length / scenario.duration_s) * (handleMean ?? 0)), 2),
    ended_at_s: round(endedAtS, 1),
    queues: scenario.queues.map((q, i) => {
      const key = queueKey(q) ?? String(i);
      const mine = offered.filter((c) => c.queue === key);
      const took = mine.filter((c) => c.outcome === "answered");
      return {
        queue: key,
        offered: mine.length,
        answered: took.length,
        abandoned: count(mine, "abandoned"),
        timed_out: count(mine, "timeout") + count(mine, "no_queue"),
        service_level_percent: percent(took.filter((c) => (c.wait_s ?? 0) <= target.answered_within_s).length, mine.length),
        average_speed_of_answer_s: roundOrNull(mean(took.map((c) => c.wait_s ?? 0)), 1),
      };
    }),
    agents: agents.map((a) => ({
      agent_id: a.id,
      name: a.name,
      answered: a.answered,
      talk_s: round(a.talkMs / 1000, 1),
      wrapup_s: round(a.wrapupMs / 1000, 1),
      average_handle_time_s: a.answered ? round((a.talkMs + a.wrapupMs) / 1000 / a.answered, 1) : null,
      occupancy_percent: round(((a.talkMs + a.wrapupMs) / 1000 / Math.max(endedAtS, 1)) * 100, 1),
    })),
    faults: scenario.faults.map((f) => ({ at_s: f.at_s, kind: f.kind, target: f.target ?? null, applied: f.kind === "burst" })),
  };
}

function count(callers: readonly CallerRecord[], outcome: CallerOutcome): number {
  return callers.filter((c) => c.outcome === outcome).length;
}

function mean(values: readonly number[]): number | null {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
}

function percent(part: number, whole: number): number | null {
  return whole ? round((part / whole) * 100, 1) : null;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function roundOrNull(x: number | null, digits: number): number | null {
  return x === null ? null : round(x, digits);
}
