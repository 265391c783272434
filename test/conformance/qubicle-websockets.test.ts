// Qubicle's "Websockets Setup" (docs.2600hz.com/qubicle/doc/websockets/setup): its three subscribe
// requests sent as written (no request_id, the family named alone as the binding) on the event
// websocket, each checked for the reply and for the events it then delivers. The event documents
// (queue, recipient, session events) show payloads, not requests; their names follow the spec
// (login, ready ..., not Qubicle's create/delete), see docs/design-notes.md.
//
// Examples: 3. Passing as documented: 3. Marked differs: 0.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { EventsClient, type EventMessage, type ReplyMessage } from "../helpers/events-client.js";

let api: TestApi;
let accountId: string;
let token: string;
const open: EventsClient[] = [];

beforeAll(async () => {
  api = await startApi();
  ({ accountId, token } = await api.login("admin"));
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await api.close();
});

/** `send({"action":"subscribe", "auth_token": ..., "data":{"account_id": ..., "binding": ...}})`, answered. */
async function subscribeAsWritten(binding: string): Promise<{ client: EventsClient; reply: ReplyMessage }> {
  const client = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
  open.push(client);
  const reply = client.next((m) => m.action === "reply");
  client.socket.send(JSON.stringify({ action: "subscribe", auth_token: token, data: { account_id: accountId, binding } }));
  return { client, reply: (await reply) as ReplyMessage };
}

const eventOf = (client: EventsClient, test: (e: EventMessage) => boolean) => client.next((m) => m.action === "event" && test(m)) as Promise<EventMessage>;

describe("websockets/setup.md", () => {
  it("setup.md › Subscribe to Qubicle events via Websocket (recipient events)", async () => {
    const { client, reply } = await subscribeAsWritten("qubicle.recipient");
    expect(reply).toMatchObject({ action: "reply", status: "success", data: { subscribed: ["qubicle.recipient"] } });
    const agent = await api.login("agent1");
    await api.call("POST", `/v2/accounts/${accountId}/qubicle_recipients/${agent.ownerId}/status`, { token: agent.token, data: { status: "login" } });
    const event = await eventOf(client, (e) => e.name === "login");
    expect(event).toMatchObject({ subscribed_key: "qubicle.recipient", routing_key: `callq.recipient.${agent.ownerId}`, data: { account_id: accountId } });
  });

  it("setup.md › Subscribe to Qubicle events via Websocket (queue events)", async () => {
    const { client, reply } = await subscribeAsWritten("qubicle.queue");
    expect(reply).toMatchObject({ action: "reply", status: "success", data: { subscribed: ["qubicle.queue"] } });
    // A caller joining a queue is a queue event: a simulated call to the demo's Sales queue (5001).
    const call = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, { token, data: { to: "5001", caller_id_number: "+14155550100", audio: "silence_stream://" } });
    expect(call.status, call.text).toBe(201);
    const event = await eventOf(client, (e) => e.name === "join");
    expect(event).toMatchObject({ subscribed_key: "qubicle.queue", routing_key: expect.stringMatching(/^callq\.queue\.[0-9a-f]{32}$/), data: { account_id: accountId } });
    await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${call.body.data.id}`, { token, data: { action: "hangup" } });
  });

  it("setup.md › Subscribe to Qubicle events via Websocket (session events)", async () => {
    const { client, reply } = await subscribeAsWritten("qubicle.session");
    expect(reply).toMatchObject({ action: "reply", status: "success", data: { subscribed: ["qubicle.session"] } });
    const call = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, { token, data: { to: "5001", caller_id_number: "+14155550101", audio: "silence_stream://" } });
    expect(call.status, call.text).toBe(201);
    const event = await eventOf(client, (e) => e.name === "create");
    expect(event).toMatchObject({ subscribed_key: "qubicle.session", routing_key: expect.stringMatching(/^callq\.session\./), data: { account_id: accountId } });
    await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${call.body.data.id}`, { token, data: { action: "hangup" } });
  });
});
