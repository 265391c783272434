// Slows repeated failed logins from one client: after FREE_FAILURES failures in a row, each
// further attempt must wait a back-off that doubles up to MAX_WAIT_MS (answered 429 with
// Retry-After). A success clears the client; other clients are never affected, and nobody is
// locked out for longer than the cap.
import type { Clock } from "../clock.js";

const FREE_FAILURES = 5;
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 30_000;
const FORGET_AFTER_MS = 15 * 60_000;
const MAX_CLIENTS = 10_000;

interface Entry {
  failures: number;
  lastFailure: number;
  blockedUntil: number;
}

export class LoginThrottle {
  readonly #clients = new Map<string, Entry>();

  constructor(private readonly clock: Clock) {}

  /** Milliseconds the client must still wait, 0 when it may try now. */
  waitFor(client: string): number {
    const e = this.#clients.get(client);
    if (!e) return 0;
    const now = this.clock.now();
    if (now - e.lastFailure > FORGET_AFTER_MS) {
      this.#clients.delete(client);
      return 0;
    }
    return Math.max(0, e.blockedUntil - now);
  }

  failed(client: string): void {
    const now = this.clock.now();
    const e = this.#clients.get(client) ?? { failures: 0, lastFailure: now, blockedUntil: 0 };
    e.failures++;
    e.lastFailure = now;
    if (e.failures >= FREE_FAILURES) {
      e.blockedUntil = now + Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (e.failures - FREE_FAILURES));
    }
    this.#clients.delete(client);
    this.#clients.set(client, e);
    // Bounded memory under a spray of clients: forget the oldest.
    if (this.#clients.size > MAX_CLIENTS) {
      const oldest = this.#clients.keys().next().value;
      if (oldest !== undefined) this.#clients.delete(oldest);
    }
  }

  succeeded(client: string): void {
    this.#clients.delete(client);
  }
}
