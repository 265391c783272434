// /v2/accounts/{account_id}/devices/status and /devices/{id}/sync: which of the account's devices
// are registered now, and asking a registered phone to re-read its configuration (check-sync).
import type { FastifyInstance } from "fastify";
import type { Ctx, Outcome } from "../http/endpoint.js";
import { registerEndpoint } from "../http/endpoint.js";
import { notFound, type WriteCtx } from "../http/resource.js";
import type { StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export function registerDeviceStatus(app: FastifyInstance, deps: ApiDeps): void {
  const status = async (ctx: Ctx): Promise<Outcome> => {
    const ids = deps.sip?.registeredDevices(ctx.params.account_id ?? "") ?? [];
    return { data: ids.map((id) => ({ device_id: id, registered: true })) };
  };
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/devices/status",
    access: "account",
    tag: "devices",
    verbs: {
      GET: { summary: "List the account's registered devices", handler: status },
      // The service's own API document lists registrations with DELETE; it changes nothing.
      DELETE: { summary: "List the account's registered devices (as GET)", handler: status },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/devices/:id/sync",
    access: "account",
    tag: "devices",
    verbs: {
      POST: {
        summary: "Ask a registered device to re-read its configuration (SIP NOTIFY check-sync)",
        admin: true,
        answers: [202],
        handler: async (ctx) => {
          const accountId = ctx.params.account_id ?? "";
          const id = ctx.params.id ?? "";
          if (!(await deps.collection(accountId, "devices")).has(id)) throw notFound(id);
          // Not registered: nothing to send, and the answer is the same (the service does so).
          deps.sip?.checkSync(accountId, id);
          return { data: "sync request sent", status: 202 };
        },
      },
    },
  });
}

/** The devices resource's afterWrite: `data.sync: true` on a write sends check-sync too. */
export function syncOnWrite(deps: ApiDeps, doc: StoredDoc, ctx: WriteCtx): void {
  if (ctx.input.sync === true) deps.sip?.checkSync(ctx.accountId, doc.id);
}
