// /v2/accounts/{account_id}/callq_callbacks (local addition, issue 19 item 4): callbacks an agent
// schedules (from a caller's history): a number, a time and a note, for one user. At the time the
// server reminds that user: one `reminder` event on callq.callback.<id>, and the document becomes
// `reminded`. Who: an agent lists, schedules and cancels their own; a supervisor (call_monitor)
// also those of the members of the queues they are a member of; an admin the account's.
// Callbacks a caller asks for while waiting are queue sessions (callq-queues' sessions), not these.
import type { FastifyInstance } from "fastify";
import { fromGregorianSeconds, toGregorianSeconds } from "../clock.js";
import type { AuthContext } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { registerDocResource, type Data } from "../http/resource.js";
import { fieldError, type JsonSchema } from "../http/validation.js";
import type { StoredDoc } from "../store/index.js";
import { hasCallMonitor, membersOf } from "./callq-queues.js";
import type { ApiDeps } from "./deps.js";

export const CALLBACKS_COLLECTION = "callq_callbacks";
export const CALLBACK_STATES = ["scheduled", "reminded"] as const;
/** The farthest ahead a callback may be scheduled. */
const MAX_AHEAD_S = 366 * 86_400;
/**
 * How far in the past a time may be and still be "now" (reminded at once): a form picks a time to
 * the minute, so the current minute may have begun up to 59 s ago.
 */
const NOW_SLACK_S = 60;

export const scheduledCallbackSchema: JsonSchema = {
  type: "object",
  required: ["number", "remind_at", "user_id"],
  properties: {
    number: { type: "string", pattern: "^\\+?[0-9]{2,20}$", description: "the number to call back" },
    remind_at: { type: "integer", minimum: 0, description: "Gregorian seconds: when the user is reminded (at most a year ahead; a time in the last minute is now, reminded at once)" },
    note: { type: "string", maxLength: 2000 },
    user_id: { type: "string", description: "whom the reminder is for (default: the user asking); another user needs an admin, or a supervisor of a queue that user is a member of" },
    queue_id: { type: "string", description: "the queue the callback is for, if any" },
    created_by: { type: "string", description: "set by the server: who scheduled it" },
    state: { enum: [...CALLBACK_STATES], description: "set by the server: scheduled, then reminded at its time (a new remind_at schedules it again)" },
  },
};

function callbackRow(doc: StoredDoc): Data {
  const d = doc.data;
  return { id: doc.id, number: d.number, remind_at: d.remind_at, note: d.note ?? "", user_id: d.user_id, queue_id: d.queue_id, created_by: d.created_by, state: d.state };
}

/** Soonest first. */
function byTime(doc: StoredDoc): string {
  const at = typeof doc.data.remind_at === "number" ? doc.data.remind_at : 0;
  return `${String(at).padStart(16, "0")}-${doc.id}`;
}

/** Who the asker may see and change callbacks of: everyone (null) or these user ids. */
async function reachOf(deps: ApiDeps, accountId: string, auth: AuthContext): Promise<{ users: Set<string> | null; queues: Set<string> }> {
  if (auth.isAdmin) return { users: null, queues: new Set() };
  const self = auth.ownerId;
  const users = new Set<string>(self === null ? [] : [self]);
  const queues = new Set<string>();
  if (self === null) return { users, queues };
  const me = (await deps.collection(accountId, "users")).get(self);
  if (!hasCallMonitor(me)) return { users, queues };
  for (const queue of (await deps.collection(accountId, "callq_queues")).all()) {
    const members = membersOf(queue.data);
    if (!members.includes(self)) continue;
    queues.add(queue.id);
    for (const member of members) users.add(member);
  }
  return { users, queues };
}

function reaches(reach: { users: Set<string> | null; queues: Set<string> }, data: Data): boolean {
  if (reach.users === null) return true;
  return (typeof data.user_id === "string" && reach.users.has(data.user_id)) || (typeof data.queue_id === "string" && reach.queues.has(data.queue_id));
}

const forbidden = (): ApiError =>
  new ApiError("forbidden", { user_id: { not_yours: { message: "an agent's own callbacks only; a supervisor's also those of their queues' members; an admin's any" } } });

/** Reminds each scheduled callback's user at its time, kept from the store's documents. */
class Reminders {
  readonly #deps: ApiDeps;
  readonly #timers = new Map<string, () => void>();
  #closed = false;

  constructor(deps: ApiDeps) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    for (const account of (await this.#deps.global("accounts")).all()) {
      for (const doc of (await this.#deps.collection(account.id, CALLBACKS_COLLECTION)).all()) this.schedule(account.id, doc);
    }
  }

  schedule(accountId: string, doc: StoredDoc): void {
    this.cancel(doc.id);
    if (this.#closed || doc.data.state !== "scheduled" || typeof doc.data.remind_at !== "number") return;
    const due = fromGregorianSeconds(doc.data.remind_at) - this.#deps.clock.now();
    this.#timers.set(
      doc.id,
      this.#deps.clock.after(Math.max(0, due), () => {
        this.#timers.delete(doc.id);
        void this.#remind(accountId, doc.id);
      }),
    );
  }

  cancel(id: string): void {
    this.#timers.get(id)?.();
    this.#timers.delete(id);
  }

  close(): void {
    this.#closed = true;
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
  }

  async #remind(accountId: string, id: string): Promise<void> {
    const callbacks = await this.#deps.collection(accountId, CALLBACKS_COLLECTION);
    const doc = callbacks.get(id);
    if (!doc || doc.data.state !== "scheduled") return;
    const updated = await callbacks.update(id, { ...doc.data, state: "reminded" });
    this.#deps.events?.bus.publish({ account_id: accountId, routing_key: `callq.callback.${id}`, name: "reminder", data: { account_id: accountId, callback_id: id, ...callbackRow(updated) } });
  }
}

export function registerCallqCallbacks(app: FastifyInstance, deps: ApiDeps): void {
  const reminders = new Reminders(deps);
  registerDocResource(app, deps, {
    name: "callq_callbacks",
    collection: CALLBACKS_COLLECTION,
    schema: scheduledCallbackSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    visibleTo: async (ctx, auth) => {
      const reach = await reachOf(deps, ctx.params.account_id ?? "", auth);
      return (data) => reaches(reach, data);
    },
    hidden: () => forbidden(),
    prepare: (data, ctx) => {
      const userId = typeof data.user_id === "string" ? data.user_id : (ctx.existing?.data.user_id ?? ctx.auth.ownerId);
      if (userId === null || userId === undefined) throw fieldError("user_id", "required", "an API key schedules a callback for a user: name user_id");
      const before = ctx.existing?.data;
      // A new time schedules the reminder again; the same time keeps what it was.
      const state = before !== undefined && before.remind_at === data.remind_at ? before.state : "scheduled";
      return { ...data, user_id: userId, note: typeof data.note === "string" ? data.note : "", created_by: before?.created_by ?? ctx.auth.ownerId ?? "api", state };
    },
    check: async (data, ctx) => {
      if (!(await deps.collection(ctx.accountId, "users")).has(String(data.user_id))) throw fieldError("user_id", "not_found", "no such user in this account", data.user_id);
      if (typeof data.queue_id === "string" && !(await deps.collection(ctx.accountId, "callq_queues")).has(data.queue_id)) {
        throw fieldError("queue_id", "not_found", "no such queue in this account", data.queue_id);
      }
      if (ctx.existing === undefined || ctx.existing.data.remind_at !== data.remind_at) {
        const now = toGregorianSeconds(deps.clock.now());
        const at = Number(data.remind_at);
        if (at < now - NOW_SLACK_S) throw fieldError("remind_at", "minimum", "a callback is scheduled for now or later", at);
        if (at > now + MAX_AHEAD_S) throw fieldError("remind_at", "maximum", "a callback is scheduled at most a year ahead", at);
      }
      if (!reaches(await reachOf(deps, ctx.accountId, ctx.auth), data)) throw forbidden();
    },
    afterWrite: (doc, ctx) => reminders.schedule(ctx.accountId, doc),
    afterDelete: (doc) => reminders.cancel(doc.id),
    sortKey: byTime,
    summaries: {
      list: "Local addition: scheduled callbacks, soonest first: an agent's own, a supervisor's also their queues' members', an admin's all",
      create: "Local addition: schedule a callback {number, remind_at, note?, user_id?, queue_id?}; its user is reminded at remind_at (event reminder on callq.callback.<id>)",
      read: "Local addition: one scheduled callback (whoever may see it)",
      update: "Local addition: change a scheduled callback (a new remind_at schedules its reminder again)",
      patch: "Local addition: change some fields of a scheduled callback",
      delete: "Local addition: cancel a scheduled callback (whoever may see it)",
    },
  });
  // Read after the server is up, so its start waits for no account's callbacks (a fast start).
  app.addHook("onReady", async () => {
    reminders.start().catch((err: unknown) => app.log.warn({ err }, "callq callbacks: scheduling the stored reminders failed"));
  });
  app.addHook("onClose", async () => reminders.close());
}
