// A frame clock's time source moved by hand: timers fire `lateMs` after they are due (the load of
// a busy loop, without a busy process), `stall` jumps time with no timer run (a blocked loop), and
// with `reusable` it also gives the clock one re-armable timer (`timer()`), counting what it makes.
import type { ReusableTimer, TimeSource } from "../../server/media/frame-clock.js";

/** Hand-moved time whose timers fire `lateMs` after due; `reusable` gives it a `timer()` that counts what it makes. */
export class HandTime implements TimeSource {
  t = 0;
  lateMs = 0;
  made = 0;
  schedules = 0;
  #pending: { at: number; fn: () => void }[] = [];
  timer?: (fn: () => void) => ReusableTimer;

  constructor(reusable = false) {
    if (reusable) {
      this.timer = (fn) => {
        this.made++;
        let armed: { at: number; fn: () => void } | undefined;
        const fire = (): void => {
          armed = undefined;
          fn();
        };
        return {
          arm: (delayMs) => {
            if (armed) this.#pending = this.#pending.filter((x) => x !== armed);
            armed = { at: this.t + Math.max(1, delayMs) + this.lateMs, fn: fire };
            this.#pending.push(armed);
          },
          cancel: () => {
            if (armed) this.#pending = this.#pending.filter((x) => x !== armed);
            armed = undefined;
          },
        };
      };
    }
  }

  now(): number {
    return this.t;
  }

  schedule(fn: () => void, delayMs: number): () => void {
    this.schedules++;
    const timer = { at: this.t + Math.max(1, delayMs) + this.lateMs, fn };
    this.#pending.push(timer);
    return () => {
      this.#pending = this.#pending.filter((x) => x !== timer);
    };
  }

  get pending(): number {
    return this.#pending.length;
  }

  advanceTo(to: number): void {
    for (;;) {
      const next = [...this.#pending].sort((a, b) => a.at - b.at)[0];
      if (!next || next.at > to) break;
      this.#pending = this.#pending.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = to;
  }

  stall(ms: number): void {
    this.t += ms;
  }
}
