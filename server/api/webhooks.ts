// /v2/accounts/{account_id}/webhooks: an account's webhook subscriptions, their read-only
// disable_reason and the collection PATCH that re-enables auto-disabled hooks; /v2/webhooks lists the hooks.
import type { FastifyInstance } from "fastify";
import { registerEndpoint } from "../http/endpoint.js";
import { paginate } from "../http/paging.js";
import { dataObject, registerDocResource, type Data } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import type { StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export const NOTIFICATION_TYPES = [
  "missed_call",
  "voicemail_new",
  "voicemail_full",
  "inbound_fax",
  "inbound_fax_error",
  "outbound_fax_error",
  "register",
  "deregister",
] as const;

/** The hook catalogue: the `hook` values a webhook may take, with what fires them. */
export const HOOKS = {
  channel_create: "Events when new calls start",
  channel_answer: "Events when calls are answered",
  channel_bridge: "Events when two call legs are bridged",
  channel_destroy: "Events when calls end",
  parking: "Events when calls are parked and retrieved",
  notifications: "Events when a notification is triggered (missed call, voicemail, fax, registration)",
  object: "Events when configuration documents are created, edited or deleted",
  sms: "Events when text messages are sent or received",
  callq_queue_join: "Events when a caller joins a call queue",
  callq_queue_leave: "Events when a caller leaves a call queue",
  callq_recipient_login: "Events when a recipient logs in",
  callq_recipient_logout: "Events when a recipient logs out",
  callq_recipient_ready: "Events when a recipient becomes ready",
  callq_recipient_away: "Events when a recipient goes away",
  callq_recipient_offer: "Events when a caller is offered to a recipient",
  callq_recipient_delivered: "Events when a caller is delivered to a recipient",
  callq_recipient_rejected: "Events when a recipient rejects an offered caller",
} as const;

export type Hook = keyof typeof HOOKS;
export const HOOK_NAMES = Object.keys(HOOKS) as Hook[];

export const webhookSchema: JsonSchema = {
  type: "object",
  required: ["name", "hook", "uri"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    hook: { type: "string", enum: HOOK_NAMES },
    // The scheme check is spelt out case by case because JSON-schema patterns take no flags.
    uri: { type: "string", format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+([/?#]\\S*)?$" },
    http_verb: { type: "string", enum: ["get", "post"] },
    retries: { type: "integer", minimum: 0, maximum: 4 },
    enabled: { type: "boolean" },
    custom_data: { type: "object", additionalProperties: { type: "string" } },
    // Kazoo's values; "form" is what this server took before and stays an alias of "form-data".
    format: { type: "string", enum: ["form-data", "json", "form"] },
    include_subaccounts: { type: "boolean" },
    include_internal_legs: { type: "boolean" },
    type: { type: "string" },
    action: { type: "string" },
    disable_reason: { type: "string" },
  },
};

const reenableSchema: JsonSchema = {
  type: "object",
  required: ["re-enable"],
  // The hosted service reads re-enable as a boolean and also takes the string "true".
  properties: { "re-enable": { enum: [true, "true"] } },
  additionalProperties: false,
};

export function webhookRow(doc: StoredDoc): Data {
  const d = doc.data;
  return { id: doc.id, hook: d.hook, name: d.name, uri: d.uri, enabled: d.enabled, disable_reason: d.disable_reason };
}

/**
 * Defaults on every write. `disable_reason` belongs to the auto-disabler: a client's value is
 * dropped, the stored one survives while the hook stays disabled and goes once it is enabled.
 */
export function webhookDefaults(data: Data, existing?: StoredDoc): Data {
  const out: Data = { http_verb: "post", retries: 2, enabled: true, format: "form-data", ...data };
  if (out.format === "form") out.format = "form-data";
  delete out.id;
  delete out.disable_reason;
  const reason = existing?.data.disable_reason;
  if (out.enabled === false && typeof reason === "string") out.disable_reason = reason;
  return out;
}

function checkNotificationType(data: Data): void {
  if (data.hook !== "notifications") return;
  const type = (data.custom_data as Data | undefined)?.type;
  if (type === undefined) throw fieldError("custom_data.type", "required", "notification webhooks need the notification type");
  if (!(NOTIFICATION_TYPES as readonly unknown[]).includes(type)) {
    throw fieldError("custom_data.type", "enum", "Value not found in enumerated list of values", type);
  }
}

function isAutoDisabled(doc: StoredDoc): boolean {
  return doc.data.enabled === false && typeof doc.data.disable_reason === "string";
}

export function registerWebhooks(app: FastifyInstance, deps: ApiDeps): void {
  registerDocResource(app, deps, {
    name: "webhooks",
    collection: "webhooks",
    schema: webhookSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    prepare: (data, ctx) => webhookDefaults(data, ctx.existing),
    check: checkNotificationType,
    row: webhookRow,
    collectionVerbs: () => ({
      PATCH: {
        summary: "Re-enable every auto-disabled webhook of the account",
        admin: true,
        body: reenableSchema,
        handler: async (ctx) => {
          validate(reenableSchema, dataObject(ctx));
          const hooks = await deps.collection(ctx.params.account_id ?? "", "webhooks");
          const reenabled: StoredDoc[] = [];
          for (const { id } of hooks.all().filter(isAutoDisabled)) {
            // Re-read: an earlier write in this loop may have let another request change it.
            const doc = hooks.get(id);
            if (!doc || !isAutoDisabled(doc)) continue;
            const data: Data = { ...doc.data, enabled: true };
            delete data.disable_reason;
            reenabled.push(await hooks.update(id, data));
          }
          return { data: reenabled.map(webhookRow) };
        },
      },
    }),
  });

  registerEndpoint(app, deps, {
    path: "/v2/webhooks",
    access: "token",
    tag: "webhooks",
    verbs: {
      GET: {
        summary: "List the hooks a webhook can subscribe to",
        handler: async (ctx) => {
          const page = paginate(HOOK_NAMES, { key: (hook) => hook }, ctx.req.query);
          return { data: page.rows.map(hookEntry), paging: page.paging };
        },
      },
    },
  });
}

function hookEntry(hook: Hook): Data {
  // As the hosted service names them: the hook string is both id and name.
  const entry: Data = { id: hook, name: hook, description: HOOKS[hook] };
  if (hook === "notifications") {
    entry.modifiers = { type: { type: "array", description: "A list of notification types to handle", items: [...NOTIFICATION_TYPES] } };
  }
  return entry;
}
