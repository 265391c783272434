// One recipient's figures per local day of the server's clock (the agent's own day, and the
// board's row): calls handled, handle time, offers and missed offers, and the time spent in each
// availability state, Away split by reason. Time is counted as it passes and split at local
// midnight, so a state held across midnight counts in both days; a call, a missed offer and a
// handle time count on the day they end. Not-Logged-In is no working time and counts nowhere.
// Each change marks its day for the engine to hand to the day ledger; on start the stored days
// seed it, so a restart keeps the day so far.
import { toGregorianSeconds } from "../clock.js";
import { dayBounds, dayOf, round } from "./intervals.js";
import type { AvailabilityState } from "./recipient-state.js";

/** The states whose time a day counts: every state of a signed-in recipient. */
export const COUNTED_STATES = ["Ready", "Call-Offer", "On-A-Call", "Wrapup-Time", "Away"] as const;
export type CountedState = (typeof COUNTED_STATES)[number];

/** The states that are work on a call: their time is handle time, and occupancy's numerator. */
const HANDLING: readonly CountedState[] = ["On-A-Call", "Wrapup-Time"];

/** One recipient's figures of one local day; times in milliseconds. */
export interface RecipientDay {
  recipient_id: string;
  /** YYYY-MM-DD, the local date. */
  day: string;
  /** Queue calls the recipient answered whose talk ended this day. */
  calls_handled: number;
  /** Talk and wrap-up of those calls, each part counted whole on the day it ended. */
  handle_ms: number;
  /** Offers made to the recipient. */
  offers: number;
  /** Offers the recipient let go: rejected, rung out, or no device to ring. */
  missed_offers: number;
  /** Time in each state this day (the part of a state held across midnight that fell in it). */
  state_ms: Record<CountedState, number>;
  /** Away time by reason; "" for Away without one. */
  away_ms: Record<string, number>;
}

/** The state held now, counted up to `counted` (Unix ms); `since` is when it began. */
interface Held {
  state: CountedState;
  reason: string;
  since: number;
  counted: number;
}

/** What the API shows of one day (seconds, percent); `current` only for the day in progress. */
export interface RecipientDayView {
  recipient_id: string;
  day: string;
  calls_handled: number;
  /** Seconds of talk and wrap-up of the calls handled. */
  handle_time: number;
  /** handle_time ÷ calls_handled; 0 with none. */
  average_handle_time: number;
  offers: number;
  missed_offers: number;
  /** Seconds in each state, the state in progress counted up to `as_of`. */
  time_in_state: Record<CountedState, number>;
  /** Seconds Away by reason (null: Away without one), longest first. */
  away_by_reason: { reason: string | null; seconds: number }[];
  /** Seconds signed in (every state above but Not-Logged-In). */
  signed_in_time: number;
  /** Percent: on a call or in wrap-up over signed in and not Away; null with no such time. */
  occupancy: number | null;
  /** The state in progress, its reason, since when (Gregorian seconds) and for how long. */
  current: { state: CountedState; away_reason?: string; since: number; seconds: number } | null;
  /** Gregorian seconds the figures were taken at. */
  as_of: number;
}

/** Days kept in memory before the newest; older ones live only in the ledger. */
const KEEP_DAYS = 2;

export function emptyDay(recipientId: string, day: string): RecipientDay {
  return {
    recipient_id: recipientId,
    day,
    calls_handled: 0,
    handle_ms: 0,
    offers: 0,
    missed_offers: 0,
    state_ms: { Ready: 0, "Call-Offer": 0, "On-A-Call": 0, "Wrapup-Time": 0, Away: 0 },
    away_ms: {},
  };
}

function copyDay(d: RecipientDay): RecipientDay {
  return { ...d, state_ms: { ...d.state_ms }, away_ms: { ...d.away_ms } };
}

export function isCountedState(state: string): state is CountedState {
  return (COUNTED_STATES as readonly string[]).includes(state);
}

export class RecipientDays {
  readonly #recipientId: string;
  readonly #days = new Map<string, RecipientDay>();
  readonly #dirty = new Set<string>();
  #held: Held | undefined;

  constructor(recipientId: string) {
    this.#recipientId = recipientId;
  }

  /** Stored days read back at start; a day already counted in memory is not replaced. */
  seed(stored: readonly RecipientDay[]): void {
    for (const day of stored) if (day.recipient_id === this.#recipientId && !this.#days.has(day.day)) this.#days.set(day.day, copyDay(day));
  }

  /**
   * The recipient is in `state` (Away with `reason`, if any) at `now`: the state held so far is
   * counted up to now and, when this is another state or reason, ends there.
   */
  observe(state: AvailabilityState, reason: string | undefined, now: number): void {
    const next = isCountedState(state) ? { state, reason: state === "Away" ? (reason ?? "") : "" } : undefined;
    const held = this.#held;
    if (held && next && held.state === next.state && held.reason === next.reason) return;
    if (held) {
      this.#countTo(held, now);
      if (HANDLING.includes(held.state)) this.#day(now).handle_ms += now - held.since;
    }
    this.#held = next ? { ...next, since: now, counted: now } : undefined;
  }

  offered(now: number): void {
    this.#day(now).offers += 1;
  }

  offerMissed(now: number): void {
    this.#day(now).missed_offers += 1;
  }

  callHandled(now: number): void {
    this.#day(now).calls_handled += 1;
  }

  /** Counts the state held up to `now` (at a stop, so its time so far reaches the ledger). */
  countTo(now: number): void {
    if (this.#held) this.#countTo(this.#held, now);
  }

  /** The figures of the local day `day` at `now`, the state in progress counted up to now; undefined for a day not in memory. */
  view(day: string, now: number): RecipientDayView | undefined {
    const stored = this.#days.get(day);
    const today = dayOf(now) === day;
    if (!stored && !today) return undefined;
    const figures = copyDay(stored ?? emptyDay(this.#recipientId, day));
    const held = this.#held;
    if (held && held.counted < now) {
      const part = splitByDay(held.counted, now).find((p) => p.day === day);
      if (part) add(figures, held, part.ms);
    }
    return dayView(figures, today && held ? held : undefined, now);
  }

  /** The days changed since the last call, for the ledger. */
  takeChanged(): RecipientDay[] {
    const out: RecipientDay[] = [];
    for (const day of this.#dirty) {
      const figures = this.#days.get(day);
      if (figures) out.push(copyDay(figures));
    }
    this.#dirty.clear();
    return out;
  }

  #countTo(held: Held, now: number): void {
    for (const part of splitByDay(held.counted, now)) add(this.#dayNamed(part.day), held, part.ms);
    held.counted = Math.max(held.counted, now);
  }

  #day(now: number): RecipientDay {
    return this.#dayNamed(dayOf(now));
  }

  #dayNamed(day: string): RecipientDay {
    let figures = this.#days.get(day);
    if (!figures) {
      figures = emptyDay(this.#recipientId, day);
      this.#days.set(day, figures);
      this.#forgetOld(day);
    }
    this.#dirty.add(day);
    return figures;
  }

  #forgetOld(newest: string): void {
    const days = [...this.#days.keys()].sort();
    const keepFrom = days.indexOf(newest) - KEEP_DAYS;
    for (const day of days.slice(0, Math.max(0, keepFrom))) if (!this.#dirty.has(day)) this.#days.delete(day);
  }
}

function add(figures: RecipientDay, held: Pick<Held, "state" | "reason">, ms: number): void {
  figures.state_ms[held.state] += ms;
  if (held.state === "Away") figures.away_ms[held.reason] = (figures.away_ms[held.reason] ?? 0) + ms;
}

/** The time from `from` to `to` (Unix ms) cut at local midnights, per local day. */
function splitByDay(from: number, to: number): { day: string; ms: number }[] {
  const out: { day: string; ms: number }[] = [];
  let t = from;
  while (t < to) {
    const day = dayOf(t);
    const end = Math.min(to, dayBounds(day)?.end ?? to);
    out.push({ day, ms: end - t });
    t = end;
  }
  return out;
}

/** A day's figures as the API shows them; `held` is the state in progress (today only). */
export function dayView(figures: RecipientDay, held: Pick<Held, "state" | "reason" | "since"> | undefined, now: number): RecipientDayView {
  const s = (ms: number): number => round(ms / 1000);
  const time = Object.fromEntries(COUNTED_STATES.map((state) => [state, s(figures.state_ms[state])])) as Record<CountedState, number>;
  const signedIn = COUNTED_STATES.reduce((sum, state) => sum + figures.state_ms[state], 0);
  const working = signedIn - figures.state_ms.Away;
  const handling = HANDLING.reduce((sum, state) => sum + figures.state_ms[state], 0);
  return {
    recipient_id: figures.recipient_id,
    day: figures.day,
    calls_handled: figures.calls_handled,
    handle_time: s(figures.handle_ms),
    average_handle_time: figures.calls_handled === 0 ? 0 : s(figures.handle_ms / figures.calls_handled),
    offers: figures.offers,
    missed_offers: figures.missed_offers,
    time_in_state: time,
    away_by_reason: Object.entries(figures.away_ms)
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([reason, ms]) => ({ reason: reason === "" ? null : reason, seconds: s(ms) })),
    signed_in_time: s(signedIn),
    occupancy: working <= 0 ? null : round((100 * handling) / working),
    current: held
      ? { state: held.state, ...(held.reason !== "" ? { away_reason: held.reason } : {}), since: toGregorianSeconds(held.since), seconds: s(now - held.since) }
      : null,
    as_of: toGregorianSeconds(now),
  };
}
