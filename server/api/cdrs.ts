// /v2/accounts/{account_id}/cdrs (and a user's): the records of finished calls, one per call leg,
// newest first, paged and filterable; written by the call engine, read-only here.
import type { FastifyInstance } from "fastify";
import { cdrSortKey, CDRS_COLLECTION } from "../calls/index.js";
import { registerEndpoint } from "../http/endpoint.js";
import { listOutcome, notFound, registerDocResource, view } from "../http/resource.js";
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
  },
};

export function registerCdrs(app: FastifyInstance, deps: ApiDeps): void {
  registerDocResource(app, deps, {
    name: "cdrs",
    collection: CDRS_COLLECTION,
    schema: cdrSchema,
    verbs: { list: true, read: true },
    sortKey: cdrSortKey,
    sortDescending: true,
    row: view,
    summaries: { list: "List call detail records, newest first", read: "Read one call detail record" },
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
            row: view,
            where: (doc) => doc.data.owner_id === id,
          });
        },
      },
    },
  });
}
