// The simulated carrier and consent: an outbound message goes queued, sent, delivered (or failed
// for a number marked unreachable) in that order, on the injected clock, each step one
// `texting.message.<id>` event; sendStatus "sent" never reaches the carrier; STOP-like keywords
// from a contact block sends naming the opt-out until START.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock, startApi, type TestApi } from "../helpers/api.js";
import { EventsClient, type EventMessage } from "../helpers/events-client.js";
import { poll } from "../helpers/poll.js";
import { texting, textingUser, type TextingUser } from "./texting-client.js";

const clock = new TestClock();
let api: TestApi;
let agent: TextingUser;
let admin: TextingUser;
let events: EventsClient;

beforeAll(async () => {
  api = await startApi({ clock });
  agent = await textingUser(api, "agent1");
  admin = await textingUser(api, "admin");
  events = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
  const reply = await events.subscribe(agent.accountId, "texting.message.*", { auth_token: agent.token });
  expect(reply.status).toBe("success");
});

afterAll(async () => {
  await events.close();
  await api.close();
});

interface MessageData {
  id: string;
  status: string;
  error?: string;
  direction: string;
  body: string;
  contact_opted_out: boolean;
}

function eventsOf(id: string): EventMessage[] {
  return events.events.filter((e) => e.routing_key === `texting.message.${id}`);
}

async function send(body: Record<string, unknown>) {
  return texting<{ status?: string; messageId?: string; errors?: string[] }>(api, "POST", "/send", { bearer: agent.bearer, body: { from: agent.number, ...body } });
}

/**
 * The statuses a message's events report, in arrival order, once it reaches `last`. The carrier's
 * steps are deadlines on the injected clock: each look moves it on a second, making them due.
 */
async function statusesUntil(id: string, last: string): Promise<string[]> {
  return poll(`message ${id} to reach ${last}`, async () => {
    clock.advance(1_000);
    const statuses = eventsOf(id).map((e) => (e.data as unknown as MessageData).status);
    return statuses.includes(last) ? statuses : undefined;
  }, 5_000);
}

async function inbound(from: string, body: string) {
  const res = await api.call("POST", `/v2/accounts/${admin.accountId}/sim/messages`, { token: admin.token, data: { from, to: agent.number, body } });
  expect(res.status).toBe(201);
  return res;
}

describe("simulated carrier", () => {
  it("moves a message through queued, sent, delivered in order, as the clock runs", async () => {
    const res = await send({ to: "+14155554000", message: "Your table is ready" });
    expect(res.status).toBe(200);
    const id = res.body.messageId ?? "";
    const created = await poll("the created event", async () => eventsOf(id)[0]);
    expect(created.name).toBe("created");
    expect(created.data).toMatchObject({ id, status: "queued", direction: "out", body: "Your table is ready", to: "+14155554000", from: agent.number, user_id: agent.userId });
    expect(await statusesUntil(id, "delivered")).toEqual(["queued", "sent", "delivered"]);
    expect(eventsOf(id).map((e) => e.name)).toEqual(["created", "updated", "updated"]);
    const contactId = String(created.data.conversation_id);
    const thread = await texting<{ messages: { id: string; status: string }[] }>(api, "GET", `/contacts/${contactId}/messages`, { bearer: agent.bearer });
    expect(thread.body.messages.find((m) => m.id === id)?.status).toBe("delivered");
  });

  it("fails messages to a number a trainer marks unreachable", async () => {
    const path = `/v2/accounts/${admin.accountId}/sim/messages/unreachable`;
    expect((await api.call("POST", path, { token: agent.token, data: { numbers: ["+14155554001"] } })).status).toBe(403);
    const bad = await api.call<Record<string, Record<string, unknown>>>("POST", path, { token: admin.token, data: { numbers: ["555"] } });
    expect(bad.status).toBe(400);
    const set = await api.call<{ numbers: string[] }>("POST", path, { token: admin.token, data: { numbers: ["+14155554001"] } });
    expect(set.body.data.numbers).toEqual(["+14155554001"]);
    expect((await api.call<{ numbers: string[] }>("GET", path, { token: agent.token })).body.data.numbers).toEqual(["+14155554001"]);
    const res = await send({ to: "+14155554001", message: "Anyone there?" });
    const id = res.body.messageId ?? "";
    expect(await statusesUntil(id, "failed")).toEqual(["queued", "sent", "failed"]);
    expect((eventsOf(id).at(-1)?.data as unknown as MessageData).error).toBe("+14155554001 is unreachable");
    await api.call("POST", path, { token: admin.token, data: { numbers: [] } });
  });

  it("keeps a sendStatus 'sent' message as sent: stored in the history, never through the carrier", async () => {
    const res = await send({ to: "+14155554002", message: "Sent from my phone", sendStatus: "sent" });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("true");
    const id = res.body.messageId ?? "";
    const created = await poll("the created event", async () => eventsOf(id)[0]);
    expect((created.data as unknown as MessageData).status).toBe("sent");
    // A carrier message sent after it is delivered; by then this one would have moved too.
    const probe = await send({ to: "+14155554002", message: "and through the carrier" });
    await statusesUntil(probe.body.messageId ?? "", "delivered");
    expect(eventsOf(id).map((e) => (e.data as unknown as MessageData).status)).toEqual(["sent"]);
    const thread = await texting<{ messages: { id: string; status: string; message: string }[] }>(api, "GET", `/contacts/${String(created.data.conversation_id)}/messages`, { bearer: agent.bearer });
    expect(thread.body.messages.map((m) => [m.message, m.status])).toEqual([
      ["Sent from my phone", "sent"],
      ["and through the carrier", "delivered"],
    ]);
  });
});

describe("opt-out and opt-in", () => {
  it("blocks sends after STOP, naming the opt-out, and allows them again after START", async () => {
    const contact = "+14155554100";
    expect((await send({ to: contact, message: "Welcome!" })).status).toBe(200);
    await inbound(contact, "STOP");
    const refused = await send({ to: contact, message: "Still there?" });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([`Contact '${contact}' has opted out (texted STOP); no messages can be sent to it until it texts START`]);
    const list = await texting<{ contacts: { phoneNumber: string; optedOut: boolean; optOutKeyword?: string }[] }>(api, "GET", "/contacts", { bearer: agent.bearer });
    expect(list.body.contacts.find((c) => c.phoneNumber === contact)).toMatchObject({ optedOut: true, optOutKeyword: "STOP" });
    // The opt-out rides on the message's event, so a console can show it at once.
    const stopEvent = events.events.filter((e) => e.data.from === contact && e.data.body === "STOP").at(-1);
    expect(stopEvent?.data.contact_opted_out).toBe(true);
    // Recording a message sent elsewhere is still allowed: nothing goes to the contact.
    expect((await send({ to: contact, message: "logged only", sendStatus: "sent" })).status).toBe(200);
    await inbound(contact, "start");
    const again = await send({ to: contact, message: "Welcome back" });
    expect(again.status).toBe(200);
    const after = await texting<{ contacts: { phoneNumber: string; optedOut: boolean }[] }>(api, "GET", "/contacts", { bearer: agent.bearer });
    expect(after.body.contacts.find((c) => c.phoneNumber === contact)?.optedOut).toBe(false);
  });

  it("takes UNSUBSCRIBE, CANCEL, END and QUIT in any case and spacing as STOP, but not a sentence", async () => {
    const contacts = ["+14155554101", "+14155554102", "+14155554103", "+14155554104"];
    const words = ["UNSUBSCRIBE", " cancel ", "End", "quit"];
    for (const [i, number] of contacts.entries()) {
      await inbound(number, words[i] ?? "");
      const res = await send({ to: number, message: "hello?" });
      expect(res.status, words[i]).toBe(400);
      expect(res.body.errors?.[0]).toContain(`texted ${(words[i] ?? "").trim().toUpperCase()}`);
    }
    await inbound("+14155554105", "please stop calling me at work");
    expect((await send({ to: "+14155554105", message: "Sorry!" })).status).toBe(200);
  });
});
