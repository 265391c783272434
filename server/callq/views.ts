// What the engine shows: queue and recipient statuses, session rows and the fields its events
// carry, each a pure function of the engine's state at one moment.
import { toGregorianSeconds } from "../clock.js";
import type { MonitorMode } from "../monitor-mode.js";
import type { Queue } from "./queue.js";
import type { DispositionCode, WrapupPolicy } from "./queue-config.js";
import type { AwayReason, CallInfo, Disposition, Recipient, UnavailableReason } from "./recipient.js";
import type { AvailabilityState } from "./recipient-state.js";
import type { Session } from "./session.js";
import { listedState, type ListedSessionState } from "./session-state.js";

export interface QueueStatus {
  active_recipient_count: number;
  available_recipient_count: number;
  node: string;
  stats: {
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
  };
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
export function queueStatus(queue: Queue, recipients: ReadonlyMap<string, Recipient>, now: number, node: string): QueueStatus {
  let available = 0;
  for (const id of queue.config.members) if (recipients.get(id)?.availableFor(queue.id, now)) available += 1;
  const queued = queue.queuedCount;
  return {
    active_recipient_count: loggedInMembers(queue, recipients),
    available_recipient_count: available,
    node,
    stats: {
      estimated_wait: queue.stats.estimatedWait(now, queued, available),
      average_wait: queue.stats.averageWait(now),
      recipient_count: queue.config.members.length,
      active_session_count: queued,
      total_sessions: queue.stats.totalSessions,
      missed_sessions: queue.stats.missedSessions,
      abandoned_sessions: queue.stats.abandonedSessions,
      answered_sessions: queue.stats.answeredSessions,
      missed_offers: queue.stats.missedOffers,
    },
  };
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
