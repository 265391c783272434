// /v2/webhooks/samples and /v2/webhooks/samples/{sample_id}: what each hook this server fires
// sends (the call-queue hooks too), as Kazoo's sample payloads (`webhooks_<hook>`). Each sample is built by the dispatcher's
// own payload code from a made-up event, so a sample is always the shape a receiver gets. Public,
// as Kazoo serves them; the list and a sample's payloads take the query-string filters.
import type { FastifyInstance } from "fastify";
import { registerEndpoint } from "../http/endpoint.js";
import { filterFromQuery } from "../http/filters.js";
import { notFound, type Data } from "../http/resource.js";
import { toGregorianSeconds } from "../clock.js";
import type { BusEvent } from "../events/bus.js";
import { buildPayload, triggerOf } from "../events/webhook-payload.js";
import type { ApiDeps } from "./deps.js";
import { step, type AvailabilityState, type RecipientTrigger } from "../callq/recipient-state.js";

const ACCOUNT_ID = "5a2d994fbae69b1d6b01eb9f0e7dfe62";
const AT = Date.UTC(2026, 0, 15, 14, 30, 0);
const CALL_ID = "OWU4NzEwOTgyZWNiMjM0MzI0NjRkZDc4MWVmMjEyOWI";
const OTHER_LEG = "d220c187-e18edc42-bab2459d@10.26.0.91";
const DEVICE_ID = "63fbb9ac78e11f3ccb387928a423798a";
const OWNER_ID = "72855158432d790dfb22d03ff64c033e";

const CALL = {
  call_direction: "inbound",
  request: "1002@demo.switchboard.local",
  to: "1002@demo.switchboard.local",
  from: "1001@demo.switchboard.local",
  call_id: CALL_ID,
  caller_id_name: "Ada Admin",
  caller_id_number: "1001",
  callee_id_name: "Alex Agent",
  callee_id_number: "1002",
  owner_id: OWNER_ID,
  authorizing_id: DEVICE_ID,
  authorizing_type: "device",
  is_internal_leg: false,
};

const DEVICE = { device_id: DEVICE_ID, owner_id: OWNER_ID, username: "user_zu0bf7", realm: "demo.switchboard.local", user_agent: "sip.js", contact: "<sip:user_zu0bf7@198.51.100.7;transport=ws>" };

const QUEUE_ID = "b4f0d1a7c1e24c1c9a3f5e6d7c8b9a01";
const SESSION = {
  queue_id: QUEUE_ID,
  queue_name: "Sales",
  session_id: "0f3c2b1a4d5e6f708192a3b4c5d6e7f8",
  call_id: CALL_ID,
  caller_id_name: "Casey Customer",
  caller_id_number: "+14155550100",
  queue_enter_time: toGregorianSeconds(AT) - 12,
};

/** A recipient's step: the event name and the states it goes between. */
/** A recipient event as the state machine emits it for this step, so a sample shows a real transition. */
function recipientSample(from: AvailabilityState, trigger: RecipientTrigger, call = false): { routing_key: string; name: string; data: Data } {
  const taken = step(from, trigger, { pendingAway: false });
  return {
    routing_key: `callq.recipient.${OWNER_ID}`,
    name: taken.event,
    data: { recipient_id: OWNER_ID, availability_state: taken.to, previous_state: taken.from, ...(call ? SESSION : {}) },
  };
}

/** The made-up events, by sample id. */
const SAMPLE_EVENTS: Record<string, { routing_key: string; name: string; data: Data }[]> = {
  webhooks_channel_create: [{ routing_key: `call.CHANNEL_CREATE.${CALL_ID}`, name: "CHANNEL_CREATE", data: CALL }],
  webhooks_channel_answer: [{ routing_key: `call.CHANNEL_ANSWER.${CALL_ID}`, name: "CHANNEL_ANSWER", data: { ...CALL, other_leg_call_id: OTHER_LEG } }],
  webhooks_channel_bridge: [
    { routing_key: `call.CHANNEL_BRIDGE.${CALL_ID}`, name: "CHANNEL_BRIDGE", data: { ...CALL, other_leg_call_id: OTHER_LEG, other_leg_destination_number: "1002" } },
  ],
  webhooks_channel_destroy: [
    {
      routing_key: `call.CHANNEL_DESTROY.${CALL_ID}`,
      name: "CHANNEL_DESTROY",
      data: { ...CALL, other_leg_call_id: OTHER_LEG, hangup_cause: "NORMAL_CLEARING", hangup_code: "sip:200", duration_seconds: 74, billing_seconds: 68, ringing_seconds: 6 },
    },
  ],
  webhooks_notifications: [
    {
      routing_key: `notification.missed_call.${CALL_ID}`,
      name: "missed_call",
      data: { type: "missed_call", call_id: CALL_ID, caller_id_name: "Casey Customer", caller_id_number: "+14155550100", callee_id_number: "1002", to: "1002@demo.switchboard.local", from: "+14155550100@demo.switchboard.local", owner_id: OWNER_ID },
    },
    { routing_key: `notification.register.${DEVICE_ID}`, name: "register", data: { type: "register", ...DEVICE } },
    { routing_key: `notification.deregister.${DEVICE_ID}`, name: "deregister", data: { type: "deregister", ...DEVICE } },
  ],
  webhooks_callq_queue_join: [{ routing_key: `callq.queue.${QUEUE_ID}`, name: "join", data: SESSION }],
  webhooks_callq_queue_leave: [{ routing_key: `callq.queue.${QUEUE_ID}`, name: "leave", data: { ...SESSION, wait_time: 12.4, reason: "handled" } }],
  webhooks_callq_recipient_login: [recipientSample("Not-Logged-In", "login")],
  webhooks_callq_recipient_logout: [recipientSample("Ready", "logout")],
  webhooks_callq_recipient_ready: [recipientSample("Away", "ready")],
  webhooks_callq_recipient_away: [recipientSample("Ready", "away")],
  webhooks_callq_recipient_offer: [recipientSample("Ready", "offer", true)],
  webhooks_callq_recipient_delivered: [recipientSample("Call-Offer", "answered", true)],
  webhooks_callq_recipient_rejected: [recipientSample("Call-Offer", "missed", true)],
  webhooks_object: ["doc_created", "doc_edited", "doc_deleted"].map((action) => ({
    routing_key: `object.${action}.device`,
    name: action,
    data: { action, type: "device", id: DEVICE_ID, account_id: ACCOUNT_ID },
  })),
};

export const SAMPLE_IDS = Object.keys(SAMPLE_EVENTS).sort();

function samplePayloads(sampleId: string): Data[] {
  const events = Object.hasOwn(SAMPLE_EVENTS, sampleId) ? SAMPLE_EVENTS[sampleId] : undefined;
  if (!events) throw notFound(sampleId);
  return events.flatMap((made, i) => {
    const event: BusEvent = { seq: i + 1, at: AT, account_id: ACCOUNT_ID, ...made };
    const trigger = triggerOf(event);
    return trigger ? [buildPayload(event, trigger)] : [];
  });
}

export function registerWebhookSamples(app: FastifyInstance, deps: ApiDeps): void {
  registerEndpoint(app, deps, {
    path: "/v2/webhooks/samples",
    access: "public",
    tag: "webhooks",
    verbs: { GET: { summary: "List the sample ids: one per hook this server fires (webhooks_<hook>)", handler: async () => ({ data: SAMPLE_IDS }) } },
  });
  registerEndpoint(app, deps, {
    path: "/v2/webhooks/samples/:id",
    access: "public",
    tag: "webhooks",
    verbs: {
      GET: {
        summary: "The sample payloads of one hook, narrowed by the query-string filters",
        handler: async (ctx) => {
          const test = filterFromQuery(ctx.req.query);
          const at = toGregorianSeconds(AT);
          const data = samplePayloads(ctx.params.id ?? "").filter((payload, i) => test({ id: String(i), created: at, modified: at, data: payload }));
          return { data };
        },
      },
    },
  });
}
