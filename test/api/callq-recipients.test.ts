// /v2/accounts/{id}/callq_recipients over real HTTP, with the event websocket and a real webhook
// receiver listening: list, read, status and multi-status, state changes by status and by action
// (and the events and callq_* hooks they fire), who may change whose state, enable/disable,
// and the monitor action's permission and refusals.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../server/events/bus.js";
import { triggerOf } from "../../server/events/webhook-payload.js";
import { HOOK_NAMES } from "../../server/api/webhooks.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { EventsClient, type EventMessage } from "../helpers/events-client.js";
import { poll } from "../helpers/poll.js";
import { HookReceiver } from "../helpers/webhook-receiver.js";
import { newDevice, SipPhone, SipSocket } from "../helpers/sip-client.js";

interface Status {
  available: boolean;
  availability_state: string;
  queue_availability?: Record<string, boolean>;
  wrapup_time_seconds: number;
  stats: Record<string, number>;
  node: string;
}

let api: TestApi;
let token: string;
let accountId: string;
let adminId: string;
let base: string;
let ids: Record<string, string>;
let events: EventsClient;
const opened: EventsClient[] = [];

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId, ownerId: adminId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}/callq_recipients`;
  const users = await api.call<{ id: string; username: string }[]>("GET", `/v2/accounts/${accountId}/users`, { token, query: { paginate: "false" } });
  ids = Object.fromEntries(users.body.data.map((u) => [u.username, u.id]));
  events = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
  expect(await events.subscribe(accountId, "callq.recipient.*", { auth_token: token })).toMatchObject({ status: "success" });
});
afterEach(async () => {
  // Every test starts with everyone logged out.
  for (const id of Object.values(ids)) if (api.server.callq.isLoggedIn(accountId, id)) await api.call("POST", `${base}/${id}/status`, { token, data: { status: "logout" } });
  await Promise.all(opened.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await events.close();
  await api.close();
});

const id = (username: string): string => ids[username] ?? "";

async function setStatus(username: string, status: string, extra: Record<string, unknown> = {}, as = token) {
  return api.call<Status>("POST", `${base}/${id(username)}/status`, { token: as, data: { status, ...extra } });
}

async function act(username: string, action: string, extra: Record<string, unknown> = {}, as = token) {
  return api.call<Status>("POST", `${base}/${id(username)}`, { token: as, data: { action, ...extra } });
}

/** The recipient events for `userId` that arrived after event number `from` (a ping flushes). */
async function eventsSince(from: number, userId: string): Promise<EventMessage[]> {
  await events.ping();
  return events.events.slice(from).filter((e) => e.routing_key === `callq.recipient.${userId}`);
}

describe("recipients", () => {
  it("lists the call-queue enabled users as {id, name}, paged", async () => {
    const res = await api.call<{ id: string; name: string }[]>("GET", base, { token, query: { paginate: "false" } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(["agent1", "agent2", "agent3", "supervisor"].map((name) => ({ id: id(name), name })));
    const page = await api.call<{ id: string }[]>("GET", base, { token, query: { page_size: "3" } });
    expect(page.body.page_size).toBe(3);
    const rest = await api.call<{ id: string }[]>("GET", base, { token, query: { page_size: "3", start_key: page.body.next_start_key ?? "" } });
    expect(rest.body.data.map((r) => r.id)).toEqual([id("supervisor")]);
    expect(rest.body.next_start_key).toBeUndefined();
  });

  it("reads a recipient's users document; a user who is not a recipient is 404", async () => {
    const res = await api.call<Record<string, unknown>>("GET", `${base}/${id("agent1")}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: id("agent1"), username: "agent1", callq: { enabled: true, pin: "1002" } });
    expect(Object.keys(res.body.data).some((k) => k.startsWith("pvt_"))).toBe(false);
    const admin = await api.call("GET", `${base}/${adminId}`, { token });
    expect(admin.status).toBe(404);
    expect(admin.body).toMatchObject({ message: "bad_identifier", data: { cause: adminId } });
    expect((await api.call("GET", `${base}/${adminId}/status`, { token })).status).toBe(404);
  });

  it("a disabled user with callq.enabled is no recipient anywhere: not listed, no status, not addable, until enabled again", async () => {
    const users = `/v2/accounts/${accountId}/users`;
    const made = await api.call<{ id: string }>("PUT", users, { token, data: { first_name: "Dee", last_name: "Sabled", username: "disabled-agent", password: "pw-disabled", enabled: false, callq: { enabled: true } } });
    expect(made.status, made.text).toBe(201);
    const userId = made.body.data.id;
    const listed = await api.call<{ id: string }[]>("GET", base, { token, query: { paginate: "false" } });
    expect(listed.body.data.map((r) => r.id)).not.toContain(userId);
    expect((await api.call("GET", `${base}/${userId}`, { token })).status).toBe(404);
    expect((await api.call("GET", `${base}/${userId}/status`, { token })).status).toBe(404);
    const queue = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/callq_queues`, { token, data: { name: "Disabled members" } });
    const add = await api.call("POST", `/v2/accounts/${accountId}/callq_queues/${queue.body.data.id}/recipients`, { token, data: { action: "add", members: [userId] } });
    expect(add.status).toBe(400);
    expect(add.body.data).toHaveProperty(["members.0", "not_recipient"]);
    expect((await api.call("PATCH", `${users}/${userId}`, { token, data: { enabled: true } })).status).toBe(200);
    expect((await api.call("GET", `${base}/${userId}/status`, { token })).status).toBe(200);
    const added = await api.call("POST", `/v2/accounts/${accountId}/callq_queues/${queue.body.data.id}/recipients`, { token, data: { action: "add", members: [userId] } });
    expect(added.status, added.text).toBe(200);
  });

  it("answers a logged-out recipient's status with every field", async () => {
    const res = await api.call<Status>("GET", `${base}/${id("agent3")}/status`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      available: false,
      availability_state: "Not-Logged-In",
      wrapup_time_seconds: 0,
      node: expect.any(String),
      stats: {
        total_calls: expect.any(Number),
        missed_calls: expect.any(Number),
        avg_call_time: expect.any(Number),
        login_time: expect.any(Number),
        last_action_time: expect.any(Number),
        last_handled_time: expect.any(Number),
      },
    });
  });
});

describe("state changes", () => {
  it("logs in, goes ready and away and logs out by status, each answered with the new status and one event", async () => {
    const from = events.events.length;
    const login = await setStatus("agent1", "login");
    expect(login.status, login.text).toBe(200);
    expect(login.body.data).toMatchObject({ availability_state: "Away", available: false });
    expect(login.body.data.stats.login_time).toBeGreaterThan(1_600_000_000);
    expect((await setStatus("agent1", "ready")).body.data).toMatchObject({ availability_state: "Ready", available: true });
    expect((await setStatus("agent1", "away")).body.data.availability_state).toBe("Away");
    expect((await setStatus("agent1", "logout")).body.data.availability_state).toBe("Not-Logged-In");

    const seen = await eventsSince(from, id("agent1"));
    expect(seen.map((e) => e.name)).toEqual(["login", "ready", "away", "logout"]);
    expect(seen[1]?.data).toMatchObject({ account_id: accountId, recipient_id: id("agent1"), availability_state: "Ready", previous_state: "Away" });
    expect(seen[1]?.subscribed_key).toBe("callq.recipient.*");
  });

  it("runs every action: login_ready, state_toggle both ways, logout", async () => {
    expect((await act("agent2", "login_ready")).body.data.availability_state).toBe("Ready");
    expect((await act("agent2", "state_toggle")).body.data.availability_state).toBe("Not-Logged-In");
    expect((await act("agent2", "state_toggle")).body.data.availability_state).toBe("Ready");
    expect((await act("agent2", "away")).body.data.availability_state).toBe("Away");
    expect((await act("agent2", "ready")).body.data.availability_state).toBe("Ready");
    expect((await act("agent2", "logout")).body.data.availability_state).toBe("Not-Logged-In");
    expect((await act("agent2", "login")).body.data.availability_state).toBe("Away");
  });

  it("sets ready or away for one queue with queue_id, shown in queue_availability", async () => {
    const queues = await api.call<{ id: string }[]>("GET", `/v2/accounts/${accountId}/callq_queues`, { token });
    const [sales = "", support = ""] = queues.body.data.map((q) => q.id);
    await act("agent3", "login_ready");
    const from = events.events.length;
    const away = await setStatus("agent3", "away", { queue_id: sales });
    expect(away.status, away.text).toBe(200);
    expect(away.body.data.queue_availability).toEqual({ [sales]: false });
    const ready = await act("agent3", "ready", { queue_id: support });
    expect(ready.body.data.queue_availability).toEqual({ [sales]: false, [support]: true });
    const seen = await eventsSince(from, id("agent3"));
    expect(seen.map((e) => [e.name, e.data.queue_id])).toEqual([
      ["away", sales],
      ["ready", support],
    ]);
    const ghost = "0".repeat(32);
    expect((await setStatus("agent3", "ready", { queue_id: ghost })).body).toMatchObject({ error: "404", message: "bad_identifier", data: { cause: ghost } });
    const notPerQueue = await setStatus("agent3", "login", { queue_id: sales });
    expect(notPerQueue.body).toMatchObject({ error: "400", message: "validation error", data: { queue_id: { not_allowed: {} } } });
  });

  it("refuses what the state does not allow with 400 invalid data, changing nothing", async () => {
    for (const [action, state] of [
      ["ready", "a logged-out recipient cannot go ready"],
      ["wrapup_extend", "no wrap-up to extend"],
      ["wrapup_cancel", "no wrap-up to cancel"],
    ] as const) {
      const res = await act("agent1", action);
      expect(res.status, state).toBe(400);
      expect(res.body).toMatchObject({ error: "400", message: "invalid data", data: { action: { illegal: { message: expect.any(String), value: action } } } });
    }
    await act("agent1", "login_ready");
    const extend = await act("agent1", "wrapup_extend");
    expect(extend.body.message).toBe("invalid data");
    expect((await api.call<Status>("GET", `${base}/${id("agent1")}/status`, { token })).body.data.availability_state).toBe("Ready");
  });

  it("refuses unknown or missing actions and statuses", async () => {
    expect((await act("agent1", "dance")).body).toMatchObject({ error: "400", message: "invalid data", data: { action: { enum: { value: "dance" } } } });
    expect((await api.call("POST", `${base}/${id("agent1")}`, { token, data: {} })).body).toMatchObject({ message: "validation error", data: { action: { required: {} } } });
    expect((await setStatus("agent1", "asleep")).body).toMatchObject({ message: "validation error", data: { status: { enum: {} } } });
    expect((await api.call("POST", `${base}/${id("agent1")}/status`, { token, data: {} })).body).toMatchObject({ data: { status: { required: {} } } });
    const ghost = "0".repeat(32);
    expect((await api.call("POST", `${base}/${ghost}/status`, { token, data: { status: "login" } })).body).toMatchObject({ error: "404", data: { cause: ghost } });
  });

  it("lets a recipient change their own state and an admin anyone's; another user's is 403", async () => {
    const agent1 = await api.login("agent1");
    expect((await setStatus("agent1", "login", {}, agent1.token)).status).toBe(200);
    expect((await act("agent1", "ready", {}, agent1.token)).status).toBe(200);
    const other = await setStatus("agent2", "login", {}, agent1.token);
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ error: "403", message: "forbidden" });
    expect((await act("agent2", "login_ready", {}, agent1.token)).status).toBe(403);
    expect(api.server.callq.isLoggedIn(accountId, id("agent2"))).toBe(false);
    expect((await setStatus("agent2", "login")).status).toBe(200);
    // Reading others' status is open to the account.
    expect((await api.call("GET", `${base}/${id("agent2")}/status`, { token: agent1.token })).status).toBe(200);
  });
});

describe("multi-status", () => {
  it("maps each id to its status, or to not_logged_in, from the body or the query string", async () => {
    await act("agent2", "login_ready");
    const res = await api.call<Record<string, Status | string>>("POST", `${base}/status`, { token, data: { recipient_ids: [id("agent1"), id("agent2"), adminId] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data[id("agent1")]).toBe("not_logged_in");
    expect(res.body.data[adminId]).toBe("not_logged_in");
    expect(res.body.data[id("agent2")]).toMatchObject({ availability_state: "Ready", available: true });
    const byQuery = await api.call<Record<string, unknown>>("GET", `${base}/status`, { token, query: { recipient_ids: `${id("agent2")},${id("agent3")}` } });
    expect(Object.keys(byQuery.body.data).sort()).toEqual([id("agent2"), id("agent3")].sort());
  });

  it("refuses ids that name no user, and a recipient_ids that is not a list", async () => {
    const ghost = "0".repeat(32);
    expect((await api.call("POST", `${base}/status`, { token, data: { recipient_ids: [id("agent1"), ghost] } })).body).toMatchObject({ error: "404", data: { cause: ghost } });
    expect((await api.call("POST", `${base}/status`, { token, data: { recipient_ids: "all" } })).body).toMatchObject({ error: "400", data: { recipient_ids: { type: {} } } });
    expect((await api.call("POST", `${base}/status`, { token, data: {} })).body).toMatchObject({ error: "400", data: { recipient_ids: { required: {} } } });
  });
});

describe("enable and disable", () => {
  it("makes a user a recipient and back; disabling logs them out; only admins may", async () => {
    const supervisor = await api.login("supervisor");
    expect((await api.call("POST", `${base}/${adminId}/enable`, { token: supervisor.token })).status).toBe(403);

    const enabled = await api.call<{ callq: { enabled: boolean; permissions: string[] } }>("POST", `${base}/${adminId}/enable`, { token });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body.data.callq).toMatchObject({ enabled: true, permissions: ["call_monitor"] });
    const listed = await api.call<{ id: string }[]>("GET", base, { token, query: { paginate: "false" } });
    expect(listed.body.data.map((r) => r.id)).toContain(adminId);

    expect((await act("admin", "login_ready")).body.data.availability_state).toBe("Ready");
    const from = events.events.length;
    const disabled = await api.call<{ callq: { enabled: boolean } }>("POST", `${base}/${adminId}/disable`, { token });
    expect(disabled.status).toBe(200);
    expect(disabled.body.data.callq.enabled).toBe(false);
    expect(api.server.callq.isLoggedIn(accountId, adminId)).toBe(false);
    expect((await eventsSince(from, adminId)).map((e) => e.name)).toContain("logout");
    expect((await api.call("GET", `${base}/${adminId}`, { token })).status).toBe(404);
    expect((await act("admin", "login")).status).toBe(404);
    // The login still works: only the recipient side was touched.
    expect((await api.login("admin")).ownerId).toBe(adminId);
  });
});

describe("monitor", () => {
  it("needs an admin, or the call_monitor permission for oneself", async () => {
    const agent1 = await api.login("agent1");
    const denied = await act("agent1", "monitor", { target: id("agent2"), mode: "eavesdrop" }, agent1.token);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ message: "forbidden", data: { user: { call_monitor: {} } } });
    const supervisor = await api.login("supervisor");
    // The supervisor may monitor as themself, not make someone else listen.
    expect((await act("agent1", "monitor", { target: id("agent2") }, supervisor.token)).status).toBe(403);
    const allowed = await act("supervisor", "monitor", { target: id("agent2"), mode: "whisper" }, supervisor.token);
    // Permitted, so the refusal is about the call: agent2 is on none.
    expect(allowed.status).toBe(400);
    expect(allowed.body).toMatchObject({ message: "invalid data", data: { target: { no_call: { message: expect.any(String) } } } });
  });

  it("refuses a missing target, one who is no recipient, oneself, and an unknown mode", async () => {
    expect((await act("supervisor", "monitor", {})).body).toMatchObject({ error: "400", data: { target: { required: {} } } });
    expect((await act("supervisor", "monitor", { target: adminId })).body).toMatchObject({ error: "404", data: { cause: adminId } });
    expect((await act("supervisor", "monitor", { target: id("supervisor") })).body).toMatchObject({ error: "400", data: { target: { self: {} } } });
    expect((await act("supervisor", "monitor", { target: id("agent1"), mode: "listen" })).body).toMatchObject({ error: "400", data: { mode: { enum: {} } } });
  });
});

describe("callq_* webhooks", () => {
  it("fires callq_recipient_login, _ready, _away and _logout with the event's fields", async () => {
    const receiver = await HookReceiver.start();
    try {
      const hooks = ["callq_recipient_login", "callq_recipient_ready", "callq_recipient_away", "callq_recipient_logout"];
      for (const hook of hooks) {
        const res = await api.call("PUT", `/v2/accounts/${accountId}/webhooks`, { token, data: { name: hook, hook, uri: `${receiver.url}/${hook}` } });
        expect(res.status, res.text).toBe(201);
      }
      await act("agent3", "login");
      await act("agent3", "ready");
      await act("agent3", "away");
      await act("agent3", "logout");
      const got = await poll("four hook calls", async () => (hooks.every((h) => receiver.at(`/${h}`).length >= 1) ? receiver.received : undefined), 10_000);
      expect(got).toHaveLength(4);
      const ready = receiver.at("/callq_recipient_ready")[0];
      expect(ready).toMatchObject({
        hook_event: "callq_recipient_ready",
        account_id: accountId,
        recipient_id: id("agent3"),
        availability_state: "Ready",
        previous_state: "Away",
      });
      expect(Number(ready?.timestamp)).toBeGreaterThan(63_000_000_000);
      expect(receiver.at("/callq_recipient_logout")[0]).toMatchObject({ hook_event: "callq_recipient_logout", availability_state: "Not-Logged-In" });
    } finally {
      await receiver.close();
    }
  });
});

describe("which queue events fire which hook", () => {
  it("maps queue join/leave and the recipient events to the nine callq_* hooks, and nothing else", () => {
    const event = (kind: string, name: string): BusEvent => ({ seq: 1, at: 0, account_id: "a", routing_key: `callq.${kind}.x`, name, data: {} });
    const fired = (kind: string, name: string) => triggerOf(event(kind, name))?.hook;
    expect(["join", "leave", "offer", "answered", "abandoned", "timeout"].map((n) => fired("queue", n))).toEqual(["callq_queue_join", "callq_queue_leave", undefined, undefined, undefined, undefined]);
    expect(["login", "logout", "ready", "away", "offer", "delivered", "reject", "wrapup", "monitor"].map((n) => fired("recipient", n))).toEqual([
      "callq_recipient_login",
      "callq_recipient_logout",
      "callq_recipient_ready",
      "callq_recipient_away",
      "callq_recipient_offer",
      "callq_recipient_delivered",
      "callq_recipient_rejected",
      undefined,
      undefined,
    ]);
    expect(fired("session", "create")).toBeUndefined();
    expect(fired("recipient", "constructor")).toBeUndefined();
    // Every hook fired is one the webhooks API accepts.
    const hooks = ["join", "leave"].map((n) => fired("queue", n)).concat(["login", "logout", "ready", "away", "offer", "delivered", "reject"].map((n) => fired("recipient", n)));
    for (const hook of hooks) expect(HOOK_NAMES).toContain(hook);
  });
});

describe("a recipient's devices", () => {
  it("all unregistered for the grace period: not available, unavailable_reason no_device; registered again: back as they were", async () => {
    // A server of its own with a short grace, so the test does not wait the default 10 s.
    const own = await startApi({ config: { deviceGraceMs: 300 } });
    const sockets: SipSocket[] = [];
    try {
      const auth = await own.login("admin");
      const users = await own.call<{ id: string; username: string }[]>("GET", `/v2/accounts/${auth.accountId}/users`, { token: auth.token, query: { paginate: "false" } });
      const agent = users.body.data.find((u) => u.username === "agent3")?.id ?? "";
      const path = `/v2/accounts/${auth.accountId}/callq_recipients/${agent}`;
      const statusOf = async () => (await own.call<Status & { unavailable_reason?: string }>("GET", `${path}/status`, { token: auth.token })).body.data;
      const device = await newDevice(own, auth, { owner_id: agent });
      const register = async (): Promise<SipPhone> => {
        const socket = await SipSocket.connect(own.url);
        sockets.push(socket);
        const phone = new SipPhone(socket, { ...device, realm: "demo.switchboard.local" });
        expect((await phone.register({ expires: 300 })).status).toBe(200);
        return phone;
      };
      const phone = await register();
      expect((await own.call("POST", path, { token: auth.token, data: { action: "login_ready" } })).status).toBe(200);
      expect(await statusOf()).toMatchObject({ availability_state: "Ready", available: true });

      expect((await phone.unregister()).status).toBe(200);
      const gone = await poll("the no_device reason", async () => {
        const status = await statusOf();
        return status.unavailable_reason === "no_device" ? status : undefined;
      });
      expect(gone).toMatchObject({ availability_state: "Ready", available: false });

      // The phone's socket closing (the console closed) counts as unregistering too.
      const back = await register();
      await poll("available again", async () => ((await statusOf()).available ? true : undefined));
      expect((await statusOf()).unavailable_reason).toBeUndefined();
      await back.socket.close();
      await poll("the no_device reason after the socket closed", async () => ((await statusOf()).unavailable_reason === "no_device" ? true : undefined));
      await register();
      await poll("available again", async () => ((await statusOf()).available ? true : undefined));
      expect(await statusOf()).toMatchObject({ availability_state: "Ready", available: true });
    } finally {
      await Promise.all(sockets.map((s) => s.close().catch(() => undefined)));
      await own.close();
    }
  });
});
