// What a webhook receiver gets: which hook a bus event fires, the payload built from it (base
// fields, the hook's own fields, custom_data on top) and that payload as one HTTP request.
import { toGregorianSeconds } from "../clock.js";
import type { BusEvent } from "./bus.js";

export type Payload = Record<string, unknown>;

/** The hooks the bus can fire today; the api/ catalogue lists more that fire once their engines exist. */
export type FiredHook = "channel_create" | "channel_answer" | "channel_bridge" | "channel_destroy" | "notifications" | "object" | CallqHook | LocalHook;

/**
 * Local additions to the hosted service's catalogue (issues 19 and 20): a disposition given, a
 * queue alert fired or cleared, a user's presence changed. Each fires from its own event family,
 * so no event a Kazoo hook already sends fires one of these.
 */
type LocalHook = "callq_recipient_disposition" | "callq_queue_alert" | "callq_queue_callback" | "user_presence" | "training_run";

/** The callback steps a queue publishes (callq.queue.<id>), each a callq_queue_callback delivery. */
const CALLBACK_STEPS = new Set(["callback_requested", "callback_offered", "callback_dialing", "callback_connected", "callback_failed"]);

/** Call-queue hooks, by the event that fires them: `callq.queue.<id>` join/leave, `callq.recipient.<id>` the rest. */
const CALLQ_HOOKS = {
  queue: { join: "callq_queue_join", leave: "callq_queue_leave" },
  recipient: {
    login: "callq_recipient_login",
    logout: "callq_recipient_logout",
    ready: "callq_recipient_ready",
    away: "callq_recipient_away",
    offer: "callq_recipient_offer",
    delivered: "callq_recipient_delivered",
    reject: "callq_recipient_rejected",
    disposition: "callq_recipient_disposition",
  },
} as const;

type CallqHook = (typeof CALLQ_HOOKS.queue)[keyof typeof CALLQ_HOOKS.queue] | (typeof CALLQ_HOOKS.recipient)[keyof typeof CALLQ_HOOKS.recipient];

export interface Trigger {
  hook: FiredHook;
  /** For `notifications`: the notification type hooks select with `custom_data.type`. */
  notification?: string;
}

const CHANNEL_HOOKS: Record<string, FiredHook> = {
  CHANNEL_CREATE: "channel_create",
  CHANNEL_ANSWER: "channel_answer",
  CHANNEL_BRIDGE: "channel_bridge",
  CHANNEL_DESTROY: "channel_destroy",
};

/**
 * The base fields of channel payloads: the spec's list, then the ones the hosted service adds
 * when it knows them. Only these are copied, so the call engine's internal fields never leak.
 */
const CHANNEL_FIELDS = [
  "call_direction",
  "request",
  "to",
  "from",
  "call_id",
  "other_leg_call_id",
  "caller_id_name",
  "caller_id_number",
  "callee_id_name",
  "callee_id_number",
  "owner_id",
  "authorizing_id",
  "authorizing_type",
  "is_internal_leg",
  "inception",
  "custom_channel_vars",
] as const;

/** The fields of call-queue payloads: the ids involved, the caller, and the recipient's state. */
const CALLQ_FIELDS = [
  "queue_id",
  "queue_name",
  "recipient_id",
  "session_id",
  "call_id",
  "caller_id_name",
  "caller_id_number",
  "queue_enter_time",
  "wait_time",
  "reason",
  "availability_state",
  "previous_state",
  "queue_availability",
  // Local additions, only on the events that carry them (issue 19).
  "away_reason",
  "away_since",
] as const;

/** A training run's step (training.run.<id>): the run, its time, and whichever of these the step has. */
export const TRAINING_RUN_FIELDS = [
  "run_id",
  "at_s",
  "at_ms",
  "index",
  "call_id",
  "agent_id",
  "wait_s",
  "outcome",
  "digits",
  "reason",
  "fault",
  "source",
  "applied",
  "devices",
  "callers",
  "from",
  "contact_id",
  "message_id",
  "user_id",
  "call_ids",
  "numbers",
  "to",
  "response_s",
] as const;

const HOOK_FIELDS: Record<FiredHook, readonly string[]> = {
  channel_create: CHANNEL_FIELDS,
  channel_answer: CHANNEL_FIELDS,
  channel_bridge: [...CHANNEL_FIELDS, "original_number", "other_leg_destination_number"],
  channel_destroy: [...CHANNEL_FIELDS, "hangup_cause", "hangup_code", "duration_seconds", "billing_seconds", "ringing_seconds"],
  // A notification's payload is the whole notification, as the hosted service forwards it.
  notifications: [],
  object: ["action", "type", "id"],
  callq_queue_join: CALLQ_FIELDS,
  callq_queue_leave: CALLQ_FIELDS,
  callq_recipient_login: CALLQ_FIELDS,
  callq_recipient_logout: CALLQ_FIELDS,
  callq_recipient_ready: CALLQ_FIELDS,
  callq_recipient_away: CALLQ_FIELDS,
  callq_recipient_offer: CALLQ_FIELDS,
  callq_recipient_delivered: CALLQ_FIELDS,
  callq_recipient_rejected: CALLQ_FIELDS,
  callq_recipient_disposition: [...CALLQ_FIELDS, "disposition"],
  // `alert` (fire or clear) is the event's name, set by buildPayload.
  callq_queue_alert: ["queue_id", "queue_name", "kind", "recipient_id", "availability_state", "value", "limit", "since", "reason"],
  // `callback_step` (requested, offered, dialing, connected, failed) is the event's name, set by buildPayload.
  callq_queue_callback: [...CALLQ_FIELDS, "callback", "retry"],
  // `user_id` is the entry's id, set by buildPayload.
  user_presence: ["name", "first_name", "last_name", "username", "extensions", "presence", "registered", "do_not_disturb", "availability_state", "away_reason"],
  // `run_event` (started, caller_answered, fault_injected ...) is the event's name, set by buildPayload.
  training_run: TRAINING_RUN_FIELDS,
};

/** The hook an event fires, from its routing key; undefined for events no hook listens to. */
export function triggerOf(event: BusEvent): Trigger | undefined {
  const [kind, name] = event.routing_key.split(".");
  if (kind === "call" && name !== undefined) {
    const hook = CHANNEL_HOOKS[name];
    return hook ? { hook } : undefined;
  }
  if (kind === "notification" && name) return { hook: "notifications", notification: name };
  if (kind === "object") return { hook: "object" };
  if (kind === "callq" && name === "queue" && CALLBACK_STEPS.has(event.name)) return { hook: "callq_queue_callback" };
  if (kind === "callq" && (name === "queue" || name === "recipient")) {
    const hooks: Partial<Record<string, CallqHook>> = CALLQ_HOOKS[name];
    const hook = Object.hasOwn(hooks, event.name) ? hooks[event.name] : undefined;
    return hook ? { hook } : undefined;
  }
  if (kind === "callq" && name === "alert" && (event.name === "fire" || event.name === "clear")) return { hook: "callq_queue_alert" };
  if (kind === "directory" && name === "user" && event.name === "presence") return { hook: "user_presence" };
  if (kind === "training" && name === "run") return { hook: "training_run" };
  return undefined;
}

/**
 * The payload: hook_event, timestamp (Gregorian seconds) and account_id always, then the fields
 * the event has of those the hook sends, then custom_data, which overwrites.
 */
export function buildPayload(event: BusEvent, trigger: Trigger, customData?: Record<string, unknown>): Payload {
  const payload: Payload = { hook_event: trigger.hook, timestamp: toGregorianSeconds(event.at), account_id: event.account_id };
  if (trigger.hook === "notifications") {
    Object.assign(payload, event.data);
    payload.hook_event = trigger.hook;
    payload.event_name = trigger.notification;
  } else {
    for (const field of HOOK_FIELDS[trigger.hook]) {
      const value = event.data[field];
      if (value !== undefined) payload[field] = value;
    }
    if (trigger.hook === "callq_queue_alert") payload.alert = event.name;
    if (trigger.hook === "callq_queue_callback") payload.callback_step = event.name.replace(/^callback_/, "");
    if (trigger.hook === "user_presence") payload.user_id = event.data.id;
    if (trigger.hook === "training_run") payload.run_event = event.name;
  }
  if (customData) Object.assign(payload, customData);
  return payload;
}

/** A form or query string: scalars as text, nested values JSON-encoded, null as empty. */
export function formEncode(payload: Payload): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(payload)) {
    if (value === undefined) continue;
    params.append(key, formValue(value));
  }
  return params.toString();
}

function formValue(value: unknown): string {
  if (value === null) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

export interface HookTarget {
  hookId: string;
  accountId: string;
  uri: string;
  /** `get` or `post`. */
  httpVerb: string;
  /** `form` or `json`; POST only. */
  format: string;
}

export interface HookRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
}

/** GET carries the payload in the query string, POST as a form (default) or as JSON. */
export function requestFor(target: HookTarget, payload: Payload): HookRequest {
  // The receiver can tell which subscription called, as the hosted service's X-Hook-ID and X-Account-ID allow.
  const headers: Record<string, string> = { "X-Hook-ID": target.hookId, "X-Account-ID": target.accountId };
  if (target.httpVerb === "get") return { url: withQuery(target.uri, formEncode(payload)), method: "GET", headers };
  if (target.format === "json") {
    return { url: target.uri, method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(payload) };
  }
  return {
    url: target.uri,
    method: "POST",
    headers: { ...headers, "Content-Type": "application/x-www-form-urlencoded" },
    body: formEncode(payload),
  };
}

/** Appends to the URI's own query (kept byte for byte); a fragment is never sent. */
function withQuery(uri: string, query: string): string {
  const hash = uri.indexOf("#");
  const base = hash < 0 ? uri : uri.slice(0, hash);
  if (query === "") return base;
  if (!base.includes("?")) return `${base}?${query}`;
  return base.endsWith("?") || base.endsWith("&") ? `${base}${query}` : `${base}&${query}`;
}
