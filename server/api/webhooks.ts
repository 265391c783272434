// /v2/accounts/{account_id}/webhooks: an account's webhook subscriptions, their read-only
// disable_reason and the collection PATCH that re-enables auto-disabled hooks; /v2/webhooks lists the hooks.
import type { FastifyInstance } from "fastify";
import { registerEndpoint, type VerbSpec } from "../http/endpoint.js";
import { paginate } from "../http/paging.js";
import { dataObject, registerDocResource, type Data } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import { OBJECT_TYPES } from "../events/objects.js";
import { registerWebhookSamples } from "./webhook-samples.js";
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

/**
 * The hook catalogue: the `hook` values a webhook may take, with the friendly name and the
 * description GET /v2/webhooks shows (Kazoo's names where Kazoo has the hook).
 */
export const HOOKS = {
  channel_create: { name: "Channel Create", description: "This webhook is triggered when a new channel is created" },
  channel_answer: { name: "Channel Answer", description: "This webhook is triggered when a channel establishes two-way audio, such as the called party answering" },
  channel_bridge: { name: "Channel Bridge", description: "This webhook is triggered when two channels are bridged together, such as two users/devices connected together" },
  channel_destroy: { name: "Channel Destroy", description: "This webhook is triggered when a channel is destroyed, usually as a result of a hangup" },
  parking: { name: "Call Parking", description: "Events when calls get parked/retrieved" },
  notifications: { name: "Notifications Webhook", description: "Fire a webhook when a notification event is triggered (missed call, voicemail, fax, registration)" },
  object: { name: "Object", description: "Receive notifications when objects (like JSON document objects) are changed" },
  sms: { name: "SMS", description: "Receive notifications when sms is created" },
  callq_queue_join: { name: "Call Queue Join", description: "Events when a caller joins a call queue" },
  callq_queue_leave: { name: "Call Queue Leave", description: "Events when a caller leaves a call queue" },
  callq_recipient_login: { name: "Recipient Login", description: "Events when a recipient logs in" },
  callq_recipient_logout: { name: "Recipient Logout", description: "Events when a recipient logs out" },
  callq_recipient_ready: { name: "Recipient Ready", description: "Events when a recipient becomes ready" },
  callq_recipient_away: { name: "Recipient Away", description: "Events when a recipient goes away" },
  callq_recipient_offer: { name: "Recipient Offer", description: "Events when a caller is offered to a recipient" },
  callq_recipient_delivered: { name: "Recipient Delivered", description: "Events when a caller is delivered to a recipient" },
  callq_recipient_rejected: { name: "Recipient Rejected", description: "Events when a recipient rejects an offered caller" },
  // Local additions (issues 19 and 20): marked so in the catalogue, which the hosted service's hooks are not.
  callq_recipient_disposition: { name: "Recipient Disposition", description: "Events when a recipient gives a queue call its disposition code and note", local_addition: true },
  callq_queue_alert: { name: "Queue Alert", description: "Events when a queue's alert (service level, longest wait, a member too long in a state) fires or clears", local_addition: true },
  callq_queue_callback: { name: "Queue Callback", description: "Events when a waiting caller asks to be called back, and as the callback is offered, dialled, connected or fails", local_addition: true },
  user_presence: { name: "User Presence", description: "Events when a user's presence in the directory changes (on a call, ringing, ready, away, do not disturb, offline)", local_addition: true },
  training_run: { name: "Training Run", description: "Events of a live training run: started, paused, resumed, ended, each caller's way, texts, and faults injected and cleared", local_addition: true },
} as const;

/** What each notification type is, as Kazoo's notifications hook lists its `type` modifier. */
const NOTIFICATION_INFO: Record<(typeof NOTIFICATION_TYPES)[number], { friendly_name: string; description: string }> = {
  missed_call: { friendly_name: "Missed Call", description: "This event is triggered when a call to a user is missed" },
  voicemail_new: { friendly_name: "New Voicemail Message", description: "This event is triggered any time a voicemail message is left" },
  voicemail_full: { friendly_name: "Voicemail Box Full", description: "This event is triggered any time an attempt to leave a voicemail message is blocked because the voicemail box is full" },
  inbound_fax: { friendly_name: "Successful Fax Reception", description: "This event is triggered when a fax is successfully received" },
  inbound_fax_error: { friendly_name: "Fax Reception Error", description: "This event is triggered when receiving a fax fails" },
  outbound_fax_error: { friendly_name: "Fax Transmission Error", description: "This event is triggered when transmitting a fax fails" },
  register: { friendly_name: "Registration", description: "This event is triggered when a device registers but is not currently registered" },
  deregister: { friendly_name: "De-Registration", description: "This event is triggered when a device fails to re-register and the contact expires" },
};

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
  if (type !== "all" && !(NOTIFICATION_TYPES as readonly unknown[]).includes(type)) {
    throw fieldError("custom_data.type", "enum", "Value not found in enumerated list of values", type);
  }
}

function isAutoDisabled(doc: StoredDoc): boolean {
  return doc.data.enabled === false && typeof doc.data.disable_reason === "string";
}

export function registerWebhooks(app: FastifyInstance, deps: ApiDeps): void {
  const reenable: VerbSpec = {
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
  };

  registerDocResource(app, deps, {
    name: "webhooks",
    collection: "webhooks",
    schema: webhookSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    prepare: (data, ctx) => webhookDefaults(data, ctx.existing),
    check: checkNotificationType,
    row: webhookRow,
    collectionVerbs: () => ({ PATCH: reenable }),
  });

  // Kazoo's bulk re-enable of an account and its descendants; accounts here have no sub-accounts,
  // so it re-enables the account's own hooks.
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/descendants/webhooks",
    access: "account",
    tag: "webhooks",
    verbs: { PATCH: { ...reenable, summary: "Re-enable every auto-disabled webhook of the account and its descendants (it has none)" } },
  });

  registerWebhookSamples(app, deps);

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

/** A catalogue entry in Kazoo's shape: the object hook's selectors are arrays, the notification types an object. */
function hookEntry(hook: Hook): Data {
  const entry: Data = { id: hook, ...HOOKS[hook] };
  if (hook === "notifications") {
    const items: Data = { all: { friendly_name: "All", description: "This event is triggered for any notification events" } };
    for (const type of NOTIFICATION_TYPES) items[type] = NOTIFICATION_INFO[type];
    entry.modifiers = { type: { type: "object", description: "A list of notification types to handle", items } };
  }
  if (hook === "object") {
    entry.modifiers = {
      action: { type: "array", description: "A list of object actions to handle", items: ["all", "doc_created", "doc_edited", "doc_deleted"] },
      type: { type: "array", description: "A list of object types to handle", items: ["all", ...OBJECT_TYPES] },
    };
  }
  return entry;
}
