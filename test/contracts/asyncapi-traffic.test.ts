// The AsyncAPI document against what the server really sends: the event websocket's replies and
// events of every family a queue call goes through (call, object, callq queue/session/recipient,
// notification, texting), real webhook deliveries (JSON format, one hook of each kind fired) and a texting
// relay delivery, each validated against its message's payload schema.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ajv, type ValidateFunction } from "ajv";
import { startApi, type TestApi } from "../helpers/api.js";
import { EventsClient, type Incoming } from "../helpers/events-client.js";
import { poll } from "../helpers/poll.js";
import { textingUser, texting } from "../texting/texting-client.js";

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** Keeps each request's JSON body as sent (webhooks in format json, the texting relay). */
async function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      received.push({ path: new URL(req.url ?? "/", "http://receiver").pathname, headers: req.headers, body: text === "" ? null : (JSON.parse(text) as unknown) });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

type Messages = Record<string, { payload: Record<string, unknown> }>;

let api: TestApi;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let channels: Record<string, { messages: Messages }>;
const ajv = new Ajv({ strict: false, allErrors: true });
const compiled = new Map<string, ValidateFunction>();

beforeAll(async () => {
  api = await startApi();
  receiver = await startReceiver();
  const doc = (await (await fetch(`${api.url}/v2/asyncapi.json`)).json()) as { channels: typeof channels };
  channels = doc.channels;
});
afterAll(async () => {
  receiver.server.closeAllConnections();
  await new Promise((resolve) => receiver.server.close(resolve));
  await api.close();
});

function validatorOf(channel: string, message: string): ValidateFunction {
  const key = `${channel}/${message}`;
  let v = compiled.get(key);
  if (!v) {
    const payload = channels[channel]?.messages[message]?.payload;
    if (!payload) throw new Error(`no message ${key} in the document`);
    v = ajv.compile(payload);
    compiled.set(key, v);
  }
  return v;
}

/** The event messages a websocket message conforms to; exactly one for a well-described event. */
function eventMessagesMatching(message: Incoming): string[] {
  return Object.keys(channels.events?.messages ?? {}).filter((name) => name.endsWith("Event") && validatorOf("events", name)(message));
}

function problemsOf(channel: string, message: string, value: unknown): string[] {
  const v = validatorOf(channel, message);
  return v(value) ? [] : (v.errors ?? []).map((e) => `${message}: ${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
}

describe("the AsyncAPI document against real traffic", () => {
  it("describes the websocket replies, every event of a queued call and a text, the webhook deliveries and the relay", async () => {
    const { token, accountId } = await api.login("admin");
    const account = `/v2/accounts/${accountId}`;
    const client = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
    const problems: string[] = [];
    try {
      const replies = [
        await client.subscribe(accountId, ["call.#", "object.#", "callq.#", "qubicle.session.*", "notification.#", "texting.#"], { auth_token: token }),
        await client.ping(),
        await client.request({ action: "unsubscribe", data: { account_id: accountId, binding: "qubicle.session.*" } }),
        await client.request({ action: "subscribe", data: { account_id: accountId, binding: "nonsense.x" } }),
        await client.request({ action: "dance" }),
      ];
      expect(replies.map((r) => r.status)).toEqual(["success", "success", "success", "error", "error"]);
      for (const reply of replies) problems.push(...problemsOf("events", "reply", reply));

      const hooks = ["object", "channel_create", "channel_answer", "channel_destroy", "callq_queue_join", "callq_queue_leave", "callq_recipient_login", "callq_recipient_logout"];
      for (const hook of [...hooks, "notifications"]) {
        // notifications hooks name the notification they want.
        const custom = hook === "notifications" ? { custom_data: { type: "missed_call" } } : {};
        const made = await api.call("PUT", `${account}/webhooks`, { token, data: { name: `contract ${hook}`, hook, uri: `${receiver.url}/${hook}`, format: "json", ...custom } });
        expect(made.status, made.text).toBe(201);
      }

      // A recipient logs in and out; a caller waits in a queue, is removed, hangs up.
      const users = await api.call<{ id: string; username: string }[]>("GET", `${account}/users`, { token, query: { paginate: "false" } });
      const recipientId = users.body.data.find((u) => u.username === "agent3")?.id ?? "";
      await api.call("PATCH", `${account}/users/${recipientId}`, { token, data: { callq: { enabled: true } } });
      const queue = await api.call<{ id: string }>("PUT", `${account}/callq_queues`, { token, data: { name: "Contract queue", hold_treatment: "silence_stream://60000", members: [recipientId] } });
      expect(queue.status, queue.text).toBe(201);
      const queueId = queue.body.data.id;
      expect((await api.call("PUT", `${account}/callflows`, { token, data: { name: "Contract queue", numbers: ["5288"], flow: { module: "callq", data: { queue_id: queueId }, children: {} } } })).status).toBe(201);
      expect((await api.call("POST", `${account}/callq_recipients/${recipientId}/status`, { token, data: { status: "login" } })).status).toBe(200);
      const sim = await api.call<{ id: string }>("POST", `${account}/sim/calls`, { token, data: { to: "5288", caller_id_number: "+15550002222", caller_id_name: "Contract Caller", audio: "silence_stream://60000" } });
      expect(sim.status, sim.text).toBe(201);
      const session = await poll("the caller's session", async () => {
        const res = await api.call<{ session_list: { session_id: string }[] }[]>("GET", `${account}/callq_queues/${queueId}/sessions`, { token });
        return res.body.data[0]?.session_list[0];
      });
      await api.call("POST", `${account}/callq_queues/${queueId}/sessions/${session.session_id}`, { token, data: { action: "remove" } });
      await api.call("POST", `${account}/sim/calls/${sim.body.data.id}`, { token, data: { action: "hangup" } });
      await api.call("POST", `${account}/callq_recipients/${recipientId}/status`, { token, data: { status: "logout" } });
      // A call to a user with no phone registered: missed at once, a missed_call notification.
      expect((await api.call("POST", `${account}/sim/calls`, { token, data: { to: "1002", caller_id_number: "+15550003333", audio: "silence_stream://1000" } })).status).toBe(201);

      // A text, relayed to the user's relay_url.
      const agent = await textingUser(api, "agent1");
      const relay = await api.call("POST", `/v2/accounts/${agent.accountId}/users/${agent.userId}/texting`, { token: agent.token, data: { relay_url: `${receiver.url}/relay` } });
      expect(relay.status, relay.text).toBe(200);
      await client.subscribe(accountId, "texting.#");
      const sent = await texting(api, "POST", "/send", { bearer: agent.bearer, body: { to: "+14155550177", from: agent.number, message: "contract" } });
      expect(sent.status).toBe(200);

      const families = ["call.", "object.", "callq.queue.", "callq.session.", "callq.recipient.", "notification.", "texting."];
      await poll("an event of every family", () => families.every((f) => client.events.some((e) => e.routing_key.startsWith(f))) || undefined);
      await poll("every webhook delivered and the relay", () => [...hooks, "notifications", "relay"].every((h) => receiver.received.some((r) => r.path === `/${h}`)) || undefined);

      for (const event of client.events) {
        const matching = eventMessagesMatching(event);
        if (matching.length !== 1) problems.push(`${event.routing_key} ${event.name} matches ${matching.length} event messages: ${JSON.stringify(event.data)}`);
      }
      for (const delivery of receiver.received) {
        const name = delivery.path.slice(1);
        const channel = name === "relay" ? "textingRelay" : "webhooks";
        problems.push(...problemsOf(channel, name, delivery.body));
        expect(delivery.headers["x-account-id"]).toBe(accountId);
        if (channel === "webhooks") expect(delivery.headers["x-hook-id"]).toBeTruthy();
      }
      expect(problems).toEqual([]);
      // Every event message described was seen.
      const seen = new Set(client.events.flatMap(eventMessagesMatching));
      expect([...seen].sort()).toEqual(["callEvent", "callqQueueEvent", "callqRecipientEvent", "callqSessionEvent", "notificationEvent", "objectEvent", "textingEvent"]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
