// How much one SIP connection may send: a token bucket per socket, since a WebSocket has no flow
// control of its own above TCP and every message costs parsing time on the one main thread. A
// flood or a stream of junk on one socket then cannot take the server's time from the others.

export interface BudgetOptions {
  /** Tokens added per second. */
  ratePerS: number;
  /** Most tokens held: what a quiet connection may send at once. */
  burst: number;
  /** Tokens a new connection starts with; `burst` unless told. */
  initial?: number;
  /** Tokens a malformed message costs on top of its one: parsing it is most of a flood's cost. */
  malformedCost: number;
  /** Messages dropped for want of tokens within one abuse window that close the connection. */
  closeAfterDrops: number;
  abuseWindowMs: number;
  /** Monotonic milliseconds. */
  now(): number;
}

/** What becomes of one arriving message: handled, dropped unread, or the connection closed. */
export type Admission = "take" | "drop" | "close";

/**
 * A SIP UA sends a few messages a call (INVITE, ACK, its answers to ours, INFO per DTMF digit,
 * BYE) and one REGISTER every few minutes: 10 a second with bursts of 40 is far above that, and
 * holds 8 flooding sockets to about 80 parsed messages a second (each 1-4 ms of sip.js's parser).
 * A socket dropping 50 a second for 10 s is closed: sooner would let a flooder reconnect for a
 * fresh burst more often than the rate alone allows it.
 */
export const DEFAULT_BUDGET: Omit<BudgetOptions, "now"> = {
  ratePerS: 10,
  burst: 40,
  malformedCost: 4,
  closeAfterDrops: 500,
  abuseWindowMs: 10_000,
};

export class MessageBudget {
  readonly #options: BudgetOptions;
  #tokens: number;
  #refilledAt: number;
  #drops = 0;
  #windowStart: number;

  constructor(options: BudgetOptions) {
    this.#options = options;
    this.#tokens = options.initial ?? options.burst;
    this.#refilledAt = options.now();
    this.#windowStart = this.#refilledAt;
  }

  /** Takes one token for an arriving message, or says to drop it, or to end a persistent abuser. */
  admit(): Admission {
    const now = this.#refill();
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return "take";
    }
    if (now - this.#windowStart >= this.#options.abuseWindowMs) {
      this.#windowStart = now;
      this.#drops = 0;
    }
    this.#drops++;
    return this.#drops > this.#options.closeAfterDrops ? "close" : "drop";
  }

  /** Charges a malformed message's extra cost; the bucket may go into debt, repaid by waiting. */
  malformed(): void {
    this.#tokens -= this.#options.malformedCost;
  }

  #refill(): number {
    const now = this.#options.now();
    const elapsedS = Math.max(0, now - this.#refilledAt) / 1000;
    this.#tokens = Math.min(this.#options.burst, this.#tokens + elapsedS * this.#options.ratePerS);
    this.#refilledAt = now;
    return now;
  }
}
