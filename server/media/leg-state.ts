// The life of a media leg as an explicit state machine: every change goes through one function
// that checks it, stamps the time from the injected clock and reports it once.

import type { TimeReader } from "../clock.js";

/**
 * ```
 *   new ──createOffer / acceptOffer──> negotiating ──ICE + DTLS up──> connected
 *    │                                     │                             │
 *    └───────────── close, failure or connect timeout ──────────────────┴──> closed
 * ```
 * Re-negotiation (hold, unhold, a remote re-offer) happens inside `connected`; `closed` is final.
 */
export type LegState = "new" | "negotiating" | "connected" | "closed";

const ALLOWED: Record<LegState, readonly LegState[]> = {
  new: ["negotiating", "closed"],
  negotiating: ["connected", "closed"],
  connected: ["closed"],
  closed: [],
};

export interface LegStateChange {
  from: LegState;
  to: LegState;
  /** Milliseconds since the Unix epoch, from the injected clock. */
  at: number;
  /** Why the leg closed: "hangup", "ice failed", "connect timeout" ... */
  reason?: string;
}

export class IllegalLegTransition extends Error {
  override name = "IllegalLegTransition";
}

export class LegStateMachine {
  #state: LegState = "new";
  readonly #clock: TimeReader;
  readonly #onChange: (change: LegStateChange) => void;

  constructor(clock: TimeReader, onChange: (change: LegStateChange) => void) {
    this.#clock = clock;
    this.#onChange = onChange;
  }

  get state(): LegState {
    return this.#state;
  }

  canMoveTo(to: LegState): boolean {
    return ALLOWED[this.#state].includes(to);
  }

  /** Moves to `to`; throws IllegalLegTransition when the diagram has no such arrow. */
  transition(to: LegState, reason?: string): LegStateChange {
    if (!this.canMoveTo(to)) throw new IllegalLegTransition(`leg cannot go from ${this.#state} to ${to}`);
    const change: LegStateChange = { from: this.#state, to, at: this.#clock.now(), ...(reason === undefined ? {} : { reason }) };
    this.#state = to;
    this.#onChange(change);
    return change;
  }
}
