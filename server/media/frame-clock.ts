// The one 20 ms media clock every leg, player and bridge runs on: a single self-correcting timer
// (not one per call) that catches up after a stall, stops when unused and measures its lateness.

import { FRAME_MS } from "./audio-frame.js";

/** Monotonic time and a one-shot timer; injected so tests can run the clock by hand. */
export interface TimeSource {
  /** Milliseconds on a monotonic scale (performance.now() by default). */
  now(): number;
  /** Calls `fn` once after about `delayMs`; returns a function that cancels it. */
  schedule(fn: () => void, delayMs: number): () => void;
}

export const performanceTime: TimeSource = {
  now: () => performance.now(),
  schedule(fn, delayMs) {
    const timer = setTimeout(fn, Math.max(0, delayMs));
    return () => clearTimeout(timer);
  },
};

/** Called once per tick with the tick's number (monotonic for the clock's whole life). */
export type TickListener = (tick: number) => void;

/** What a leg needs of a clock: the ticks, and how late the one being delivered is. */
export interface TickSource {
  subscribe(listener: TickListener): () => void;
  /** How long after its due time the tick now being delivered started, in ms. */
  readonly lateMs: number;
}

export interface FrameClockOptions {
  time?: TimeSource;
  periodMs?: number;
  /**
   * After a stall, owed ticks are delivered in quick succession to catch up; beyond this many
   * the clock skips ahead instead, so a long pause is not followed by a burst of stale frames.
   */
  maxCatchUpTicks?: number;
  /** Where a listener's exception goes; the other listeners still get the tick. */
  onListenerError?: (error: unknown) => void;
}

export interface FrameClockStats {
  /** Ticks delivered. */
  ticks: number;
  /** Ticks dropped because the clock fell more than maxCatchUpTicks behind. */
  skipped: number;
  /** How late ticks ran after their due time, in ms. */
  latenessMeanMs: number;
  latenessP50Ms: number;
  latenessP99Ms: number;
  latenessMaxMs: number;
}

// Lateness histogram: 0.25 ms buckets up to 250 ms; the last bucket holds everything later.
const BUCKET_MS = 0.25;
const BUCKETS = 1000;
/** Ticks whose lateness recentLateness() returns: the last second. */
export const RECENT_TICKS = 50;

export class FrameClock implements TickSource {
  readonly periodMs: number;
  readonly #time: TimeSource;
  readonly #maxCatchUp: number;
  readonly #onListenerError: (error: unknown) => void;
  readonly #listeners = new Set<TickListener>();
  #cancel: (() => void) | undefined;
  #active = false;
  #nextDue = 0;
  #tick = 0;
  #lateness = 0;
  #skipped = 0;
  #latenessSum = 0;
  #latenessMax = 0;
  #histogram = new Uint32Array(BUCKETS);
  #delivered = 0;
  // The last RECENT_TICKS ticks' lateness, a ring: what the engine's load check reads.
  readonly #recent = new Float64Array(RECENT_TICKS);
  #recentCount = 0;
  #recentNext = 0;
  /** The timer's callback, made once (not a closure per tick). */
  readonly #onTimer = (): void => this.#fire();

  constructor(options: FrameClockOptions = {}) {
    this.#time = options.time ?? performanceTime;
    this.periodMs = options.periodMs ?? FRAME_MS;
    this.#maxCatchUp = options.maxCatchUpTicks ?? 10;
    this.#onListenerError =
      options.onListenerError ?? ((error) => process.emitWarning(`frame clock listener failed: ${String(error)}`));
  }

  /** The number of the last tick delivered (0 before the first). */
  get tick(): number {
    return this.#tick;
  }

  /**
   * How long after its due time the tick now being delivered started, in ms: under a timer's
   * jitter normally, up to maxCatchUpTicks periods for owed ticks delivered after a stall.
   */
  get lateMs(): number {
    return this.#lateness;
  }

  get running(): boolean {
    return this.#active;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** Starts the clock if it was idle; returns the unsubscribe function. */
  subscribe(listener: TickListener): () => void {
    this.#listeners.add(listener);
    if (!this.#active) {
      this.#active = true;
      this.#nextDue = this.#time.now() + this.periodMs;
      this.#arm();
    }
    return () => this.unsubscribe(listener);
  }

  /** Stops the clock when the last listener leaves, so an idle server holds no timer. */
  unsubscribe(listener: TickListener): void {
    this.#listeners.delete(listener);
    if (this.#listeners.size === 0) this.#stop();
  }

  stats(): FrameClockStats {
    return {
      ticks: this.#delivered,
      skipped: this.#skipped,
      latenessMeanMs: this.#delivered ? this.#latenessSum / this.#delivered : 0,
      latenessP50Ms: this.#percentile(50),
      latenessP99Ms: this.#percentile(99),
      latenessMaxMs: this.#latenessMax,
    };
  }

  /**
   * How late each of the last RECENT_TICKS ticks ran, oldest first, in ms; a tick skipped after a
   * stall counts as late as the stall. Empty after the clock stops: an idle clock says nothing
   * about the load, and the next run starts afresh.
   */
  recentLateness(): number[] {
    const out: number[] = [];
    const start = this.#recentNext - this.#recentCount + RECENT_TICKS;
    for (let i = 0; i < this.#recentCount; i++) out.push(this.#recent[(start + i) % RECENT_TICKS] ?? 0);
    return out;
  }

  resetStats(): void {
    this.#delivered = 0;
    this.#skipped = 0;
    this.#latenessSum = 0;
    this.#latenessMax = 0;
    this.#histogram.fill(0);
  }

  #arm(): void {
    this.#cancel = this.#time.schedule(this.#onTimer, this.#nextDue - this.#time.now());
  }

  #stop(): void {
    this.#active = false;
    this.#recentCount = 0;
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #fire(): void {
    this.#cancel = undefined;
    const now = this.#time.now();
    // Deadlines advance by whole periods from the start, never from "now", so timer jitter
    // does not accumulate into drift.
    const behind = Math.floor((now - this.#nextDue) / this.periodMs);
    if (behind >= this.#maxCatchUp) {
      for (let i = 0; i < Math.min(behind, RECENT_TICKS); i++) this.#remember(now - this.#nextDue - i * this.periodMs);
      this.#skipped += behind;
      this.#tick += behind;
      this.#nextDue += behind * this.periodMs;
    }
    if (now >= this.#nextDue) {
      this.#lateness = now - this.#nextDue;
      this.#record(this.#lateness);
      this.#nextDue += this.periodMs;
      this.#tick++;
      this.#deliver(this.#tick);
    }
    // One tick per timer callback: owed ticks follow at once (delay 0) but each after a turn of
    // the event loop, so packets that arrived during a stall are read between them instead of
    // every receive FIFO running dry in one burst. A listener may have stopped and restarted
    // the clock inside the tick; it then armed itself.
    if (this.#active && this.#cancel === undefined) this.#arm();
  }

  #deliver(tick: number): void {
    // A Set visits entries added during the loop and skips ones deleted before their turn,
    // so a leg that closes inside a tick is not called after it left.
    for (const listener of this.#listeners) {
      try {
        listener(tick);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  #remember(latenessMs: number): void {
    this.#recent[this.#recentNext] = latenessMs;
    this.#recentNext = (this.#recentNext + 1) % RECENT_TICKS;
    this.#recentCount = Math.min(RECENT_TICKS, this.#recentCount + 1);
  }

  #record(latenessMs: number): void {
    this.#remember(latenessMs);
    this.#delivered++;
    this.#latenessSum += latenessMs;
    if (latenessMs > this.#latenessMax) this.#latenessMax = latenessMs;
    this.#histogram[Math.min(BUCKETS - 1, Math.floor(latenessMs / BUCKET_MS))]++;
  }

  #percentile(p: number): number {
    if (this.#delivered === 0) return 0;
    const rank = Math.ceil((p / 100) * this.#delivered);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#histogram[i];
      if (seen >= rank) return (i + 1) * BUCKET_MS;
    }
    return this.#latenessMax;
  }
}
