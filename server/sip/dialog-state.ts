// The life of a SIP dialog (RFC 3261 §12) as an explicit state machine: every change goes through
// one function that checks it, stamps the time from the injected clock and reports it once.
import type { TimeReader } from "../clock.js";

/**
 * ```
 *   early ──2xx sent or received──> confirmed
 *     │                                 │
 *     └─ non-2xx final, CANCEL, ────────┴── BYE sent or received, ACK never came,
 *        flow closed                        408/481 to a request in it, flow closed ──> terminated
 * ```
 * A dialog starts early: for a call this server answers, from the moment it picks its To tag;
 * for a call it places, once a 2xx names the far end's tag. `terminated` is final.
 */
export type DialogState = "early" | "confirmed" | "terminated";

const ALLOWED: Record<DialogState, readonly DialogState[]> = {
  early: ["confirmed", "terminated"],
  confirmed: ["terminated"],
  terminated: [],
};

export interface DialogStateChange {
  from: DialogState;
  to: DialogState;
  /** Milliseconds since the Unix epoch, from the injected clock. */
  at: number;
  /** Why: "bye", "cancel", "rejected 486", "ack timeout", "flow closed" ... */
  reason: string;
}

export class IllegalDialogTransition extends Error {
  override name = "IllegalDialogTransition";
}

export class DialogStateMachine {
  #state: DialogState = "early";
  readonly #clock: TimeReader;
  readonly #onChange: (change: DialogStateChange) => void;

  constructor(clock: TimeReader, onChange: (change: DialogStateChange) => void) {
    this.#clock = clock;
    this.#onChange = onChange;
  }

  get state(): DialogState {
    return this.#state;
  }

  canMoveTo(to: DialogState): boolean {
    return ALLOWED[this.#state].includes(to);
  }

  /** Moves to `to`; throws IllegalDialogTransition when the diagram has no such arrow. */
  transition(to: DialogState, reason: string): DialogStateChange {
    if (!this.canMoveTo(to)) throw new IllegalDialogTransition(`dialog cannot go from ${this.#state} to ${to} (${reason})`);
    const change: DialogStateChange = { from: this.#state, to, at: this.#clock.now(), reason };
    this.#state = to;
    this.#onChange(change);
    return change;
  }
}
