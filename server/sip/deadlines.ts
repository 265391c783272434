// The call layer's timers (ACK wait, no answer, CANCEL answered late) as deadlines on the injected
// clock, run by the SIP housekeeping sweep, so tests and the simulator can move time on.
import type { TimeReader } from "../clock.js";

/** Called to take a deadline back before it is due. */
export type CancelDeadline = () => void;

interface Deadline {
  dueAt: number;
  run(): void;
}

export class Deadlines {
  readonly #clock: TimeReader;
  readonly #onError: (err: unknown) => void;
  readonly #pending = new Set<Deadline>();

  constructor(clock: TimeReader, onError: (err: unknown) => void) {
    this.#clock = clock;
    this.#onError = onError;
  }

  /** Runs `run` at the first sweep at least `ms` after now. */
  after(ms: number, run: () => void): CancelDeadline {
    const deadline: Deadline = { dueAt: this.#clock.now() + ms, run };
    this.#pending.add(deadline);
    return () => {
      this.#pending.delete(deadline);
    };
  }

  /** Runs what is due; one that throws is reported and does not stop the others. */
  sweep(): void {
    const now = this.#clock.now();
    for (const deadline of [...this.#pending]) {
      if (deadline.dueAt > now || !this.#pending.delete(deadline)) continue;
      try {
        deadline.run();
      } catch (err) {
        this.#onError(err);
      }
    }
  }

  get size(): number {
    return this.#pending.size;
  }
}
