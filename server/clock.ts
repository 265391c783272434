// The injectable clock and random source. Every layer that reads the time, waits or draws random
// bytes takes them from here, so tests and the training simulator can run time by hand or fast
// and ids can be reproduced. Audio is the one exception: media/frame-clock.ts keeps real time.
import { randomBytes } from "node:crypto";

/** Takes a timer back; a no-op once it ran. */
export type Cancel = () => void;

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once, `ms` from now. */
  after(ms: number, fn: () => void): Cancel;
  /** Runs `fn` every `ms` from now on. */
  every(ms: number, fn: () => void): Cancel;
}

/** What a part that only reads the time takes: it never waits. */
export type TimeReader = Pick<Clock, "now">;

export interface RandomSource {
  /** `n` random bytes. */
  bytes(n: number): Buffer;
}

/** Node's timers take at most this (about 24.8 days); a longer wait is chained. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Real time. Timers are unref'd: the server's sockets keep the process up, and a pending timeout
 * must never hold back an exit.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    let cancelled = false;
    let timer: NodeJS.Timeout;
    const wait = (left: number): void => {
      const step = Math.min(Math.max(0, left), LONGEST_TIMER_MS);
      timer = setTimeout(() => {
        if (cancelled) return;
        if (left > step) wait(left - step);
        else fn();
      }, step);
      timer.unref();
    };
    wait(ms);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  },
  every(ms, fn) {
    const timer = setInterval(fn, Math.min(Math.max(1, ms), LONGEST_TIMER_MS));
    timer.unref();
    return () => clearInterval(timer);
  },
};

/**
 * Real elapsed time on a monotonic scale, for the guards against a peer (read and flood budgets):
 * a peer's bandwidth is real, so a paused or fast server clock must neither starve nor loosen them.
 */
export const monotonic: TimeReader = { now: () => performance.now() };

/** Bytes fetched from the system's generator at once, as randomUUID pools them: one call per many ids. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let pooled = 0;

/**
 * Crypto-strength bytes: API keys and passwords are drawn from it, so it must stay so. Small
 * draws come out of a pool (each byte handed out once, copied), as a request id per request
 * would otherwise cost a call into the generator each.
 */
export const systemRandom: RandomSource = {
  bytes(n) {
    if (n > POOL_BYTES / 8) return randomBytes(n);
    if (pooled + n > pool.length) {
      pool = randomBytes(POOL_BYTES);
      pooled = 0;
    }
    const out = Buffer.from(pool.subarray(pooled, pooled + n));
    pooled += n;
    return out;
  },
};

/** A version 4 UUID (RFC 9562) drawn from `random`. */
export function randomUuid(random: RandomSource): string {
  const b = random.bytes(16);
  b.writeUInt8(((b[6] ?? 0) & 0x0f) | 0x40, 6);
  b.writeUInt8(((b[8] ?? 0) & 0x3f) | 0x80, 8);
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Seconds between 0000-01-01 (Gregorian, as Kazoo counts) and 1970-01-01. */
export const GREGORIAN_OFFSET_S = 62167219200;

export function toGregorianSeconds(unixMs: number): number {
  return Math.floor(unixMs / 1000) + GREGORIAN_OFFSET_S;
}

export function fromGregorianSeconds(gregorian: number): number {
  return (gregorian - GREGORIAN_OFFSET_S) * 1000;
}
