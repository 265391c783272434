// Live training runs: a scenario played against the real server. Its planned callers become
// scripted simulated callers (server/sim/) placed at their arrival times, its simulated agents
// become real recipients (a user and a device each, their phones answered by sim/'s bot phones),
// and everything the run needs for its scorecard (the queue and recipient events, bridges, holds,
// what each caller did) is kept as its timeline. One run at a time per account.
//
// The run's own timers (arrivals, the callers' patience, the bots' ring and talk) run on a
// ControllableClock over the server's clock, and the queue engine's time of the account follows it
// for the run's duration (CallqEngine.useClock): pausing the run holds them all, while the
// server's clock, and with it media, SIP and every other account, keeps real time.
import type { Cancel, Clock } from "../clock.js";
import { toGregorianSeconds } from "../clock.js";
import { ControllableClock } from "../clock-control.js";
import type { Channels } from "../calls/channels.js";
import type { CallqEngine } from "../callq/engine.js";
import type { BusEvent, EventBus } from "../events/bus.js";
import type { WebhookFaults } from "../events/webhook-faults.js";
import type { LegMutes, MuteDirection } from "../media/index.js";
import type { SimCallers } from "../sim/callers.js";
import type { Registrar } from "../sip/registrar.js";
import { NotATextingNumber, type TextingService } from "../texting/index.js";
import type { SimulatedCaller } from "../sim/caller.js";
import type { CallerScript, ScriptStep } from "../sim/script.js";
import type { Collection, Store } from "../store/index.js";
import { draw } from "./distributions.js";
import { extraCallers, plannedCallers, STREAMS, type PlannedCaller } from "./generator.js";
import { Prng } from "./prng.js";
import { queueKey, type Fault, type OneWayDirection, type Scenario } from "./scenario.js";

export const RUNS_COLLECTION = "training_runs";

/** A live run places at most this many callers: the simulator's own bound on live calls is 50. */
export const MAX_LIVE_CALLERS = 500;
/** And at most this many bots (each a user, a device and a leg per call). */
export const MAX_LIVE_AGENTS = 20;

export type RunStatus = "running" | "paused" | "ended";

/** A step of a run, as its timeline keeps it and the event websocket says it (training.run.<id>). */
export interface RunEvent {
  /** Seconds of run time from the start (pauses do not count). */
  at_s: number;
  /** Unix ms on the server's clock. */
  at_ms: number;
  name: string;
  [field: string]: unknown;
}

/** What the scorecard reads of the account's events during the run, each kept in short. */
export interface ObservedEvent {
  at_ms: number;
  routing_key: string;
  name: string;
  data: Record<string, unknown>;
}

export interface LiveCaller {
  index: number;
  queue: string;
  arrival_s: number;
  persona: string;
  caller_id_number: string;
  call_id: string | null;
  /** calling: placed, not yet in the queue; waiting: in the queue; then how it ended. */
  state: "planned" | "calling" | "waiting" | "talking" | "ended";
  /** Run seconds when they entered the queue, and when they stopped waiting (answered or left). */
  joined_s: number | null;
  waited_until_s: number | null;
  /** texted: a persona who texts instead sent its text. */
  outcome: "answered" | "abandoned" | "timeout" | "hung_up" | "not_placed" | "stopped" | "texted" | null;
  agent_id: string | null;
  digits: string | null;
  digits_sent: boolean;
  /** Why the caller hung up by itself (sim/'s words: abandoned, talk_time, ...), if it did. */
  left: string | null;
}

export interface RunAgent {
  id: string;
  device_id: string;
  name: string;
}

export class RunConflictError extends Error {
  override name = "RunConflictError";
  constructor(readonly runId: string) {
    super(`a run of this account is under way (${runId}); stop it first`);
  }
}

export class RunStateError extends Error {
  override name = "RunStateError";
}

/** A fault the run cannot take as asked (a target that is not there, too many callers). */
export class FaultError extends Error {
  override name = "FaultError";
  constructor(
    readonly field: string,
    readonly rule: string,
    message: string,
    readonly value?: unknown,
  ) {
    super(message);
  }
}

/** A webhook failure, one-way audio or undelivered texts last this long unless the fault says otherwise. */
export const DEFAULT_FAULT_S = 60;

/** Which way of a trainee's leg a one_way_audio direction silences. */
const MUTED: Record<OneWayDirection, MuteDirection> = { to_agent: "hearing", from_agent: "voice" };

/** A fault as asked: the scenario's entry without its time, or the trainer's. */
export type FaultRequest = Omit<Fault, "at_s">;

/** A scenario that cannot run live as it is (a queue with no number to dial, too many callers). */
export class RunScenarioError extends Error {
  override name = "RunScenarioError";
  constructor(
    readonly field: string,
    readonly rule: string,
    message: string,
    readonly value?: unknown,
  ) {
    super(message);
  }
}

export interface LiveRunsDeps {
  store: Store;
  sim: SimCallers;
  callq: CallqEngine;
  bus: EventBus;
  clock: Clock;
  /** Where the drop_registration fault forgets a trainee's contacts; absent without SIP. */
  registrar?: Registrar;
  /** Where the webhook_failure fault opens its window; absent without webhooks. */
  webhookFaults?: WebhookFaults;
  /** Where the text_stop fault's STOP arrives; absent without texting. */
  texting?: Pick<TextingService, "receive" | "carrier">;
  /** The trainee's live legs and the media engine's mutes, for one_way_audio; absent without calls. */
  audio?: { channels: Pick<Channels, "ofUser">; mutes: LegMutes };
  onError?(err: unknown, what: string): void;
}

export interface StartRequest {
  accountId: string;
  scenarioId: string;
  scenario: Scenario;
  startedBy: string | null;
}

/** Everything a run is: its stored document's data is built from this. */
class LiveRun {
  readonly clock: ControllableClock;
  readonly callers: LiveCaller[];
  readonly timeline: RunEvent[] = [];
  readonly observed: ObservedEvent[] = [];
  readonly agents: RunAgent[] = [];
  readonly timers = new Set<Cancel>();
  readonly sims = new Map<string, SimulatedCaller>();
  readonly releases: (() => void)[] = [];
  /** Bot user ids: their events are the run's, not a trainee's. */
  readonly botIds = new Set<string>();
  /** Each caller's call id to its index. */
  readonly byCall = new Map<string, number>();
  /** The leg each caller is bridged with now, and that leg's owner. */
  readonly parties = new Map<string, { leg: string; owner: string | null }>();
  /** The draws of the callers the trainer's bursts add, one stream for the run. */
  readonly trainerRng: Prng;
  /** What ends each fault still in force (a registration listener, a webhook window). */
  readonly clearings = new Set<() => void>();
  /** Personas' texts not yet answered: the trainee's first reply to the number answers one. */
  readonly unanswered: { index: number; userId: string; from: string; to: string; atMs: number }[] = [];
  /** The one-way audio windows open: each mutes its trainee's legs, the ones bridged later too. */
  readonly audioFaults = new Set<{ userId: string; mute(legId: string): void }>();
  /** What each scenario queue's callers dial (set at start). */
  targets: ReadonlyMap<string, string> = new Map();
  /** Gives the account's queue time back to the server's clock (set at start). */
  releaseClock: (() => void) | undefined;
  status: RunStatus = "running";
  endedMs: number | null = null;
  pausedMs = 0;
  readonly startedRun: number;

  constructor(
    readonly id: string,
    readonly accountId: string,
    readonly scenarioId: string,
    readonly scenario: Scenario,
    readonly startedMs: number,
    readonly startedBy: string | null,
    base: Clock,
    planned: readonly PlannedCaller[],
  ) {
    this.clock = new ControllableClock({ base });
    this.startedRun = this.clock.now();
    this.trainerRng = new Prng(scenario.seed, STREAMS.trainerFaults);
    this.callers = planned.map(liveCaller);
  }

  /** Read through a method: the status changes across awaits, where a narrowed field would lie. */
  over(): boolean {
    return this.status === "ended";
  }

  /** Seconds of run time since the start. */
  runSeconds(): number {
    return round((this.clock.now() - this.startedRun) / 1000, 3);
  }

  after(ms: number, fn: () => void): void {
    const cancel = this.clock.after(ms, () => {
      this.timers.delete(cancel);
      fn();
    });
    this.timers.add(cancel);
  }
}

export class LiveRuns {
  readonly #deps: LiveRunsDeps;
  /** The live run of each account. */
  readonly #live = new Map<string, LiveRun>();
  readonly #unsubscribe: () => void;
  /** The recovery of a previous start's runs: a new run starts after it, never during. */
  #recovered: Promise<void> = Promise.resolve();

  constructor(deps: LiveRunsDeps) {
    this.#deps = deps;
    this.#unsubscribe = deps.bus.subscribe((event) => this.#observe(event));
  }

  /** The account's live run (running or paused), if any. */
  live(accountId: string): LiveRun | undefined {
    return this.#live.get(accountId);
  }

  async start(request: StartRequest): Promise<string> {
    const { accountId, scenario } = request;
    // A failed recovery was logged where it was started; a new run may start all the same.
    await this.#recovered.catch(() => undefined);
    const existing = this.#live.get(accountId);
    if (existing) throw new RunConflictError(existing.id);
    if (scenario.agents.count > MAX_LIVE_AGENTS) {
      throw new RunScenarioError("agents.count", "maximum", `a live run has at most ${MAX_LIVE_AGENTS} simulated agents`, scenario.agents.count);
    }
    const planned = plannedCallers(scenario, MAX_LIVE_CALLERS);
    const targets = await this.#dialled(accountId, scenario);
    const runs = await this.#runs(accountId);
    const now = this.#deps.clock.now();
    const doc = await runs.create({ scenario_id: request.scenarioId, scenario_name: scenario.name, seed: scenario.seed, status: "running", started: toGregorianSeconds(now), pvt_started_ms: now });
    const run = new LiveRun(doc.id, accountId, request.scenarioId, scenario, now, request.startedBy, this.#deps.clock, planned);
    this.#live.set(accountId, run);
    // The account's queue timers and waits follow the run's clock: a pause holds them too.
    run.releaseClock = this.#deps.callq.useClock(accountId, run.clock);
    try {
      await this.#addBots(run, targets);
    } catch (err) {
      await this.#finish(run, "failed");
      throw err;
    }
    this.#note(run, "started", { scenario_id: request.scenarioId, seed: scenario.seed, callers: planned.length, agents: run.agents.map((a) => a.id) });
    for (const p of planned) {
      run.after(p.arrival_s * 1000, () => void (p.texts_instead ? this.#text(run, p, targets) : this.#place(run, p, targets.get(p.queue) ?? p.queue)));
    }
    // The scenario's faults come on the run's clock, so a pause holds them.
    for (const { at_s, ...fault } of scenario.faults) {
      run.after(at_s * 1000, () => {
        this.#inject(run, fault, "scenario", targets).catch((err: unknown) => {
          // A target the account does not have: the timeline says the fault could not act.
          if (!run.over()) this.#note(run, "fault_injected", { fault, source: "scenario", applied: false, reason: err instanceof Error ? err.message : String(err) });
        });
      });
    }
    run.targets = targets;
    // The run ends on its own once its time is up and its callers are gone.
    run.after(scenario.duration_s * 1000, () => this.#endWhenDrained(run));
    await this.#save(run);
    return run.id;
  }

  pause(accountId: string, runId: string): void {
    const run = this.#running(accountId, runId);
    if (run.status !== "running") throw new RunStateError(`the run is ${run.status}`);
    run.clock.pause();
    this.#deps.callq.clockMoved(accountId);
    run.status = "paused";
    this.#note(run, "paused", {});
    void this.#save(run);
  }

  resume(accountId: string, runId: string): void {
    const run = this.#running(accountId, runId);
    if (run.status !== "paused") throw new RunStateError(`the run is ${run.status}`);
    run.clock.resume();
    this.#deps.callq.clockMoved(accountId);
    run.status = "running";
    this.#note(run, "resumed", {});
    void this.#save(run);
  }

  /**
   * The trainer's fault, now. Refused (RunStateError) unless the run is running: a paused run
   * holds its timeline, and a fault then would act while nothing else does.
   */
  fault(accountId: string, runId: string, fault: FaultRequest): Promise<RunEvent> {
    const run = this.#running(accountId, runId);
    if (run.status !== "running") throw new RunStateError(`the run is ${run.status}: resume it first`);
    return this.#inject(run, fault, "trainer", run.targets);
  }

  /** Ends the run now: its callers hang up, its bots log out and go away. */
  async stop(accountId: string, runId: string): Promise<void> {
    const run = this.#running(accountId, runId);
    await this.#finish(run, "stopped");
  }

  /** The run's document data as it stands (a live run from memory). */
  snapshot(run: LiveRun): Record<string, unknown> {
    return {
      scenario_id: run.scenarioId,
      scenario_name: run.scenario.name,
      seed: run.scenario.seed,
      status: run.status,
      started: toGregorianSeconds(run.startedMs),
      ended: run.endedMs === null ? null : toGregorianSeconds(run.endedMs),
      started_by: run.startedBy,
      run_seconds: run.runSeconds(),
      duration_s: run.scenario.duration_s,
      targets: run.scenario.targets,
      agents: run.agents.map((a) => ({ id: a.id, name: a.name })),
      callers: run.callers.map((c) => ({ ...c, ...(c.state === "waiting" && c.joined_s !== null ? { wait_s: round(run.runSeconds() - c.joined_s, 1) } : {}) })),
      timeline: run.timeline,
      pvt_started_ms: run.startedMs,
      pvt_ended_ms: run.endedMs,
      pvt_observed: run.observed,
    };
  }

  /**
   * Runs a previous server left live (it stopped without ending them: a crash, a kill) are ended
   * as of now, and their simulated agents removed from the account, as a stop would have.
   */
  recover(): Promise<void> {
    this.#recovered = this.#recover();
    return this.#recovered;
  }

  async #recover(): Promise<void> {
    const now = this.#deps.clock.now();
    for (const account of (await this.#deps.store.global("accounts")).all()) {
      const runs = await this.#runs(account.id);
      for (const doc of runs.all()) {
        if (doc.data.status === "ended" || this.#live.get(account.id)?.id === doc.id) continue;
        const timeline = Array.isArray(doc.data.timeline) ? doc.data.timeline : [];
        const ended = { at_s: typeof doc.data.run_seconds === "number" ? doc.data.run_seconds : 0, at_ms: now, name: "ended", reason: "restart" };
        await runs.update(doc.id, { ...doc.data, status: "ended", ended: toGregorianSeconds(now), pvt_ended_ms: now, timeline: [...timeline, ended] });
        await this.#removeSimulatedAgents(account.id, doc.id);
      }
    }
  }

  /** Every run ends (server shutdown). */
  async close(): Promise<void> {
    this.#unsubscribe();
    for (const run of [...this.#live.values()]) await this.#finish(run, "shutdown");
  }

  #running(accountId: string, runId: string): LiveRun {
    const run = this.#live.get(accountId);
    if (!run || run.id !== runId) throw new RunStateError("the run has ended");
    return run;
  }

  /** What each scenario queue's callers dial: a queue's callflow number, or the number given. */
  async #dialled(accountId: string, scenario: Scenario): Promise<Map<string, string>> {
    const callflows = (await this.#deps.store.account(accountId, "callflows")).all();
    const queues = await this.#deps.store.account(accountId, "callq_queues");
    const out = new Map<string, string>();
    scenario.queues.forEach((q, i) => {
      const key = queueKey(q) ?? String(i);
      if (q.number !== undefined) {
        out.set(key, q.number);
        return;
      }
      if (q.queue_id === undefined) return;
      if (!queues.get(q.queue_id)) throw new RunScenarioError(`queues.${i}.queue_id`, "not_found", "no queue of the account has this id", q.queue_id);
      const flow = callflows.find((c) => {
        const f = c.data.flow as { module?: unknown; data?: { id?: unknown } } | undefined;
        return f?.module === "callq" && f.data?.id === q.queue_id && Array.isArray(c.data.numbers) && c.data.numbers.length > 0;
      });
      const number = flow && Array.isArray(flow.data.numbers) ? flow.data.numbers.find((n): n is string => typeof n === "string") : undefined;
      if (number === undefined) throw new RunScenarioError(`queues.${i}.queue_id`, "no_number", "no callflow leads to this queue: callers would have nothing to dial", q.queue_id);
      out.set(key, number);
    });
    return out;
  }

  /** Each bot: a user who is a recipient of the scenario's queues, a device whose phone the simulator answers. */
  async #addBots(run: LiveRun, targets: ReadonlyMap<string, string>): Promise<void> {
    const { store, sim, callq } = this.#deps;
    const users = await store.account(run.accountId, "users");
    const devices = await store.account(run.accountId, "devices");
    const queues = await store.account(run.accountId, "callq_queues");
    const queueIds = run.scenario.queues.map((q) => q.queue_id).filter((id): id is string => id !== undefined && targets.has(id));
    const agents = run.scenario.agents;
    for (let i = 0; i < agents.count; i += 1) {
      const tag = `${run.id.slice(0, 8)}-${i + 1}`;
      const user = await users.create({
        username: `sim-agent-${tag}`,
        first_name: "Simulated agent",
        last_name: String(i + 1),
        priv_level: "user",
        enabled: true,
        callq: { enabled: true },
        training: { simulated_agent_of: run.id },
      });
      const device = await devices.create({
        name: `Simulated agent ${i + 1} phone`,
        device_type: "softphone",
        enabled: true,
        owner_id: user.id,
        sip: { username: `sim-agent-${tag}`, password: "" },
        training: { simulated_agent_of: run.id },
      });
      run.agents.push({ id: user.id, device_id: device.id, name: `Simulated agent ${i + 1}` });
      run.botIds.add(user.id);
      const rng = new Prng(run.scenario.seed, STREAMS.firstAgent + i);
      run.releases.push(
        sim.botPhone(
          { accountId: run.accountId, deviceId: device.id },
          { clock: run.clock, ringDelayMs: agents.ring_delay_s * 1000, nextTalkMs: () => draw(agents.handle_time, rng) * 1000, directMedia: true, onError: this.#deps.onError },
        ),
      );
    }
    for (const queueId of queueIds) {
      const queue = queues.get(queueId);
      if (!queue) continue;
      const members = typeof queue.data.members === "object" && queue.data.members !== null ? (queue.data.members as Record<string, unknown>) : {};
      await queues.update(queueId, { ...queue.data, members: { ...members, ...Object.fromEntries(run.agents.map((a) => [a.id, ""])) } });
    }
    for (const agent of run.agents) await callq.recipientAction(run.accountId, agent.id, "login_ready");
  }

  /** The caller's script: its digits (for a prompt) first, then its lines; patience is the run's. */
  #script(run: LiveRun, p: PlannedCaller): CallerScript {
    const persona = run.scenario.personas[p.persona];
    const steps: ScriptStep[] = [];
    if (p.digits !== undefined) steps.push({ kind: "digits", digits: p.digits });
    for (const line of persona?.lines ?? []) {
      if (line.text !== undefined) steps.push({ kind: "say", line: { text: line.text, language: p.language }, ...(line.media_id === undefined ? {} : { media: line.media_id }) });
      else if (line.media_id !== undefined) steps.push({ kind: "play", media: line.media_id });
    }
    return { steps, asksForSupervisor: p.asks_for_supervisor, language: p.language, ...(p.talk_s === null ? {} : { talkS: p.talk_s }) };
  }

  async #place(run: LiveRun, p: PlannedCaller, to: string): Promise<void> {
    const caller = run.callers[p.index];
    if (!caller || run.status === "ended") return;
    let sim: SimulatedCaller;
    try {
      sim = await this.#deps.sim.start(run.accountId, { to, callerIdName: p.caller_id.name, callerIdNumber: p.caller_id.number, behaviour: { script: this.#script(run, p) }, media: "direct" });
    } catch (err) {
      caller.state = "ended";
      caller.outcome = "not_placed";
      this.#note(run, "caller_not_placed", { index: p.index, reason: err instanceof Error ? err.message : String(err) });
      this.#endWhenDrained(run);
      return;
    }
    if (run.over()) {
      sim.hangup();
      return;
    }
    caller.call_id = sim.id;
    caller.state = "calling";
    run.byCall.set(sim.id, p.index);
    run.sims.set(sim.id, sim);
    this.#note(run, "caller_arrived", { index: p.index, call_id: sim.id, queue: p.queue, persona: p.persona_name, caller_id_number: p.caller_id.number });
    const digitsStep = p.digits === undefined ? -1 : 0;
    sim.on("progress", (progress) => {
      if (progress.left !== undefined) caller.left = progress.left;
      if (digitsStep >= 0 && !caller.digits_sent && progress.step > digitsStep) {
        caller.digits_sent = true;
        const party = run.parties.get(sim.id);
        this.#note(run, "caller_digits", { index: p.index, call_id: sim.id, digits: p.digits, agent_id: party?.owner ?? null });
      }
    });
    sim.on("state", (change) => {
      if (change.to !== "ended") return;
      run.sims.delete(sim.id);
      if (caller.state !== "ended") {
        if (caller.outcome === null) caller.outcome = run.status === "ended" ? "stopped" : "hung_up";
        if (caller.waited_until_s === null && caller.joined_s !== null) caller.waited_until_s = run.runSeconds();
        caller.state = "ended";
        this.#note(run, "caller_left", { index: p.index, call_id: sim.id, outcome: caller.outcome });
      }
      this.#endWhenDrained(run);
    });
    // Patience runs on the run's clock, from the call's start, so a pause holds it.
    if (p.patience_s !== null) {
      run.after(p.patience_s * 1000, () => {
        if (caller.state !== "calling" && caller.state !== "waiting") return;
        caller.outcome = "abandoned";
        sim.hangup();
      });
    }
  }

  /**
   * A persona who texts instead: its lines, as one text, from its number to the queue's texting
   * number (the dialled number unless the scenario names one), received as any inbound text is.
   * The user who owns that number answers it with their first text back to the persona's number.
   */
  async #text(run: LiveRun, p: PlannedCaller, targets: ReadonlyMap<string, string>): Promise<void> {
    const caller = run.callers[p.index];
    if (!caller || run.over()) return;
    const entry = run.scenario.queues.find((q) => queueKey(q) === p.queue);
    const to = entry?.texting_number ?? targets.get(p.queue) ?? p.queue;
    const lines = (run.scenario.personas[p.persona]?.lines ?? []).map((l) => l.text).filter((t): t is string => t !== undefined);
    const body = lines.length > 0 ? lines.join(" ") : "Hello, I have a question.";
    caller.state = "ended";
    const texting = this.#deps.texting;
    try {
      if (!texting) throw new Error("this server runs without texting");
      const { message } = await texting.receive(run.accountId, { from: p.caller_id.number, to, body, media: [] });
      caller.outcome = "texted";
      if (run.over()) return;
      const userId = String(message.data.user_id);
      const atMs = typeof message.data.date === "number" ? message.data.date : this.#deps.clock.now();
      run.unanswered.push({ index: p.index, userId, from: p.caller_id.number, to, atMs });
      this.#note(run, "caller_texted", { index: p.index, queue: p.queue, persona: p.persona_name, caller_id_number: p.caller_id.number, to, user_id: userId, message_id: message.id });
    } catch (err) {
      caller.outcome = "not_placed";
      if (run.over()) return;
      this.#note(run, "caller_not_placed", { index: p.index, reason: err instanceof Error ? err.message : String(err) });
    }
    this.#endWhenDrained(run);
  }

  /** A text the trainee sends: their first to a persona's number since its text answers it. */
  #textSent(run: LiveRun, event: BusEvent): void {
    const d = event.data;
    if (event.name !== "created" || d.direction !== "out") return;
    const at = run.unanswered.findIndex((t) => t.userId === d.user_id && t.from === d.to && t.to === d.from);
    const text = run.unanswered[at];
    if (!text) return;
    run.unanswered.splice(at, 1);
    // From the persona's text to the reply as the texting service dates both (the event may come later).
    const repliedAt = typeof d.date === "number" ? d.date : event.at;
    this.#note(run, "text_answered", { index: text.index, user_id: text.userId, message_id: d.id, response_s: round((repliedAt - text.atMs) / 1000, 1) });
  }

  /** Applies a fault and notes it (fault_injected); throws FaultError, changing nothing, when it cannot act. */
  async #inject(run: LiveRun, fault: FaultRequest, source: "scenario" | "trainer", targets: ReadonlyMap<string, string>): Promise<RunEvent> {
    switch (fault.kind) {
      case "burst":
        return this.#burst(run, fault, source, targets);
      case "drop_registration":
        return this.#dropRegistration(run, fault, source);
      case "webhook_failure":
        return this.#webhookFailure(run, fault, source);
      case "text_stop":
        return this.#textStop(run, fault, source);
      case "one_way_audio":
        return this.#oneWayAudio(run, fault, source);
      case "text_undelivered":
        return this.#textUndelivered(run, fault, source);
    }
  }

  /**
   * A scenario's burst callers are planned with the others (generator.ts): its entry only says
   * when. The trainer's come now, drawn from the run's own stream, at its target queue (the first
   * queue unless named).
   */
  #burst(run: LiveRun, fault: FaultRequest, source: "scenario" | "trainer", targets: ReadonlyMap<string, string>): RunEvent {
    if (source === "scenario") return this.#note(run, "fault_injected", { fault, source, applied: true });
    const count = fault.count;
    if (count === undefined) throw new FaultError("fault.count", "required", "a burst says how many callers arrive");
    const queue = fault.target === undefined ? 0 : run.scenario.queues.findIndex((q) => queueKey(q) === fault.target);
    if (queue < 0) throw new FaultError("fault.target", "enum", "a burst's target is one of the scenario's queues (queue_id or number)", fault.target);
    if (run.callers.length + count > MAX_LIVE_CALLERS) throw new FaultError("fault.count", "maximum", `a live run places at most ${MAX_LIVE_CALLERS} callers`, count);
    const added = extraCallers(run.scenario, queue, count, run.runSeconds(), run.callers.length, run.trainerRng);
    run.callers.push(...added.map(liveCaller));
    const event = this.#note(run, "fault_injected", { fault, source, applied: true, callers: added.map((p) => p.index) });
    // As at the start: a persona who texts instead sends its text.
    for (const p of added) void (p.texts_instead ? this.#text(run, p, targets) : this.#place(run, p, targets.get(p.queue) ?? p.queue));
    return event;
  }

  /**
   * The registrar forgets the trainee's devices' contacts: offers find no phone until it
   * registers again (its next refresh), which clears the fault.
   */
  async #dropRegistration(run: LiveRun, fault: FaultRequest, source: "scenario" | "trainer"): Promise<RunEvent> {
    const registrar = this.#deps.registrar;
    if (!registrar) throw new FaultError("fault.kind", "live", "this server runs without SIP registrations", fault.kind);
    const userId = fault.target;
    if (userId === undefined) throw new FaultError("fault.target", "required", "drop_registration names the trainee's user id");
    const devices = await this.#devicesOf(run.accountId, userId);
    if (devices === undefined || run.botIds.has(userId)) throw new FaultError("fault.target", "not_found", "no trainee of the account has this user id", userId);
    if (run.over()) throw new RunStateError("the run has ended");
    const dropped = devices.filter((id) => registrar.bindings(run.accountId, id).length > 0);
    const waiting = new Set(dropped);
    const onRegistered = ({ binding }: { binding: { accountId: string; deviceId: string } }): void => {
      if (binding.accountId !== run.accountId || !waiting.delete(binding.deviceId)) return;
      this.#note(run, "fault_cleared", { fault, device_id: binding.deviceId });
      if (waiting.size === 0) clear();
    };
    const clear = (): void => {
      registrar.off("registered", onRegistered);
      run.clearings.delete(clear);
    };
    if (dropped.length > 0) {
      registrar.on("registered", onRegistered);
      run.clearings.add(clear);
    }
    const event = this.#note(run, "fault_injected", { fault, source, applied: dropped.length > 0, devices: dropped, ...(dropped.length === 0 ? { reason: "none of the trainee's devices is registered" } : {}) });
    for (const id of dropped) registrar.unbindDevice(run.accountId, id);
    return event;
  }

  /** The account's webhooks fail for duration_s of run time (a pause holds the window open). */
  #webhookFailure(run: LiveRun, fault: FaultRequest, source: "scenario" | "trainer"): RunEvent {
    const faults = this.#deps.webhookFaults;
    if (!faults) throw new FaultError("fault.kind", "live", "this server runs without webhooks", fault.kind);
    const durationS = fault.duration_s ?? DEFAULT_FAULT_S;
    const clear = (): void => {
      run.clearings.delete(clear);
      faults.close(run.accountId);
    };
    faults.open(run.accountId);
    run.clearings.add(clear);
    const event = this.#note(run, "fault_injected", { fault: { ...fault, duration_s: durationS }, source, applied: true });
    run.after(durationS * 1000, () => {
      clear();
      this.#note(run, "fault_cleared", { fault: { ...fault, duration_s: durationS } });
    });
    return event;
  }

  /**
   * For duration_s of run time the server passes no audio one way on the trainee's legs: those
   * bridged now and those bridged during the window (their CHANNEL_BRIDGE, #observe). The calls
   * stay up; the trainee hears silence (to_agent) or their party does (from_agent).
   */
  async #oneWayAudio(run: LiveRun, fault: FaultRequest, source: "scenario" | "trainer"): Promise<RunEvent> {
    const audio = this.#deps.audio;
    if (!audio) throw new FaultError("fault.kind", "live", "this server runs without calls", fault.kind);
    const target = fault.target;
    if (target === undefined) throw new FaultError("fault.target", "required", "one_way_audio names the trainee (a username or user id)");
    const userId = await this.#traineeOf(run, target);
    if (run.over()) throw new RunStateError("the run has ended");
    const direction = fault.direction ?? "to_agent";
    const durationS = fault.duration_s ?? DEFAULT_FAULT_S;
    const shown: FaultRequest = { ...fault, direction, duration_s: durationS };
    const way = MUTED[direction];
    const releases = new Map<string, () => void>();
    const window = {
      userId,
      mute: (legId: string): void => {
        if (!releases.has(legId)) releases.set(legId, audio.mutes.mute(legId, way));
      },
    };
    for (const leg of audio.channels.ofUser(run.accountId, userId)) window.mute(leg.id);
    const clear = (): void => {
      run.audioFaults.delete(window);
      run.clearings.delete(clear);
      for (const release of releases.values()) release();
    };
    run.audioFaults.add(window);
    run.clearings.add(clear);
    const event = this.#note(run, "fault_injected", { fault: shown, source, applied: true, user_id: userId, call_ids: [...releases.keys()] });
    run.after(durationS * 1000, () => {
      const legs = [...releases.keys()];
      clear();
      this.#note(run, "fault_cleared", { fault: shown, user_id: userId, call_ids: legs });
    });
    return event;
  }

  /**
   * Texts sent through the carrier to a persona's number (any number its `#`s make) or to a given
   * number fail instead of reaching the handset: those sent within duration_s of run time, or the
   * next `count` of them, whichever ends first (a count alone lasts until spent or the run ends).
   */
  #textUndelivered(run: LiveRun, fault: FaultRequest, source: "scenario" | "trainer"): RunEvent {
    const texting = this.#deps.texting;
    if (!texting) throw new FaultError("fault.kind", "live", "this server runs without texting", fault.kind);
    const target = fault.target;
    if (target === undefined) throw new FaultError("fault.target", "required", "text_undelivered names a persona (its name) or a number");
    const persona = run.scenario.personas.find((p) => p.name === target || p.number === target);
    if (!persona && !/^\+?[0-9]{2,20}$/.test(target)) throw new FaultError("fault.target", "not_found", "text_undelivered names a persona of the scenario (its name or number) or a phone number", target);
    const number = persona?.number ?? target;
    const count = fault.count;
    const durationS = fault.duration_s ?? (count === undefined ? DEFAULT_FAULT_S : undefined);
    const shown: FaultRequest = { ...fault, ...(durationS === undefined ? {} : { duration_s: durationS }) };
    let over = false;
    const clear = (): void => {
      over = true;
      release();
      run.clearings.delete(clear);
    };
    const end = (why: "duration" | "count"): void => {
      if (over) return;
      clear();
      this.#note(run, "fault_cleared", { fault: shown, numbers: [number], reason: why });
    };
    const reason = `training fault: texts to ${persona ? `${persona.name} (${number})` : number} are not delivered`;
    const release = texting.carrier.failDeliveries(run.accountId, { numbers: [number], reason, ...(count === undefined ? {} : { count }), onSpent: () => end("count") });
    run.clearings.add(clear);
    const event = this.#note(run, "fault_injected", { fault: shown, source, applied: true, numbers: [number], reason });
    if (durationS !== undefined) run.after(durationS * 1000, () => end("duration"));
    return event;
  }

  /** A trainee named by user id or username: a user of the account who is not one of the run's bots. */
  async #traineeOf(run: LiveRun, target: string): Promise<string> {
    const users = await this.#deps.store.account(run.accountId, "users");
    const user = users.get(target) ?? users.all().find((u) => u.data.username === target);
    if (!user || run.botIds.has(user.id)) throw new FaultError("fault.target", "not_found", "no trainee of the account has this username or user id", target);
    return user.id;
  }

  /**
   * A persona's number (drawn as a caller's would be, from the run's own stream) texts STOP to
   * the target texting number: the contact opts out, as the texting service does for any STOP.
   */
  async #textStop(run: LiveRun, fault: FaultRequest, source: "scenario" | "trainer"): Promise<RunEvent> {
    const texting = this.#deps.texting;
    if (!texting) throw new FaultError("fault.kind", "live", "this server runs without texting", fault.kind);
    const to = fault.target;
    if (to === undefined) throw new FaultError("fault.target", "required", "text_stop names the texting number the STOP is sent to");
    const [persona] = extraCallers(run.scenario, 0, 1, run.runSeconds(), -1, run.trainerRng);
    if (!persona) throw new RangeError("a scenario has at least one persona");
    let received: Awaited<ReturnType<TextingService["receive"]>>;
    try {
      received = await texting.receive(run.accountId, { from: persona.caller_id.number, to, body: "STOP", media: [] });
    } catch (err) {
      if (err instanceof NotATextingNumber) throw new FaultError("fault.target", "texting_number", err.message, to);
      throw err;
    }
    if (run.over()) throw new RunStateError("the run has ended");
    return this.#note(run, "fault_injected", { fault, source, applied: true, from: persona.caller_id.number, contact_id: received.contact.id, message_id: received.message.id });
  }

  /** The user's device ids, or undefined when the account has no such user (or it is a bot). */
  async #devicesOf(accountId: string, userId: string): Promise<string[] | undefined> {
    const { store } = this.#deps;
    if (!(await store.account(accountId, "users")).get(userId)) return undefined;
    return (await store.account(accountId, "devices"))
      .all()
      .filter((d) => d.data.owner_id === userId)
      .map((d) => d.id);
  }

  /** The account's events the scorecard needs, and the run's view of its callers. */
  #observe(event: BusEvent): void {
    const run = event.account_id === undefined ? undefined : this.#live.get(event.account_id);
    if (!run || run.status === "ended") return;
    const key = event.routing_key;
    if (event.name === "CHANNEL_BRIDGE" && key.startsWith("call.") && typeof event.data.owner_id === "string") {
      for (const window of run.audioFaults) if (window.userId === event.data.owner_id) window.mute(key.slice(key.lastIndexOf(".") + 1));
    }
    if (key.startsWith("texting.message.")) this.#textSent(run, event);
    else if (key.startsWith("callq.queue.") || key.startsWith("callq.recipient.")) {
      run.observed.push({ at_ms: event.at, routing_key: key, name: event.name, data: pick(event.data, OBSERVED_FIELDS) });
      if (key.startsWith("callq.queue.")) this.#queueStep(run, event);
      else if (event.name === "wrapup" && event.data.previous_state === "On-A-Call") this.#botWrapup(run, key.slice("callq.recipient.".length));
    } else if (key.startsWith("call.CHANNEL_BRIDGE.") || key.startsWith("call.CHANNEL_HOLD.") || key.startsWith("call.CHANNEL_UNHOLD.") || key.startsWith("call.CHANNEL_UNBRIDGE.")) {
      run.observed.push({ at_ms: event.at, routing_key: key, name: event.name, data: pick(event.data, OBSERVED_FIELDS) });
      const callId = key.slice(key.lastIndexOf(".") + 1);
      if (run.byCall.has(callId)) {
        if (event.name === "CHANNEL_BRIDGE" && typeof event.data.other_leg_call_id === "string") run.parties.set(callId, { leg: event.data.other_leg_call_id, owner: null });
        if (event.name === "CHANNEL_UNBRIDGE") run.parties.delete(callId);
      } else if (event.name === "CHANNEL_BRIDGE") {
        const other = event.data.other_leg_call_id;
        const owner = typeof event.data.owner_id === "string" ? event.data.owner_id : null;
        if (typeof other === "string" && run.byCall.has(other)) run.parties.set(other, { leg: callId, owner });
      }
    }
  }

  /**
   * A bot wraps up for the scenario's wrapup_s on the run's clock, then takes the next call: it
   * ends a longer queue wrap-up early (a queue's shorter wrap-up ends by itself first).
   */
  #botWrapup(run: LiveRun, userId: string): void {
    if (!run.botIds.has(userId)) return;
    run.after(run.scenario.agents.wrapup_s * 1000, () => {
      // Refused when the bot is back already (the queue's own wrap-up was shorter): nothing to do.
      void this.#deps.callq.recipientAction(run.accountId, userId, "wrapup_cancel").catch(() => undefined);
    });
  }

  #queueStep(run: LiveRun, event: BusEvent): void {
    const index = typeof event.data.call_id === "string" ? run.byCall.get(event.data.call_id) : undefined;
    const caller = index === undefined ? undefined : run.callers[index];
    if (!caller) return;
    const now = run.runSeconds();
    switch (event.name) {
      case "join":
        caller.state = "waiting";
        caller.joined_s = now;
        this.#note(run, "caller_waiting", { index: caller.index, call_id: caller.call_id });
        break;
      case "answered":
        caller.state = "talking";
        caller.waited_until_s = now;
        caller.outcome = "answered";
        caller.agent_id = typeof event.data.recipient_id === "string" ? event.data.recipient_id : null;
        this.#note(run, "caller_answered", { index: caller.index, call_id: caller.call_id, agent_id: caller.agent_id, wait_s: round(now - (caller.joined_s ?? now), 1) });
        break;
      case "abandoned":
        caller.waited_until_s = now;
        caller.outcome = "abandoned";
        this.#note(run, "caller_abandoned", { index: caller.index, call_id: caller.call_id, wait_s: round(now - (caller.joined_s ?? now), 1) });
        break;
      case "timeout":
        caller.waited_until_s = now;
        caller.outcome = "timeout";
        break;
    }
  }

  /** Past its duration with no caller left to come or still on the line, the run ends. */
  #endWhenDrained(run: LiveRun): void {
    if (run.status === "ended") return;
    if (run.runSeconds() < run.scenario.duration_s) return;
    if (run.callers.some((c) => c.state !== "ended")) return;
    void this.#finish(run, "completed").catch((err: unknown) => this.#deps.onError?.(err, "ending a training run"));
  }

  async #finish(run: LiveRun, why: string): Promise<void> {
    if (run.status === "ended") return;
    run.status = "ended";
    run.endedMs = this.#deps.clock.now();
    for (const cancel of run.timers) cancel();
    run.timers.clear();
    // Faults end with the run: webhooks deliver again, nobody waits for a registration.
    for (const clear of [...run.clearings]) clear();
    for (const caller of run.callers) {
      if (caller.state === "ended") continue;
      caller.outcome ??= caller.state === "planned" ? "not_placed" : "stopped";
      if (caller.waited_until_s === null && caller.joined_s !== null) caller.waited_until_s = run.runSeconds();
      caller.state = "ended";
    }
    for (const sim of [...run.sims.values()]) sim.hangup();
    this.#note(run, "ended", { reason: why });
    this.#live.delete(run.accountId);
    await this.#removeBots(run);
    await this.#save(run);
    // Last, so the stopped callers' and the bots' last steps are on the run's time too.
    run.releaseClock?.();
  }

  /** Bots log out, leave the queues and go: the account is as it was, the run keeps their names. */
  async #removeBots(run: LiveRun): Promise<void> {
    for (const release of run.releases.splice(0)) release();
    await this.#removeSimulatedAgents(run.accountId, run.id);
  }

  /** The run's simulated agents (users and devices marked as its own) out of the queues, then gone. */
  async #removeSimulatedAgents(accountId: string, runId: string): Promise<void> {
    const { store, callq } = this.#deps;
    const ofRun = (data: Record<string, unknown>): boolean => {
      const training = data.training;
      return typeof training === "object" && training !== null && (training as Record<string, unknown>).simulated_agent_of === runId;
    };
    const users = await store.account(accountId, "users");
    const devices = await store.account(accountId, "devices");
    const bots = new Set(users.all().filter((u) => ofRun(u.data)).map((u) => u.id));
    for (const id of bots) {
      try {
        await callq.recipientAction(accountId, id, "logout");
      } catch (err) {
        this.#deps.onError?.(err, "logging a simulated agent out");
      }
    }
    const queues = await store.account(accountId, "callq_queues");
    for (const queue of queues.all()) {
      const members = queue.data.members;
      if (typeof members !== "object" || members === null) continue;
      const kept = Object.fromEntries(Object.entries(members).filter(([id]) => !bots.has(id)));
      if (Object.keys(kept).length !== Object.keys(members).length) await queues.update(queue.id, { ...queue.data, members: kept });
    }
    for (const device of devices.all()) if (ofRun(device.data)) await devices.delete(device.id);
    for (const id of bots) await users.delete(id);
  }

  #note(run: LiveRun, name: string, fields: Record<string, unknown>): RunEvent {
    const event: RunEvent = { at_s: run.runSeconds(), at_ms: this.#deps.clock.now(), name, ...fields };
    run.timeline.push(event);
    this.#deps.bus.publish({ account_id: run.accountId, routing_key: `training.run.${run.id}`, name, data: { account_id: run.accountId, run_id: run.id, ...event } });
    return event;
  }

  async #save(run: LiveRun): Promise<void> {
    try {
      const runs = await this.#runs(run.accountId);
      if (runs.get(run.id)) await runs.update(run.id, this.snapshot(run));
    } catch (err) {
      this.#deps.onError?.(err, "saving a training run");
    }
  }

  #runs(accountId: string): Promise<Collection> {
    return this.#deps.store.account(accountId, RUNS_COLLECTION);
  }
}

const OBSERVED_FIELDS = ["call_id", "session_id", "queue_id", "recipient_id", "wait_time", "previous_state", "availability_state", "reason", "other_leg_call_id", "owner_id"] as const;

function liveCaller(p: PlannedCaller): LiveCaller {
  return {
    index: p.index,
    queue: p.queue,
    arrival_s: round(p.arrival_s, 3),
    persona: p.persona_name,
    caller_id_number: p.caller_id.number,
    call_id: null,
    state: "planned",
    joined_s: null,
    waited_until_s: null,
    outcome: null,
    agent_id: null,
    digits: p.digits ?? null,
    digits_sent: false,
    left: null,
  };
}

function pick(data: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (data[key] !== undefined) out[key] = data[key];
  return out;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export type { LiveRun };
