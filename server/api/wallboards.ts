// /v2/accounts/{account_id}/wallboards (local addition, issue 20): a read-only board of some of
// the account's queues for a screen on the wall, and the key that opens it.
//
// A wallboard is a document of the account (name, the queues it shows, when its key ends). Making
// one answers its key once; the key is an auth token that reads `/wallboards/{id}/board` and
// nothing else (every other verb of every endpoint refuses it with 403: http/endpoint.ts), binds
// no events, and ends at its expiry or when the wallboard is deleted, whatever else happens to
// the account's users. The page at /wallboard.html takes the key from its URL's fragment, which a
// browser never sends to the server.
//
// Who may: admins and supervisors (users with `call_monitor`) list, read and make wallboards and
// read boards; admins delete any, a supervisor the ones they made; agents are refused.
import type { FastifyInstance } from "fastify";
import { toGregorianSeconds } from "../clock.js";
import type { AuthContext, Ctx } from "../http/endpoint.js";
import { registerEndpoint } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { dataObject, notFound, storeError, type Data } from "../http/resource.js";
import { validate, type JsonSchema } from "../http/validation.js";
import { newId, type StoredDoc } from "../store/index.js";
import { askEngine, callqEngine, hasCallMonitor, membersOf } from "./callq-queues.js";
import type { ApiDeps } from "./deps.js";

export const WALLBOARDS_COLLECTION = "wallboards";
const DAY_MS = 86_400_000;
export const WALLBOARD_DEFAULT_DAYS = 90;
export const WALLBOARD_MAX_DAYS = 365;
/** A board shows this many queues at most: a wall screen holds no more, and the read stays small. */
export const WALLBOARD_MAX_QUEUES = 50;

const createSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  additionalProperties: false,
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128, description: "what the board is called on its screen" },
    queue_ids: {
      type: "array",
      items: { type: "string", minLength: 1, maxLength: 64 },
      minItems: 1,
      maxItems: WALLBOARD_MAX_QUEUES,
      uniqueItems: true,
      description: "the queues shown, in this order; absent: every queue of the account, by name",
    },
    expires_in_days: {
      type: "integer",
      minimum: 1,
      maximum: WALLBOARD_MAX_DAYS,
      description: `days the key opens the board (default ${WALLBOARD_DEFAULT_DAYS}); it does not slide with use`,
    },
  },
};

interface WallboardData extends Data {
  name: string;
  queue_ids?: string[];
  /** Unix ms. */
  expires_at: number;
  /** The key's stored id (its sha256), never the key. */
  key_id: string;
  created_by: string | null;
}

/** A wallboard as the API shows it: never the key nor its id. */
function wallboardView(doc: StoredDoc): Data {
  const data = doc.data as WallboardData;
  return {
    id: doc.id,
    name: data.name,
    ...(data.queue_ids ? { queue_ids: data.queue_ids } : {}),
    expires: toGregorianSeconds(data.expires_at),
    created_by: data.created_by,
    created: doc.created,
    page: `/wallboard.html`,
  };
}

/** A person who may see boards: an admin (an API key is one) or a supervisor. */
async function boardViewer(deps: ApiDeps, auth: AuthContext): Promise<{ admin: boolean; userId: string | null }> {
  if (auth.isAdmin && auth.wallboardId === undefined) return { admin: true, userId: auth.ownerId };
  if (auth.ownerId !== null && auth.wallboardId === undefined) {
    const user = (await deps.collection(auth.accountId, "users")).get(auth.ownerId);
    if (hasCallMonitor(user)) return { admin: false, userId: auth.ownerId };
  }
  throw new ApiError("forbidden", { user: { supervisor: { message: "wallboards are for admins and supervisors (call_monitor)" } } });
}

export function registerWallboards(app: FastifyInstance, deps: ApiDeps): void {
  const base = "/v2/accounts/:account_id/wallboards";
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";
  const boardsOf = (ctx: Ctx) => deps.collection(accountOf(ctx), WALLBOARDS_COLLECTION);
  const authOf = (ctx: Ctx): AuthContext => {
    if (!ctx.auth) throw new ApiError("invalid_credentials");
    return ctx.auth;
  };
  const boardOf = async (ctx: Ctx): Promise<StoredDoc> => {
    const id = ctx.params.id ?? "";
    const doc = (await boardsOf(ctx)).get(id);
    if (!doc) throw notFound(id);
    return doc;
  };

  const create = async (ctx: Ctx) => {
    const viewer = await boardViewer(deps, authOf(ctx));
    const input = dataObject(ctx);
    validate(createSchema, input);
    const accountId = accountOf(ctx);
    const queueIds = input.queue_ids as string[] | undefined;
    if (queueIds) {
      const queues = await deps.collection(accountId, "callq_queues");
      const missing = queueIds.filter((id) => !queues.has(id));
      if (missing.length > 0) {
        throw new ApiError("invalid_data", { queue_ids: { not_found: { message: `no such queue: ${missing.join(", ")}`, value: missing } } });
      }
    }
    const days = typeof input.expires_in_days === "number" ? input.expires_in_days : WALLBOARD_DEFAULT_DAYS;
    const expiresAt = deps.clock.now() + days * DAY_MS;
    const boards = await boardsOf(ctx);
    const id = newId(deps.store.random);
    // The key first, then the document naming it: a failed write leaves a key that opens nothing
    // (its board is missing: 404), which is revoked here at once.
    const { key, id: keyId } = await deps.auth.issueWallboardKey(accountId, id, expiresAt);
    let doc: StoredDoc;
    try {
      const data: WallboardData = { name: input.name as string, ...(queueIds ? { queue_ids: queueIds } : {}), expires_at: expiresAt, key_id: keyId, created_by: viewer.userId };
      doc = await boards.create(data, { id });
    } catch (err) {
      await deps.auth.tokens.revokeId(keyId);
      throw storeError(err);
    }
    return { status: 201, data: { ...wallboardView(doc), key, page: `/wallboard.html#account=${accountId}&board=${doc.id}&key=${key}` }, revision: doc.rev };
  };

  registerEndpoint(app, deps, {
    path: base,
    access: "account",
    tag: "wallboards",
    verbs: {
      GET: {
        summary: "The account's wallboards (local addition); admins and supervisors",
        handler: async (ctx) => {
          await boardViewer(deps, authOf(ctx));
          return { data: (await boardsOf(ctx)).all().map(wallboardView) };
        },
      },
      PUT: { summary: "Make a wallboard; answers its key, once (local addition); admins and supervisors", body: createSchema, answers: [201], handler: create },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id`,
    access: "account",
    tag: "wallboards",
    verbs: {
      GET: {
        summary: "One wallboard, without its key (local addition)",
        handler: async (ctx) => {
          await boardViewer(deps, authOf(ctx));
          const doc = await boardOf(ctx);
          return { data: wallboardView(doc), revision: doc.rev };
        },
      },
      DELETE: {
        summary: "Delete a wallboard: its key stops opening anything (local addition); admins, or the supervisor who made it",
        handler: async (ctx) => {
          const viewer = await boardViewer(deps, authOf(ctx));
          const doc = await boardOf(ctx);
          const data = doc.data as WallboardData;
          if (!viewer.admin && data.created_by !== viewer.userId) {
            throw new ApiError("forbidden", { wallboard: { owner: { message: "a supervisor deletes only the wallboards they made" } } });
          }
          await deps.auth.tokens.revokeId(data.key_id);
          await (await boardsOf(ctx)).delete(doc.id).catch((err: unknown) => {
            throw storeError(err);
          });
          return { data: wallboardView(doc) };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/board`,
    access: "account",
    tag: "wallboards",
    verbs: {
      GET: {
        summary: "What the wallboard shows now: its queues' figures and their recipients by state (local addition); its key, admins and supervisors",
        board: true,
        handler: async (ctx) => {
          const auth = authOf(ctx);
          const doc = await boardOf(ctx);
          if (auth.wallboardId !== undefined) {
            if (auth.wallboardId !== doc.id) throw new ApiError("forbidden", { token: { wallboard: { message: "this key opens another wallboard" } } });
          } else await boardViewer(deps, auth);
          return { data: await boardNow(deps, accountOf(ctx), doc) };
        },
      },
    },
  });
}

/** The board at this moment: each queue's figures, its waiting callers and members by state. */
async function boardNow(deps: ApiDeps, accountId: string, doc: StoredDoc): Promise<Data> {
  const data = doc.data as WallboardData;
  const engine = callqEngine(deps);
  const stored = await deps.collection(accountId, "callq_queues");
  const queueDocs = data.queue_ids
    ? data.queue_ids.map((id) => stored.get(id)).filter((q): q is StoredDoc => q !== undefined)
    : stored.all().sort((a, b) => String(a.data.name ?? "").localeCompare(String(b.data.name ?? "")) || a.id.localeCompare(b.id));
  const now = deps.clock.now();
  const members = new Set<string>();
  const queues: Data[] = [];
  let queueClock: Data | undefined;
  for (const q of queueDocs.slice(0, WALLBOARD_MAX_QUEUES)) {
    const status = await askEngine({ queue: q.id }, () => engine.queueStatus(accountId, q.id));
    queueClock ??= { ...status.queue_clock };
    for (const id of membersOf(q.data)) members.add(id);
    queues.push({
      id: q.id,
      name: q.data.name ?? q.id,
      // The status counts and times the callers still in line (waiting or being offered).
      waiting: status.stats.active_session_count,
      longest_wait: Math.round(status.stats.longest_wait),
      logged_in: status.active_recipient_count,
      available: status.available_recipient_count,
      service_level_goal: status.service_level,
      // Kinds only: a wall in a shared room names no agent.
      alerts: status.alerts.map((a) => ({ kind: a.kind, value: a.value, limit: a.limit })),
      stats: status.stats,
    });
  }
  const byState: Record<string, number> = {};
  for (const id of members) {
    const status = await askEngine({ recipient: id }, () => engine.recipientStatus(accountId, id)).catch(() => null);
    if (status === null || status.availability_state === "Not-Logged-In") continue;
    byState[status.availability_state] = (byState[status.availability_state] ?? 0) + 1;
  }
  // The account's queue time (a training run's pauses), as the queue statuses give it: the wall
  // counts its longest waits on between readings only while that time runs.
  return { id: doc.id, name: data.name, at: toGregorianSeconds(now), queues, recipients_by_state: byState, ...(queueClock ? { queue_clock: queueClock } : {}) };
}
