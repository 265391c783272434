// A frame clock's time source moved by hand, whose timers fire exactly as late as a test says:
// the load a busy process puts on the clock, without a busy process or a timing assert.
import type { CpuMeter, TimeSource } from "../../server/media/index.js";

export class LateTime implements TimeSource {
  #t = 0;
  #timer: { at: number; fn: () => void } | undefined;

  now(): number {
    return this.#t;
  }

  schedule(fn: () => void, delayMs: number): () => void {
    const timer = { at: this.#t + delayMs, fn };
    this.#timer = timer;
    return () => {
      if (this.#timer === timer) this.#timer = undefined;
    };
  }

  /** Runs the clock's next `ticks` timers, each `lateMs` after it was due. */
  run(ticks: number, lateMs: number): void {
    for (let i = 0; i < ticks; i++) {
      const timer = this.#timer;
      if (!timer) throw new Error("the frame clock is not running");
      this.#timer = undefined;
      this.#t = Math.max(this.#t, timer.at + lateMs);
      timer.fn();
    }
  }

  /** Stalls: `ms` pass with no timer run, then the one due fires. */
  stall(ms: number): void {
    this.#t += ms;
    this.run(1, 0);
  }
}

/**
 * A process CPU meter (media/load.ts's CpuMeter) that reads `cores` cores' worth of CPU used, a
 * second passing between two reads: a server as busy as a test says, with no real load.
 */
export function busyCpu(cores: number): CpuMeter {
  let at = 0;
  return {
    now: () => (at += 1000),
    usedMs: () => cores * at,
  };
}
