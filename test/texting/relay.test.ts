// The texting relay against a real HTTP receiver: every message sent or received by the user's
// number arrives as the Texting relay message (JSON, every field), retried by the webhook rule
// (retries after a failure, then given up), with each attempt in the attempts view.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";
import { RelayReceiver, texting, textingUser, type TextingSettings, type TextingUser } from "./texting-client.js";

let api: TestApi;
let receiver: RelayReceiver;
let agent: TextingUser;
let admin: TextingUser;

beforeAll(async () => {
  api = await startApi({ config: { webhookRetryDelayMs: 50, webhookTimeoutMs: 1_000 } });
  receiver = await RelayReceiver.start();
  agent = await textingUser(api, "agent2");
  admin = await textingUser(api, "admin");
});

afterAll(async () => {
  await api.close();
  await receiver.close();
});

beforeEach(async () => {
  receiver.requests.length = 0;
  receiver.failures = 0;
  receiver.refused.clear();
  await setRelay(`${receiver.url}/relay`);
});

async function setRelay(url: string | null): Promise<void> {
  const res = await api.call<TextingSettings>("POST", `/v2/accounts/${agent.accountId}/users/${agent.userId}/texting`, { token: agent.token, data: { relay_url: url } });
  expect(res.status).toBe(200);
}

interface Attempt {
  user_id: string;
  message_id: string;
  direction: string;
  result: string;
  reason?: string;
  response_code?: number;
  try: number;
  retries_left: number;
  uri: string;
  method: string;
  timestamp: number;
}

async function attempts(messageId: string): Promise<Attempt[]> {
  const res = await api.call<Attempt[]>("GET", `/v2/accounts/${agent.accountId}/users/${agent.userId}/texting/attempts`, { token: agent.token });
  expect(res.status).toBe(200);
  return res.body.data.filter((a) => a.message_id === messageId);
}

describe("texting relay", () => {
  it("POSTs the relay payload with every field for a message sent and a message received", async () => {
    const contact = await texting<{ id: string }>(api, "POST", "/contacts", { bearer: agent.bearer, body: { phoneNumber: "+14155555000", fullName: "Robin Buyer", email: "robin@example.com" } });
    const sent = await texting<{ messageId: string }>(api, "POST", "/send", {
      bearer: agent.bearer,
      body: { to: "+14155555000", from: agent.number, message: "Your parcel left the depot", media: ["https://example.com/map.png"] },
    });
    expect(sent.status).toBe(200);
    const received = await api.call<{ id: string }>("POST", `/v2/accounts/${admin.accountId}/sim/messages`, {
      token: admin.token,
      data: { from: "+14155555000", to: agent.number, body: "Thanks!" },
    });
    expect(received.status).toBe(201);
    const [out, inbound] = await receiver.waitFor(2);
    expect(out?.method).toBe("POST");
    expect(out?.path).toBe("/relay");
    expect(out?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(out?.body ?? "")).toEqual({
      MessageID: sent.body.messageId,
      ConversationID: contact.body.id,
      ToNumber: "+14155555000",
      FromNumber: agent.number,
      MessageBody: "Your parcel left the depot",
      MessageDirection: "out",
      ServiceUserID: agent.userId,
      ContactName: "Robin Buyer",
      ContactEmail: "robin@example.com",
      Media: ["https://example.com/map.png"],
    });
    expect(JSON.parse(inbound?.body ?? "")).toEqual({
      MessageID: received.body.data.id,
      ConversationID: contact.body.id,
      ToNumber: agent.number,
      FromNumber: "+14155555000",
      MessageBody: "Thanks!",
      MessageDirection: "in",
      ServiceUserID: agent.userId,
      ContactName: "Robin Buyer",
      ContactEmail: "robin@example.com",
      Media: [],
    });
    const logged = await poll("the attempt to be logged", async () => {
      const rows = await attempts(sent.body.messageId);
      return rows.length > 0 ? rows : undefined;
    });
    expect(logged).toEqual([
      expect.objectContaining({ user_id: agent.userId, direction: "out", result: "success", response_code: 200, try: 1, retries_left: 2, uri: `${receiver.url}/relay`, method: "post" }),
    ]);
  });

  it("retries a failing relay, 2 retries as a webhook's default, and logs each attempt", async () => {
    receiver.failures = 2;
    const sent = await texting<{ messageId: string }>(api, "POST", "/send", { bearer: agent.bearer, body: { to: "+14155555001", from: agent.number, message: "retry me" } });
    const requests = await receiver.waitFor(3);
    expect(requests.map((r) => (JSON.parse(r.body) as { MessageID: string }).MessageID)).toEqual([sent.body.messageId, sent.body.messageId, sent.body.messageId]);
    const rows = await poll("three attempts logged", async () => {
      const found = await attempts(sent.body.messageId);
      return found.length === 3 ? found : undefined;
    });
    // Newest first.
    expect(rows.map((a) => [a.try, a.result, a.response_code, a.retries_left])).toEqual([
      [3, "success", 200, 0],
      [2, "failure", 500, 1],
      [1, "failure", 500, 2],
    ]);
    expect(rows[1]?.reason).toBe("bad response code");
  });

  it("gives up after the last retry, while the next message goes through", async () => {
    receiver.refused.add("never arrives");
    const lost = await texting<{ messageId: string }>(api, "POST", "/send", { bearer: agent.bearer, body: { to: "+14155555002", from: agent.number, message: "never arrives" } });
    const next = await texting<{ messageId: string }>(api, "POST", "/send", { bearer: agent.bearer, body: { to: "+14155555002", from: agent.number, message: "arrives" } });
    const requests = await receiver.waitFor(4);
    // A message waiting for its retry does not hold up the next one, as with webhooks.
    expect(requests.map((r) => (JSON.parse(r.body) as { MessageBody: string }).MessageBody).sort()).toEqual(["arrives", "never arrives", "never arrives", "never arrives"]);
    const rows = await poll("the lost message's attempts", async () => {
      const found = await attempts(lost.body.messageId);
      return found.length === 3 ? found : undefined;
    });
    expect(rows.every((a) => a.result === "failure")).toBe(true);
    expect((await attempts(next.body.messageId)).map((a) => a.result)).toEqual(["success"]);
  });

  it("relays nothing without a relay URL, and shows attempts only to the user or an admin", async () => {
    await setRelay(null);
    await texting(api, "POST", "/send", { bearer: agent.bearer, body: { to: "+14155555003", from: agent.number, message: "quiet" } });
    await api.call("POST", `/v2/accounts/${admin.accountId}/sim/messages`, { token: admin.token, data: { from: "+14155555003", to: agent.number, body: "hello?" } });
    // A relay that would fire goes out within a few milliseconds; a later, relayed message proves the order.
    await setRelay(`${receiver.url}/relay`);
    await texting(api, "POST", "/send", { bearer: agent.bearer, body: { to: "+14155555003", from: agent.number, message: "loud" } });
    const [only] = await receiver.waitFor(1);
    expect((JSON.parse(only?.body ?? "") as { MessageBody: string }).MessageBody).toBe("loud");
    expect(receiver.requests).toHaveLength(1);
    const other = await textingUser(api, "agent3");
    expect((await api.call("GET", `/v2/accounts/${agent.accountId}/users/${agent.userId}/texting/attempts`, { token: other.token })).status).toBe(403);
    expect((await api.call("GET", `/v2/accounts/${agent.accountId}/users/${agent.userId}/texting/attempts`, { token: admin.token })).status).toBe(200);
  });
});
