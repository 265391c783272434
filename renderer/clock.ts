// The clock the console reads time and schedules through: the page's own in the app, a hand-driven
// one in tests, so timers, back-off and call durations can be checked without waiting.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` after `ms`; the answer cancels it. */
  after(ms: number, callback: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, callback) {
    const handle = setTimeout(callback, ms);
    return () => clearTimeout(handle);
  },
};

/**
 * Exponential back-off with jitter for reconnecting: about 1, 2, 4 ... seconds up to `maxMs`,
 * each drawn from [half, whole] so many consoles cut off together do not return together.
 */
export function backoffDelay(attempt: number, random: () => number, baseMs = 1000, maxMs = 30_000): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
