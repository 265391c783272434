// A queue's figures per 15-minute interval of the server's local time: the arithmetic only (which
// interval a moment falls in, the figures of one, their sums and ratios). Every figure of a
// session is counted in the interval it entered the queue in, whenever it happens (an answer, a
// hang-up, the end of the call), so an interval's figures describe the callers who arrived in it
// and a day's figures are the sum of its intervals, as CDRs counted by their start would be.

export const INTERVAL_MS = 15 * 60_000;
/** Intervals in a day without a daylight-saving change. */
export const INTERVALS_PER_DAY = 96;

export interface IntervalFigures {
  /** Sessions that joined the queue. */
  offered: number;
  /** Sessions an agent answered. */
  answered: number;
  /** Sessions whose caller hung up while waiting. */
  abandoned: number;
  /** Sessions that waited longer than the queue's timeout. */
  timed_out: number;
  /** Answered within the queue's service-level threshold. */
  answered_within: number;
  /** Abandoned within the threshold (shown beside the service level, which counts them as missed). */
  abandoned_within: number;
  /** Seconds waited by the sessions that stopped waiting (answered, abandoned or timed out). */
  wait_sum: number;
  /** Seconds waited by the answered sessions. */
  answered_wait_sum: number;
  /** Answered calls that have ended. */
  handled: number;
  /** Seconds from answer to hang-up of the handled calls. */
  handle_sum: number;
  /** Offers an agent let go (rejected, rung out, no device). */
  missed_offers: number;
  /** Callers who asked to be called back (local addition): counted apart from the service level. */
  callbacks_requested: number;
  /** Callbacks whose caller answered the server's call. */
  callbacks_connected: number;
  /** Callbacks given up after their last failed attempt. */
  callbacks_failed: number;
}

export const FIGURE_NAMES = [
  "offered",
  "answered",
  "abandoned",
  "timed_out",
  "answered_within",
  "abandoned_within",
  "wait_sum",
  "answered_wait_sum",
  "handled",
  "handle_sum",
  "missed_offers",
  "callbacks_requested",
  "callbacks_connected",
  "callbacks_failed",
] as const satisfies readonly (keyof IntervalFigures)[];

/** One queue's figures in one interval. */
export interface QueueInterval extends IntervalFigures {
  queue_id: string;
  /** Unix ms of the interval's start, a local 15-minute border. */
  start: number;
}

export function emptyFigures(): IntervalFigures {
  return { offered: 0, answered: 0, abandoned: 0, timed_out: 0, answered_within: 0, abandoned_within: 0, wait_sum: 0, answered_wait_sum: 0, handled: 0, handle_sum: 0, missed_offers: 0, callbacks_requested: 0, callbacks_connected: 0, callbacks_failed: 0 };
}

/** Adds `from` into `into`. */
export function addFigures(into: IntervalFigures, from: IntervalFigures): IntervalFigures {
  for (const name of FIGURE_NAMES) into[name] += from[name];
  return into;
}

/** The start of the local 15-minute interval `t` (Unix ms) falls in. */
export function intervalStart(t: number): number {
  const d = new Date(t);
  d.setMinutes(Math.floor(d.getMinutes() / 15) * 15, 0, 0);
  return d.getTime();
}

/** The local date of `t` (Unix ms), YYYY-MM-DD. */
export function dayOf(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The local time of day of `t` (Unix ms), HH:MM. */
export function timeOf(t: number): string {
  const d = new Date(t);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Local midnight starting `day` (YYYY-MM-DD) and the next one, Unix ms; undefined for no such date. */
export function dayBounds(day: string): { start: number; end: number } | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const [year, month, date] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const start = new Date(year, month - 1, date);
  if (start.getFullYear() !== year || start.getMonth() !== month - 1 || start.getDate() !== date) return undefined;
  return { start: start.getTime(), end: new Date(year, month - 1, date + 1).getTime() };
}

/** Every interval start of the local day `day` in order (92 to 100 of them across a clock change). */
export function dayIntervals(day: string): number[] {
  const bounds = dayBounds(day);
  if (!bounds) return [];
  const out: number[] = [];
  for (let t = bounds.start; t < bounds.end; t += INTERVAL_MS) out.push(intervalStart(t));
  return [...new Set(out)];
}

/** Sessions that stopped waiting: the denominator of the service level and abandonment rate. */
export function finished(f: IntervalFigures): number {
  return f.answered + f.abandoned + f.timed_out;
}

/**
 * Percent answered within the threshold of the sessions that stopped waiting (answered, abandoned
 * or timed out: a caller who hung up within the threshold counts as not answered in time); null
 * with none yet.
 */
export function serviceLevel(f: IntervalFigures): number | null {
  const n = finished(f);
  return n === 0 ? null : round((100 * f.answered_within) / n);
}

/** Percent abandoned of the sessions that stopped waiting; null with none yet. */
export function abandonmentRate(f: IntervalFigures): number | null {
  const n = finished(f);
  return n === 0 ? null : round((100 * f.abandoned) / n);
}

/** Average speed of answer: the answered sessions' average wait, seconds (0 with none). */
export function averageSpeedOfAnswer(f: IntervalFigures): number {
  return f.answered === 0 ? 0 : round(f.answered_wait_sum / f.answered);
}

/** Average handle time of the calls that ended, seconds (0 with none). */
export function averageHandleTime(f: IntervalFigures): number {
  return f.handled === 0 ? 0 : round(f.handle_sum / f.handled);
}

/** Average wait of every session that stopped waiting, seconds (0 with none). */
export function averageWait(f: IntervalFigures): number {
  const n = finished(f);
  return n === 0 ? 0 : round(f.wait_sum / n);
}

/**
 * Mean patience, seconds, estimated as the waits of every session that stopped waiting over the
 * abandoned ones (the answered and timed-out waits are patience not yet run out: exponential
 * patience's estimate with censored waits); undefined without an abandonment to go by.
 */
export function meanPatience(f: IntervalFigures): number | undefined {
  return f.abandoned === 0 ? undefined : f.wait_sum / f.abandoned;
}

export function round(n: number): number {
  return Math.round(n * 10) / 10;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
