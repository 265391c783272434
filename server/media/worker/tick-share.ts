// The main thread's frame clock as the media workers see it: one small SharedArrayBuffer where the
// main thread marks each tick whose frames its legs have written (with the tick's due time), and
// the clock each worker sends on. A worker sends a tick's frames only once that tick is marked
// here, so it never sends a frame the main thread has not played.
//
// Two ways to wake a worker for a tick (session 16, issue 18):
// - relayed (the default): every worker is woken per tick on the main thread's edge;
// - phased (SWITCHBOARD_WORKER_TICKS=phased, not the default: dtls-slow-server's worker case lost
//   its tone in 3 of 4 phased runs, 0 of 3 relayed, cause not found): worker k runs its own timer, `phaseMs` after each main-thread edge (the workers'
//   phases spread over the 20 ms), and sends whatever ticks are marked by then. The main thread
//   still wakes a worker for a tick it marks late (too close to or after a worker's phase), or
//   after a jump (the clock restarted or skipped), so a frame never waits a whole period.
// A wake-up is not a message (session 18): each worker has a word of shared memory of its own
// (`TickWake`) where the main thread writes the last tick it asks that worker to send, and
// `Atomics.notify` wakes the worker's `Atomics.waitAsync` on it. The main thread allocates nothing
// for it (a message was an object cloned into a buffer per worker per tick), and wake-ups the worker
// did not take in time merge into one (the last tick asked for, every marked tick up to it sent).

import { FRAME_MS } from "../audio-frame.js";
import { performanceTime, reusableTimer, type ReusableTimer, type TickListener, type TickSource, type TimeSource } from "../frame-clock.js";

/** Ticks whose mark and due time the memory keeps: a worker catching up reads no further back. */
export const TICK_SLOTS = 16;
/** A phased worker is messaged for a tick marked later than its phase less this (timer granularity). */
export const NUDGE_MARGIN_MS = 2;

export type WorkerTickMode = "relayed" | "phased";

/** The wake-up rule the environment asks for (SWITCHBOARD_WORKER_TICKS), else `fallback`. */
export function workerTickMode(env: NodeJS.ProcessEnv = process.env, fallback: WorkerTickMode = "relayed"): WorkerTickMode {
  const value = env.SWITCHBOARD_WORKER_TICKS;
  return value === "relayed" || value === "phased" ? value : fallback;
}

/** Worker `index`'s phase in a pool of `size`: the main thread at 0, the workers evenly after it. */
export function workerPhaseMs(mode: WorkerTickMode, index: number, size: number, periodMs = FRAME_MS): number {
  return mode === "relayed" ? 0 : ((index + 1) * periodMs) / (size + 1);
}

// Layout: word 0 the last tick marked (Int32), then TICK_SLOTS ticks (Int32), then TICK_SLOTS due
// times (Float64, ms since the epoch).
const MARKED = 0;
const TICKS_AT = 1;
const HEADER_WORDS = 1 + TICK_SLOTS + 1; // padded to 8 bytes for the Float64 view
export const TICK_SHARE_BYTES = HEADER_WORDS * 4 + TICK_SLOTS * 8;

export class TickShare {
  readonly buffer: SharedArrayBuffer;
  readonly #words: Int32Array;
  readonly #dues: Float64Array;

  constructor(buffer = new SharedArrayBuffer(TICK_SHARE_BYTES)) {
    if (buffer.byteLength !== TICK_SHARE_BYTES) throw new Error(`tick memory must be ${TICK_SHARE_BYTES} bytes`);
    this.buffer = buffer;
    this.#words = new Int32Array(buffer, 0, HEADER_WORDS);
    this.#dues = new Float64Array(buffer, HEADER_WORDS * 4, TICK_SLOTS);
    if (Atomics.load(this.#words, MARKED) === 0 && this.#words[TICKS_AT] === 0) {
      // Fresh memory: nothing marked (tick numbers start at 1).
      Atomics.store(this.#words, MARKED, -1);
      for (let i = 0; i < TICK_SLOTS; i++) this.#words[TICKS_AT + i] = -1;
    }
  }

  /** The last tick marked, -1 before the first. */
  get marked(): number {
    return Atomics.load(this.#words, MARKED);
  }

  /** Main thread: every leg has written its frame for `tick`, due at `due` (ms since the epoch). */
  mark(tick: number, due: number): void {
    const slot = tick % TICK_SLOTS;
    this.#dues[slot] = due;
    Atomics.store(this.#words, TICKS_AT + slot, tick | 0);
    Atomics.store(this.#words, MARKED, tick | 0);
  }

  /** Whether `tick` was marked (false for one the main clock skipped, or one long overwritten). */
  isMarked(tick: number): boolean {
    return Atomics.load(this.#words, TICKS_AT + (tick % TICK_SLOTS)) === (tick | 0);
  }

  /** When a marked `tick` was due (ms since the epoch), as the main thread marked it. */
  markedDue(tick: number): number {
    return this.#dues[tick % TICK_SLOTS];
  }

  /** When `tick` is (or was) due (ms since the epoch), counted from the last tick marked; NaN before the first. */
  dueOf(tick: number): number {
    const last = this.marked;
    if (last < 0) return Number.NaN;
    return this.#dues[last % TICK_SLOTS] + (tick - last) * FRAME_MS;
  }
}

/**
 * Main thread: whether a worker at `phaseMs` needs a wake-up for a tick marked `lateMs` after its
 * due time: always when relayed (phase 0), else when its own timer may already have passed, or
 * after a jump in the tick numbers (its timer still follows the old ones).
 */
export function needsNudge(phaseMs: number, lateMs: number, jumped: boolean): boolean {
  return phaseMs <= 0 || jumped || lateMs >= phaseMs - NUDGE_MARGIN_MS;
}

// Tick lateness histogram: 0.25 ms buckets up to 250 ms, the last holding everything later.
const LATE_BUCKET_MS = 0.25;
const LATE_BUCKETS = 1000;

/**
 * A worker's clock: delivers each marked tick once, in order, when the main thread wakes it (up to the tick
 * it names) or, phased, on its own timer `phaseMs` after the tick's due time. Lateness (a leg's
 * send bound, the stats) is counted from the worker's own due time, the main thread's plus the
 * phase: a steady offset is no lateness to the far end, whose jitter buffer sees only how far a
 * frame strays from the stream's cadence, and a phase must not spend the bound.
 */
export class WorkerClock implements TickSource {
  readonly #share: TickShare;
  readonly #phaseMs: number;
  readonly #time: TimeSource;
  /** ms since the epoch of this thread's time source's 0. */
  readonly #origin: number;
  readonly #listeners = new Set<TickListener>();
  readonly #afterTicks: () => void;
  #delivered = -1;
  #lateMs = 0;
  readonly #timer: ReusableTimer;
  #armed = false;
  #target = 0;
  readonly #lateness = new Uint32Array(LATE_BUCKETS);
  #counted = 0;

  constructor(options: { share: TickShare; phaseMs: number; time?: TimeSource; origin?: number; afterTicks?: () => void }) {
    this.#share = options.share;
    this.#phaseMs = options.phaseMs;
    this.#time = options.time ?? performanceTime;
    this.#origin = options.origin ?? performance.timeOrigin;
    this.#afterTicks = options.afterTicks ?? (() => undefined);
    this.#timer = reusableTimer(this.#time, () => this.#fire());
  }

  get lateMs(): number {
    return this.#lateMs;
  }

  /** The last tick delivered (-1 before the first). */
  get delivered(): number {
    return this.#delivered;
  }

  /** Whether the clock's own timer is armed (phased, with listeners). */
  get timed(): boolean {
    return this.#armed;
  }

  subscribe(listener: TickListener): () => void {
    const first = this.#listeners.size === 0;
    this.#listeners.add(listener);
    if (first) {
      // Ticks marked before anyone listened are past: the next one is the first to send.
      this.#delivered = Math.max(this.#delivered, this.#share.marked);
      if (this.#phaseMs > 0) this.#arm(this.#now());
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#disarm();
    };
  }

  /** The main thread's wake-up (TickWake): deliver the marked ticks up to `tick`. */
  nudge(tick: number): void {
    this.#deliverUpTo(tick);
  }

  /** The p99 of the lateness since the last call (the upper edge of its bucket, ms), then forgets. */
  takeLatenessP99(): number {
    let p99 = 0;
    if (this.#counted > 0) {
      const rank = Math.ceil(this.#counted * 0.99);
      let seen = 0;
      for (let i = 0; i < LATE_BUCKETS; i++) {
        seen += this.#lateness[i];
        if (seen >= rank) {
          p99 = (i + 1) * LATE_BUCKET_MS;
          break;
        }
      }
    }
    this.#lateness.fill(0);
    this.#counted = 0;
    return p99;
  }

  #now(): number {
    return this.#origin + this.#time.now();
  }

  #fire(): void {
    this.#armed = false;
    const now = this.#now();
    // Woken early (a timer's millisecond granularity): wait the rest.
    if (now >= this.#target) this.#deliverUpTo(this.#share.marked);
    if (this.#listeners.size > 0) this.#arm(now);
  }

  /**
   * The next wake-up: the phase after the due time of the first tick not yet delivered; one not
   * marked by its phase is the main thread's to announce, so the timer moves to the next period.
   */
  #arm(now: number): void {
    const next = this.#delivered + 1;
    let target = this.#share.dueOf(next) + this.#phaseMs;
    if (Number.isNaN(target)) target = now + FRAME_MS;
    if (now >= this.#target && target <= this.#target) target = this.#target + FRAME_MS;
    // Past due (the main clock idle a while, or this thread late): the next phase from now, not
    // one period at a time.
    if (target < now) target += Math.ceil((now - target) / FRAME_MS) * FRAME_MS;
    this.#target = target;
    this.#armed = true;
    this.#timer.arm(target - now);
  }

  #disarm(): void {
    this.#armed = false;
    this.#timer.cancel();
  }

  #deliverUpTo(last: number): void {
    const marked = this.#share.marked;
    const upTo = Math.min(last, marked);
    if (upTo <= this.#delivered) return;
    // Further back than the memory keeps: those ticks are past saving (and their frames overwritten).
    const from = Math.max(this.#delivered + 1, marked - TICK_SLOTS + 1);
    let any = false;
    for (let tick = from; tick <= upTo; tick++) {
      // A tick the main clock skipped after a stall has no frames: nothing to send for it.
      if (!this.#share.isMarked(tick)) continue;
      this.#delivered = tick;
      this.#lateMs = Math.max(0, this.#now() - this.#share.markedDue(tick) - this.#phaseMs);
      this.#lateness[Math.min(LATE_BUCKETS - 1, Math.floor(this.#lateMs / LATE_BUCKET_MS))]++;
      this.#counted++;
      any = true;
      for (const listener of this.#listeners) {
        try {
          listener(tick);
        } catch (error) {
          process.emitWarning(`media worker tick listener failed: ${String(error)}`);
        }
      }
    }
    this.#delivered = Math.max(this.#delivered, upTo);
    if (any) this.#afterTicks();
  }
}

/** `Atomics.waitAsync` (Node 16 and up; its types are in a later lib than this project's ES2023). */
type WaitAsync = (
  array: Int32Array,
  index: number,
  value: number,
) => { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** A worker's wake word: the last tick the main thread asked it to send (0 before the first). */
export const TICK_WAKE_BYTES = 4;

/**
 * One worker's wake-up for ticks, in shared memory: the main thread `ask`s for a tick (a store and
 * an `Atomics.notify`, nothing allocated), the worker `listen`s (an `Atomics.waitAsync` re-armed
 * after each wake-up) and is called with the last tick asked for; asks it had no turn to take
 * between merge into the last one.
 */
export class TickWake {
  readonly buffer: SharedArrayBuffer;
  readonly #word: Int32Array;
  #seen = 0;
  #onTick: ((tick: number) => void) | undefined;
  readonly #woken = (): void => this.#take();

  constructor(buffer = new SharedArrayBuffer(TICK_WAKE_BYTES)) {
    if (buffer.byteLength !== TICK_WAKE_BYTES) throw new Error(`a tick wake word must be ${TICK_WAKE_BYTES} bytes`);
    this.buffer = buffer;
    this.#word = new Int32Array(buffer);
  }

  /** The last tick asked for (0 before the first). */
  get asked(): number {
    return Atomics.load(this.#word, 0);
  }

  /** Main thread: the worker should send the marked ticks up to `tick` now. */
  ask(tick: number): void {
    Atomics.store(this.#word, 0, tick | 0);
    Atomics.notify(this.#word, 0);
  }

  /** Worker: `onTick` is called (after the current task) with the last tick asked for, at each wake-up from now on. */
  listen(onTick: (tick: number) => void): void {
    const first = this.#onTick === undefined;
    this.#onTick = onTick;
    if (!first) return;
    this.#seen = this.asked;
    this.#wait();
  }

  #wait(): void {
    // An ask between the last read and this wait makes the wait return at once ("not-equal"):
    // none is missed. A loop, not recursion, for asks that keep coming meanwhile.
    for (;;) {
      const waiting = waitAsync(this.#word, 0, this.#seen);
      if (waiting.async) {
        void waiting.value.then(this.#woken);
        return;
      }
      this.#seen = this.asked;
      this.#onTick?.(this.#seen);
    }
  }

  #take(): void {
    this.#seen = this.asked;
    try {
      this.#onTick?.(this.#seen);
    } finally {
      this.#wait();
    }
  }
}
