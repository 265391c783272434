// The one 20 ms media clock every leg, player and bridge runs on: a single self-correcting timer
// (not one per call) that catches up after a stall, stops when unused and measures its lateness.

import { FRAME_MS } from "./audio-frame.js";

/** Monotonic time and a one-shot timer; injected so tests can run the clock by hand. */
export interface TimeSource {
  /** Milliseconds on a monotonic scale (performance.now() by default). */
  now(): number;
  /** Calls `fn` once after about `delayMs`; returns a function that cancels it. */
  schedule(fn: () => void, delayMs: number): () => void;
  /**
   * A one-shot timer for `fn` that can be armed again and again (each time after it fired or was
   * cancelled), for a caller that re-arms every period and should not make a timer and a cancel
   * function each time. Optional: without it, `reusableTimer` builds one on `schedule`.
   */
  timer?(fn: () => void): ReusableTimer;
}

/** One callback's timer, armed for one call at a time. */
export interface ReusableTimer {
  /** Calls the callback once after about `delayMs` (replacing an arming not yet fired). */
  arm(delayMs: number): void;
  /** Cancels the arming not yet fired, if any. */
  cancel(): void;
}

/** `time`'s reusable timer for `fn`, or one made of its `schedule` (a cancel function per arming). */
export function reusableTimer(time: TimeSource, fn: () => void): ReusableTimer {
  if (time.timer) return time.timer(fn);
  let cancel: (() => void) | undefined;
  const fired = (): void => {
    cancel = undefined;
    fn();
  };
  return {
    arm(delayMs) {
      cancel?.();
      cancel = time.schedule(fired, delayMs);
    },
    cancel() {
      cancel?.();
      cancel = undefined;
    },
  };
}

/**
 * Node's timer for one callback without an object per arming: one `Timeout` per whole millisecond
 * of delay, made on its first use and re-armed with `refresh()` after that (which reactivates a
 * timeout that has fired, at the delay it was made with). A delay is rounded up to the millisecond
 * (Node's timers count whole milliseconds anyway, and one that fires early is re-armed by the
 * frame clock); a cancelled timeout cannot be refreshed, so it is forgotten and made again.
 */
export class NodeTimer implements ReusableTimer {
  readonly #fn: () => void;
  /** By delay in ms (1 and up); at most a period's worth are ever made. */
  readonly #timeouts: (NodeJS.Timeout | undefined)[] = [];
  #armed: NodeJS.Timeout | undefined;
  /** What every timeout calls: made once. */
  readonly #fired = (): void => {
    this.#armed = undefined;
    this.#fn();
  };

  constructor(fn: () => void) {
    this.#fn = fn;
  }

  /** Timeouts made so far (for tests: a clock running at one period makes about a period's worth). */
  get made(): number {
    let n = 0;
    for (const t of this.#timeouts) if (t !== undefined) n++;
    return n;
  }

  arm(delayMs: number): void {
    const ms = delayMs >= 1 ? Math.ceil(delayMs) : 1;
    const timeout = this.#timeouts[ms];
    if (this.#armed !== undefined && this.#armed !== timeout) this.cancel();
    if (timeout === undefined) {
      const made = setTimeout(this.#fired, ms);
      this.#timeouts[ms] = made;
      this.#armed = made;
    } else {
      timeout.refresh();
      this.#armed = timeout;
    }
  }

  cancel(): void {
    const armed = this.#armed;
    if (armed === undefined) return;
    this.#armed = undefined;
    clearTimeout(armed);
    const at = this.#timeouts.indexOf(armed);
    if (at >= 0) this.#timeouts[at] = undefined;
  }
}

export const performanceTime: TimeSource = {
  now: () => performance.now(),
  schedule(fn, delayMs) {
    const timer = setTimeout(fn, Math.max(0, delayMs));
    return () => clearTimeout(timer);
  },
  timer: (fn) => new NodeTimer(fn),
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
  /**
   * The listeners in the order they joined, walked by index each tick (a Set's iterator is an
   * object per tick): one that leaves leaves a hole, filled in once no tick is being delivered, so
   * as with the Set a listener that joins during a tick has it and one that left before its turn
   * does not.
   */
  readonly #order: (TickListener | undefined)[] = [];
  #holes = 0;
  #delivering = false;
  /** Called after every listener has had a tick; walked by index (no iterator per tick). */
  #after: TickListener[] = [];
  /** One timer for the clock's whole life, re-armed each tick. */
  readonly #timer: ReusableTimer;
  #armed = false;
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
  constructor(options: FrameClockOptions = {}) {
    this.#time = options.time ?? performanceTime;
    // The timer's callback is made once (not a closure per tick), and so is the timer.
    this.#timer = reusableTimer(this.#time, () => this.#fire());
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

  /** The tick now being delivered was due at this time (the time source's scale, ms). */
  get dueMs(): number {
    return this.#nextDue - this.periodMs;
  }

  get running(): boolean {
    return this.#active;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** Starts the clock if it was idle; returns the unsubscribe function. */
  subscribe(listener: TickListener): () => void {
    if (!this.#listeners.has(listener)) {
      this.#listeners.add(listener);
      this.#order.push(listener);
    }
    if (!this.#active) {
      this.#active = true;
      this.#nextDue = this.#time.now() + this.periodMs;
      this.#arm();
    }
    return () => this.unsubscribe(listener);
  }

  /**
   * `listener` is called with each tick once every tick listener has had it (what they wrote for
   * the tick is then complete); it does not start the clock nor keep it running.
   */
  afterTick(listener: TickListener): () => void {
    this.#after = [...this.#after, listener];
    return () => {
      this.#after = this.#after.filter((l) => l !== listener);
    };
  }

  /** Stops the clock when the last listener leaves, so an idle server holds no timer. */
  unsubscribe(listener: TickListener): void {
    if (this.#listeners.delete(listener)) {
      this.#order[this.#order.indexOf(listener)] = undefined;
      this.#holes++;
      if (!this.#delivering) this.#fillHoles();
    }
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
    this.#armed = true;
    this.#timer.arm(this.#nextDue - this.#time.now());
  }

  #stop(): void {
    this.#active = false;
    this.#recentCount = 0;
    this.#armed = false;
    this.#timer.cancel();
  }

  #fire(): void {
    this.#armed = false;
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
    if (this.#active && !this.#armed) this.#arm();
  }

  #deliver(tick: number): void {
    // Listeners that join during the loop are visited (the length is read each time), ones that
    // left before their turn are holes, so a leg that closes inside a tick is not called after it left.
    this.#delivering = true;
    const order = this.#order;
    try {
      for (let i = 0; i < order.length; i++) {
        const listener = order[i];
        if (listener === undefined) continue;
        try {
          listener(tick);
        } catch (error) {
          this.#onListenerError(error);
        }
      }
    } finally {
      this.#delivering = false;
      if (this.#holes > 0) this.#fillHoles();
    }
    const after = this.#after;
    for (let i = 0; i < after.length; i++) {
      try {
        after[i]?.(tick);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }

  /** Closes the holes listeners left, keeping the order. */
  #fillHoles(): void {
    const order = this.#order;
    let kept = 0;
    for (let i = 0; i < order.length; i++) {
      const listener = order[i];
      if (listener !== undefined) order[kept++] = listener;
    }
    order.length = kept;
    this.#holes = 0;
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
