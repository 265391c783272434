// What the engine shows: queue and recipient statuses, session rows and the fields its events
// carry, each a pure function of the engine's state at one moment.
import { toGregorianSeconds } from "../clock.js";
import type { MonitorMode } from "../monitor-mode.js";
import { abandonmentRate, addFigures, averageHandleTime, averageSpeedOfAnswer, averageWait, dayOf, emptyFigures, finished, round, serviceLevel, type IntervalFigures } from "./intervals.js";
import type { RecipientDayView } from "./recipient-day.js";
import type { ActiveAlert } from "./alerts.js";
import type { Queue } from "./queue.js";
import type { DispositionCode, WrapupPolicy } from "./queue-config.js";
import type { AwayReason, CallInfo, Disposition, Recipient, UnavailableReason } from "./recipient.js";
import type { AvailabilityState } from "./recipient-state.js";
import type { Session } from "./session.js";
import { listedState, type ListedSessionState } from "./session-state.js";

/** The floor's live figures of the day, beyond the spec (local additions). */
export interface FloorFigures {
  /** Percent of the sessions that stopped waiting today answered within the threshold; null before any. */
  service_level: number | null;
  /** Answered within the threshold. */
  answered_within: number;
  /** Abandoned within the threshold (counted as not answered in time). */
  abandoned_within: number;
  /** Average speed of answer, seconds. */
  average_speed_of_answer: number;
  /** Percent of the sessions that stopped waiting today whose caller hung up; null before any. */
  abandonment_rate: number | null;
  /** Average handle time (answer to hang-up) of today's ended calls, seconds. */
  average_handle_time: number;
  /** The longest current wait of a caller still waiting or being offered, seconds. */
  longest_wait: number;
}

/** Recipients by availability state, and the Away ones by the reason the engine set them Away. */
export interface RecipientCounts {
  recipients_by_state: Partial<Record<AvailabilityState, number>>;
  away_reasons: Partial<Record<AwayReason, number>>;
}

export interface QueueStatus extends RecipientCounts {
  active_recipient_count: number;
  available_recipient_count: number;
  node: string;
  /** The queue's service-level goal (local addition): percent within seconds. */
  service_level: { answered_within_s: number; target_percent: number };
  /** The queue's alerts that hold now (local addition), so a board that opens late sees them. */
  alerts: ActiveAlert[];
  /** The account's queue time against the server's (local addition), so a board counts waits in it. */
  queue_clock: QueueClock;
  stats: FloorFigures & {
    estimated_wait: number;
    average_wait: number;
    recipient_count: number;
    active_session_count: number;
    total_sessions: number;
    missed_sessions: number;
    abandoned_sessions: number;
    /** Sessions of the day delivered to a recipient (beyond the spec: the wallboard shows it). */
    answered_sessions: number;
    /** Offers of the day a recipient rejected, let ring out or could not be rung for (beyond the spec: Qubicle's missed). */
    missed_offers: number;
  } & Partial<CallbackFigures>;
}

/**
 * The account's queue time (local addition): the server's, or a live training run's, which stands
 * still while the run is paused. Stamps such as queue_enter_time are on it.
 */
export interface QueueClock {
  /** How far the queue time is behind the server's clock: the run's pauses so far. */
  behind_ms: number;
  /** Whether the queue time stands still (the run is paused). */
  paused: boolean;
}

/** Callbacks in a queue now and over the day (local addition; all 0 where none is enabled). */
export interface CallbackFigures {
  /** Callbacks not yet connected: waiting in their place, offered, or being dialled. */
  callbacks_waiting: number;
  callbacks_requested: number;
  callbacks_connected: number;
  callbacks_failed: number;
}

export interface SessionRow {
  session_id: string;
  call_id: string;
  queue_id: string;
  caller_id_name: string;
  caller_id_number: string;
  /** Gregorian seconds. */
  queue_enter_time: number;
  state: ListedSessionState;
  recipient_id?: string;
  /** Set once the caller asked to be called back (local addition). */
  callback?: SessionCallbackView;
}

export interface SessionCallbackView {
  number: string;
  /** Gregorian seconds. */
  requested_at: number;
  attempts: number;
  /** Gregorian seconds before which a failed callback is not offered again. */
  retry_at?: number;
}

export interface RecipientStatus {
  available: boolean;
  availability_state: AvailabilityState;
  /** Why a Ready recipient receives no offer (beyond the spec). */
  unavailable_reason?: UnavailableReason;
  /** Why the recipient is Away: a reason of the account, or the engine's (beyond the spec). */
  away_reason?: AwayReason;
  /** Gregorian seconds since when the recipient is Away for this reason (beyond the spec). */
  away_since?: number;
  /** The last queue call needs a disposition before Ready (beyond the spec). */
  disposition_pending?: boolean;
  /** The queue call handled now or last, what its queue asks and its disposition (beyond the spec). */
  last_call?: LastCallView;
  /** Offers missed in a row, with the queue's limit when the engine set them Away for it. */
  missed_offers?: number;
  queue_availability?: Record<string, boolean>;
  offered_call?: CallInfo;
  handling_call?: CallInfo;
  wiretapping_recipient?: string;
  wiretap_mode?: MonitorMode;
  /**
   * Supervisors listening to this recipient's call (beyond the spec, for the agent's cue); the API
   * shows it to the recipient themself (eavesdrop only when announced), supervisors and admins.
   */
  wiretapped_by?: WiretapListener[];
  wrapup_time_seconds: number;
  /**
   * The recipient's figures of today (beyond the spec); the API shows them to the recipient
   * themself, admins and the supervisors of their queues.
   */
  day?: RecipientDayView;
  stats: {
    total_calls: number;
    missed_calls: number;
    avg_call_time: number;
    login_time: number;
    last_action_time: number;
    last_handled_time: number;
  };
  node: string;
}

export interface LastCallView extends CallInfo {
  dispositions: DispositionCode[];
  disposition_required: boolean;
  wrapup_policy: WrapupPolicy;
  disposition?: Disposition;
}

export interface Wiretap {
  target: string;
  mode: MonitorMode;
  /** The call id of the target's leg that is listened to. */
  callId?: string;
}

export interface WiretapListener {
  recipient_id: string;
  /** The supervisor's name as users see it (first and last name, else the username). */
  name: string;
  mode: MonitorMode;
  /** The recipient's leg the supervisor listens to. */
  call_id?: string;
}

/** One queue's status at `now`: its members' availability and the day's figures. */
export function queueStatus(queue: Queue, recipients: ReadonlyMap<string, Recipient>, now: number, node: string, clock: QueueClock): QueueStatus {
  let available = 0;
  for (const id of queue.config.members) if (recipients.get(id)?.availableFor(queue.id, now)) available += 1;
  // Callbacks keep their place, so they count as ahead of a new caller in the estimate.
  const queued = queue.queuedCount;
  const day = queue.stats.today(now);
  const members: Recipient[] = [];
  for (const id of queue.config.members) {
    const r = recipients.get(id);
    if (r) members.push(r);
  }
  return {
    active_recipient_count: loggedInMembers(queue, recipients),
    available_recipient_count: available,
    node,
    service_level: { answered_within_s: queue.config.serviceLevelS, target_percent: queue.config.serviceLevelTarget },
    alerts: [...queue.alerts.values()].map((a) => ({ ...a })),
    queue_clock: { ...clock },
    ...recipientCounts(members),
    stats: {
      estimated_wait: queue.stats.estimatedWait(now, queued, available),
      average_wait: averageWait(day),
      recipient_count: queue.config.members.length,
      active_session_count: queue.callersQueued,
      total_sessions: day.offered,
      missed_sessions: day.timed_out,
      abandoned_sessions: day.abandoned,
      answered_sessions: day.answered,
      missed_offers: day.missed_offers,
      // Only where callbacks are (or were today) offered: a hosted queue's status stays as it was.
      ...(queue.config.callback !== undefined || day.callbacks_requested > 0 ? callbackFigures(day, queue.callbacksWaiting) : {}),
      ...floorFigures(day, longestWait(queue, now)),
    },
  };
}

/** The whole account's floor (local addition): every queue's day summed, and every recipient. */
export interface AccountFloor extends RecipientCounts {
  queue_count: number;
  logged_in_recipient_count: number;
  available_recipient_count: number;
  stats: FloorFigures & {
    /** Callers waiting or being offered, in every queue. */
    active_session_count: number;
    total_sessions: number;
    answered_sessions: number;
    abandoned_sessions: number;
    missed_sessions: number;
    missed_offers: number;
  } & CallbackFigures;
}

/**
 * The account's floor at `now`. Its service level is every queue's answers in time (each by its
 * own threshold) over every queue's sessions that stopped waiting.
 */
export function accountFloor(queues: Iterable<Queue>, recipients: ReadonlyMap<string, Recipient>, now: number): AccountFloor {
  const day = emptyFigures();
  let count = 0;
  let queued = 0;
  let callbacks = 0;
  let longest = 0;
  for (const queue of queues) {
    if (queue.removed) continue;
    count += 1;
    addFigures(day, queue.stats.today(now));
    queued += queue.callersQueued;
    callbacks += queue.callbacksWaiting;
    longest = Math.max(longest, longestWait(queue, now));
  }
  const all = [...recipients.values()];
  return {
    queue_count: count,
    logged_in_recipient_count: all.filter((r) => r.loggedIn).length,
    available_recipient_count: all.filter((r) => r.available).length,
    ...recipientCounts(all),
    stats: {
      active_session_count: queued,
      total_sessions: day.offered,
      answered_sessions: day.answered,
      abandoned_sessions: day.abandoned,
      missed_sessions: day.timed_out,
      missed_offers: day.missed_offers,
      ...callbackFigures(day, callbacks),
      ...floorFigures(day, longest),
    },
  };
}

function callbackFigures(day: IntervalFigures, waiting: number): CallbackFigures {
  return { callbacks_waiting: waiting, callbacks_requested: day.callbacks_requested, callbacks_connected: day.callbacks_connected, callbacks_failed: day.callbacks_failed };
}

function floorFigures(day: IntervalFigures, longest: number): FloorFigures {
  return {
    service_level: serviceLevel(day),
    answered_within: day.answered_within,
    abandoned_within: day.abandoned_within,
    average_speed_of_answer: averageSpeedOfAnswer(day),
    abandonment_rate: finished(day) === 0 ? null : abandonmentRate(day),
    average_handle_time: averageHandleTime(day),
    longest_wait: longest,
  };
}

/** Seconds the longest-waiting caller still on the line (waiting or being offered) has waited; callbacks hold no line. */
function longestWait(queue: Queue, now: number): number {
  let oldest: number | undefined;
  for (const s of queue.sessions) if (s.callerQueued && (oldest === undefined || s.enteredAt < oldest)) oldest = s.enteredAt;
  return oldest === undefined ? 0 : round(Math.max(0, now - oldest) / 1000);
}

/** Logged-in recipients by state (Not-Logged-In ones too, so the counts add up to the members). */
function recipientCounts(recipients: readonly Recipient[]): RecipientCounts {
  const byState: Partial<Record<AvailabilityState, number>> = {};
  const reasons: Partial<Record<AwayReason, number>> = {};
  for (const r of recipients) {
    byState[r.state] = (byState[r.state] ?? 0) + 1;
    if (r.state === "Away" && r.awayReason !== undefined) reasons[r.awayReason] = (reasons[r.awayReason] ?? 0) + 1;
  }
  return { recipients_by_state: byState, away_reasons: reasons };
}

export function loggedInMembers(queue: Queue, recipients: ReadonlyMap<string, Recipient>): number {
  let n = 0;
  for (const id of queue.config.members) if (recipients.get(id)?.loggedIn) n += 1;
  return n;
}

/**
 * One recipient's status at `now`, with whom they listen to and who listens to them
 * (`wiretaps`: per supervisor; `nameOf`: a user's name as users see it).
 */
export function recipientStatus(r: Recipient, wiretaps: ReadonlyMap<string, Wiretap>, nameOf: (userId: string) => string, now: number, node: string): RecipientStatus {
  const { stats } = r;
  const status: RecipientStatus = {
    available: r.available,
    availability_state: r.state,
    ...reasons(r),
    wrapup_time_seconds: wrapupSecondsLeft(r, now),
    stats: {
      total_calls: stats.total_calls,
      missed_calls: stats.missed_calls,
      avg_call_time: stats.total_calls === 0 ? 0 : Math.round((stats.total_call_time / stats.total_calls) * 10) / 10,
      login_time: stats.login_time,
      last_action_time: stats.last_action_time,
      last_handled_time: stats.last_handled_time,
    },
    node,
  };
  if (r.queueAvailability.size > 0) status.queue_availability = Object.fromEntries(r.queueAvailability);
  const day = r.days.view(dayOf(now), now);
  if (day) status.day = day;
  if (r.lastCall) {
    const { info, codes, required, policy, disposition } = r.lastCall;
    status.last_call = { ...info, dispositions: codes.map((c) => ({ ...c })), disposition_required: required, wrapup_policy: policy, ...(disposition ? { disposition: { ...disposition } } : {}) };
  }
  if (r.offered) status.offered_call = { ...r.offered };
  if (r.handling) status.handling_call = { ...r.handling };
  const wiretap = wiretaps.get(r.id);
  if (wiretap) {
    status.wiretapping_recipient = wiretap.target;
    status.wiretap_mode = wiretap.mode;
  }
  const listeners: WiretapListener[] = [];
  for (const [supervisorId, tap] of wiretaps) {
    if (tap.target !== r.id) continue;
    const listener: WiretapListener = { recipient_id: supervisorId, name: nameOf(supervisorId), mode: tap.mode };
    if (tap.callId !== undefined) listener.call_id = tap.callId;
    listeners.push(listener);
  }
  if (listeners.length > 0) status.wiretapped_by = listeners;
  return status;
}

/** Whole seconds of wrap-up left (0 outside wrap-up). */
export function wrapupSecondsLeft(r: Recipient, now: number): number {
  return r.state === "Wrapup-Time" ? Math.max(0, Math.ceil((r.wrapupEndsAt - now) / 1000)) : 0;
}

export function sessionRow(s: Session): SessionRow {
  const row: SessionRow = {
    session_id: s.id,
    call_id: s.call.callId,
    queue_id: s.queueId,
    caller_id_name: s.call.caller.name,
    caller_id_number: s.call.caller.number,
    queue_enter_time: toGregorianSeconds(s.enteredAt),
    state: listedState(s.state),
  };
  if (s.recipientId !== undefined) row.recipient_id = s.recipientId;
  if (s.callback) {
    const { number, requestedAt, attempts, notBefore } = s.callback;
    row.callback = { number, requested_at: toGregorianSeconds(requestedAt), attempts, ...(notBefore > requestedAt ? { retry_at: toGregorianSeconds(notBefore) } : {}) };
  }
  return row;
}

/** The caller a session offers, as the recipient status shows it. */
export function callInfo(session: Session, queue: Queue): CallInfo {
  return {
    queue_id: queue.id,
    queue_name: queue.config.name,
    session_id: session.id,
    call_id: session.call.callId,
    caller_id_name: session.call.caller.name,
    caller_id_number: session.call.caller.number,
    queue_enter_time: toGregorianSeconds(session.enteredAt),
    ...(session.callback ? { callback_number: session.callback.number } : {}),
  };
}

/** The fields every recipient event carries. */
export function recipientData(r: Recipient): Record<string, unknown> {
  return { recipient_id: r.id, availability_state: r.state, available: r.available, ...reasons(r), last_action_time: r.stats.last_action_time };
}

type Reasons = Pick<RecipientStatus, "unavailable_reason" | "away_reason" | "away_since" | "missed_offers" | "disposition_pending">;

/** The reason fields of a status or event: set only while they apply. */
function reasons(r: Recipient): Reasons {
  const out: Reasons = {};
  const unavailable = r.unavailableReason;
  if (unavailable !== undefined) out.unavailable_reason = unavailable;
  if (r.state === "Away") {
    if (r.awayReason !== undefined) out.away_reason = r.awayReason;
    if (r.awaySince > 0) out.away_since = toGregorianSeconds(r.awaySince);
    if (r.awayReason === "missed_offers" && r.missedAwayAfter > 0) out.missed_offers = r.missedAwayAfter;
  }
  if (r.dispositionMissing && r.loggedIn) out.disposition_pending = true;
  return out;
}
