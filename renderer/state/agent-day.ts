// A recipient's day as it stands now: the server counted the figures when it was read (`asOf`),
// and the state in progress has gone on since, so its time (and, outside Away, occupancy) grows
// on screen between reads with the same rule the server counts by.
import { DAY_STATES, type DayState, type RecipientDay } from "../api/callq.js";

export interface LiveDay {
  /** Seconds in each state now. */
  timeInState: Record<DayState, number>;
  /** Seconds Away by reason now (null: no reason given). */
  awayByReason: { reason: string | null; seconds: number }[];
  /** Percent on calls and wrap-up of the time signed in and not Away; null with no such time. */
  occupancy: number | null;
  /** Seconds in the state in progress; null when logged out. */
  currentSeconds: number | null;
}

export function liveDay(day: RecipientDay, now: number): LiveDay {
  const current = day.current;
  const elapsed = current === null ? 0 : Math.max(0, now - day.asOf) / 1000;
  const timeInState = { ...day.timeInState };
  let awayByReason = day.awayByReason;
  if (current !== null) {
    timeInState[current.state] += elapsed;
    if (current.state === "Away") {
      const known = awayByReason.some((a) => a.reason === current.awayReason);
      awayByReason = known
        ? awayByReason.map((a) => (a.reason === current.awayReason ? { ...a, seconds: a.seconds + elapsed } : a))
        : [...awayByReason, { reason: current.awayReason, seconds: elapsed }];
    }
  }
  // Away time is outside occupancy: while Away (or logged out) it stands as the server said.
  const occupancy = current === null || current.state === "Away" ? day.occupancy : occupancyOf(timeInState);
  return { timeInState, awayByReason, occupancy, currentSeconds: current === null ? null : Math.max(0, now - current.since) / 1000 };
}

function occupancyOf(time: Record<DayState, number>): number | null {
  const working = DAY_STATES.filter((s) => s !== "Away").reduce((sum, s) => sum + time[s], 0);
  const handling = time["On-A-Call"] + time["Wrapup-Time"];
  return working <= 0 ? null : Math.round((1000 * handling) / working) / 10;
}

/** Milliseconds from `now` to the next local midnight, when the server starts a new day. */
export function untilNextDay(now: number): number {
  const midnight = new Date(now);
  midnight.setHours(24, 0, 0, 0);
  return midnight.getTime() - now;
}
