// Whether the media engine can take one more call. The sign that it cannot is the frame clock
// running late while the server itself is busy: every leg, bridge and recorder is driven by its
// ticks, so a server short of CPU shows first as ticks that start late. Past 40 ms (the far ends'
// receive FIFOs prime at two frames) listeners run dry and hear gaps; past 60 ms legs stop
// sending the late frames at all. A new call then only makes every call worse, so it is refused
// (SIP 503 with Retry-After) while too many of the last second's ticks ran that late.
//
// Late ticks alone are not enough: on a machine shared with other busy processes (this one at a
// load of 18 on 2 cores, an idle server's clock ran over 40 ms late for a tenth of its ticks in
// 83% of its seconds) the lateness is theirs, and refusing calls would not give the time back.
// So the server must also be using most of what it can use: its process's CPU over the last
// second at least `busyCores`.

import { availableParallelism } from "node:os";
import { monotonic } from "../clock.js";
import { RECENT_TICKS } from "./frame-clock.js";

/** What the load check reads: the lateness of the clock's last ticks (FrameClock.recentLateness). */
export interface LatenessSource {
  recentLateness(): readonly number[];
}

/** The process's CPU time and a monotonic clock, both in ms (tests give their own). */
export interface CpuMeter {
  now(): number;
  usedMs(): number;
}

const processCpu: CpuMeter = {
  now: () => monotonic.now(),
  usedMs: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  },
};

export interface MediaLoadOptions {
  /** A tick this late (ms) is one the far ends' cushions did not cover (default 40: two frames). */
  lateMs?: number;
  /** Late ticks among the last second's 50 from which new calls are refused (default 5, a tenth). */
  maxLateTicks?: number;
  /**
   * Cores' worth of CPU the process must have used over the last second for late ticks to be its
   * own load (default: 0.8 of the threads it runs media on, main thread and workers, at most the
   * machine's cores).
   */
  busyCores?: number;
  /** Where the process's CPU time is read (default process.cpuUsage, on the monotonic clock). */
  cpu?: CpuMeter;
}

/**
 * Retry-After (s) of a call refused for media load: the check looks at the last second of ticks, so
 * a few seconds lets the calls in progress settle (or end) before the caller tries again.
 */
export const OVERLOAD_RETRY_AFTER_S = 5;

/** The CPU share is measured over at least this long (ms): one second, as the ticks' window. */
const CPU_WINDOW_MS = 1000;

export class MediaLoad {
  readonly lateMs: number;
  readonly maxLateTicks: number;
  readonly busyCores: number;
  readonly #clock: LatenessSource;
  readonly #cpu: CpuMeter;
  #mark: { at: number; usedMs: number };
  #cores = 0;

  /** `threads`: the threads the engine runs media on (1 + its workers), for the default busyCores. */
  constructor(clock: LatenessSource, options: MediaLoadOptions = {}, threads = 1) {
    this.#clock = clock;
    this.#cpu = options.cpu ?? processCpu;
    this.lateMs = options.lateMs ?? 40;
    this.maxLateTicks = options.maxLateTicks ?? 5;
    this.busyCores = options.busyCores ?? 0.8 * Math.min(threads, availableParallelism());
    if (!(this.lateMs > 0)) throw new RangeError(`lateMs must be above 0, not ${this.lateMs}`);
    if (!Number.isInteger(this.maxLateTicks) || this.maxLateTicks < 1 || this.maxLateTicks > RECENT_TICKS) {
      throw new RangeError(`maxLateTicks must be a whole number 1..${RECENT_TICKS}, not ${this.maxLateTicks}`);
    }
    if (!(this.busyCores >= 0)) throw new RangeError(`busyCores must be 0 or more, not ${this.busyCores}`);
    this.#mark = { at: this.#cpu.now(), usedMs: this.#cpu.usedMs() };
  }

  /** Why a new call should be refused now, or undefined when the engine keeps up. */
  refusal(): string | undefined {
    const cores = this.#coresUsed();
    const recent = this.#clock.recentLateness();
    let late = 0;
    let worst = 0;
    for (const ms of recent) {
      if (ms > this.lateMs) late++;
      if (ms > worst) worst = ms;
    }
    if (late < this.maxLateTicks || cores < this.busyCores) return undefined;
    return (
      `media engine overloaded: ${late} of the last ${recent.length} frame-clock ticks ran more than ${this.lateMs} ms late ` +
      `(worst ${Math.round(worst)} ms) while the server used ${cores.toFixed(1)} cores`
    );
  }

  /** The process's CPU, in cores, since the last measurement at least a second old. */
  #coresUsed(): number {
    const at = this.#cpu.now();
    const elapsed = at - this.#mark.at;
    if (elapsed >= CPU_WINDOW_MS) {
      const usedMs = this.#cpu.usedMs();
      this.#cores = (usedMs - this.#mark.usedMs) / elapsed;
      this.#mark = { at, usedMs };
    }
    return this.#cores;
  }
}
