// The API's timestamps are Gregorian seconds (Kazoo's): seconds since 1 January 0000, which is
// 62,167,219,200 s before the Unix epoch. The console's one copy of the server's rule
// (server/clock.ts, which the page cannot import: it needs Node); a unit test holds them equal.

export const GREGORIAN_OFFSET_S = 62_167_219_200;

export function toGregorianSeconds(ms: number): number {
  return Math.floor(ms / 1000) + GREGORIAN_OFFSET_S;
}

export function fromGregorianSeconds(seconds: number): number {
  return (seconds - GREGORIAN_OFFSET_S) * 1000;
}

/** Gregorian seconds to epoch ms; 0 (the API's "never") stays 0. */
export function gregorianToMs(seconds: number): number {
  return seconds > 0 ? fromGregorianSeconds(seconds) : 0;
}
