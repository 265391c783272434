// A queue's alerts (local addition, issue 20): what a supervisor should look at now. A pure
// function of the queue, its members and the recent service at one moment of the engine's clock;
// the engine keeps the set it last published and sends `fire` and `clear` for each change.
import { toGregorianSeconds } from "../clock.js";
import type { Queue } from "./queue.js";
import type { Recipient } from "./recipient.js";
import type { AvailabilityState } from "./recipient-state.js";

/** The states a member may be held to a limit in (Not-Logged-In is no state on the floor). */
export const ALERT_STATES = ["Ready", "Away", "Call-Offer", "On-A-Call", "Wrapup-Time"] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/** Bounds of every alert's seconds: a day at most, as the recent service kept in memory. */
export const ALERT_BOUNDS = { min: 1, max: 86_400 } as const;

export interface AlertConfig {
  /** Service level over the sessions that stopped waiting in the last this many seconds. */
  serviceLevelWindowS?: number;
  /** Longest current wait above this many seconds. */
  longestWaitS?: number;
  /** Per state: a member in it longer than this many seconds. */
  stateLimits: Partial<Record<AlertState, number>>;
}

export type AlertKind = "service_level" | "longest_wait" | "state_too_long";

export interface ActiveAlert {
  kind: AlertKind;
  queue_id: string;
  /** The member an alert of kind state_too_long is about. */
  recipient_id?: string;
  availability_state?: AlertState;
  /** The figure when the alert fired: percent for service_level, seconds otherwise. */
  value: number;
  /** The limit crossed: the target percent for service_level, seconds otherwise. */
  limit: number;
  /** Gregorian seconds when the alert fired. */
  since: number;
}

/** One session's end of waiting, for the service level over a window. */
export interface StoppedWaiting {
  /** Unix ms. */
  at: number;
  answeredInTime: boolean;
}

/** The key an alert keeps while it holds: a new figure of the same alert is no new alert. */
export function alertKey(alert: Pick<ActiveAlert, "kind" | "recipient_id">): string {
  return alert.recipient_id === undefined ? alert.kind : `${alert.kind}:${alert.recipient_id}`;
}

/** Reads the stored `alerts` defensively: a field out of bounds or of another type is no alert. */
export function alertConfigOf(value: unknown): AlertConfig {
  const given = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const limits = typeof given.state_limits === "object" && given.state_limits !== null ? (given.state_limits as Record<string, unknown>) : {};
  const stateLimits: Partial<Record<AlertState, number>> = {};
  for (const state of ALERT_STATES) {
    const s = seconds(limits[state]);
    if (s !== undefined) stateLimits[state] = s;
  }
  const config: AlertConfig = { stateLimits };
  const window = seconds(given.service_level_window_s);
  if (window !== undefined) config.serviceLevelWindowS = window;
  const wait = seconds(given.longest_wait_s);
  if (wait !== undefined) config.longestWaitS = wait;
  return config;
}

function seconds(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= ALERT_BOUNDS.min && value <= ALERT_BOUNDS.max ? value : undefined;
}

export function hasAlerts(config: AlertConfig): boolean {
  return config.serviceLevelWindowS !== undefined || config.longestWaitS !== undefined || Object.keys(config.stateLimits).length > 0;
}

/**
 * The alerts that hold for `queue` at `now` (Unix ms). `stopped`: the queue's sessions that
 * stopped waiting lately, oldest first. An alert already in `active` keeps its figure and `since`.
 */
export function evaluateAlerts(
  queue: Queue,
  recipients: ReadonlyMap<string, Recipient>,
  stopped: readonly StoppedWaiting[],
  now: number,
  active: ReadonlyMap<string, ActiveAlert> = new Map(),
): ActiveAlert[] {
  const { alerts, serviceLevelTarget } = queue.config;
  const out: ActiveAlert[] = [];
  const hold = (alert: Omit<ActiveAlert, "since" | "queue_id">): void => {
    out.push(active.get(alertKey(alert)) ?? { ...alert, queue_id: queue.id, since: toGregorianSeconds(now) });
  };
  if (alerts.serviceLevelWindowS !== undefined) {
    const from = now - alerts.serviceLevelWindowS * 1000;
    let count = 0;
    let inTime = 0;
    for (const s of stopped) {
      if (s.at <= from) continue;
      count += 1;
      if (s.answeredInTime) inTime += 1;
    }
    // Nobody stopped waiting in the window: no figure, so nothing to be below.
    const level = count === 0 ? undefined : Math.round((inTime / count) * 1000) / 10;
    if (level !== undefined && level < serviceLevelTarget) hold({ kind: "service_level", value: level, limit: serviceLevelTarget });
  }
  if (alerts.longestWaitS !== undefined) {
    let oldest: number | undefined;
    for (const s of queue.sessions) if (s.callerQueued && (oldest === undefined || s.enteredAt < oldest)) oldest = s.enteredAt;
    const wait = oldest === undefined ? 0 : Math.floor((now - oldest) / 1000);
    if (wait > alerts.longestWaitS) hold({ kind: "longest_wait", value: wait, limit: alerts.longestWaitS });
  }
  for (const id of queue.config.members) {
    const r = recipients.get(id);
    if (!r) continue;
    const state = alertState(r.state);
    const limit = state === undefined ? undefined : alerts.stateLimits[state];
    if (state === undefined || limit === undefined) continue;
    const since = state === "Away" && r.awaySince > 0 ? r.awaySince : r.changedAt;
    const inState = Math.floor((now - since) / 1000);
    if (inState > limit) hold({ kind: "state_too_long", recipient_id: id, availability_state: state, value: inState, limit });
  }
  return out;
}

function alertState(state: AvailabilityState): AlertState | undefined {
  return ALERT_STATES.find((s) => s === state);
}
