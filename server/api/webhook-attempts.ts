// /v2/accounts/{account_id}/webhooks/attempts and /webhooks/{id}/attempts: the log of webhook
// HTTP attempts, newest first, paged and filterable, readable by any user of the account.
import type { FastifyInstance } from "fastify";
import { registerEndpoint } from "../http/endpoint.js";
import { listOutcome, notFound, publicFields } from "../http/resource.js";
import { ATTEMPTS_COLLECTION, attemptOrder } from "../events/webhook-attempt-log.js";
import type { StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

/** A row is the attempt as logged; the ordering key is private. */
function attemptRow(doc: StoredDoc): Record<string, unknown> {
  return publicFields(doc.data);
}

export function registerWebhookAttempts(app: FastifyInstance, deps: ApiDeps): void {
  // The static `attempts` segment wins over `/webhooks/:id` in Fastify's router, so both coexist.
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/webhooks/attempts",
    access: "account",
    tag: "webhooks",
    verbs: {
      GET: {
        summary: "List the account's webhook attempts, newest first",
        handler: async (ctx) => {
          const log = await deps.collection(ctx.params.account_id ?? "", ATTEMPTS_COLLECTION);
          return listOutcome(log, ctx, { sortKey: attemptOrder, descending: true, row: attemptRow });
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/webhooks/:id/attempts",
    access: "account",
    tag: "webhooks",
    verbs: {
      GET: {
        summary: "List one webhook's attempts, newest first",
        handler: async (ctx) => {
          const accountId = ctx.params.account_id ?? "";
          const id = ctx.params.id ?? "";
          const log = await deps.collection(accountId, ATTEMPTS_COLLECTION);
          // A deleted hook's attempts stay readable while the log holds them.
          const hooks = await deps.collection(accountId, "webhooks");
          if (!hooks.has(id) && !log.all().some((doc) => doc.data.hook_id === id)) throw notFound(id);
          return listOutcome(log, ctx, { sortKey: attemptOrder, descending: true, row: attemptRow, where: (doc) => doc.data.hook_id === id });
        },
      },
    },
  });
}
