// Issue 14, item 3: an event subscription ends with the token it was made with. Revoked
// (DELETE /v2/token_auth, a password change), expired, its user disabled or deleted, its account
// disabled or deleted: the socket is told why (`{action:"error", data:{errors, reason}}`), closed
// with 4001, and sent no event after; sockets of other tokens go on.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TestClock, createAccount, startApi, type TestApi } from "../helpers/api.js";
import { EventsClient, type Incoming } from "../helpers/events-client.js";

const AUTH_ENDED = 4001;
const BINDING = "call.CHANNEL_CREATE.*";

let api: TestApi;
const open: EventsClient[] = [];

beforeAll(async () => {
  api = await startApi();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await api.close();
});

async function subscribed(on: TestApi, grant: { token: string; accountId: string }): Promise<EventsClient> {
  const client = await EventsClient.connect(`${on.url.replace(/^http/, "ws")}/events`);
  open.push(client);
  const reply = await client.subscribe(grant.accountId, BINDING, { auth_token: grant.token });
  expect(reply).toMatchObject({ status: "success" });
  return client;
}

function publish(on: TestApi, accountId: string, callId: string): void {
  on.server.events.bus.publish({ account_id: accountId, routing_key: `call.CHANNEL_CREATE.${callId}`, name: "CHANNEL_CREATE", data: { call_id: callId } });
}

const isEnd = (m: Incoming): boolean => m.action === "error";

/**
 * Called as soon as the ending action is answered: an event published now reaches the witness
 * (still subscribed) and not the ended socket, which was told `reason` and closed with 4001.
 */
async function expectEnded(client: EventsClient, reason: string, witness: EventsClient, on: TestApi, accountId: string): Promise<void> {
  publish(on, accountId, `after-${reason}`);
  const closed = await client.closed;
  expect(closed.code).toBe(AUTH_ENDED);
  await witness.next((m) => m.action === "event" && m.routing_key === `call.CHANNEL_CREATE.after-${reason}`);
  const end = client.received.find(isEnd);
  expect(end).toMatchObject({ action: "error", data: { reason } });
  expect(JSON.stringify(end)).toContain("subscription ended");
  expect(client.events.map((e) => e.routing_key)).not.toContain(`call.CHANNEL_CREATE.after-${reason}`);
  expect(client.received.at(-1)).toBe(end);
}

describe("an event subscription ends with its token", () => {
  it("ends when its token is revoked with DELETE /v2/token_auth, and the token opens nothing again", async () => {
    const admin = await api.login("admin");
    const witness = await subscribed(api, await api.login("admin"));
    const client = await subscribed(api, admin);
    publish(api, admin.accountId, "before");
    await client.next((m) => m.action === "event");

    const res = await api.call("DELETE", "/v2/token_auth", { token: admin.token });
    expect(res.status).toBe(200);
    await expectEnded(client, "revoked", witness, api, admin.accountId);

    const again = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
    open.push(again);
    expect(await again.subscribe(admin.accountId, BINDING, { auth_token: admin.token })).toMatchObject({
      status: "error",
      data: { errors: ["failed to authenticate token"] },
    });
  });

  it("ends when the user's password changes (every token of the user is revoked)", async () => {
    const agent = await api.login("agent2");
    const witness = await subscribed(api, await api.login("admin"));
    const client = await subscribed(api, agent);
    const admin = await api.login("admin");
    const res = await api.call("PATCH", `/v2/accounts/${agent.accountId}/users/${agent.ownerId}`, { token: admin.token, data: { password: "a-new-secret-1" } });
    expect(res.status).toBe(200);
    await expectEnded(client, "revoked", witness, api, agent.accountId);
  });

  it("ends when its user is disabled, and when its user is deleted", async () => {
    const admin = await api.login("admin");
    const witness = await subscribed(api, admin);
    const agent = await api.login("agent1");
    const client = await subscribed(api, agent);
    const users = `/v2/accounts/${agent.accountId}/users/${agent.ownerId}`;
    expect((await api.call("PATCH", users, { token: admin.token, data: { enabled: false } })).status).toBe(200);
    await expectEnded(client, "user_disabled", witness, api, agent.accountId);

    expect((await api.call("PATCH", users, { token: admin.token, data: { enabled: true } })).status).toBe(200);
    const again = await api.login("agent1");
    const second = await subscribed(api, again);
    expect((await api.call("DELETE", users, { token: admin.token })).status).toBe(200);
    await expectEnded(second, "user_deleted", witness, api, agent.accountId);
  });

  it("ends when its account is disabled or deleted, and leaves other accounts' sockets alone", async () => {
    const demoWitness = await subscribed(api, await api.login("admin"));
    const accounts = await api.server.store.global("accounts");
    for (const [name, how, reason] of [
      ["disabledco", "disable", "account_disabled"],
      ["deletedco", "delete", "account_deleted"],
    ] as const) {
      const other = await createAccount(api, name);
      const witness = await subscribed(api, other);
      const client = await subscribed(api, other);
      // Written by the store, as an operator's tool would: no endpoint lets an account disable itself.
      const doc = accounts.get(other.accountId);
      if (!doc) throw new Error("the account just made is missing");
      if (how === "disable") await accounts.update(other.accountId, { ...doc.data, enabled: false });
      else await accounts.delete(other.accountId);
      for (const c of [client, witness]) {
        expect((await c.closed).code).toBe(AUTH_ENDED);
        expect(c.received.find(isEnd)).toMatchObject({ data: { reason } });
      }
      publish(api, other.accountId, "after");
      publish(api, (await api.login("admin")).accountId, `after-${name}`);
      await demoWitness.next((m) => m.action === "event" && m.routing_key === `call.CHANNEL_CREATE.after-${name}`);
      expect(client.events).toEqual([]);
    }
    expect(demoWitness.socket.readyState).toBe(demoWitness.socket.OPEN);
  });
});

describe("an event subscription ends when its token expires", () => {
  it("lives while the token is used over HTTP, and ends once it goes unused for its lifetime", async () => {
    const clock = new TestClock();
    const short = await startApi({ tokenTtlS: 60, clock, config: { eventSockets: { idleMs: 200 } } });
    try {
      const admin = await short.login("admin");
      const witnessGrant = await short.login("admin");
      const client = await subscribed(short, admin);
      const witness = await subscribed(short, witnessGrant);

      // 40 s, a use that slides the window, 40 s more: 80 s after the subscribe, 40 s after the use.
      clock.advance(40_000);
      expect((await short.call("GET", `/v2/accounts/${admin.accountId}`, { token: admin.token })).status).toBe(200);
      expect((await short.call("GET", `/v2/accounts/${admin.accountId}`, { token: witnessGrant.token })).status).toBe(200);
      clock.advance(40_000);
      // Several sweeps of the 200 ms window go by; the socket is still served.
      await new Promise((r) => setTimeout(r, 600));
      publish(short, admin.accountId, "still");
      await client.next((m) => m.action === "event" && m.routing_key === "call.CHANNEL_CREATE.still");

      expect((await short.call("GET", `/v2/accounts/${admin.accountId}`, { token: witnessGrant.token })).status).toBe(200);
      clock.advance(21_000);
      await expectEnded(client, "expired", witness, short, admin.accountId);
    } finally {
      await Promise.all(open.splice(0).map((c) => c.close()));
      await short.close();
    }
  });
});
