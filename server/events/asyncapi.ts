// The AsyncAPI 3.0 document of what the server sends and receives outside request/response: the
// event websocket (blackhole protocol on /events and the events port: subscribe, unsubscribe and
// ping with their replies, then event messages per binding family), the webhook payloads per
// hook, and the texting relay payload. Served at /v2/asyncapi.json beside the OpenAPI document.
// 3.0 rather than 2.6: its operations state who sends what and tie each request to its reply,
// which is the websocket's protocol exactly. Payload schemas are JSON Schema draft-07 (AsyncAPI's
// default schema format), so Ajv checks real messages against them in the contract tests.
import { TRAINING_RUN_FIELDS, type FiredHook } from "./webhook-payload.js";
import type { JsonSchema } from "../http/validation.js";
import { ALERT_STATES } from "../callq/alerts.js";
import { AVAILABILITY_STATES } from "../callq/recipient-state.js";
import { SESSION_STATES } from "../callq/session-state.js";

type Doc = Record<string, unknown>;

const str: JsonSchema = { type: "string" };
const int: JsonSchema = { type: "integer" };
const gregorian: JsonSchema = { type: "integer", description: "Gregorian seconds (seconds since year 0), as the hosted service stamps events" };

const object = (required: string[], properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({ type: "object", required, properties, ...extra });

// ---- the websocket requests and replies ---------------------------------------------------

const BINDING: JsonSchema = {
  type: "string",
  maxLength: 256,
  pattern: "^(call|object|callq|qubicle|notification|texting|directory)(\\.([A-Za-z0-9_-]+|\\*|#))*$",
  description: "dot-separated segments; `*` matches one, `#` the rest; `qubicle.` is `callq.`",
};
const REQUEST_ID: JsonSchema = { type: ["string", "number"], description: "echoed in the reply" };

const bindingFields: Record<string, JsonSchema> = {
  account_id: str,
  binding: BINDING,
  bindings: { type: "array", items: BINDING },
};

const subscribe = object(["action"], {
  action: { const: "subscribe" },
  request_id: REQUEST_ID,
  auth_token: { type: "string", minLength: 1, description: "needed on the first request of a connection" },
  account_id: str,
  binding: BINDING,
  bindings: { type: "array", items: BINDING },
  since: { type: ["integer", "string"], description: "catch up from the event log after this seq" },
  data: object([], { ...bindingFields, since: { type: ["integer", "string"] } }),
});

const unsubscribe = object(["action"], {
  action: { const: "unsubscribe" },
  request_id: REQUEST_ID,
  account_id: str,
  binding: BINDING,
  bindings: { type: "array", items: BINDING },
  data: object([], bindingFields),
});

const ping = object(["action"], { action: { const: "ping" }, request_id: REQUEST_ID });

const reply = object(["action", "status", "data"], {
  action: { const: "reply" },
  request_id: REQUEST_ID,
  status: { enum: ["success", "error"] },
  response: { const: "pong", description: "a ping's answer" },
  data: object([], {
    subscribed: { type: "array", items: str },
    unsubscribed: { type: "array", items: str },
    complete: { type: "boolean", description: "false: the event log no longer reaches back to `since`" },
    response: { const: "pong" },
    errors: { type: "array", items: str },
  }),
});

const tooSlow = object(["action", "data"], { action: { const: "error" }, data: object(["errors"], { errors: { type: "array", items: str } }) });

// ---- the event messages, one per binding family ------------------------------------------

const eventMessage = (routingKey: string, names: readonly string[], data: JsonSchema): JsonSchema =>
  object(["action", "subscribed_key", "name", "routing_key", "account_id", "seq", "data"], {
    action: { const: "event" },
    subscribed_key: { type: "string", description: "the binding that delivered the event" },
    name: { enum: [...names] },
    routing_key: { type: "string", pattern: routingKey },
    account_id: str,
    seq: { type: "integer", minimum: 1, description: "the bus sequence; resume with subscribe `since`" },
    data,
  });

const CALL_EVENTS = ["CHANNEL_CREATE", "CHANNEL_PROGRESS", "CHANNEL_ANSWER", "CHANNEL_BRIDGE", "CHANNEL_UNBRIDGE", "CHANNEL_HOLD", "CHANNEL_UNHOLD", "CHANNEL_DESTROY"] as const;

const channelData = object(["call_id", "call_direction", "account_id", "timestamp"], {
  call_id: str,
  call_direction: { enum: ["inbound", "outbound"] },
  caller_id_name: str,
  caller_id_number: str,
  callee_id_name: str,
  callee_id_number: str,
  request: str,
  to: str,
  from: str,
  account_id: str,
  authorizing_id: str,
  authorizing_type: str,
  presence_id: str,
  owner_id: str,
  other_leg_call_id: str,
  timestamp: gregorian,
  hangup_cause: str,
  hangup_code: str,
  duration_seconds: { type: "integer", minimum: 0 },
  billing_seconds: { type: "integer", minimum: 0 },
  ringing_seconds: { type: "integer", minimum: 0 },
});

const OBJECT_ACTIONS = ["doc_created", "doc_edited", "doc_deleted"] as const;
const objectData = object(["action", "type", "id", "account_id", "rev"], { action: { enum: [...OBJECT_ACTIONS] }, type: str, id: str, account_id: str, rev: str });


const sessionFields: Record<string, JsonSchema> = {
  account_id: str,
  session_id: str,
  call_id: str,
  queue_id: str,
  queue_name: str,
  recipient_id: str,
  caller_id_name: str,
  caller_id_number: str,
  queue_enter_time: gregorian,
  state: { enum: [...SESSION_STATES] },
  callback: {
    type: "object",
    additionalProperties: false,
    required: ["number", "requested_at", "attempts"],
    description: "local addition: set once the caller asked to be called back",
    properties: { number: str, requested_at: gregorian, attempts: int, retry_at: { ...gregorian, description: "after a failed attempt: not offered again before" } },
  },
};

/** The callback steps' own fields (local addition, issue 19). */
const callbackStepFields: Record<string, JsonSchema> = {
  number: { type: "string", description: "callback_dialing, callback_connected: the number dialled" },
  attempt: { type: "integer", minimum: 1, description: "callback_offered, callback_dialing, callback_connected, callback_failed: which attempt" },
  max_attempts: { type: "integer", minimum: 1, description: "callback_requested, callback_failed: the queue's attempts" },
  retry: { type: "boolean", description: "callback_failed: whether the callback waits again (else it ends)" },
  retry_at: { ...gregorian, description: "callback_retry: not offered again before" },
};

const queueData = object(["account_id", "session_id", "call_id", "queue_id", "queue_enter_time", "state"], {
  ...sessionFields,
  wait_time: { type: "number", minimum: 0, description: "seconds waited, to the tenth" },
  reason: { type: "string", description: "on leave: why the session ended; callback_failed: no_answer, busy, rejected, unreachable or recipient_hung_up" },
  retry: { type: "boolean", description: "callback_failed: whether the callback waits again" },
});

/** A queue's alert fired or cleared (local addition, issue 20): the alert as it fired. */
const alertData = object(["account_id", "queue_id", "kind", "value", "limit", "since"], {
  account_id: str,
  queue_id: str,
  queue_name: str,
  kind: { enum: ["service_level", "longest_wait", "state_too_long"], description: "service_level: below target over the queue's alerts.service_level_window_s; longest_wait: a caller waited past alerts.longest_wait_s; state_too_long: a member past alerts.state_limits[state]" },
  recipient_id: { type: "string", description: "state_too_long: the member" },
  availability_state: { enum: [...ALERT_STATES], description: "state_too_long: the state held too long" },
  value: { type: "number", description: "when it fired: the window's service level (percent) or the seconds waited or in the state" },
  limit: { type: "number", description: "the target percent, or the limit in seconds" },
  since: { ...gregorian, description: "when it fired" },
  reason: { type: "string", description: "on clear: queue_deleted when the queue went away" },
});

/** The account's queue time against the server's (local addition, issue 18): a training run's clock. */
const queueClock = object(["behind_ms", "paused"], {
  behind_ms: { type: "number", minimum: 0, description: "how far the queue time is behind the server's clock (a live training run's pauses so far); stamps such as queue_enter_time are on the queue time" },
  paused: { type: "boolean", description: "whether the queue time stands still (the run is paused)" },
});
const clockData = object(["account_id", "queue_clock"], { account_id: str, queue_clock: queueClock });

/** A recipient's disposition of a queue call (local addition, issue 19). */
const disposition = object(["code", "label", "note", "set_at"], {
  code: { type: "string", description: "one of the queue's dispositions" },
  label: str,
  note: str,
  set_at: gregorian,
});

const sessionData = object(["account_id", "session_id", "call_id", "queue_id", "state"], {
  ...sessionFields,
  previous_state: { enum: [...SESSION_STATES] },
  disposition: { ...disposition, description: "local addition: on disposition, how the recipient said the call ended" },
  reason: { type: "string", description: "missed: why the offer ended; callback_failed: no_answer, busy, rejected, unreachable or recipient_hung_up" },
  ...callbackStepFields,
});

const recipientData = object(["account_id", "recipient_id"], {
  account_id: str,
  recipient_id: str,
  availability_state: { enum: [...AVAILABILITY_STATES] },
  previous_state: { enum: [...AVAILABILITY_STATES] },
  available: { type: "boolean" },
  unavailable_reason: str,
  away_reason: { type: "string", description: "while Away: the reason chosen (one of the account's callq_away_reasons) or the engine's missed_offers" },
  away_since: { ...gregorian, description: "local addition: while Away, since when (for this reason)" },
  disposition_pending: { type: "boolean", description: "local addition: the last queue call needs a disposition before Ready" },
  disposition: { ...disposition, description: "local addition: on disposition, the code and note given to the call" },
  missed_offers: int,
  last_action_time: gregorian,
  previous_reason: str,
  wrapup_time_seconds: { type: "integer", minimum: 0 },
  active: { type: "boolean", description: "monitor: whether the supervisor listens in" },
  call_id: str,
  caller_id_name: str,
  caller_id_number: str,
  queue_id: str,
  session_id: str,
  callback_number: { type: "string", description: "local addition: offer, delivered: the call is a callback to this number" },
});

/** A scheduled callback's reminder (local addition, issue 19): the callback as it is. */
const callbackData = object(["account_id", "callback_id", "number", "remind_at", "user_id", "state"], {
  account_id: str,
  callback_id: str,
  id: str,
  number: str,
  remind_at: gregorian,
  note: str,
  user_id: { type: "string", description: "whom the reminder is for" },
  queue_id: str,
  created_by: str,
  state: { enum: ["scheduled", "reminded"] },
});

const NOTIFICATION_TYPES = ["register", "deregister", "missed_call"] as const;
const notificationData = object(["type", "account_id"], {
  type: { enum: [...NOTIFICATION_TYPES] },
  account_id: str,
  device_id: str,
  owner_id: str,
  username: str,
  realm: str,
  contact: str,
  expires: { type: "integer", minimum: 0 },
  reason: str,
  call_id: str,
  caller_id_name: str,
  caller_id_number: str,
  callee_id_name: str,
  callee_id_number: str,
  from: str,
  from_user: str,
  from_realm: str,
  to: str,
  to_user: str,
  to_realm: str,
  timestamp: gregorian,
  call_bridged: { type: "boolean" },
  message_left: { type: "boolean" },
  hangup_cause: str,
});

const textingData = object(["id", "conversation_id", "user_id", "direction", "from", "to", "body", "media", "status", "read", "date"], {
  id: str,
  conversation_id: str,
  user_id: str,
  direction: { enum: ["in", "out"] },
  from: str,
  to: str,
  body: str,
  media: { type: "array", items: str },
  status: { enum: ["queued", "sent", "delivered", "failed", "received"] },
  error: str,
  read: { type: "boolean" },
  date: { type: "integer", description: "Unix milliseconds" },
  contact_name: str,
  contact_number: str,
  contact_opted_out: { type: "boolean" },
});

// ---- directory presence (local addition, issue 19 helper D) ----------------------------------

const PRESENCES = ["on_call", "ringing", "offline", "do_not_disturb", "ready", "away", "wrapup", "available"] as const;
const directoryData = object(["account_id", "id", "name", "extensions", "presence", "registered", "do_not_disturb"], {
  account_id: str,
  id: str,
  name: str,
  first_name: str,
  last_name: str,
  username: str,
  extensions: { type: "array", items: str },
  presence: { enum: [...PRESENCES] },
  registered: { type: "boolean", description: "one of the user's enabled devices is registered" },
  do_not_disturb: { type: "boolean" },
  availability_state: { enum: [...AVAILABILITY_STATES] },
  away_reason: str,
});

/** A callback's steps (local addition, issue 19): on the session, and the queue's view of them. */
const CALLBACK_SESSION_EVENTS = ["callback_requested", "callback_offered", "callback_dialing", "callback_connected", "callback_failed", "callback_retry"] as const;
const CALLBACK_QUEUE_EVENTS = ["callback_requested", "callback_offered", "callback_dialing", "callback_connected", "callback_failed"] as const;

// ---- training runs (local addition, issue 18) -------------------------------------------------

export const TRAINING_RUN_EVENTS = ["started", "paused", "resumed", "ended", "caller_arrived", "caller_not_placed", "caller_waiting", "caller_answered", "caller_abandoned", "caller_digits", "caller_left", "caller_texted", "text_answered", "fault_injected", "fault_cleared"] as const;
const trainingRunProps: Record<string, JsonSchema> = {
  account_id: str,
  run_id: str,
  at_s: { type: "number", description: "run time from the start, pauses left out" },
  at_ms: { type: "integer", description: "Unix ms on the server's clock" },
  name: { enum: [...TRAINING_RUN_EVENTS] },
  index: { type: "integer", description: "the caller's place in arrival order" },
  call_id: str,
  agent_id: { type: ["string", "null"] },
  wait_s: { type: "number" },
  outcome: str,
  digits: str,
  reason: str,
  fault: object(["kind"], {
    kind: str,
    target: str,
    count: { type: "integer" },
    duration_s: { type: "number" },
    direction: { enum: ["to_agent", "from_agent"] },
  }, { description: "fault_injected and fault_cleared: the fault as asked (kind, target, count, duration_s, direction), with the defaults it took" }),
  source: { enum: ["scenario", "trainer"], description: "fault_injected: from the scenario's timeline or by the trainer's hand" },
  applied: { type: "boolean", description: "fault_injected: false when the fault could not act (the reason says why)" },
  devices: { type: "array", items: str, description: "drop_registration: the devices whose registrations were forgotten" },
  callers: { type: "array", items: { type: "integer" }, description: "burst: the indexes of the callers it added" },
  from: { type: "string", description: "text_stop: the persona's number that texted STOP" },
  contact_id: str,
  message_id: { type: "string", description: "text_stop, caller_texted: the inbound text; text_answered: the reply" },
  user_id: { type: "string", description: "one_way_audio: the trainee; caller_texted and text_answered: the user whose texting number was texted" },
  call_ids: { type: "array", items: str, description: "one_way_audio: the trainee's legs muted (fault_injected: those up then; fault_cleared: every one, those bridged in the window too)" },
  numbers: { type: "array", items: str, description: "text_undelivered: the numbers whose texts fail (a # is any digit)" },
  to: { type: "string", description: "caller_texted: the texting number the persona texted" },
  response_s: { type: "number", description: "text_answered: seconds from the persona's text to the user's first reply to its number" },
};
const trainingRunData = object(["account_id", "run_id", "at_s", "at_ms", "name"], trainingRunProps);

/** Each event message: its name in the document, the routing keys it covers, its payload. */
export const EVENT_MESSAGES: Record<string, { summary: string; payload: JsonSchema }> = {
  callEvent: { summary: "A call leg's state changed (binding call.<EVENT>.<call_id>)", payload: eventMessage("^call\\.CHANNEL_[A-Z]+\\.[^.]+$", CALL_EVENTS, channelData) },
  objectEvent: { summary: "A configuration document was created, edited or deleted (object.<action>.<type>)", payload: eventMessage("^object\\.doc_(created|edited|deleted)\\.[a-z_]+$", OBJECT_ACTIONS, objectData) },
  callqQueueEvent: {
    summary: "A caller's way through a queue (callq.queue.<queue_id>)",
    payload: eventMessage("^callq\\.queue\\.[^.]+$", ["join", "offer", "answered", "timeout", "abandoned", "leave", ...CALLBACK_QUEUE_EVENTS], queueData),
  },
  callqRecipientEvent: {
    summary: "A recipient's availability and calls (callq.recipient.<user_id>)",
    payload: eventMessage("^callq\\.recipient\\.[^.]+$", ["login", "logout", "ready", "away", "offer", "delivered", "reject", "wrapup", "available", "unavailable", "monitor", "wiretap", "disposition"], recipientData),
  },
  callqAlertEvent: {
    summary: "Local addition: a queue's alert fired or cleared, once per change (callq.alert.<queue_id>)",
    payload: eventMessage("^callq\\.alert\\.[^.]+$", ["fire", "clear"], alertData),
  },
  callqSessionEvent: {
    summary: "A queue session's state machine (callq.session.<session_id>)",
    payload: eventMessage("^callq\\.session\\.[^.]+$", ["create", "offer", "missed", "answered", "handled", "abandoned", "timeout", "removed", "end", "disposition", ...CALLBACK_SESSION_EVENTS], sessionData),
  },
  callqClockEvent: {
    summary: "Local addition: the account's queue time stopped, went on, or is the server's again (callq.clock.<account_id>)",
    payload: eventMessage("^callq\\.clock\\.[^.]+$", ["clock"], clockData),
  },
  callqCallbackEvent: {
    summary: "Local addition: a scheduled callback's time has come: remind its user (callq.callback.<callback_id>)",
    payload: eventMessage("^callq\\.callback\\.[^.]+$", ["reminder"], callbackData),
  },
  notificationEvent: {
    summary: "Registrations and missed calls (notification.<type>.<id>)",
    payload: eventMessage("^notification\\.(register|deregister|missed_call)\\.[^.]+$", NOTIFICATION_TYPES, notificationData),
  },
  directoryEvent: {
    summary: "Local addition: a user's presence in the account directory changed (directory.user.<user_id>)",
    payload: eventMessage("^directory\\.user\\.[^.]+$", ["presence"], directoryData),
  },
  textingEvent: { summary: "A text message was created or changed (texting.message.<id>)", payload: eventMessage("^texting\\.message\\.[^.]+$", ["created", "updated"], textingData) },
  trainingRunEvent: {
    summary: "Local addition: a step of a live training run: started, paused, resumed, ended, each caller's way (texts from personas and their answers too), and faults injected and cleared (training.run.<run_id>)",
    payload: eventMessage("^training\\.run\\.[^.]+$", TRAINING_RUN_EVENTS, trainingRunData),
  },
};

// ---- webhooks and the texting relay -------------------------------------------------------

/** The hooks the bus fires today (webhook-payload.ts); the others of the catalogue send nothing yet. */
export const FIRED_HOOKS: readonly FiredHook[] = [
  "channel_create",
  "channel_answer",
  "channel_bridge",
  "channel_destroy",
  "notifications",
  "object",
  "callq_queue_join",
  "callq_queue_leave",
  "callq_recipient_login",
  "callq_recipient_logout",
  "callq_recipient_ready",
  "callq_recipient_away",
  "callq_recipient_offer",
  "callq_recipient_delivered",
  "callq_recipient_rejected",
  "callq_recipient_disposition",
  "callq_queue_alert",
  "callq_queue_callback",
  "user_presence",
  "training_run",
];

const hookBase: Record<string, JsonSchema> = { timestamp: gregorian, account_id: str };

const channelHookFields = Object.fromEntries(
  ["call_direction", "request", "to", "from", "call_id", "other_leg_call_id", "caller_id_name", "caller_id_number", "callee_id_name", "callee_id_number", "owner_id", "authorizing_id", "authorizing_type"].map((k) => [k, str]),
);

const callqHookFields: Record<string, JsonSchema> = {
  queue_id: str,
  queue_name: str,
  recipient_id: str,
  session_id: str,
  call_id: str,
  caller_id_name: str,
  caller_id_number: str,
  queue_enter_time: gregorian,
  wait_time: { type: "number" },
  reason: str,
  availability_state: { enum: [...AVAILABILITY_STATES] },
  previous_state: str,
};
const HOOK_PAYLOADS: Record<string, Record<string, JsonSchema>> = {
  channel_create: channelHookFields,
  channel_answer: channelHookFields,
  channel_bridge: { ...channelHookFields, original_number: str, other_leg_destination_number: str },
  channel_destroy: { ...channelHookFields, hangup_cause: str, hangup_code: str, duration_seconds: int, billing_seconds: int, ringing_seconds: int },
  notifications: { event_name: { enum: [...NOTIFICATION_TYPES] }, type: { enum: [...NOTIFICATION_TYPES] }, device_id: str, owner_id: str, call_id: str },
  object: { action: { enum: [...OBJECT_ACTIONS] }, type: str, id: str },
  callq_recipient_disposition: { ...callqHookFields, disposition: { type: "object", description: "code, label, note, set_at (Gregorian seconds)" } },
  callq_queue_alert: {
    alert: { enum: ["fire", "clear"] },
    queue_id: str,
    queue_name: str,
    kind: { enum: ["service_level", "longest_wait", "state_too_long"] },
    recipient_id: str,
    availability_state: str,
    value: { type: "number" },
    limit: { type: "number" },
    since: gregorian,
    reason: str,
  },
  callq_queue_callback: {
    ...callqHookFields,
    callback_step: { enum: ["requested", "offered", "dialing", "connected", "failed"] },
    callback: { type: "object", description: "number, requested_at and retry_at (Gregorian seconds), attempts" },
    retry: { type: "boolean", description: "on failed: whether the callback waits for another attempt" },
  },
  user_presence: {
    user_id: str,
    name: str,
    presence: { enum: [...PRESENCES] },
    registered: { type: "boolean" },
    do_not_disturb: { type: "boolean" },
    availability_state: str,
    away_reason: str,
    extensions: { type: "array", items: str },
  },
  training_run: {
    run_event: { enum: [...TRAINING_RUN_EVENTS] },
    ...Object.fromEntries(TRAINING_RUN_FIELDS.map((field) => [field, trainingRunProps[field] ?? {}])),
  },
};

/** A hook's JSON payload; as a form or query string every value is text (objects JSON-encoded). */
export function webhookPayloadSchema(hook: string): JsonSchema {
  return object(["hook_event", "timestamp", "account_id"], { hook_event: { const: hook }, ...hookBase, ...(HOOK_PAYLOADS[hook] ?? callqHookFields) }, {
    description: "custom_data's keys are added on top and overwrite",
  });
}

export const RELAY_PAYLOAD: JsonSchema = object(
  ["MessageID", "ConversationID", "ToNumber", "FromNumber", "MessageBody", "MessageDirection", "ServiceUserID", "ContactName", "ContactEmail", "Media"],
  {
    MessageID: str,
    ConversationID: str,
    ToNumber: str,
    FromNumber: str,
    MessageBody: str,
    MessageDirection: { enum: ["in", "out"] },
    ServiceUserID: str,
    ContactName: str,
    ContactEmail: { type: "string", description: "empty when the contact has none" },
    Media: { type: "array", items: str },
  },
  { additionalProperties: false },
);

// ---- the document --------------------------------------------------------------------------

const msgRef = (channel: string, name: string): Doc => ({ $ref: `#/channels/${channel}/messages/${name}` });

function message(name: string, summary: string, payload: JsonSchema, extra: Doc = {}): Doc {
  return { name, title: name, summary, contentType: "application/json", payload, ...extra };
}

export function buildAsyncApi(version: string): Doc {
  const eventMessages = Object.fromEntries(Object.entries(EVENT_MESSAGES).map(([name, m]) => [name, message(name, m.summary, m.payload)]));
  const hookMessages = Object.fromEntries(
    FIRED_HOOKS.map((hook) => [
      hook,
      message(hook, `The ${hook} webhook's payload`, webhookPayloadSchema(hook), {
        headers: object(["X-Hook-ID", "X-Account-ID"], { "X-Hook-ID": str, "X-Account-ID": str }),
        description: "POST as JSON (format json), as a form (form-data, the default), or GET with the payload in the query string (http_verb get).",
      }),
    ]),
  );
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Switchboard local telephony events",
      version,
      description:
        "What the local service sends besides HTTP answers: the event websocket (the hosted service's blackhole protocol), the webhook payloads and the texting relay. The HTTP API is in /v2/openapi.json.",
    },
    defaultContentType: "application/json",
    servers: {
      console: { host: "127.0.0.1:8000", protocol: "ws", pathname: "/events", description: "the main port (8000 by default, or the next free one)" },
      eventsPort: { host: "127.0.0.1:5555", protocol: "ws", description: "the classic events port (--events-port), at / and /events" },
      receiver: {
        host: "{receiver}",
        protocol: "http",
        description: "a subscriber's own server: the webhook's uri, or the user's texting relay_url",
        variables: { receiver: { description: "host and port of the URL the subscriber registered" } },
      },
    },
    channels: {
      events: {
        address: "/events",
        title: "Event websocket",
        servers: [{ $ref: "#/servers/console" }, { $ref: "#/servers/eventsPort" }],
        messages: {
          subscribe: message("subscribe", "Bind to events of an account, optionally catching up `since` a seq", subscribe),
          unsubscribe: message("unsubscribe", "Drop bindings (all of the account's, or all, when none are named)", unsubscribe),
          ping: message("ping", "Keep-alive", ping),
          reply: message("reply", "The answer to a request, by request_id", reply),
          tooSlow: message("tooSlow", "Sent once before the server closes a connection that fell too far behind (close code 4008)", tooSlow),
          ...eventMessages,
        },
      },
      webhooks: {
        address: null,
        title: "Webhook deliveries",
        description: "Sent to each enabled webhook's uri, with its http_verb and format; retried as the webhook's retries say.",
        servers: [{ $ref: "#/servers/receiver" }],
        messages: hookMessages,
      },
      textingRelay: {
        address: null,
        title: "Texting relay",
        description: "Each text to or from a user with a relay_url is POSTed there as JSON, retried as webhooks are.",
        servers: [{ $ref: "#/servers/receiver" }],
        messages: { relay: message("relay", "A text message relayed to the user's relay_url", RELAY_PAYLOAD, { headers: object(["X-Account-ID"], { "X-Account-ID": str }) }) },
      },
    },
    operations: {
      receiveSubscribe: {
        action: "receive",
        channel: { $ref: "#/channels/events" },
        messages: [msgRef("events", "subscribe")],
        reply: { channel: { $ref: "#/channels/events" }, messages: [msgRef("events", "reply")] },
      },
      receiveUnsubscribe: {
        action: "receive",
        channel: { $ref: "#/channels/events" },
        messages: [msgRef("events", "unsubscribe")],
        reply: { channel: { $ref: "#/channels/events" }, messages: [msgRef("events", "reply")] },
      },
      receivePing: {
        action: "receive",
        channel: { $ref: "#/channels/events" },
        messages: [msgRef("events", "ping")],
        reply: { channel: { $ref: "#/channels/events" }, messages: [msgRef("events", "reply")] },
      },
      sendEvent: {
        action: "send",
        channel: { $ref: "#/channels/events" },
        summary: "Events matching the connection's bindings, in seq order",
        messages: [...Object.keys(EVENT_MESSAGES), "tooSlow"].map((name) => msgRef("events", name)),
      },
      sendWebhook: { action: "send", channel: { $ref: "#/channels/webhooks" }, messages: FIRED_HOOKS.map((hook) => msgRef("webhooks", hook)) },
      sendRelay: { action: "send", channel: { $ref: "#/channels/textingRelay" }, messages: [msgRef("textingRelay", "relay")] },
    },
  };
}
