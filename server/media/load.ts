// Whether the media engine can take one more call. The sign that it cannot is the frame clock
// running late: every leg, bridge and recorder is driven by its ticks, so a process short of CPU
// shows first as ticks that start late. Past 40 ms (the far ends' receive FIFOs prime at two
// frames) listeners run dry and hear gaps; past 60 ms legs stop sending the late frames at all.
// A new call then only makes every call worse, so it is refused (SIP 503 with Retry-After)
// while too many of the last second's ticks ran that late.

import { RECENT_TICKS } from "./frame-clock.js";

/** What the load check reads: the lateness of the clock's last ticks (FrameClock.recentLateness). */
export interface LatenessSource {
  recentLateness(): readonly number[];
}

export interface MediaLoadOptions {
  /** A tick this late (ms) is one the far ends' cushions did not cover (default 40: two frames). */
  lateMs?: number;
  /** Late ticks among the last second's 50 from which new calls are refused (default 5, a tenth). */
  maxLateTicks?: number;
}

export class MediaLoad {
  readonly lateMs: number;
  readonly maxLateTicks: number;
  readonly #clock: LatenessSource;

  constructor(clock: LatenessSource, options: MediaLoadOptions = {}) {
    this.#clock = clock;
    this.lateMs = options.lateMs ?? 40;
    this.maxLateTicks = options.maxLateTicks ?? 5;
    if (!(this.lateMs > 0)) throw new RangeError(`lateMs must be above 0, not ${this.lateMs}`);
    if (!Number.isInteger(this.maxLateTicks) || this.maxLateTicks < 1 || this.maxLateTicks > RECENT_TICKS) {
      throw new RangeError(`maxLateTicks must be a whole number 1..${RECENT_TICKS}, not ${this.maxLateTicks}`);
    }
  }

  /** Why a new call should be refused now, or undefined when the engine keeps up. */
  refusal(): string | undefined {
    const recent = this.#clock.recentLateness();
    let late = 0;
    let worst = 0;
    for (const ms of recent) {
      if (ms > this.lateMs) late++;
      if (ms > worst) worst = ms;
    }
    if (late < this.maxLateTicks) return undefined;
    return `media engine overloaded: ${late} of the last ${recent.length} frame-clock ticks ran more than ${this.lateMs} ms late (worst ${Math.round(worst)} ms)`;
  }
}
