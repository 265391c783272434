// The injectable clock and random source. Every layer takes time and randomness from here,
// so tests and the training simulator can run time fast and ids can be reproduced.
import { randomBytes } from "node:crypto";

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export interface RandomSource {
  /** `n` random bytes. */
  bytes(n: number): Buffer;
}

export const systemClock: Clock = { now: () => Date.now() };
export const systemRandom: RandomSource = { bytes: (n) => randomBytes(n) };

/** Seconds between 0000-01-01 (Gregorian, as Kazoo counts) and 1970-01-01. */
export const GREGORIAN_OFFSET_S = 62167219200;

export function toGregorianSeconds(unixMs: number): number {
  return Math.floor(unixMs / 1000) + GREGORIAN_OFFSET_S;
}

export function fromGregorianSeconds(gregorian: number): number {
  return (gregorian - GREGORIAN_OFFSET_S) * 1000;
}
