// The media workers of an engine, seen from the main thread: worker threads started on first use
// or warmed one after another from the start of the server, each leg placed on the one with the fewest
// legs, requests matched to replies, the frame clock's ticks marked in shared memory (each worker
// woken by its own timer at a phase of its own, or through a wake word: tick-share.ts), and a worker that dies
// ending its legs (a replacement starts on demand).

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { Worker, type MessagePort } from "node:worker_threads";
import { performanceTime, type FrameClock, type TimeSource } from "../frame-clock.js";
import { takeEarlyMediaWorker } from "./early.js";
import { workerExecArgv, workerSemiSpaceMb } from "./flags.js";
import type { LegInfo, FromWorker, LegCall, RemoteLegOptions, ToWorker, WorkerConfig, WorkerStats } from "./protocol.js";
import { needsNudge, TickShare, TickWake, workerPhaseMs, workerTickMode, type WorkerTickMode } from "./tick-share.js";

/** What a worker tells the main-thread half of one of its legs. */
export interface WorkerLegHandle {
  /** The worker reports a state change (it connected, or closed on its own). */
  remoteState(to: string, reason: string | undefined, info: LegInfo): void;
  remoteDtmf(digit: { digit: string; durationMs: number }): void;
  /** The worker died: the leg is over. */
  workerFailed(reason: string): void;
}

export class MediaWorkerError extends Error {
  override name = "MediaWorkerError";
}

interface Pending {
  resolve(reply: { value?: string; info: LegInfo }): void;
  reject(error: Error): void;
}

/** How the main thread starts the worker: the built file, or the TypeScript source through tsx; its flags (flags.ts). */
function workerScript(): { script: URL | string; eval?: true; execArgv: string[] } {
  const here = import.meta.url;
  const execArgv = workerExecArgv();
  if (here.endsWith(".ts")) {
    // Tests and benches run the sources: a small bootstrap registers tsx in the thread, then loads
    // the entry (Node 20 does not apply an --import loader to a worker's own entry).
    const tsx = pathToFileURL(createRequire(here).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href;
    const entry = new URL("./thread.ts", here).href;
    const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
    return { script: bootstrap, eval: true, execArgv };
  }
  // Built by electron-vite: out/main/media-worker.js beside the server's entry (or one up from a chunk).
  for (const candidate of ["./media-worker.js", "../media-worker.js"]) {
    const url = new URL(candidate, here);
    if (existsSync(url)) return { script: url, execArgv };
  }
  throw new MediaWorkerError(`the media worker script is missing beside ${here}`);
}

/** ms since the epoch of performance.now()'s 0: read once (the getter makes a number each time). */
const TIME_ORIGIN = performance.timeOrigin;

/** The semi-space flag (flags.ts) is the process's: set once, before the first worker. */
let semiSpaceSet = false;

/** How long a stopping worker may take to close its legs before it is terminated anyway. */
const STOP_BOUND_MS = 2_000;

/**
 * Warming: how long no leg operation (offer, answer, hold, close...) may have been under way in the
 * pool before the next worker starts loading. A worker's start takes a core for a few hundred
 * milliseconds; started at the moment the one before is ready it ran beside the main thread's own
 * start and beside the first call, on a machine of two cores (issue 17, "Start").
 */
export const WARM_QUIET_MS = 150;
/** Warming: the next worker starts at once when every started one already holds this many legs. */
export const WARM_BUSY_LEGS = 2;

export class MediaWorker {
  readonly #worker: Worker;
  readonly #legs = new Map<string, WorkerLegHandle>();
  readonly #pending = new Map<number, Pending>();
  readonly #statsWaiting = new Map<number, (stats: WorkerStats) => void>();
  readonly #onGone: (worker: MediaWorker) => void;
  readonly #ticks: TickShare;
  /** How long after the main thread's edge this worker's own timer wakes it (0: on a message per tick). */
  readonly phaseMs: number;
  /** The worker's place in its pool (its phase follows from it). */
  readonly index: number;
  /** This worker's wake word (tick-share.ts): the last tick it is asked to send at once. */
  readonly #wake = new TickWake();
  #nextId = 1;
  /** The last tick a leg of this worker played, and when it was due (ms since the epoch). */
  #queuedTick = -1;
  #queuedDue = 0;
  #jumped = false;
  /** The clock this worker marks ticks after (its legs' clock), and how to stop following it. */
  #followed: FrameClock | undefined;
  #unfollow: (() => void) | undefined;
  /** Called by the clock once every leg has played a tick: made once. */
  readonly #afterTick = (tick: number): void => this.#mark(tick);
  #alive = true;
  #ready = false;
  #readied: (loaded: boolean) => void = () => undefined;
  #stopped: () => void = () => undefined;
  #exited: Promise<void>;
  /** Told when a leg operation starts and when the last one under way ends (the pool's warming). */
  readonly #onActivity: () => void;
  /** true once werift is loaded in the thread, false if the thread stopped first. */
  readonly loaded: Promise<boolean>;

  constructor(
    config: WorkerConfig,
    onGone: (worker: MediaWorker) => void,
    clock: { ticks: TickShare; index: number; phaseMs: number } = { ticks: new TickShare(), index: 0, phaseMs: 0 },
    onActivity: () => void = () => undefined,
  ) {
    this.#onGone = onGone;
    this.#onActivity = onActivity;
    this.#ticks = clock.ticks;
    this.index = clock.index;
    this.phaseMs = clock.phaseMs;
    this.loaded = new Promise((resolve) => (this.#readied = resolve));
    const { script, eval: isEval, execArgv } = workerScript();
    const semiSpaceMb = workerSemiSpaceMb();
    if (semiSpaceMb !== undefined && !semiSpaceSet) {
      semiSpaceSet = true;
      setFlagsFromString(`--min-semi-space-size=${semiSpaceMb}`);
    }
    // The first worker may be the one serve mode's entry started before the server (early.ts; never
    // when the workers need flags of their own: flags.ts).
    const early = clock.index === 0 ? takeEarlyMediaWorker() : undefined;
    this.#worker = early ?? new Worker(script, { workerData: config, execArgv, ...(isEval ? { eval: true } : {}) });
    // A server with no call left is not kept up by an idle media thread.
    this.#worker.unref();
    this.#worker.on("message", (message: FromWorker) => this.#receive(message));
    this.#worker.on("error", (error) => this.#gone(`media worker failed: ${error.message}`));
    this.#exited = new Promise((resolve) =>
      this.#worker.once("exit", (code) => {
        this.#gone(`media worker exited (code ${code})`);
        resolve();
      }),
    );
    // Before any leg: an early worker's configuration, the tick memory and this worker's phase.
    if (early) this.#post({ type: "config", config });
    this.#post({ type: "clock", memory: this.#ticks.buffer, wake: this.#wake.buffer, phaseMs: this.phaseMs });
  }

  get threadId(): number {
    return this.#worker.threadId;
  }

  get alive(): boolean {
    return this.#alive;
  }

  /** werift is loaded in the thread: a leg placed here starts at once. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Legs on this worker, not yet closed. */
  get legCount(): number {
    return this.#legs.size;
  }

  /** A leg operation sent to this worker is not answered yet. */
  get busy(): boolean {
    return this.#pending.size > 0;
  }

  create(leg: string, handle: WorkerLegHandle, memory: SharedArrayBuffer, options: RemoteLegOptions): void {
    if (!this.#alive) throw new MediaWorkerError("the media worker is gone");
    this.#legs.set(leg, handle);
    this.#post({ type: "create", leg, memory, options });
  }

  /** Forgets a closed leg. */
  release(leg: string): void {
    this.#legs.delete(leg);
  }

  call(leg: string, request: LegCall): Promise<{ value?: string; info: LegInfo }> {
    if (!this.#alive) return Promise.reject(new MediaWorkerError("the media worker is gone"));
    const id = this.#nextId++;
    const answered = new Promise<{ value?: string; info: LegInfo }>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#post({ type: "call", id, leg, ...request });
    });
    this.#onActivity();
    return answered;
  }

  /**
   * A leg of this worker plays its ticks on `clock`: once every leg has had a tick (after the
   * clock's listeners), the tick is marked in the shared tick memory and the worker woken if need
   * be. Followed once per clock; nothing is made per tick.
   */
  follow(clock: FrameClock): void {
    if (this.#followed === clock || !this.#alive) return;
    this.#unfollow?.();
    this.#followed = clock;
    this.#unfollow = clock.afterTick(this.#afterTick);
  }

  /** A leg of this worker played tick `tick`, `lateMs` after it was due. */
  ticked(tick: number, lateMs: number): void {
    if (tick === this.#queuedTick || !this.#alive) return;
    this.#jumped = tick !== this.#queuedTick + 1;
    this.#queuedTick = tick;
    this.#queuedDue = TIME_ORIGIN + performanceTime.now() - lateMs;
  }

  /**
   * After the clock's listeners: the tick is marked (once for all workers: the memory is the
   * pool's), and this worker woken if it wakes on every tick (relayed) or its own timer may have
   * passed already (phased).
   */
  #mark(tick: number): void {
    if (tick !== this.#queuedTick || !this.#alive) return;
    const due = this.#queuedDue;
    if (this.#ticks.marked !== tick) this.#ticks.mark(tick, due);
    if (needsNudge(this.phaseMs, TIME_ORIGIN + performanceTime.now() - due, this.#jumped)) this.#wake.ask(tick);
  }

  /**
   * Forward on arrival (forward.ts): what `leg` receives goes at once to leg `to` of this worker or
   * into `port` (the other leg is in another worker); neither stops it.
   */
  forward(leg: string, peer: { to?: string; port?: MessagePort }): void {
    if (!this.#alive) return;
    const message: ToWorker = { type: "forward", leg, ...peer };
    if (peer.port) this.#worker.postMessage(message, [peer.port]);
    else this.#post(message);
  }

  /** Whether `leg` sends the packets forwarded to it (while it plays the bridge's mix for it). */
  forwardWhile(leg: string, on: boolean): void {
    if (this.#alive) this.#post({ type: "forwardWhile", leg, on });
  }

  /** Whether `leg` decodes what it receives into its ring to this thread (PeerLeg.decode). */
  decode(leg: string, on: boolean): void {
    if (this.#alive) this.#post({ type: "decode", leg, on });
  }

  stats(): Promise<WorkerStats> {
    if (!this.#alive) return Promise.reject(new MediaWorkerError("the media worker is gone"));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      this.#statsWaiting.set(id, resolve);
      this.#post({ type: "stats", id });
    });
  }

  /** Stops the thread (its sockets close with it); its legs end as after a crash. */
  async terminate(): Promise<void> {
    await this.#worker.terminate();
    await this.#exited;
  }

  /**
   * Stops the thread once it has closed its legs and their sockets (a datagram arriving while a
   * thread is terminated aborts the process), waiting at most `boundMs` for that before
   * terminating it anyway (a thread that does not answer).
   */
  async stop(boundMs = STOP_BOUND_MS): Promise<void> {
    if (this.#alive) {
      let cancel: () => void = () => undefined;
      const stopped = new Promise<void>((resolve) => {
        this.#stopped = resolve;
        cancel = performanceTime.schedule(resolve, boundMs);
      });
      this.#post({ type: "stop" });
      await Promise.race([stopped, this.#exited]);
      cancel();
    }
    await this.terminate();
  }

  #post(message: ToWorker): void {
    this.#worker.postMessage(message);
  }

  #receive(message: FromWorker): void {
    switch (message.type) {
      case "ready":
        this.#ready = true;
        this.#readied(true);
        break;
      case "stopped":
        this.#stopped();
        break;
      case "reply": {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (!pending) return;
        if (this.#pending.size === 0) this.#onActivity();
        if (message.ok) pending.resolve({ value: message.value, info: message.info });
        else pending.reject(Object.assign(new Error(message.error.message), { name: message.error.name, info: message.info }));
        break;
      }
      case "state":
        this.#legs.get(message.leg)?.remoteState(message.to, message.reason, message.info);
        break;
      case "dtmf":
        this.#legs.get(message.leg)?.remoteDtmf(message.digit);
        break;
      case "stats":
        this.#statsWaiting.get(message.id)?.(message.stats);
        this.#statsWaiting.delete(message.id);
        break;
    }
  }

  #gone(reason: string): void {
    if (!this.#alive) return;
    this.#alive = false;
    this.#unfollow?.();
    this.#unfollow = undefined;
    this.#followed = undefined;
    this.#readied(false);
    this.#onGone(this);
    for (const pending of this.#pending.values()) pending.reject(new MediaWorkerError(reason));
    this.#pending.clear();
    this.#statsWaiting.clear();
    const legs = [...this.#legs.values()];
    this.#legs.clear();
    for (const leg of legs) leg.workerFailed(reason);
    // An error event may come before the thread has stopped: make sure it does.
    void this.#worker.terminate();
  }
}

export class MediaWorkerPool {
  readonly size: number;
  readonly #config: WorkerConfig;
  readonly #workers: MediaWorker[] = [];
  readonly #onWorkerGone: (reason: string) => void;
  readonly #ticks = new TickShare();
  /** How the workers are woken for a tick (SWITCHBOARD_WORKER_TICKS; see tick-share.ts). */
  readonly tickMode: WorkerTickMode;
  #closing = false;
  #warming = false;
  readonly #time: TimeSource;
  /** The next worker's start while warming waits for a quiet moment (WARM_QUIET_MS), and its timer. */
  #nextStart: (() => void) | undefined;
  #cancelQuiet: (() => void) | undefined;
  /** When a leg operation last started or the last one under way ended (the pool's time). */
  #lastActivity = Number.NEGATIVE_INFINITY;

  constructor(
    size: number,
    config: WorkerConfig,
    onWorkerGone: (reason: string) => void = () => undefined,
    tickMode: WorkerTickMode = workerTickMode(),
    time: TimeSource = performanceTime,
  ) {
    this.#time = time;
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`a media worker pool needs 1 or more workers, not ${size}`);
    this.size = size;
    this.tickMode = tickMode;
    this.#config = config;
    this.#onWorkerGone = onWorkerGone;
  }

  /** The live workers (started ones only). */
  get workers(): readonly MediaWorker[] {
    return this.#workers;
  }

  /**
   * Starts the workers one after another, each once the one before has loaded werift, so the
   * first call finds one ready and the main thread keeps a core while they load. Not awaited:
   * the server is ready before its workers are. After the first, each next worker also waits for a
   * quiet moment: no leg operation under way in the pool for WARM_QUIET_MS (so it does not load
   * beside the server's own start and its first call), unless every started worker already holds
   * WARM_BUSY_LEGS legs (calls keep coming: more room is worth the core).
   */
  warm(): void {
    if (this.#warming) return;
    this.#warming = true;
    const next = (): void => {
      if (this.#closing || this.#workers.length >= this.size) return;
      void this.#start().loaded.then((loaded) => {
        if (!loaded || this.#closing || this.#workers.length >= this.size) return;
        this.#nextStart = next;
        this.#startWhenQuiet();
      });
    };
    next();
  }

  /** A leg operation started, or the last one under way in a worker ended. */
  #activity(): void {
    this.#lastActivity = this.#time.now();
    if (this.#nextStart) this.#startWhenQuiet();
  }

  /** Starts the waiting next worker now if the pool is busy with legs, else once it has been quiet long enough. */
  #startWhenQuiet(): void {
    this.#cancelQuiet?.();
    this.#cancelQuiet = undefined;
    const start = this.#nextStart;
    if (!start) return;
    const crowded = this.#workers.length > 0 && this.#workers.every((w) => w.legCount >= WARM_BUSY_LEGS);
    const quietFor = this.#time.now() - this.#lastActivity;
    const busy = this.#workers.some((w) => w.busy);
    if (crowded || (!busy && quietFor >= WARM_QUIET_MS)) {
      this.#nextStart = undefined;
      start();
      return;
    }
    // Busy: asked again when its last operation ends. Quiet, but not for long enough: asked again then.
    if (!busy) this.#cancelQuiet = this.#time.schedule(() => this.#startWhenQuiet(), WARM_QUIET_MS - quietFor);
  }

  /**
   * The worker for a new leg. Unwarmed: a new one while the pool is not full, else the least
   * loaded. Warming: the least loaded of those ready, so no leg waits on a worker still loading
   * werift unless none is ready yet.
   */
  assign(): MediaWorker {
    if (this.#workers.length === 0 || (!this.#warming && this.#workers.length < this.size)) return this.#start();
    const ready = this.#workers.filter((w) => w.ready);
    const candidates = ready.length > 0 ? ready : this.#workers;
    const chosen = candidates.reduce((best, w) => (w.legCount < best.legCount ? w : best));
    // A leg is about to be made: a next worker waiting to warm is asked again once it is there.
    if (this.#nextStart) queueMicrotask(() => this.#startWhenQuiet());
    return chosen;
  }

  #start(): MediaWorker {
    // The lowest place free (a replacement takes the phase of the worker it replaces).
    let index = 0;
    while (this.#workers.some((w) => w.index === index)) index++;
    const phaseMs = workerPhaseMs(this.tickMode, index, this.size);
    const worker = new MediaWorker(this.#config, (gone) => this.#forget(gone), { ticks: this.#ticks, index, phaseMs }, () => this.#activity());
    this.#workers.push(worker);
    return worker;
  }

  stats(): Promise<(WorkerStats & { threadId: number })[]> {
    return Promise.all(this.#workers.map(async (w) => ({ threadId: w.threadId, ...(await w.stats()) })));
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#nextStart = undefined;
    this.#cancelQuiet?.();
    const workers = [...this.#workers];
    await Promise.all(workers.map((w) => w.stop()));
  }

  #forget(worker: MediaWorker): void {
    const at = this.#workers.indexOf(worker);
    if (at >= 0) this.#workers.splice(at, 1);
    if (!this.#closing) this.#onWorkerGone(`media worker ${worker.threadId} stopped`);
  }
}
