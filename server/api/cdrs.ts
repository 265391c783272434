// /v2/accounts/{account_id}/cdrs (and a user's): the records of finished calls, one per call leg,
// newest first, paged and filterable; written by the call engine, read-only here.
import type { FastifyInstance } from "fastify";
import { cdrSortKey, CDRS_COLLECTION } from "../calls/index.js";
import { registerEndpoint, type Ctx, type Outcome } from "../http/endpoint.js";
import { filterFromQuery } from "../http/filters.js";
import { paginateSorted } from "../http/paging.js";
import { listOutcome, notFound, registerDocResource, view, type Data } from "../http/resource.js";
import { ApiError } from "../http/errors.js";
import { GREGORIAN_OFFSET_S } from "../clock.js";
import { contentRevision } from "../http/envelope.js";
import type { Collection, StoredDoc } from "../store/index.js";
import type { JsonSchema } from "../http/validation.js";
import type { ApiDeps } from "./deps.js";

/** CDRs are never written through the API; the schema only describes them for the catalogue. */
const cdrSchema: JsonSchema = {
  type: "object",
  properties: {
    call_id: { type: "string" },
    other_leg_call_id: { type: "string" },
    call_direction: { type: "string", enum: ["inbound", "outbound"] },
    direction: { type: "string", enum: ["inbound", "outbound"] },
    caller_id_name: { type: "string" },
    caller_id_number: { type: "string" },
    callee_id_name: { type: "string" },
    callee_id_number: { type: "string" },
    timestamp: { type: "integer" },
    answered_timestamp: { type: "integer" },
    hangup_timestamp: { type: "integer" },
    duration_seconds: { type: "integer" },
    billing_seconds: { type: "integer" },
    ringing_seconds: { type: "integer" },
    hangup_cause: { type: "string" },
    hangup_code: { type: "string" },
    owner_id: { type: "string" },
    authorizing_id: { type: "string" },
    datetime: { type: "string", description: "the leg's start as YYYY-MM-DD_HH:MM:SS, UTC moved by the query's utc_offset seconds" },
    unix_timestamp: { type: "integer", description: "the leg's start in Unix seconds" },
  },
};

/** The query's `utc_offset` in seconds (0 when absent); not a whole number is Kazoo's 404. */
function utcOffsetOf(ctx: Ctx): number {
  const raw = ctx.req.query.utc_offset;
  if (raw === undefined) return 0;
  if (!/^[+-]?\d{1,6}$/.test(raw)) throw new ApiError("faulty_request", { utc_offset: { type: { message: "utc_offset must be a number of seconds", value: raw } } });
  return Number(raw);
}

/**
 * A CDR as the API shows it, with Kazoo's computed columns: `datetime` (the leg's start, a CDR's
 * `timestamp` here, moved by `utc_offset`) and `unix_timestamp`.
 */
function cdrView(ctx: Ctx): (doc: StoredDoc) => Data {
  const offsetS = utcOffsetOf(ctx);
  return (doc) => {
    const row = view(doc);
    const start = doc.data.timestamp;
    if (typeof start !== "number") return row;
    const unix = start - GREGORIAN_OFFSET_S;
    const local = new Date((unix + offsetS) * 1000).toISOString();
    return { ...row, datetime: `${local.slice(0, 10)}_${local.slice(11, 19)}`, unix_timestamp: unix };
  };
}

/** A leg's interaction; a CDR written before interactions were kept is an interaction of its own. */
function interactionKey(doc: StoredDoc): string {
  return typeof doc.data.interaction_id === "string" ? doc.data.interaction_id : doc.id;
}

/**
 * One row per interaction, as the hosted service's interaction listing: the interaction's first
 * leg (the earliest started, among those `where` keeps), newest interaction first, paged and
 * filtered like the CDR list.
 */
function interactionsOutcome(cdrs: Collection, ctx: Ctx, where: (doc: StoredDoc) => boolean): Outcome {
  const test = filterFromQuery(ctx.req.query);
  const seen = new Set<string>();
  const first = cdrs.sortedBy(cdrSortKey).filter((k) => {
    if (!where(k.row) || !test(k.row)) return false;
    const key = interactionKey(k.row);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const page = paginateSorted(first, true, ctx.req.query);
  return { data: page.rows.map(cdrView(ctx)), paging: page.paging, revision: contentRevision(page.rows.map((d) => d.rev)) };
}

export function registerCdrs(app: FastifyInstance, deps: ApiDeps): void {
  // Fastify matches a static segment before a parameter, so these words are never read as CDR ids.
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/cdrs/interaction",
    access: "account",
    tag: "cdrs",
    verbs: {
      GET: {
        summary: "List interactions (the first leg of each), newest first",
        handler: async (ctx) => interactionsOutcome(await deps.collection(ctx.params.account_id ?? "", CDRS_COLLECTION), ctx, () => true),
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/cdrs/legs/:id",
    access: "account",
    tag: "cdrs",
    verbs: {
      GET: {
        summary: "List every leg of an interaction (by its interaction id or the id of one of its CDRs), oldest first",
        handler: async (ctx) => {
          const cdrs = await deps.collection(ctx.params.account_id ?? "", CDRS_COLLECTION);
          const id = ctx.params.id ?? "";
          const named = cdrs.get(id);
          const interaction = named ? interactionKey(named) : id;
          const legs = cdrs.sortedBy(cdrSortKey).filter((k) => interactionKey(k.row) === interaction);
          if (legs.length === 0) throw notFound(id);
          const page = paginateSorted(legs, false, ctx.req.query);
          return { data: page.rows.map(cdrView(ctx)), paging: page.paging, revision: contentRevision(page.rows.map((d) => d.rev)) };
        },
      },
    },
  });

  registerDocResource(app, deps, {
    name: "cdrs",
    collection: CDRS_COLLECTION,
    schema: cdrSchema,
    verbs: { read: true },
    readAs: async (doc, ctx) => ({ data: cdrView(ctx)(doc), revision: doc.rev }),
    // The list is registered here rather than by the resource: its rows depend on the query (utc_offset).
    collectionVerbs: () => ({
      GET: {
        summary: "List call detail records, newest first",
        handler: async (ctx) =>
          listOutcome(await deps.collection(ctx.params.account_id ?? "", CDRS_COLLECTION), ctx, { sortKey: cdrSortKey, descending: true, row: cdrView(ctx) }),
      },
    }),
    summaries: { read: "Read one call detail record" },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/cdrs",
    access: "account",
    tag: "cdrs",
    verbs: {
      GET: {
        summary: "List the call detail records of a user's devices, newest first",
        handler: async (ctx) => {
          const accountId = ctx.params.account_id ?? "";
          const id = ctx.params.id ?? "";
          if (!(await deps.collection(accountId, "users")).has(id)) throw notFound(id);
          return listOutcome(await deps.collection(accountId, CDRS_COLLECTION), ctx, {
            sortKey: cdrSortKey,
            descending: true,
            row: cdrView(ctx),
            where: (doc) => doc.data.owner_id === id,
          });
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/cdrs/interaction",
    access: "account",
    tag: "cdrs",
    verbs: {
      GET: {
        summary: "List the interactions a user's devices took part in (the user's first leg of each), newest first",
        handler: async (ctx) => {
          const accountId = ctx.params.account_id ?? "";
          const id = ctx.params.id ?? "";
          if (!(await deps.collection(accountId, "users")).has(id)) throw notFound(id);
          return interactionsOutcome(await deps.collection(accountId, CDRS_COLLECTION), ctx, (doc) => doc.data.owner_id === id);
        },
      },
    },
  });
}
