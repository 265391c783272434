// The call-queue endpoints as the console uses them (queues, their members, status and sessions;
// recipients' status, state changes, wrap-up and supervision) and the callq.* event payloads,
// each read into the console's own shapes so a hosted service's extra or missing fields never break it.
import { ApiClient, isRecord } from "./client.js";
import type { PlatformEvent } from "./events.js";
import { gregorianToMs } from "./gregorian.js";
import { list, numberOf, record, text } from "./platform.js";


export const AVAILABILITY_STATES = ["Ready", "Away", "Wrapup-Time", "Call-Offer", "On-A-Call", "Not-Logged-In"] as const;
export type AvailabilityState = (typeof AVAILABILITY_STATES)[number];

export type MonitorMode = "eavesdrop" | "whisper" | "barge";
export const MONITOR_MODES: readonly MonitorMode[] = ["eavesdrop", "whisper", "barge"];

/** State changes an agent makes (`status` on /status) and the wrap-up actions. */
export type RecipientStatusChange = "login" | "logout" | "ready" | "away";
export type WrapupAction = "wrapup_extend" | "wrapup_cancel";
/** What the console asks on the agent's own behalf: a state change, a wrap-up action, or one queue's availability. */
export type AgentRequest = RecipientStatusChange | WrapupAction | `queue:${string}`;

/** A queue caller as a recipient's status or an event describes them. */
export interface QueueCall {
  queueId: string;
  queueName: string;
  sessionId: string;
  callId: string;
  callerName: string;
  callerNumber: string;
  /** Epoch ms the caller entered the queue; 0 when not told. */
  enteredAt: number;
}

export interface RecipientStatus {
  state: AvailabilityState;
  /** Queue id to whether the recipient takes that queue's calls; only queues set apart. */
  queueAvailability: Record<string, boolean>;
  offeredCall: QueueCall | null;
  handlingCall: QueueCall | null;
  /** Whom this recipient (a supervisor) listens to, and how. */
  wiretap: { target: string; mode: MonitorMode } | null;
  /** Supervisors listening to this recipient's call, as far as the reader may know (wiretapped_by). */
  wiretappedBy: WiretapListener[];
  /** Seconds of wrap-up left when the status was read. */
  wrapupSeconds: number;
  /** Epoch ms of the last state change (stats.last_action_time); 0 when never. */
  lastActionAt: number;
  totalCalls: number;
  missedCalls: number;
  /**
   * Why the recipient is Away: a reason of the account they chose (lunch...), or the server's
   * missed_offers; null when they gave none or are not Away.
   */
  awayReason: string | null;
  /** Epoch ms since when they are Away for this reason; 0 when not Away or not told. */
  awaySince: number;
  /** With awayReason missed_offers: how many offers in a row were missed. */
  missedOffers: number;
  /** Why a recipient receives no offer whatever their state (no_device: no phone registered). */
  unavailableReason: "no_device" | null;
  /** The last queue call needs a disposition before the recipient may be Ready. */
  dispositionPending: boolean;
  /** The queue call handled now or last, with what its queue asks of its disposition (where the server says). */
  lastCall: LastQueueCall | null;
  /** Today's figures, where the server keeps them and the reader may see them (status.day). */
  day: RecipientDay | null;
}

/** The states whose time a day counts (every state of a signed-in agent). */
export const DAY_STATES = ["Ready", "Call-Offer", "On-A-Call", "Wrapup-Time", "Away"] as const;
export type DayState = (typeof DAY_STATES)[number];

/** A recipient's figures of one day as the server counted them at `asOf`. */
export interface RecipientDay {
  /** YYYY-MM-DD. */
  day: string;
  callsHandled: number;
  /** Seconds of talk and wrap-up per call handled. */
  averageHandleTime: number;
  offers: number;
  missedOffers: number;
  /** Seconds in each state at `asOf`. */
  timeInState: Record<DayState, number>;
  /** Seconds Away by reason (null: no reason given), longest first. */
  awayByReason: { reason: string | null; seconds: number }[];
  /** Percent on calls and wrap-up of the time signed in and not Away; null with no such time. */
  occupancy: number | null;
  /** The state in progress (today only): since when, epoch ms. */
  current: { state: DayState; awayReason: string | null; since: number } | null;
  /** Epoch ms the figures were counted at. */
  asOf: number;
}

export interface DispositionCode {
  code: string;
  label: string;
}

export interface Disposition extends DispositionCode {
  note: string;
}

export interface LastQueueCall extends QueueCall {
  dispositions: DispositionCode[];
  dispositionRequired: boolean;
  /** optional, required, timeboxed or timeboxed_no_exit (the queue's wrap-up policy). */
  wrapupPolicy: string;
  disposition: Disposition | null;
}

/** The account's Away reasons to choose from, and the labels of the server's own. */
export interface AwayReasons {
  reasons: DispositionCode[];
  engineReasons: DispositionCode[];
}

export interface WiretapListener {
  supervisorId: string;
  name: string;
  mode: MonitorMode;
  /** The call id of the recipient's leg listened to; empty when the server does not say. */
  callId: string;
}

/** One entry of a multi-recipient status: logged-out recipients have no status. */
export type RecipientStatusEntry = RecipientStatus | "not_logged_in";

export interface RecipientEntry {
  id: string;
  /** The username. */
  name: string;
}

export interface QueueEntry {
  id: string;
  name: string;
}

export interface QueueStatus {
  loggedIn: number;
  available: number;
  stats: {
    /** Seconds. */
    estimatedWait: number;
    /** Seconds, the day's. */
    averageWait: number;
    recipientCount: number;
    /** Sessions in the queue now (waiting or being offered). */
    waiting: number;
    total: number;
    /** Sessions of the day that timed out unhandled. */
    missed: number;
    abandoned: number;
    /** Sessions of the day answered, where the server says (Switchboard does; the hosted service may not). */
    answered?: number;
    /** Offers of the day rejected, not answered or not deliverable (missed_offers, where the server says). */
    missedOffers?: number;
    /** Callbacks not yet connected, where the queue offers them (local addition). */
    callbacksWaiting?: number;
  };
  /** The day's service level and the figures beside it, where the server says (Switchboard does). */
  serviceLevel?: ServiceLevel;
  /** The queue's alerts that hold now, where the server says (Switchboard does). */
  alerts?: QueueAlert[];
  /** The account's queue time against the server's, where the server says (Switchboard does). */
  queueClock?: QueueClock;
}

/**
 * The account's queue time (Switchboard's queue_clock): the server's, or a live training run's,
 * which stands still while the run is paused. Stamps such as a caller's entry are on it.
 */
export interface QueueClock {
  /** How far the queue time is behind the server's clock. */
  behindMs: number;
  paused: boolean;
}

/** The queue_clock of a queue status or a callq.clock event; null when absent or malformed. */
export function queueClockOf(value: unknown): QueueClock | null {
  if (!isRecord(value) || typeof value["behind_ms"] !== "number" || typeof value["paused"] !== "boolean") return null;
  return { behindMs: Math.max(0, value["behind_ms"]), paused: value["paused"] };
}

export type QueueAlertKind = "service_level" | "longest_wait" | "state_too_long";

/** A queue's alert (Switchboard's callq.alert.<queue_id> fire, or its status's alerts). */
export interface QueueAlert {
  kind: QueueAlertKind;
  queueId: string;
  /** The member a state_too_long alert is about; null for the others. */
  recipientId: string | null;
  state: AvailabilityState | null;
  /** When it fired: the window's service level (percent), or seconds waited or in the state. */
  value: number;
  /** The target percent, or the limit in seconds. */
  limit: number;
}

/** The key an alert keeps while it holds (the server's: kind, and member for a state alert). */
export function queueAlertKey(alert: Pick<QueueAlert, "kind" | "recipientId">): string {
  return alert.recipientId === null ? alert.kind : `${alert.kind}:${alert.recipientId}`;
}

export function queueAlertOf(data: Record<string, unknown>): QueueAlert | null {
  const kind = data["kind"];
  if (kind !== "service_level" && kind !== "longest_wait" && kind !== "state_too_long") return null;
  const recipientId = text(data, "recipient_id");
  const state = data["availability_state"];
  return {
    kind,
    queueId: text(data, "queue_id"),
    recipientId: recipientId === "" ? null : recipientId,
    state: isAvailabilityState(state) ? state : null,
    value: numberOf(data["value"]),
    limit: numberOf(data["limit"]),
  };
}

export interface ServiceLevel {
  /** Percent answered within the threshold of the callers who stopped waiting; null before any. */
  percent: number | null;
  targetPercent: number;
  withinS: number;
  /** Average speed of answer, seconds. */
  asa: number;
  /** Percent of the callers who stopped waiting that hung up; null before any. */
  abandonmentRate: number | null;
}

/** Inputs of a what-if staffing estimate that replace the measured ones. */
export interface StaffingWhatIf {
  callsPerHour?: number;
  /** Seconds, wrap-up included. */
  handleTime?: number;
  targetPercent?: number;
}

/** A queue's staffing estimate (Erlang C, or A where callers abandoned): a model's figure, not a count. */
export interface Staffing {
  agentsNeeded: number | null;
  /** Erlang A's figure, where patience could be estimated. */
  agentsNeededWithAbandonment: number | null;
  callsPerHour: number;
  /** Seconds, wrap-up included; null with no call to measure. */
  handleTime: number | null;
  windowMinutes: number;
  targetPercent: number;
  answeredWithinS: number;
  loggedIn: number;
  ready: number;
}

export type SessionListState = "waiting" | "offering" | "handled";

export interface QueueSession {
  sessionId: string;
  callId: string;
  queueId: string;
  callerName: string;
  callerNumber: string;
  /** Epoch ms. */
  enteredAt: number;
  state: SessionListState;
  recipientId: string | null;
  /** A callback (local addition): the caller left the line and is called back at this number. */
  callbackNumber: string | null;
}

/** What the console asks of the queue engine's API, so slice tests can hand in a fake. */
export interface CallqApi {
  queues(): Promise<QueueEntry[]>;
  /** Queue id to member user ids, for every queue. */
  membership(): Promise<Record<string, string[]>>;
  /** Status of several queues (all of them when `ids` is absent). */
  queueStatuses(ids?: readonly string[]): Promise<Record<string, QueueStatus>>;
  queueSessions(queueId: string): Promise<QueueSession[]>;
  /** The queue's staffing estimate from the last hour's calls, or from `whatIf`'s inputs where given (supervisors and admins). */
  queueStaffing(queueId: string, whatIf?: StaffingWhatIf): Promise<Staffing>;
  recipients(): Promise<RecipientEntry[]>;
  recipientStatus(userId: string): Promise<RecipientStatus>;
  recipientStatuses(userIds: readonly string[]): Promise<Record<string, RecipientStatusEntry>>;
  /** Login, logout, ready, away; ready/away with a queue id set that queue alone. Answers the new status. */
  setRecipientStatus(userId: string, status: RecipientStatusChange, queueId?: string, reason?: string): Promise<RecipientStatus>;
  /** The recipient's disposition of the queue call they handle or handled last. Answers the new status. */
  setDisposition(userId: string, disposition: { code: string; note: string; sessionId: string }): Promise<RecipientStatus>;
  awayReasons(): Promise<AwayReasons>;
  wrapup(userId: string, action: WrapupAction): Promise<RecipientStatus>;
  /** Rings the supervisor's phones to listen to `target` (or changes the mode of a supervision under way). */
  monitor(supervisorId: string, target: string, mode: MonitorMode): Promise<void>;
}

export interface CallqApiOptions {
  baseUrl: string;
  token: string;
  accountId: string;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

export function createCallqApi(options: CallqApiOptions): CallqApi {
  const client = new ApiClient({ baseUrl: options.baseUrl, token: options.token, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const account = `/v2/accounts/${encodeURIComponent(options.accountId)}`;
  const get = async (path: string): Promise<unknown> => (await client.request<unknown>("GET", account + path)).data;
  const post = async (path: string, body: unknown): Promise<unknown> => (await client.request<unknown>("POST", account + path, { body })).data;
  const recipient = (id: string) => `/callq_recipients/${encodeURIComponent(id)}`;

  return {
    async queues() {
      return list(await get("/callq_queues?paginate=false"), "queues")
        .map((row) => ({ id: text(row, "id"), name: text(row, "name") || text(row, "id") }))
        .filter((q) => q.id !== "")
        .sort((a, b) => a.name.localeCompare(b.name));
    },

    async membership() {
      const members: Record<string, string[]> = {};
      for (const row of list(await get("/callq_queues/recipients?paginate=false"), "queue members")) {
        const id = text(row, "queue_id");
        if (id !== "") members[id] = strings(row["members"]);
      }
      return members;
    },

    async queueStatuses(ids) {
      const data = record(await post("/callq_queues/status", ids === undefined ? {} : { queue_ids: ids }), "queue statuses");
      const out: Record<string, QueueStatus> = {};
      for (const [id, value] of Object.entries(data)) if (isRecord(value)) out[id] = queueStatusOf(value);
      return out;
    },

    async queueSessions(queueId) {
      const rows = list(await get(`/callq_queues/${encodeURIComponent(queueId)}/sessions`), "sessions");
      // [{queue_id, session_list}] (fidelity.md); a bare list of sessions is read too.
      const sessions = rows.flatMap((row) => (Array.isArray(row["session_list"]) ? row["session_list"].filter(isRecord) : [row]));
      return sessions.map((row) => sessionOf(row, queueId)).filter((s) => s.sessionId !== "");
    },

    async queueStaffing(queueId, whatIf = {}) {
      const query = new URLSearchParams();
      if (whatIf.callsPerHour !== undefined) query.set("calls_per_hour", String(whatIf.callsPerHour));
      if (whatIf.handleTime !== undefined) query.set("handle_time", String(whatIf.handleTime));
      if (whatIf.targetPercent !== undefined) query.set("target_percent", String(whatIf.targetPercent));
      const search = query.size > 0 ? `?${query.toString()}` : "";
      return staffingOf(record(await get(`/callq_queues/${encodeURIComponent(queueId)}/staffing${search}`), "staffing"));
    },

    async recipients() {
      return list(await get("/callq_recipients?paginate=false"), "recipients")
        .map((row) => ({ id: text(row, "id"), name: text(row, "name") || text(row, "id") }))
        .filter((r) => r.id !== "");
    },

    async recipientStatus(userId) {
      return recipientStatusOf(record(await get(`${recipient(userId)}/status`), "recipient status"));
    },

    async recipientStatuses(userIds) {
      const out: Record<string, RecipientStatusEntry> = {};
      if (userIds.length === 0) return out;
      const data = record(await post("/callq_recipients/status", { recipient_ids: userIds }), "recipient statuses");
      for (const [id, value] of Object.entries(data)) {
        if (isRecord(value)) out[id] = recipientStatusOf(value);
        else if (value === "not_logged_in") out[id] = "not_logged_in";
      }
      return out;
    },

    async setRecipientStatus(userId, status, queueId, reason) {
      const body: Record<string, string> = { status };
      if (queueId !== undefined) body["queue_id"] = queueId;
      if (reason !== undefined) body["reason"] = reason;
      return recipientStatusOf(record(await post(`${recipient(userId)}/status`, body), "recipient status"));
    },

    async setDisposition(userId, disposition) {
      const body = { code: disposition.code, note: disposition.note, session_id: disposition.sessionId };
      return recipientStatusOf(record(await post(`${recipient(userId)}/disposition`, body), "recipient status"));
    },

    async awayReasons() {
      const data = record(await get("/callq_away_reasons"), "away reasons");
      return { reasons: codesOf(data["reasons"]), engineReasons: codesOf(data["engine_reasons"]) };
    },

    async wrapup(userId, action) {
      return recipientStatusOf(record(await post(recipient(userId), { action }), "recipient status"));
    },

    async monitor(supervisorId, target, mode) {
      await post(recipient(supervisorId), { action: "monitor", target, mode });
    },
  };
}

export function isAvailabilityState(value: unknown): value is AvailabilityState {
  return typeof value === "string" && (AVAILABILITY_STATES as readonly string[]).includes(value);
}

export function recipientStatusOf(data: Record<string, unknown>): RecipientStatus {
  const stats = isRecord(data["stats"]) ? data["stats"] : {};
  const state = data["availability_state"];
  const target = text(data, "wiretapping_recipient");
  const mode = data["wiretap_mode"];
  return {
    state: isAvailabilityState(state) ? state : "Not-Logged-In",
    queueAvailability: booleans(data["queue_availability"]),
    offeredCall: isRecord(data["offered_call"]) ? queueCallOf(data["offered_call"]) : null,
    handlingCall: isRecord(data["handling_call"]) ? queueCallOf(data["handling_call"]) : null,
    wiretap: target !== "" ? { target, mode: isMonitorMode(mode) ? mode : "eavesdrop" } : null,
    wiretappedBy: listenersOf(data["wiretapped_by"]),
    wrapupSeconds: numberOf(data["wrapup_time_seconds"]),
    lastActionAt: gregorianToMs(numberOf(stats["last_action_time"])),
    totalCalls: numberOf(stats["total_calls"]),
    missedCalls: numberOf(stats["missed_calls"]),
    ...reasonsOf(data),
    lastCall: isRecord(data["last_call"]) ? lastCallOf(data["last_call"]) : null,
    day: isRecord(data["day"]) ? recipientDayOf(data["day"]) : null,
  };
}

function isDayState(value: unknown): value is DayState {
  return typeof value === "string" && (DAY_STATES as readonly string[]).includes(value);
}

export function recipientDayOf(data: Record<string, unknown>): RecipientDay {
  const times = isRecord(data["time_in_state"]) ? data["time_in_state"] : {};
  const current = isRecord(data["current"]) ? data["current"] : null;
  const currentState = current?.["state"];
  return {
    day: text(data, "day"),
    callsHandled: numberOf(data["calls_handled"]),
    averageHandleTime: numberOf(data["average_handle_time"]),
    offers: numberOf(data["offers"]),
    missedOffers: numberOf(data["missed_offers"]),
    timeInState: { Ready: numberOf(times["Ready"]), "Call-Offer": numberOf(times["Call-Offer"]), "On-A-Call": numberOf(times["On-A-Call"]), "Wrapup-Time": numberOf(times["Wrapup-Time"]), Away: numberOf(times["Away"]) },
    awayByReason: (Array.isArray(data["away_by_reason"]) ? data["away_by_reason"] : [])
      .filter(isRecord)
      .map((r) => ({ reason: typeof r["reason"] === "string" && r["reason"] !== "" ? r["reason"] : null, seconds: numberOf(r["seconds"]) })),
    occupancy: typeof data["occupancy"] === "number" ? data["occupancy"] : null,
    current:
      current !== null && isDayState(currentState)
        ? { state: currentState, awayReason: text(current, "away_reason") || null, since: gregorianToMs(numberOf(current["since"])) }
        : null,
    asOf: gregorianToMs(numberOf(data["as_of"])),
  };
}

export type StatusReasons = Pick<RecipientStatus, "awayReason" | "awaySince" | "missedOffers" | "unavailableReason" | "dispositionPending">;

/** The reason fields of a recipient status or event (absent: null). */
export function reasonsOf(data: Record<string, unknown>): StatusReasons {
  const away = text(data, "away_reason");
  return {
    awayReason: away === "" ? null : away,
    awaySince: gregorianToMs(numberOf(data["away_since"])),
    missedOffers: numberOf(data["missed_offers"]),
    unavailableReason: data["unavailable_reason"] === "no_device" ? "no_device" : null,
    dispositionPending: data["disposition_pending"] === true,
  };
}

function codesOf(value: unknown): DispositionCode[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((c) => ({ code: text(c, "code"), label: text(c, "label") || text(c, "code") })).filter((c) => c.code !== "");
}

function lastCallOf(data: Record<string, unknown>): LastQueueCall {
  const given = isRecord(data["disposition"]) ? data["disposition"] : null;
  return {
    ...queueCallOf(data),
    dispositions: codesOf(data["dispositions"]),
    dispositionRequired: data["disposition_required"] === true,
    wrapupPolicy: text(data, "wrapup_policy"),
    disposition: given === null ? null : { code: text(given, "code"), label: text(given, "label"), note: text(given, "note") },
  };
}

function listenersOf(value: unknown): WiretapListener[] {
  if (!Array.isArray(value)) return [];
  const out: WiretapListener[] = [];
  for (const entry of value) {
    if (!isRecord(entry)) continue;
    const supervisorId = text(entry, "recipient_id");
    const mode = entry["mode"];
    if (supervisorId !== "" && isMonitorMode(mode)) out.push({ supervisorId, name: text(entry, "name"), mode, callId: text(entry, "call_id") });
  }
  return out;
}

export function queueStatusOf(data: Record<string, unknown>): QueueStatus {
  const stats = isRecord(data["stats"]) ? data["stats"] : {};
  return {
    loggedIn: numberOf(data["active_recipient_count"]),
    available: numberOf(data["available_recipient_count"]),
    stats: {
      estimatedWait: numberOf(stats["estimated_wait"]),
      averageWait: numberOf(stats["average_wait"]),
      recipientCount: numberOf(stats["recipient_count"]),
      waiting: numberOf(stats["active_session_count"]),
      total: numberOf(stats["total_sessions"]),
      missed: numberOf(stats["missed_sessions"]),
      abandoned: numberOf(stats["abandoned_sessions"]),
      ...(typeof stats["answered_sessions"] === "number" ? { answered: stats["answered_sessions"] } : {}),
      ...(typeof stats["missed_offers"] === "number" ? { missedOffers: stats["missed_offers"] } : {}),
      ...(typeof stats["callbacks_waiting"] === "number" ? { callbacksWaiting: stats["callbacks_waiting"] } : {}),
    },
    ...(isRecord(data["service_level"]) ? { serviceLevel: serviceLevelOf(data["service_level"], stats) } : {}),
    ...(Array.isArray(data["alerts"]) ? { alerts: data["alerts"].filter(isRecord).map(queueAlertOf).filter((a): a is QueueAlert => a !== null) } : {}),
    ...queueClockField(queueClockOf(data["queue_clock"])),
  };
}

function queueClockField(clock: QueueClock | null): { queueClock?: QueueClock } {
  return clock === null ? {} : { queueClock: clock };
}

function serviceLevelOf(goal: Record<string, unknown>, stats: Record<string, unknown>): ServiceLevel {
  return {
    percent: nullableNumber(stats["service_level"]),
    targetPercent: numberOf(goal["target_percent"]),
    withinS: numberOf(goal["answered_within_s"]),
    asa: numberOf(stats["average_speed_of_answer"]),
    abandonmentRate: nullableNumber(stats["abandonment_rate"]),
  };
}

export function staffingOf(data: Record<string, unknown>): Staffing {
  return {
    agentsNeeded: nullableNumber(data["agents_needed"]),
    agentsNeededWithAbandonment: nullableNumber(data["agents_needed_with_abandonment"]),
    callsPerHour: numberOf(data["calls_per_hour"]),
    handleTime: nullableNumber(data["handle_time"]),
    windowMinutes: numberOf(data["window_minutes"]),
    targetPercent: numberOf(data["target_percent"]),
    answeredWithinS: numberOf(data["answered_within_s"]),
    loggedIn: numberOf(data["logged_in"]),
    ready: numberOf(data["ready"]),
  };
}

function nullableNumber(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export function queueCallOf(data: Record<string, unknown>): QueueCall {
  return {
    queueId: text(data, "queue_id"),
    queueName: text(data, "queue_name"),
    sessionId: text(data, "session_id"),
    callId: text(data, "call_id"),
    callerName: text(data, "caller_id_name"),
    callerNumber: text(data, "caller_id_number"),
    enteredAt: gregorianToMs(numberOf(data["queue_enter_time"])),
  };
}

export function sessionOf(data: Record<string, unknown>, queueId = ""): QueueSession {
  const state = data["state"];
  const recipientId = text(data, "recipient_id");
  return {
    sessionId: text(data, "session_id"),
    callId: text(data, "call_id"),
    queueId: text(data, "queue_id") || queueId,
    callerName: text(data, "caller_id_name"),
    callerNumber: text(data, "caller_id_number"),
    enteredAt: gregorianToMs(numberOf(data["queue_enter_time"])),
    state: state === "offering" || state === "handled" ? state : "waiting",
    recipientId: recipientId === "" ? null : recipientId,
    callbackNumber: isRecord(data["callback"]) ? text(data["callback"], "number") || null : null,
  };
}

/** What a callq.recipient.<id> event says about that recipient. */
export interface RecipientEvent {
  recipientId: string;
  name: string;
  /** Absent on events that do not change availability (monitor). */
  state: AvailabilityState | null;
  previousState: AvailabilityState | null;
  /** The per-queue availability event's queue, when it is one. */
  queueId: string | null;
  queueAvailability: Record<string, boolean> | null;
  /** offer and delivered events: the caller. */
  call: QueueCall | null;
  wrapupSeconds: number | null;
  /** monitor events: the supervision now (null when it ended). */
  wiretap: { target: string; mode: MonitorMode } | null;
  /** The reasons the event states (every event but monitor carries them). */
  reasons: StatusReasons;
}

export type CallqEventKind = "queue" | "recipient" | "session";

/** `callq.<kind>.<id>` (or the qubicle.* spelling); null for any other event. */
export function callqEventKind(event: PlatformEvent): { kind: CallqEventKind; id: string } | null {
  const [root, kind, ...rest] = event.routingKey.split(".");
  if (root !== "callq" && root !== "qubicle") return null;
  if (kind !== "queue" && kind !== "recipient" && kind !== "session") return null;
  return { kind, id: rest.join(".") };
}

export function recipientEventOf(event: PlatformEvent, recipientId: string): RecipientEvent {
  const data = event.data;
  const state = data["availability_state"];
  const previous = data["previous_state"];
  const queueId = text(data, "queue_id");
  const hasCall = event.name === "offer" || event.name === "delivered";
  const mode = data["mode"];
  const target = text(data, "target");
  return {
    recipientId: text(data, "recipient_id") || recipientId,
    name: event.name,
    state: isAvailabilityState(state) ? state : null,
    previousState: isAvailabilityState(previous) ? previous : null,
    queueId: queueId === "" || hasCall ? null : queueId,
    queueAvailability: isRecord(data["queue_availability"]) ? booleans(data["queue_availability"]) : null,
    call: hasCall ? queueCallOf(data) : null,
    wrapupSeconds: typeof data["wrapup_time_seconds"] === "number" ? data["wrapup_time_seconds"] : null,
    wiretap: event.name === "monitor" && data["active"] === true && target !== "" ? { target, mode: isMonitorMode(mode) ? mode : "eavesdrop" } : null,
    reasons: reasonsOf(data),
  };
}

function isMonitorMode(value: unknown): value is MonitorMode {
  return value === "eavesdrop" || value === "whisper" || value === "barge";
}

function strings(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  // A queue document's `members` object (id -> "") is read too.
  return isRecord(value) ? Object.keys(value) : [];
}

function booleans(value: unknown): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  if (isRecord(value)) for (const [k, v] of Object.entries(value)) if (typeof v === "boolean") out[k] = v;
  return out;
}
