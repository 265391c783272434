// Slows failed logins without ever locking the right password out.
//
// Failures are counted under the identity the login resolves to (the account, or the normalised
// text of an identity that resolves to nothing), whatever spelling or client they came from.
// After FREE_FAILURES in a row the identity is in back-off: each wrong attempt during it is
// answered 429 with Retry-After and pushes the back-off further (doubling up to MAX_WAIT_MS), but
// the credentials are still checked, so the right password logs in at once. Every local client
// is 127.0.0.1, so nothing tells the agent's console from another process on the machine; a
// gate that refused before checking would let any such process lock the agent out.
//
// A source that can be told apart (any address but loopback) is also gated on its own:
// once it has failed FREE_FAILURES times on an identity, its attempts on that identity are
// refused before the credentials are looked at, until its back-off is over. That caps how fast a
// remote client guesses without touching anyone else's logins.
import type { TimeReader } from "../clock.js";

const FREE_FAILURES = 5;
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 30_000;
const FORGET_AFTER_MS = 15 * 60_000;
const MAX_KEYS = 10_000;

interface Entry {
  failures: number;
  lastFailure: number;
  blockedUntil: number;
}

/** Who a login attempt is for and where it came from. */
export interface LoginAttempt {
  /** The throttle key of the identity, from identityKey(). */
  identity: string;
  /** The client's address as the HTTP layer sees it. */
  source: string;
}

export class LoginThrottle {
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly clock: TimeReader) {}

  /**
   * Milliseconds a distinguishable source must still wait before its attempt on this identity is
   * even checked; 0 for loopback, which is never refused unchecked.
   */
  sourceWait(attempt: LoginAttempt): number {
    const key = sourceKey(attempt);
    return key === null ? 0 : this.#wait(key);
  }

  /** Milliseconds of back-off left on the identity; a wrong attempt during it is answered 429. */
  identityWait(attempt: LoginAttempt): number {
    return this.#wait(attempt.identity);
  }

  failed(attempt: LoginAttempt): void {
    this.#fail(attempt.identity);
    const key = sourceKey(attempt);
    if (key !== null) this.#fail(key);
  }

  /** The right password clears the identity's count and the source's. */
  succeeded(attempt: LoginAttempt): void {
    this.#entries.delete(attempt.identity);
    const key = sourceKey(attempt);
    if (key !== null) this.#entries.delete(key);
  }

  #wait(key: string): number {
    const e = this.#entries.get(key);
    if (!e) return 0;
    const now = this.clock.now();
    if (now - e.lastFailure > FORGET_AFTER_MS) {
      this.#entries.delete(key);
      return 0;
    }
    return Math.max(0, e.blockedUntil - now);
  }

  #fail(key: string): void {
    const now = this.clock.now();
    const e = this.#entries.get(key) ?? { failures: 0, lastFailure: now, blockedUntil: 0 };
    if (now - e.lastFailure > FORGET_AFTER_MS) e.failures = 0;
    e.failures++;
    e.lastFailure = now;
    if (e.failures >= FREE_FAILURES) {
      e.blockedUntil = now + Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(30, e.failures - FREE_FAILURES));
    }
    this.#entries.delete(key);
    this.#entries.set(key, e);
    // Bounded memory under a spray of identities: forget the oldest.
    if (this.#entries.size > MAX_KEYS) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}

/** What a phone_number login is looked up by: its digits and a leading +, as the lookup does. */
export function phoneDigits(phoneNumber: string): string {
  return phoneNumber.replace(/[^\d+]/g, "");
}

/**
 * The throttle key of a login: the account it resolves to, else what it names, normalised as
 * the lookup normalises it (names and realms lowercased, numbers reduced to their digits), so
 * every spelling the lookup treats as one identity is one key.
 */
export function identityKey(login: { account_name?: string; account_realm?: string; phone_number?: string }, accountId: string | undefined): string {
  if (accountId !== undefined) return `account:${accountId}`;
  if (login.account_name !== undefined) return `name:${login.account_name.toLowerCase()}`;
  if (login.account_realm !== undefined) return `realm:${login.account_realm.toLowerCase()}`;
  return `number:${phoneDigits(login.phone_number ?? "")}`;
}

/** Loopback addresses, IPv4-mapped included: every local process shares them. */
export function isLoopback(address: string): boolean {
  const plain = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  return plain === "::1" || plain.startsWith("127.");
}

function sourceKey(attempt: LoginAttempt): string | null {
  return isLoopback(attempt.source) ? null : `source:${attempt.source}|${attempt.identity}`;
}
