// /v2/accounts/{account_id}/callq_recipients: the account's call-queue agents (users with
// callq.enabled), their live status, state changes (status and actions), enable/disable, and
// supervision (monitor). A recipient changes their own state; an admin may change anyone's.
import type { FastifyInstance } from "fastify";
import { dayBounds, dayOf, dayView, emptyDay, type RecipientDayView, type RecipientStatus } from "../callq/index.js";
import { RECIPIENT_ACTIONS as ENGINE_ACTIONS, type RecipientAction } from "../callq/recipient-state.js";
import { storedRecipientDay } from "../callq-host/index.js";
import { MonitorError, startMonitor, type Monitor } from "../callq-host/monitor.js";
import { MONITOR_MODES, type MonitorMode } from "../monitor-mode.js";
import { registerEndpoint, type AuthContext, type Ctx, type Handler, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { isObject } from "../http/request.js";
import { dataObject, listOutcome, notFound, storeError, view, type Data } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import type { Collection, StoredDoc } from "../store/index.js";
import { accountAwayReasons, ENGINE_REASONS } from "./callq-away-reasons.js";
import { actionOf, askEngine, callqEngine, hasCallMonitor, idListOf, isRecipient, membersOf } from "./callq-queues.js";
import type { ApiDeps } from "./deps.js";

export const RECIPIENT_STATUSES = ["login", "logout", "ready", "away"] as const satisfies readonly RecipientAction[];
type RecipientStatusChange = (typeof RECIPIENT_STATUSES)[number];

/** The engine's actions and supervision, which the API starts itself. */
export const RECIPIENT_ACTIONS = [...ENGINE_ACTIONS, "monitor"] as const;
type ApiAction = (typeof RECIPIENT_ACTIONS)[number];

/** Actions that take a queue_id: per-queue availability. */
const PER_QUEUE: readonly RecipientAction[] = ["ready", "away"];

const statusSchema: JsonSchema = {
  type: "object",
  required: ["status"],
  properties: {
    status: { type: "string", enum: [...RECIPIENT_STATUSES] },
    queue_id: { type: "string", description: "ready/away: only for this queue (queue_availability)" },
    reason: { type: "string", description: "local addition: away: why, one of the account's callq_away_reasons (not with queue_id)" },
  },
};

const actionSchema: JsonSchema = {
  type: "object",
  required: ["action"],
  properties: {
    action: { type: "string", enum: [...RECIPIENT_ACTIONS] },
    queue_id: { type: "string", description: "ready/away: only for this queue (queue_availability)" },
    target: { type: "string", description: "monitor: the recipient id to listen to" },
    mode: { type: "string", enum: [...MONITOR_MODES], description: "monitor: eavesdrop (default), whisper or barge" },
    reason: { type: "string", description: "local addition: away: why, one of the account's callq_away_reasons (not with queue_id)" },
  },
};

const dispositionSchema: JsonSchema = {
  type: "object",
  required: ["code"],
  properties: {
    code: { type: "string", minLength: 1, description: "one of the dispositions of the call's queue" },
    note: { type: "string", maxLength: 2000, description: "free text, kept with the code" },
    session_id: { type: "string", description: "the queue call to give it to: the one the recipient handles or handled last (the default)" },
  },
};

const recipientIdsSchema: JsonSchema = {
  type: "object",
  required: ["recipient_ids"],
  properties: { recipient_ids: { type: "array", items: { type: "string" } } },
};

export function recipientRow(doc: StoredDoc): Data {
  return { id: doc.id, name: doc.data.username };
}

function byUsername(doc: StoredDoc): string {
  return `${String(doc.data.username ?? "").toLowerCase()}\u0000${doc.id}`;
}

/** May this token change `userId`'s state? The recipient themself, or an admin (API keys are). */
function mayAct(auth: AuthContext | null, userId: string): void {
  if (auth && (auth.isAdmin || auth.ownerId === userId)) return;
  throw new ApiError("forbidden", { user: { self_or_admin: { message: "only the recipient themself or an account admin may change a recipient's state" } } });
}

export function registerCallqRecipients(app: FastifyInstance, deps: ApiDeps): void {
  const base = "/v2/accounts/:account_id/callq_recipients";
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";
  const usersOf = (ctx: Ctx) => deps.collection(accountOf(ctx), "users");
  /** The recipient of the path: a user of the account with callq.enabled, else 404. */
  const recipientOf = async (ctx: Ctx): Promise<StoredDoc> => {
    const id = ctx.params.id ?? "";
    const user = (await usersOf(ctx)).get(id);
    if (!isRecipient(user) || !user) throw notFound(id);
    return user;
  };

  /**
   * May the token read `userId`'s day? The recipient themself, admins (and API keys), and the
   * supervisors (call_monitor) who are members of a queue with them: their queues' agents.
   */
  const maySeeDay = async (ctx: Ctx, userId: string): Promise<boolean> => {
    const auth = ctx.auth;
    if (auth?.isAdmin === true || auth?.ownerId === userId) return true;
    const readerId = auth?.ownerId ?? undefined;
    if (readerId === undefined || !hasCallMonitor((await usersOf(ctx)).get(readerId))) return false;
    const queues = await deps.collection(accountOf(ctx), "callq_queues");
    return queues.all().some((queue) => {
      const members = membersOf(queue.data);
      return members.includes(readerId) && members.includes(userId);
    });
  };

  /** A recipient's status as the token may see it (who listens in is not for everyone). */
  const statusOf = async (ctx: Ctx, userId: string): Promise<RecipientStatus> => {
    const accountId = accountOf(ctx);
    return shownTo(ctx, userId, await askEngine({ recipient: userId }, () => callqEngine(deps, "recipient").recipientStatus(accountId, userId)));
  };

  /**
   * Who listens to whom is for admins and supervisors (call_monitor). The recipient themself sees
   * whom they listen to, and who listens to them without eavesdroppers unless the account
   * announces them (`announce_eavesdrop`). Other readers see neither.
   */
  const shownTo = async (ctx: Ctx, userId: string, full: RecipientStatus): Promise<RecipientStatus> => {
    const status = await dayShownTo(ctx, userId, await lastCallShownTo(ctx, userId, full));
    if (status.wiretapped_by === undefined && status.wiretapping_recipient === undefined) return status;
    const { wiretapped_by: listeners, wiretapping_recipient: target, wiretap_mode: mode, ...rest } = status;
    const auth = ctx.auth;
    const reader = auth?.ownerId ? (await usersOf(ctx)).get(auth.ownerId) : undefined;
    if (auth?.isAdmin === true || hasCallMonitor(reader)) return status;
    if (auth?.ownerId !== userId) return rest;
    const own = target === undefined ? {} : { wiretapping_recipient: target, wiretap_mode: mode };
    const announced = listeners !== undefined && (await deps.global("accounts")).get(accountOf(ctx))?.data.announce_eavesdrop === true;
    const shown = (listeners ?? []).filter((l) => announced || l.mode !== "eavesdrop");
    return { ...rest, ...own, ...(shown.length > 0 ? { wiretapped_by: shown } : {}) };
  };

  /** An Away reason as given: only with away for the recipient as a whole, and one of the account's. */
  const reasonFor = async (ctx: Ctx, action: RecipientAction, queueId: string | undefined, reason: unknown): Promise<string | undefined> => {
    if (reason === undefined) return undefined;
    if (typeof reason !== "string") throw fieldError("reason", "type", "reason is a string", reason);
    if (action !== "away") throw fieldError("reason", "not_allowed", "a reason goes with away only", reason);
    if (queueId !== undefined) throw fieldError("reason", "not_allowed", "a reason is for Away as a whole, not with queue_id", reason);
    const chosen = (await accountAwayReasons(deps, accountOf(ctx))).map((r) => r.code);
    if (chosen.includes(reason)) return reason;
    const engine = ENGINE_REASONS.some((r) => r.code === reason);
    throw fieldError("reason", "enum", engine ? `${reason} is set by the queue engine and cannot be chosen` : `unknown Away reason; the account's are: ${chosen.join(", ")}`, reason);
  };

  /** The day's figures are for those who may read the recipient's day. */
  const dayShownTo = async (ctx: Ctx, userId: string, status: RecipientStatus): Promise<RecipientStatus> => {
    if (status.day === undefined || (await maySeeDay(ctx, userId))) return status;
    const { day: _hidden, ...rest } = status;
    return rest;
  };

  /**
   * One local day of a recipient's figures: today's (and yesterday's) from the engine, the state
   * in progress counted up to now; an older day from the store, zeros for a day with nothing.
   */
  const dayOfRecipient: Handler = async (ctx) => {
    const user = await recipientOf(ctx);
    if (!(await maySeeDay(ctx, user.id))) {
      throw new ApiError("forbidden", { user: { self_supervisor_or_admin: { message: "a recipient's day is for themself, account admins and the supervisors (call_monitor) of their queues" } } });
    }
    const now = ctx.now.getTime();
    const day = ctx.req.query.day ?? dayOf(now);
    if (!dayBounds(day)) throw new ApiError("validation_error", { day: { format: { message: "day must be a date, YYYY-MM-DD", value: day } } });
    const accountId = accountOf(ctx);
    const live = await askEngine({ recipient: user.id }, () => callqEngine(deps, "recipient").recipientDay(accountId, user.id, day));
    if (live) return { data: live };
    const stored = await storedRecipientDay(deps.store, accountId, user.id, day);
    const view: RecipientDayView = dayView(stored ?? emptyDay(user.id, day), undefined, now);
    return { data: view };
  };

  /**
   * The last call and its disposition are for the recipient themself, admins, and the
   * supervisors (call_monitor) who are members of that call's queue; other readers see neither.
   */
  const lastCallShownTo = async (ctx: Ctx, userId: string, status: RecipientStatus): Promise<RecipientStatus> => {
    const last = status.last_call;
    const auth = ctx.auth;
    if (last === undefined || auth?.isAdmin === true || auth?.ownerId === userId) return status;
    const readerId = auth?.ownerId ?? undefined;
    if (readerId !== undefined) {
      const reader = (await usersOf(ctx)).get(readerId);
      const queue = (await deps.collection(accountOf(ctx), "callq_queues")).get(last.queue_id);
      if (hasCallMonitor(reader) && queue !== undefined && membersOf(queue.data).includes(readerId)) return status;
    }
    const { last_call: _hidden, ...rest } = status;
    return rest;
  };

  const act = async (ctx: Ctx, action: RecipientAction, queueId: string | undefined, givenReason?: unknown): Promise<Outcome> => {
    const user = await recipientOf(ctx);
    mayAct(ctx.auth, user.id);
    if (queueId !== undefined && !PER_QUEUE.includes(action)) {
      throw fieldError("queue_id", "not_allowed", "queue_id applies to ready and away only", queueId);
    }
    const reason = await reasonFor(ctx, action, queueId, givenReason);
    const engine = callqEngine(deps, "recipient");
    const options = { ...(queueId === undefined ? {} : { queueId }), ...(reason === undefined ? {} : { reason }) };
    const status = await askEngine({ recipient: user.id, queue: queueId, action }, () => engine.recipientAction(accountOf(ctx), user.id, action, options));
    return { data: await shownTo(ctx, user.id, status) };
  };

  /**
   * A recipient's disposition of their queue call: theirs alone to give (not an admin's: it is
   * the agent's account of the call). It lands on the status, in events and on both legs' CDRs.
   */
  const dispose: Handler = async (ctx) => {
    const user = await recipientOf(ctx);
    if (ctx.auth?.ownerId !== user.id) {
      throw new ApiError("forbidden", { user: { self: { message: "only the recipient who handled the call may give its disposition" } } });
    }
    const data = dataObject(ctx);
    validate(dispositionSchema, data);
    const sessionId = typeof data.session_id === "string" ? data.session_id : undefined;
    const input = { code: String(data.code), note: typeof data.note === "string" ? data.note : "", ...(sessionId === undefined ? {} : { sessionId }) };
    const engine = callqEngine(deps, "recipient");
    const set = await askEngine({ recipient: user.id, session: sessionId, action: "disposition" }, () => engine.setDisposition(accountOf(ctx), user.id, input));
    deps.calls?.annotateQueueCall(accountOf(ctx), set.call.session_id, { disposition: { ...set.disposition, recipient_id: user.id, queue_id: set.call.queue_id } });
    return { data: await shownTo(ctx, user.id, set.status) };
  };

  const multiStatus: Handler = async (ctx) => {
    const accountId = accountOf(ctx);
    const ids = await idListOf(ctx, "recipient_ids");
    if (ids === undefined) throw fieldError("recipient_ids", "required", "Field is required but missing: an array of user ids");
    const users = await usersOf(ctx);
    const missing = ids.find((id) => !users.has(id));
    if (missing !== undefined) throw notFound(missing);
    const engine = callqEngine(deps, "recipient");
    const data: Data = {};
    for (const id of ids) data[id] = engine.isLoggedIn(accountId, id) ? await statusOf(ctx, id) : "not_logged_in";
    return { data };
  };

  registerEndpoint(app, deps, {
    path: base,
    access: "account",
    tag: "callq_recipients",
    verbs: {
      GET: {
        summary: "List the account's recipients (users with callq.enabled): id, name (the username)",
        handler: async (ctx) => listOutcome(await usersOf(ctx), ctx, { row: recipientRow, sortKey: byUsername, where: isRecipient }),
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/status`,
    access: "account",
    tag: "callq_recipients",
    verbs: {
      POST: { summary: "Status of several recipients: data.recipient_ids; a logged-out one maps to \"not_logged_in\"", body: recipientIdsSchema, handler: multiStatus },
      GET: { summary: "Status of several recipients (as POST; recipient_ids also comma-separated in the query string)", body: recipientIdsSchema, handler: multiStatus },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id`,
    access: "account",
    tag: "callq_recipients",
    verbs: {
      GET: {
        summary: "A recipient's users document",
        handler: async (ctx) => {
          const user = await recipientOf(ctx);
          return { data: view(user), revision: user.rev };
        },
      },
      POST: {
        summary: "Run a recipient action: login, logout, ready, away, login_ready, state_toggle, wrapup_extend, wrapup_cancel, or monitor (target, mode); answers the new status",
        body: actionSchema,
        // A monitor request is accepted (202) before the supervisor's call is up.
        answers: [200, 202],
        handler: async (ctx) => {
          const data = dataObject(ctx);
          const action: ApiAction = actionOf(data, RECIPIENT_ACTIONS, "recipient");
          validate(actionSchema, data);
          if (action === "monitor") return monitor(ctx, data);
          return act(ctx, action, data.queue_id as string | undefined, data.reason);
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/status`,
    access: "account",
    tag: "callq_recipients",
    verbs: {
      GET: {
        summary: "A recipient's status: availability_state, calls offered and handled, wrap-up, stats",
        handler: async (ctx) => ({ data: await statusOf(ctx, (await recipientOf(ctx)).id) }),
      },
      POST: {
        summary: "Change a recipient's state: status login, logout, ready or away (ready/away with queue_id: that queue only); answers the new status",
        body: statusSchema,
        handler: async (ctx) => {
          const data = dataObject(ctx);
          validate(statusSchema, data);
          return act(ctx, data.status as RecipientStatusChange, data.queue_id as string | undefined, data.reason);
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/day`,
    access: "account",
    tag: "callq_recipients",
    verbs: {
      GET: {
        summary:
          "Local addition: a recipient's figures of one local day (day=YYYY-MM-DD, default today): calls_handled, handle_time and average_handle_time (talk and wrap-up), offers, missed_offers, time_in_state per availability state, away_by_reason, signed_in_time, occupancy (percent on calls and wrap-up of the time signed in and not Away), and today the state in progress (current). The recipient themself, admins and the supervisors (call_monitor) of their queues",
        handler: dayOfRecipient,
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/disposition`,
    access: "account",
    tag: "callq_recipients",
    verbs: {
      POST: {
        summary:
          "Local addition: the recipient's disposition of the queue call they handle or handled last: code (one of the queue's dispositions), note; only the recipient themself; answers the new status",
        body: dispositionSchema,
        handler: dispose,
      },
    },
  });

  const setEnabled = async (ctx: Ctx, enabled: boolean): Promise<Outcome> => {
    const accountId = accountOf(ctx);
    const id = ctx.params.id ?? "";
    const users = await usersOf(ctx);
    if (!users.has(id)) throw notFound(id);
    // A disabled recipient cannot stay logged in: log out first, while they are still a recipient.
    if (!enabled && deps.callq?.isLoggedIn(accountId, id)) {
      const engine = deps.callq;
      await askEngine({ recipient: id, action: "logout" }, () => engine.recipientAction(accountId, id, "logout"));
    }
    const user = await writeEnabled(users, id, enabled);
    return { data: view(user), revision: user.rev };
  };
  for (const [verb, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    registerEndpoint(app, deps, {
      path: `${base}/:id/${verb}`,
      access: "account",
      tag: "callq_recipients",
      verbs: {
        POST: {
          summary: enabled ? "Make a user a recipient (callq.enabled true); answers the user" : "Stop a user being a recipient (callq.enabled false), logging them out; answers the user",
          admin: true,
          handler: async (ctx) => setEnabled(ctx, enabled),
        },
      },
    });
  }

  /** Supervision: the path's user listens to `target`. Needs an admin, or call_monitor for oneself. */
  const monitor = async (ctx: Ctx, data: Data): Promise<Outcome> => {
    const users = await usersOf(ctx);
    const id = ctx.params.id ?? "";
    const user = users.get(id);
    if (!user) throw notFound(id);
    const auth = ctx.auth;
    const caller = auth?.ownerId ? users.get(auth.ownerId) : undefined;
    const allowed = auth !== null && (auth.isAdmin || (auth.ownerId === id && hasCallMonitor(caller)));
    if (!allowed) throw new ApiError("forbidden", { user: { call_monitor: { message: "monitoring needs an admin, or the call_monitor permission (callq.permissions) for oneself" } } });
    const target = data.target;
    if (typeof target !== "string" || target === "") throw fieldError("target", "required", "monitor needs the target recipient's id");
    if (!isRecipient(users.get(target))) throw notFound(target);
    const mode = (data.mode ?? "eavesdrop") as MonitorMode;
    const calls = deps.calls;
    if (!calls) throw new ApiError("invalid_data", { action: { unavailable: { message: "the call engine is not running", value: "monitor" } } });
    const engine = callqEngine(deps, "recipient");
    let supervision: Monitor;
    try {
      supervision = await startMonitor({ calls, callq: engine, accountId: accountOf(ctx), supervisorId: id, target, mode });
    } catch (err) {
      throw monitorError(err, id);
    }
    // The supervisor's phones ring now; the status shows the wiretap once one answers.
    return { data: { recipient_id: id, target: supervision.target, mode: supervision.mode, state: supervision.state }, status: 202 };
  };
}

/** A refused supervision in the API's words. */
function monitorError(err: unknown, supervisorId: string): unknown {
  if (!(err instanceof MonitorError)) return err;
  if (err.code === "no_supervisor") return notFound(supervisorId);
  const field = err.code === "no_device" ? "id" : "target";
  return new ApiError("invalid_data", { [field]: { [err.code]: { message: err.message } } });
}

async function writeEnabled(users: Collection, id: string, enabled: boolean): Promise<StoredDoc> {
  const user = users.get(id);
  if (!user) throw notFound(id);
  const callq = isObject(user.data.callq) ? user.data.callq : {};
  try {
    return await users.update(id, { ...user.data, callq: { permissions: [], ...callq, enabled } });
  } catch (err) {
    throw storeError(err);
  }
}
