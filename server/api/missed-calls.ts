// /v2/accounts/{account_id}/users/{user_id}/missed_calls (local addition): the direct calls that
// rang the user (the user or device callflow modules) and ended unanswered, newest first, each
// unseen until the user says they saw them. Kept from the `notification.missed_call` events:
// CDRs cannot tell them apart (a call refused for do not disturb rings no leg of the user, and an
// unanswered queue offer's leg looks like a direct call's).
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { fromGregorianSeconds } from "../clock.js";
import type { BusEvent } from "../events/bus.js";
import type { AuthContext, Ctx } from "../http/endpoint.js";
import { registerEndpoint } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { listOutcome, notFound, type Data } from "../http/resource.js";
import type { StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export const MISSED_CALLS_COLLECTION = "missed_calls";
/** Missed calls kept per user; older ones go as new ones come. */
export const MISSED_CALLS_KEPT = 200;

function missedCallRow(doc: StoredDoc): Data {
  const d = doc.data;
  return {
    id: doc.id,
    call_id: d.call_id,
    caller_id_name: d.caller_id_name,
    caller_id_number: d.caller_id_number,
    callee_id_number: d.callee_id_number,
    device_id: d.device_id,
    timestamp: d.timestamp,
    seen: d.seen === true,
  };
}

/** Newest first when sorted descending: the time of the miss, then the id. */
function byTime(doc: StoredDoc): string {
  const at = typeof doc.data.timestamp === "number" ? doc.data.timestamp : 0;
  return `${String(at).padStart(16, "0")}-${doc.id}`;
}

function mayRead(auth: AuthContext | null, userId: string): void {
  if (auth && (auth.isAdmin || auth.ownerId === userId)) return;
  throw new ApiError("forbidden", { user: { self_or_admin: { message: "only the user themself or an account admin may see a user's missed calls" } } });
}

/** Keeps each missed call a user was rung for; returns the function that stops. */
function keepMissedCalls(deps: ApiDeps, logger: FastifyBaseLogger): () => void {
  const events = deps.events;
  if (!events) return () => undefined;
  const keep = async (event: BusEvent): Promise<void> => {
    const d = event.data;
    if (typeof d.owner_id !== "string") return;
    const missed = await deps.collection(event.account_id, MISSED_CALLS_COLLECTION);
    const timestamp = typeof d.timestamp === "number" ? d.timestamp : undefined;
    await missed.create({
      owner_id: d.owner_id,
      call_id: d.call_id,
      caller_id_name: d.caller_id_name,
      caller_id_number: d.caller_id_number,
      callee_id_number: d.callee_id_number,
      device_id: d.device_id,
      timestamp,
      pvt_missed_ms: timestamp === undefined ? event.at : fromGregorianSeconds(timestamp),
      seen: false,
    });
    const own = missed.all().filter((m) => m.data.owner_id === d.owner_id);
    if (own.length <= MISSED_CALLS_KEPT) return;
    own.sort((a, b) => (byTime(a) < byTime(b) ? -1 : 1));
    for (const old of own.slice(0, own.length - MISSED_CALLS_KEPT)) await missed.delete(old.id);
  };
  return events.bus.subscribe((event) => {
    if (!event.routing_key.startsWith("notification.missed_call.")) return;
    keep(event).catch((err: unknown) => logger.warn({ err }, "missed calls: keeping a missed call failed"));
  });
}

export function registerMissedCalls(app: FastifyInstance, deps: ApiDeps): void {
  const userOf = async (ctx: Ctx): Promise<string> => {
    const id = ctx.params.id ?? "";
    mayRead(ctx.auth, id);
    if (!(await deps.collection(ctx.params.account_id ?? "", "users")).has(id)) throw notFound(id);
    return id;
  };
  const base = "/v2/accounts/:account_id/users/:id/missed_calls";
  registerEndpoint(app, deps, {
    path: base,
    access: "account",
    tag: "users",
    verbs: {
      GET: {
        summary: "Local addition: the user's missed direct calls, newest first (the user themself or an admin)",
        handler: async (ctx) => {
          const id = await userOf(ctx);
          const missed = await deps.collection(ctx.params.account_id ?? "", MISSED_CALLS_COLLECTION);
          return listOutcome(missed, ctx, { row: missedCallRow, sortKey: byTime, descending: true, where: (d) => d.data.owner_id === id });
        },
      },
    },
  });
  registerEndpoint(app, deps, {
    path: `${base}/seen`,
    access: "account",
    tag: "users",
    verbs: {
      POST: {
        summary: "Local addition: mark every missed call of the user seen (the user themself or an admin)",
        handler: async (ctx) => {
          const id = await userOf(ctx);
          const missed = await deps.collection(ctx.params.account_id ?? "", MISSED_CALLS_COLLECTION);
          let seen = 0;
          for (const doc of missed.all()) {
            if (doc.data.owner_id !== id || doc.data.seen === true) continue;
            await missed.update(doc.id, { ...doc.data, seen: true });
            seen += 1;
          }
          return { data: { seen } };
        },
      },
    },
  });
  const stop = keepMissedCalls(deps, app.log);
  app.addHook("onClose", async () => stop());
}
