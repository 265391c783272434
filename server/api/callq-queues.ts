// /v2/accounts/{account_id}/callq_queues: call queues (configuration with the spec's defaults,
// bounds and old field names), their membership, status, multi-status, sessions and start-up.
// The configuration lives in the store; everything live is asked of the queue engine.
import type { FastifyInstance } from "fastify";
import { CallqError, type CallqEngine } from "../callq/engine.js";
import { isRecipientUser } from "../callq-host/index.js";
import { ALERT_BOUNDS, ALERT_STATES } from "../callq/alerts.js";
import { CALLBACK_BOUNDS, CALLBACK_DEFAULTS, CALLBACK_DIGIT_PATTERN, DISPOSITION_CODE_PATTERN, QUEUE_ALIASES, QUEUE_BOUNDS, QUEUE_DEFAULTS, SERVICE_LEVEL_BOUNDS, SERVICE_LEVEL_DEFAULTS, WRAPUP_POLICIES, withoutAliases } from "../callq/queue-config.js";
import { ROUTERS } from "../callq/queue-router.js";
import { MediaReferenceError, resolveMediaReference } from "../media/reference.js";
import { ifMatch, registerEndpoint, type Ctx, type Handler, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { isObject } from "../http/request.js";
import { dataObject, docOutcome, listOutcome, notFound, registerDocResource, storeError, type Data, type WriteCtx } from "../http/resource.js";
import { fieldError, validate, type FieldErrors, type JsonSchema } from "../http/validation.js";
import type { Collection, StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";
import { crmLinkSchema } from "./crm-link.js";

/**
 * The longest wait Node's timers keep (2^31-1 ms): a longer timeout would fire at once. The spec
 * sets only minimums; these maxima are far beyond any real queue and keep the engine's timers true.
 */
const MAX_SECONDS = 2_147_483;
const MAX_MS = 2_147_483_647;

const seconds = (min: number) => ({ type: "integer", minimum: min, maximum: MAX_SECONDS });

export const queueSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    queue_type: { type: "string", enum: ["queue_basic"] },
    queue_router: { type: "string", enum: [...ROUTERS] },
    timeout: seconds(QUEUE_BOUNDS.timeout),
    ring_timeout: seconds(QUEUE_BOUNDS.ring_timeout),
    agent_wrapup_time: seconds(QUEUE_BOUNDS.agent_wrapup_time),
    tick_time: { type: "integer", minimum: QUEUE_BOUNDS.tick_time, maximum: MAX_MS },
    hold_treatment: { type: "string", minLength: 1, description: "played to waiting callers: a media id of the account (its WAV audio uploaded), or a tone_stream:// or silence_stream:// URI" },
    force_away_on_reject: { type: "boolean" },
    max_missed_offers: {
      type: "integer",
      minimum: 0,
      maximum: 1000,
      description: "local addition: offers a recipient may miss in a row (rejected or not answered) before they are set Away with away_reason missed_offers; 0: never (default 3)",
    },
    timeout_if_size_exceeds: { type: "integer", minimum: 0 },
    timeout_immediately_if_empty: { type: "boolean" },
    timeout_redirect: { type: "string", description: "the id of another queue of the account" },
    service_level: {
      type: "object",
      additionalProperties: false,
      description: `local addition: the queue's service-level goal, target_percent of callers answered within answered_within_s seconds (default ${SERVICE_LEVEL_DEFAULTS.target_percent}% within ${SERVICE_LEVEL_DEFAULTS.answered_within_s} s); the status's stats.service_level measures it`,
      properties: {
        answered_within_s: { type: "integer", minimum: SERVICE_LEVEL_BOUNDS.answered_within_s.min, maximum: SERVICE_LEVEL_BOUNDS.answered_within_s.max },
        target_percent: { type: "number", minimum: SERVICE_LEVEL_BOUNDS.target_percent.min, maximum: SERVICE_LEVEL_BOUNDS.target_percent.max },
      },
    },
    alerts: {
      type: "object",
      additionalProperties: false,
      description:
        "local addition: when the queue raises an alert (events fire and clear on callq.alert.<queue_id>; the status's alerts lists those that hold); a limit absent raises no alert of its kind. service_level_window_s: the service level over the sessions that stopped waiting in the last that many seconds is below target_percent; longest_wait_s: a caller has waited longer; state_limits: a member has been in that availability state longer",
      properties: {
        service_level_window_s: { type: "integer", minimum: ALERT_BOUNDS.min, maximum: ALERT_BOUNDS.max },
        longest_wait_s: { type: "integer", minimum: ALERT_BOUNDS.min, maximum: ALERT_BOUNDS.max },
        state_limits: {
          type: "object",
          additionalProperties: false,
          properties: Object.fromEntries(ALERT_STATES.map((state) => [state, { type: "integer", minimum: ALERT_BOUNDS.min, maximum: ALERT_BOUNDS.max }])),
        },
      },
    },
    members: { type: "object", readOnly: true, additionalProperties: { const: "" }, description: "read-only: recipient ids; change with /recipients" },
    ...dispositionFields(),
    crm_link: crmLinkSchema,
    callback: {
      type: "object",
      additionalProperties: false,
      required: ["enabled"],
      description: `local addition: callbacks. A caller waiting in the queue hears three short beeps on joining and may press digit (default ${CALLBACK_DEFAULTS.digit}) to be called back: they keep their place without holding the line, and when their turn comes a recipient is offered the callback (the offer carries X-Callback-Number) and the server dials the caller once they accept. A failed attempt (no answer, busy, refused, unreachable) waits again in its place for retry_delay_s (default ${CALLBACK_DEFAULTS.retry_delay_s}) until max_attempts (default ${CALLBACK_DEFAULTS.max_attempts}) are spent. Absent or enabled false: no callbacks, as the hosted service`,
      properties: {
        enabled: { type: "boolean" },
        digit: { type: "string", pattern: CALLBACK_DIGIT_PATTERN, description: "one DTMF digit: 0-9, * or #" },
        max_attempts: { type: "integer", minimum: CALLBACK_BOUNDS.max_attempts.min, maximum: CALLBACK_BOUNDS.max_attempts.max },
        retry_delay_s: { type: "integer", minimum: CALLBACK_BOUNDS.retry_delay_s.min, maximum: CALLBACK_BOUNDS.retry_delay_s.max },
      },
    },
  },
};

/** Dispositions and wrap-up (local additions, issue 19): absent, a queue behaves as the hosted service's. */
function dispositionFields(): Record<string, JsonSchema> {
  return {
    dispositions: {
      type: "array",
      maxItems: 100,
      description: "local addition: the codes a recipient may give a call of this queue (how it ended), in the order the console lists them; codes are unique",
      items: {
        type: "object",
        required: ["code", "label"],
        additionalProperties: false,
        properties: {
          code: { type: "string", pattern: DISPOSITION_CODE_PATTERN, description: "lower case letters, digits, _ and -, at most 64" },
          label: { type: "string", minLength: 1, maxLength: 128 },
        },
      },
    },
    disposition_required: {
      type: "boolean",
      description: "local addition: a recipient may not be Ready again before giving the call a disposition (needs dispositions); default false",
    },
    wrapup_policy: {
      type: "string",
      enum: [...WRAPUP_POLICIES],
      description:
        "local addition: after a call, optional: no wrap-up; required: a wrap-up the recipient ends themself; timeboxed (default): agent_wrapup_time, may be left early; timeboxed_no_exit: agent_wrapup_time, may not be left early",
    },
  };
}

/** Codes given twice, or a disposition required with no code to give. */
function dispositionErrors(data: Data): FieldErrors {
  const errors: FieldErrors = {};
  const codes = Array.isArray(data.dispositions) ? data.dispositions.map((d: unknown) => (isObject(d) ? d.code : undefined)) : [];
  const twice = codes.find((code, i) => codes.indexOf(code) !== i);
  if (twice !== undefined) errors.dispositions = { unique: { message: "each disposition code may be given once", value: twice } };
  if (data.disposition_required === true && codes.length === 0) {
    errors.disposition_required = { dispositions: { message: "a required disposition needs at least one code in dispositions", value: true } };
  }
  return errors;
}

const MEMBERSHIP_ACTIONS = ["add", "remove", "set"] as const;
type MembershipAction = (typeof MEMBERSHIP_ACTIONS)[number];

const membershipSchema: JsonSchema = {
  type: "object",
  required: ["action", "members"],
  properties: {
    action: { type: "string", enum: [...MEMBERSHIP_ACTIONS] },
    members: { type: "array", items: { type: "string" } },
  },
};

const SESSION_ACTIONS = ["remove"] as const;

const sessionActionSchema: JsonSchema = {
  type: "object",
  required: ["action"],
  properties: { action: { type: "string", enum: [...SESSION_ACTIONS] } },
};

const queueIdsSchema: JsonSchema = {
  type: "object",
  properties: { queue_ids: { type: "array", items: { type: "string" } } },
};

/** The engine, or a refusal when the server runs without it. */
export function callqEngine(deps: ApiDeps, field = "queue"): CallqEngine {
  if (!deps.callq) throw new ApiError("invalid_data", { [field]: { unavailable: { message: "the call-queue engine is not running" } } });
  return deps.callq;
}

/** What the ids of one engine call were, so an engine refusal can name the one it is about. */
export interface CallqIds {
  recipient?: string;
  queue?: string;
  session?: string;
  action?: string;
}

/** An engine refusal in the API's words: a missing id is 404 with it as cause, an illegal step 400. */
export function callqError(err: unknown, ids: CallqIds): unknown {
  if (!(err instanceof CallqError)) return err;
  switch (err.code) {
    case "no_recipient":
      return new ApiError("bad_identifier", { cause: err.cause ?? ids.recipient ?? "", message: err.message });
    case "no_queue":
      return new ApiError("bad_identifier", { cause: err.cause ?? ids.queue ?? "", message: err.message });
    case "no_session":
      return new ApiError("bad_identifier", { cause: err.cause ?? ids.session ?? "", message: err.message });
    case "illegal":
      return new ApiError("invalid_data", { action: { illegal: { message: err.message, value: ids.action } } });
    // An illegal step with its reason named, so the console can say what to do.
    case "disposition_required":
    case "wrapup_locked":
      return new ApiError("invalid_data", { action: { [err.code]: { message: err.message, value: ids.action } } });
    case "bad_disposition":
      return new ApiError("invalid_data", { code: { enum: { message: err.message, value: err.id } } });
  }
}

/** Runs one engine call, turning its refusals into API errors. */
export async function askEngine<T>(ids: CallqIds, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw callqError(err, ids);
  }
}

/** The member ids of a stored queue, in offer order. */
export function membersOf(data: Data): string[] {
  return isObject(data.members) ? Object.keys(data.members) : [];
}

export function isRecipient(user: StoredDoc | undefined): boolean {
  return isRecipientUser(user);
}

/** A supervisor: `call_monitor` in the user's callq.permissions (monitoring, wiretap fields, queue recordings). */
export function hasCallMonitor(user: StoredDoc | undefined): boolean {
  const callq = user?.data.callq;
  return isObject(callq) && Array.isArray(callq.permissions) && callq.permissions.includes("call_monitor");
}

/**
 * The document to validate: old names moved to the new ones, the spec's defaults, and `members`
 * as stored (read-only: whatever the client sends for it is ignored).
 */
export function queueDefaults(data: Data, ctx: Pick<WriteCtx, "input" | "verb" | "existing">): Data {
  const merged: Data = { ...data };
  if (ctx.verb === "patch") {
    // The merge kept the stored new name beside a PATCHed old one; the PATCH must win.
    for (const [alias, field] of Object.entries(QUEUE_ALIASES)) {
      if (!(alias in ctx.input) || field in ctx.input) continue;
      if (ctx.input[alias] === null) delete merged[field];
      else merged[field] = ctx.input[alias];
    }
  }
  const named = withoutAliases(merged);
  const members = ctx.existing?.data.members;
  return { ...QUEUE_DEFAULTS, ...named, members: isObject(members) ? members : {} };
}

export function queueRow(doc: StoredDoc): Data {
  return { id: doc.id, name: doc.data.name };
}

export function registerCallqQueues(app: FastifyInstance, deps: ApiDeps): void {
  const base = "/v2/accounts/:account_id/callq_queues";
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";
  const queuesOf = (ctx: Ctx) => deps.collection(accountOf(ctx), "callq_queues");
  const queueOf = async (ctx: Ctx): Promise<StoredDoc> => {
    const id = ctx.params.id ?? "";
    const doc = (await queuesOf(ctx)).get(id);
    if (!doc) throw notFound(id);
    return doc;
  };

  const check = async (data: Data, ctx: WriteCtx): Promise<void> => {
    const errors: FieldErrors = dispositionErrors(data);
    const redirect = data.timeout_redirect;
    if (typeof redirect === "string") {
      if (redirect === ctx.existing?.id) errors.timeout_redirect = { self: { message: "a queue cannot redirect timed-out calls to itself", value: redirect } };
      else if (!ctx.collection.has(redirect)) errors.timeout_redirect = { not_found: { message: "no queue with this id", value: redirect } };
    }
    const hold = data.hold_treatment;
    if (typeof hold === "string") {
      try {
        resolveMediaReference(hold, await deps.collection(ctx.accountId, "media"));
      } catch (err) {
        if (!(err instanceof MediaReferenceError)) throw err;
        errors.hold_treatment = { [err.rule]: { message: err.message, value: hold } };
      }
    }
    if (Object.keys(errors).length) throw new ApiError("validation_error", errors);
  };

  registerDocResource(app, deps, {
    name: "callq_queues",
    collection: "callq_queues",
    schema: queueSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    prepare: queueDefaults,
    check,
    afterDelete: async (doc, ctx) => {
      // No queue may send its timed-out callers to a queue that is gone.
      for (const other of ctx.collection.all()) {
        if (other.data.timeout_redirect !== doc.id) continue;
        const { timeout_redirect: _gone, ...rest } = other.data;
        await ctx.collection.update(other.id, rest);
      }
    },
    row: queueRow,
    summaries: {
      list: "List the call queues (id, name)",
      create: "Create a call queue (old names queue_name, agent_connect_timeout, queue_timeout accepted)",
      read: "Read a call queue's configuration, members included",
    },
  });

  // --- Live state, from the engine. Static segments (status, recipients, ensure_started) win
  // over the item path's {id} in the router, so these are never read as queue ids.

  const multiStatus: Handler = async (ctx) => {
    const accountId = accountOf(ctx);
    const queues = await queuesOf(ctx);
    const ids = (await idListOf(ctx, "queue_ids")) ?? queues.all().map((q) => q.id).sort();
    const missing = ids.find((id) => !queues.has(id));
    if (missing !== undefined) throw notFound(missing);
    const engine = callqEngine(deps);
    const data: Data = {};
    for (const id of ids) data[id] = await askEngine({ queue: id }, () => engine.queueStatus(accountId, id));
    return { data };
  };
  registerEndpoint(app, deps, {
    path: `${base}/status`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: { summary: "Status of several queues: queue_ids in the body or the query string (comma-separated); all queues when absent", body: queueIdsSchema, handler: multiStatus },
      POST: { summary: "Status of several queues (as GET, for clients that cannot send a GET body)", body: queueIdsSchema, handler: multiStatus },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/recipients`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: {
        summary: "Every queue's members: [{queue_id, members:[user_id]}]",
        handler: async (ctx) => listOutcome(await queuesOf(ctx), ctx, { row: (doc) => ({ queue_id: doc.id, members: membersOf(doc.data) }) }),
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/ensure_started`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: { summary: "Start every queue of the account and list their ids", handler: async (ctx) => ({ data: await callqEngine(deps).ensureStarted(accountOf(ctx)) }) },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/status`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: {
        summary: "A queue's status: recipients logged in and available, and today's stats",
        handler: async (ctx) => {
          const queue = await queueOf(ctx);
          return { data: await askEngine({ queue: queue.id }, () => callqEngine(deps).queueStatus(accountOf(ctx), queue.id)) };
        },
      },
    },
  });

  const sessionList = async (ctx: Ctx, queueId: string): Promise<Outcome> => {
    const sessions = await askEngine({ queue: queueId }, () => callqEngine(deps).queueSessions(accountOf(ctx), queueId));
    return { data: [{ queue_id: queueId, session_list: sessions }] };
  };
  registerEndpoint(app, deps, {
    path: `${base}/:id/sessions`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: { summary: "The sessions in a queue: [{queue_id, session_list}]", handler: async (ctx) => sessionList(ctx, (await queueOf(ctx)).id) },
    },
  });
  registerEndpoint(app, deps, {
    path: `${base}/:id/sessions/:session_id`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      POST: {
        summary: "Act on one session: {action:\"remove\"} ends a waiting session; answers the queue's sessions",
        admin: true,
        body: sessionActionSchema,
        handler: async (ctx) => {
          const queue = await queueOf(ctx);
          const sessionId = ctx.params.session_id ?? "";
          const action = actionOf(dataObject(ctx), SESSION_ACTIONS, "session");
          await askEngine({ queue: queue.id, session: sessionId, action }, () => callqEngine(deps).removeSession(accountOf(ctx), queue.id, sessionId));
          return sessionList(ctx, queue.id);
        },
      },
    },
  });

  // The queue is read and written back with nothing awaited between, so no other write is lost.
  const changeMembers = async (ctx: Ctx, next: (current: string[], users: Collection) => string[]): Promise<Outcome> => {
    const queues = await queuesOf(ctx);
    const users = await deps.collection(accountOf(ctx), "users");
    const queue = await queueOf(ctx);
    return docOutcome(await writeMembers(queues, queue, next(membersOf(queue.data), users), ifMatch(ctx.request)));
  };
  registerEndpoint(app, deps, {
    path: `${base}/:id/recipients`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: {
        summary: "A queue's recipients: id, permission_roles, permissions",
        handler: async (ctx) => {
          const queue = await queueOf(ctx);
          const members = new Set(membersOf(queue.data));
          return listOutcome(await deps.collection(accountOf(ctx), "users"), ctx, { row: recipientEntry, where: (u) => members.has(u.id) });
        },
      },
      POST: {
        summary: "Change a queue's members: action add, remove or set (exactly this list), members: user ids; answers the queue",
        admin: true,
        body: membershipSchema,
        handler: async (ctx) => {
          const data = dataObject(ctx);
          const action = actionOf(data, MEMBERSHIP_ACTIONS, "membership");
          validate(membershipSchema, data);
          const given = unique(data.members as string[]);
          return changeMembers(ctx, (current, users) => {
            if (action !== "remove") mustBeRecipients(users, given);
            return nextMembers(action, current, given);
          });
        },
      },
      DELETE: { summary: "Clear a queue's members; answers the queue", admin: true, handler: async (ctx) => changeMembers(ctx, () => []) },
    },
  });
}

/**
 * A list of ids named `key`: from the envelope's data (an array of strings), else the query string
 * (comma-separated, or the parameter repeated); undefined when neither has it. Duplicates dropped.
 */
export async function idListOf(ctx: Ctx, key: string): Promise<string[] | undefined> {
  const data = ctx.request.method === "GET" ? await getBodyData(ctx) : ctx.req.data;
  if (isObject(data) && data[key] !== undefined) {
    const given = data[key];
    if (!Array.isArray(given) || !given.every((v): v is string => typeof v === "string")) {
      throw fieldError(key, "type", "Value is not an array of strings", given);
    }
    return unique(given);
  }
  const raw: unknown = isObject(ctx.request.query) ? ctx.request.query[key] : undefined;
  const values = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw.filter((v): v is string => typeof v === "string") : undefined;
  if (values === undefined) return undefined;
  return unique(values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== ""));
}

/** Enough for thousands of ids; a GET body is read by hand, so it gets its own bound. */
const MAX_GET_BODY_BYTES = 256 * 1024;

/**
 * The envelope's data of a GET's body. Fastify parses no body on GET, but the hosted API's
 * multi-status GETs carry their ids in one, so it is read here.
 */
async function getBodyData(ctx: Ctx): Promise<unknown> {
  const raw = ctx.request.raw;
  if (raw.headers["content-length"] === undefined && raw.headers["transfer-encoding"] === undefined) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of raw) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_GET_BODY_BYTES) throw new ApiError("payload_too_large", { body: { maxLength: { message: `a GET body is limited to ${MAX_GET_BODY_BYTES} bytes` } } });
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError("validation_error", { json: { invalid: { message: "the body is not valid JSON" } } });
  }
  return isObject(parsed) ? parsed.data : undefined;
}

/** data.action, required and one of `actions`; an unknown one is 400 `invalid data`. */
export function actionOf<T extends string>(data: Data, actions: readonly T[], what: string): T {
  const action = data.action;
  if (action === undefined) throw fieldError("action", "required", `Field is required but missing: one of ${actions.join(", ")}`);
  const found = actions.find((a) => a === action);
  if (found === undefined) {
    throw new ApiError("invalid_data", { action: { enum: { message: `unknown ${what} action; use one of ${actions.join(", ")}`, value: action } } });
  }
  return found;
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}

/** 400 naming every id that is not a call-queue-enabled user of the account. */
function mustBeRecipients(users: Collection, ids: string[]): void {
  const errors: FieldErrors = {};
  ids.forEach((id, index) => {
    const user = users.get(id);
    if (!user) errors[`members.${index}`] = { not_found: { message: "no user with this id", value: id } };
    else if (!isRecipient(user)) errors[`members.${index}`] = { not_recipient: { message: "this user is not call-queue enabled (callq.enabled)", value: id } };
  });
  if (Object.keys(errors).length) throw new ApiError("validation_error", errors);
}

function nextMembers(action: MembershipAction, current: string[], given: string[]): string[] {
  switch (action) {
    case "add":
      return unique([...current, ...given]);
    case "remove":
      return current.filter((id) => !given.includes(id));
    case "set":
      return given;
  }
}

async function writeMembers(queues: Collection, queue: StoredDoc, members: string[], rev: string | undefined): Promise<StoredDoc> {
  try {
    return await queues.update(queue.id, { ...queue.data, members: Object.fromEntries(members.map((id) => [id, ""])) }, { rev });
  } catch (err) {
    throw storeError(err);
  }
}

/** A queue's recipient entry: the user's call-queue role and permissions. */
function recipientEntry(user: StoredDoc): Data {
  const callq = isObject(user.data.callq) ? user.data.callq : {};
  return {
    id: user.id,
    permission_roles: [user.data.priv_level === "admin" ? "admin" : "agent"],
    permissions: Array.isArray(callq.permissions) ? callq.permissions : [],
  };
}
