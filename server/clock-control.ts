// Clocks whose time is not the wall's: a manual one that moves only when told (tests), and a
// controllable one that follows real time paused, faster or jumped ahead (the training mode).
// Both keep their timers in virtual time and run them in due order, ties in the order set.
import { systemClock, type Cancel, type Clock } from "./clock.js";

interface Timer {
  at: number;
  seq: number;
  /** Set for a repeating timer: its period. */
  periodMs?: number;
  fn: () => void;
}

/** Timers ordered by due time, then by when they were set. */
class TimerQueue {
  readonly #timers: Timer[] = [];
  #seq = 0;

  add(at: number, fn: () => void, periodMs?: number): Timer {
    const timer: Timer = { at, seq: this.#seq++, fn, ...(periodMs === undefined ? {} : { periodMs }) };
    this.#insert(timer);
    return timer;
  }

  remove(timer: Timer): void {
    const index = this.#timers.indexOf(timer);
    if (index >= 0) this.#timers.splice(index, 1);
  }

  /** The first timer due at or before `at` and its due time; a repeating one is set again. */
  takeDue(at: number, now: number): { dueAt: number; fn: () => void } | undefined {
    const first = this.#timers[0];
    if (first === undefined || first.at > at) return undefined;
    this.#timers.shift();
    const dueAt = first.at;
    if (first.periodMs !== undefined) {
      // Periods missed by a jump are not made up: the next run is one period after this one,
      // or after now when that is already past.
      const next = first.at + first.periodMs;
      first.at = next > now ? next : now + first.periodMs;
      first.seq = this.#seq++;
      this.#insert(first);
    }
    return { dueAt, fn: first.fn };
  }

  get next(): number | undefined {
    return this.#timers[0]?.at;
  }

  get size(): number {
    return this.#timers.length;
  }

  #insert(timer: Timer): void {
    let low = 0;
    let high = this.#timers.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      const other = this.#timers[mid];
      if (other !== undefined && (other.at < timer.at || (other.at === timer.at && other.seq < timer.seq))) low = mid + 1;
      else high = mid;
    }
    this.#timers.splice(low, 0, timer);
  }
}

/** Lets the promises and I/O callbacks a timer started run before the next timer does. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** 2025-05-14 12:00 UTC: a fixed start, so runs repeat. */
const DEFAULT_START_MS = Date.UTC(2025, 4, 14, 12, 0, 0);

/** Time that moves only on `advance`, `advanceTo` or `runUntil`, running due timers in order. */
export class ManualClock implements Clock {
  #now: number;
  readonly #timers = new TimerQueue();

  constructor(startMs = DEFAULT_START_MS) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): Cancel {
    const timer = this.#timers.add(this.#now + Math.max(0, ms), fn);
    return () => this.#timers.remove(timer);
  }

  every(ms: number, fn: () => void): Cancel {
    const period = Math.max(1, ms);
    const timer = this.#timers.add(this.#now + period, fn, period);
    return () => this.#timers.remove(timer);
  }

  /** Moves time on by `ms`; each timer falling due runs at its own time, its work settling before the next. */
  advance(ms: number): Promise<void> {
    return this.advanceTo(this.#now + Math.max(0, ms));
  }

  async advanceTo(at: number): Promise<void> {
    for (;;) {
      const timer = this.#timers.takeDue(at, this.#now);
      if (timer === undefined) break;
      this.#now = Math.max(this.#now, timer.dueAt);
      timer.fn();
      await settle();
    }
    this.#now = Math.max(this.#now, at);
    await settle();
  }

  /**
   * Runs timers one due time at a time until `done()` holds, at most `limitMs` on; answers
   * whether it held. Work outside the clock (sockets, files) gets a turn between steps.
   */
  async runUntil(done: () => boolean, limitMs: number): Promise<boolean> {
    const limit = this.#now + limitMs;
    for (;;) {
      await settle();
      if (done()) return true;
      const next = this.#timers.next;
      if (next === undefined || next > limit) {
        await this.advanceTo(limit);
        return done();
      }
      await this.advanceTo(next);
    }
  }

  /** Timers still waiting. */
  pending(): number {
    return this.#timers.size;
  }

  /** When the next timer is due; undefined when none waits. */
  nextDue(): number | undefined {
    return this.#timers.next;
  }
}

export interface ControllableClockOptions {
  /** Virtual time to start at; the real time by default. */
  startMs?: number;
  /** Virtual milliseconds per real one: 1 by default. */
  rate?: number;
  /** The real time it follows; the system's by default (a test gives a manual one). */
  base?: Clock;
}

/**
 * Virtual time that follows a real clock at a rate, and can be paused, resumed, sped up, slowed
 * down and jumped ahead. Its timers are due in virtual time: each runs at the real moment its
 * virtual time comes, and every change of rate or jump sets the real wait again.
 */
export class ControllableClock implements Clock {
  readonly #base: Clock;
  readonly #timers = new TimerQueue();
  /** Virtual time at `#anchorReal`. */
  #anchorVirtual: number;
  #anchorReal: number;
  #rate: number;
  #paused = false;
  #wake: Cancel | undefined;

  constructor(options: ControllableClockOptions = {}) {
    this.#base = options.base ?? systemClock;
    this.#anchorReal = this.#base.now();
    this.#anchorVirtual = options.startMs ?? this.#anchorReal;
    this.#rate = checkedRate(options.rate ?? 1);
  }

  now(): number {
    return this.#paused ? this.#anchorVirtual : this.#anchorVirtual + (this.#base.now() - this.#anchorReal) * this.#rate;
  }

  get rate(): number {
    return this.#rate;
  }

  get paused(): boolean {
    return this.#paused;
  }

  after(ms: number, fn: () => void): Cancel {
    const timer = this.#timers.add(this.now() + Math.max(0, ms), fn);
    this.#rearm();
    return () => {
      this.#timers.remove(timer);
      this.#rearm();
    };
  }

  every(ms: number, fn: () => void): Cancel {
    const period = Math.max(1, ms);
    const timer = this.#timers.add(this.now() + period, fn, period);
    this.#rearm();
    return () => {
      this.#timers.remove(timer);
      this.#rearm();
    };
  }

  /** Holds virtual time, and with it every timer. */
  pause(): void {
    this.#reanchor();
    this.#paused = true;
    this.#rearm();
  }

  resume(): void {
    this.#reanchor();
    this.#paused = false;
    this.#rearm();
  }

  /** Runs virtual time `rate` times as fast as real time from now on. */
  setRate(rate: number): void {
    const checked = checkedRate(rate);
    this.#reanchor();
    this.#rate = checked;
    this.#rearm();
  }

  /** Moves virtual time to `at` (never back); what fell due runs at once, in order. */
  jumpTo(at: number): void {
    this.#reanchor();
    this.#moveTo(at);
  }

  /** Moves virtual time on by `ms`, from the time it reads as it moves (one reading of real time). */
  jump(ms: number): void {
    this.#reanchor();
    this.#moveTo(this.#anchorVirtual + ms);
  }

  /** Timers still waiting. */
  pending(): number {
    return this.#timers.size;
  }

  /** When the next timer is due in virtual time; undefined when none waits. */
  nextDue(): number | undefined {
    return this.#timers.next;
  }

  /** Runs every timer due by now at once, in order, rather than on the next turn (serve mode's clock control). */
  runDue(): void {
    this.#wake?.();
    this.#wake = undefined;
    this.#fire();
  }

  /** Anchors at the present: one reading of real time, so no virtual time is lost between two. */
  #reanchor(): void {
    const real = this.#base.now();
    if (!this.#paused) this.#anchorVirtual += (real - this.#anchorReal) * this.#rate;
    this.#anchorReal = real;
  }

  #moveTo(at: number): void {
    if (!Number.isFinite(at) || at < this.#anchorVirtual) throw new RangeError(`cannot jump back in time (to ${at}, now ${this.#anchorVirtual})`);
    this.#anchorVirtual = at;
    this.#rearm();
  }

  #rearm(): void {
    this.#wake?.();
    this.#wake = undefined;
    const next = this.#timers.next;
    if (next === undefined || this.#paused) return;
    this.#wake = this.#base.after(Math.max(0, (next - this.now()) / this.#rate), () => this.#fire());
  }

  #fire(): void {
    this.#wake = undefined;
    try {
      for (;;) {
        const now = this.now();
        const timer = this.#timers.takeDue(now, now);
        if (timer === undefined) break;
        timer.fn();
      }
    } finally {
      this.#rearm();
    }
  }
}

function checkedRate(rate: number): number {
  if (!Number.isFinite(rate) || rate <= 0) throw new RangeError(`a clock rate must be a positive number, not ${rate}`);
  return rate;
}

/** The part of a clock a switched clock runs on: it reads the time and waits, never periodically. */
export type ClockSource = Pick<Clock, "now" | "after">;

interface SwitchedTimer {
  /** Due time on the source it was last set on. */
  at: number;
  fn: () => void;
  cancel: Cancel;
}

/**
 * Time read from a source that can be changed while it runs (the queue engine's time of one
 * account, which a training run lends its clock): on a change, every timer still waiting moves to
 * the new source with the time it had left on the old one.
 */
export class SwitchedClock implements ClockSource {
  #source: ClockSource;
  readonly #timers = new Set<SwitchedTimer>();

  constructor(source: ClockSource) {
    this.#source = source;
  }

  get source(): ClockSource {
    return this.#source;
  }

  now(): number {
    return this.#source.now();
  }

  after(ms: number, fn: () => void): Cancel {
    const wait = Math.max(0, ms);
    const timer: SwitchedTimer = { at: this.#source.now() + wait, fn, cancel: () => undefined };
    this.#timers.add(timer);
    this.#arm(timer, wait);
    return () => {
      if (this.#timers.delete(timer)) timer.cancel();
    };
  }

  /** Runs on `source` from now on; answers how far its time is ahead of the old source's (ms). */
  switchTo(source: ClockSource): number {
    const before = this.#source.now();
    const after = source.now();
    this.#source = source;
    for (const timer of this.#timers) {
      timer.cancel();
      const left = Math.max(0, timer.at - before);
      timer.at = after + left;
      this.#arm(timer, left);
    }
    return after - before;
  }

  /** Timers still waiting. */
  pending(): number {
    return this.#timers.size;
  }

  #arm(timer: SwitchedTimer, ms: number): void {
    timer.cancel = this.#source.after(ms, () => {
      if (this.#timers.delete(timer)) timer.fn();
    });
  }
}
