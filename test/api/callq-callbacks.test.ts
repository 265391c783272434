// Queue callbacks over real HTTP (local addition, issue 19 item 4): the queue's `callback`
// setting and its refusals, a simulated caller pressing the digit and hanging up, the callback in
// the queue's sessions and status, offered to an agent's phone with its number, the server dialling
// the simulated caller's phone (the simulator's carrier) and bridging the two; a busy phone's
// attempts spent; the events and CDRs of it.
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../server/events/index.js";
import type { TestApi } from "../helpers/api.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { EventsClient } from "../helpers/events-client.js";
import { connected, until } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";
import { HookReceiver } from "../helpers/webhook-receiver.js";

let t: CallApi;
let api: TestApi;
let admin: string;
let base: string;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
const events: BusEvent[] = [];

beforeAll(async () => {
  t = await startCallApi();
  ({ api, token: admin, base } = t);
  for (const username of ["agent1", "supervisor"]) {
    const login = await api.login(username);
    tokens[username] = login.token;
    ids[username] = login.ownerId;
  }
  api.server.events.bus.subscribe((e) => events.push(e));
});
afterAll(async () => {
  await t?.close();
});

const token = (username: string): string => tokens[username] ?? "";
const id = (username: string): string => ids[username] ?? "";

async function queueByName(name: string): Promise<{ id: string; data: Record<string, unknown> }> {
  const list = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
  const row = list.body.data.find((q) => q.name === name);
  if (!row) throw new Error(`no queue ${name}`);
  const doc = await api.call<Record<string, unknown>>("GET", `${base}/callq_queues/${row.id}`, { token: admin });
  return { id: row.id, data: doc.body.data };
}

interface SessionRow {
  session_id: string;
  state: string;
  callback?: { number: string; attempts: number };
}

async function sessions(queueId: string): Promise<SessionRow[]> {
  const res = await api.call<{ session_list: SessionRow[] }[]>("GET", `${base}/callq_queues/${queueId}/sessions`, { token: admin });
  return res.body.data[0]?.session_list ?? [];
}

async function stats(queueId: string): Promise<Record<string, unknown>> {
  const res = await api.call<{ stats: Record<string, unknown> }>("GET", `${base}/callq_queues/${queueId}/status`, { token: admin });
  return res.body.data.stats;
}

/** A simulated caller who waits in Sales (or `to`'s queue) and presses 5 after a second, then is hung up on. */
async function callerAsksForCallback(number: string, phone?: Record<string, unknown>, to = "5001"): Promise<string> {
  const sim = await api.call<{ id: string }>("POST", `${base}/sim/calls`, {
    token: admin,
    data: { to, caller_id_name: "Casey Customer", caller_id_number: number, script: { steps: [{ digits: "5", after_s: 1 }, { wait_s: 30 }] }, ...(phone ? { phone } : {}) },
  });
  expect(sim.status, sim.text).toBe(201);
  return sim.body.data.id;
}

const sessionEvents = (sessionId: string): string[] => events.filter((e) => e.routing_key === `callq.session.${sessionId}`).map((e) => e.name);

describe("a queue's callback setting (local addition)", () => {
  it("is stored and read back; bad input is refused with the field named and changes nothing; an agent may not set it", async () => {
    const sales = await queueByName("Sales");
    expect(sales.data.callback).toBeUndefined();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ enabled: true, digit: "55" }, "callback.digit", "pattern"],
      [{ enabled: true, max_attempts: 0 }, "callback.max_attempts", "minimum"],
      [{ enabled: true, retry_delay_s: -1 }, "callback.retry_delay_s", "minimum"],
      [{ digit: "5" }, "callback.enabled", "required"],
    ];
    for (const [callback, field, rule] of cases) {
      const res = await api.call<Record<string, Record<string, unknown>>>("PATCH", `${base}/callq_queues/${sales.id}`, { token: admin, data: { callback } });
      expect(res.status, JSON.stringify(callback)).toBe(400);
      expect(res.body.data[field], `${field} in ${res.text}`).toHaveProperty(rule);
    }
    const extra = await api.call("PATCH", `${base}/callq_queues/${sales.id}`, { token: admin, data: { callback: { enabled: true, ring: 3 } } });
    expect(extra.status).toBe(400);
    expect((await queueByName("Sales")).data).toEqual(sales.data);
    const byAgent = await api.call("PATCH", `${base}/callq_queues/${sales.id}`, { token: token("agent1"), data: { callback: { enabled: true } } });
    expect(byAgent.status).toBe(403);
    // A queue without callbacks: its status has no callback figures, as the hosted service's.
    expect(Object.keys(await stats(sales.id)).filter((k) => k.startsWith("callback"))).toEqual([]);

    const set = await api.call<Record<string, unknown>>("PATCH", `${base}/callq_queues/${sales.id}`, {
      token: admin,
      data: { callback: { enabled: true, digit: "5", max_attempts: 2, retry_delay_s: 1 }, agent_wrapup_time: 0, wrapup_policy: "optional", members: {} },
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data.callback).toEqual({ enabled: true, digit: "5", max_attempts: 2, retry_delay_s: 1 });
    expect(await stats(sales.id)).toMatchObject({ callbacks_waiting: 0, callbacks_requested: 0, callbacks_connected: 0, callbacks_failed: 0 });
  });
});

describe("a callback end to end", () => {
  it("the caller presses the digit and leaves the line; the agent is offered the callback with its number, accepts, and the server dials the caller back", async () => {
    const sales = await queueByName("Sales");
    await api.call("POST", `${base}/callq_queues/${sales.id}/recipients`, { token: admin, data: { action: "set", members: [id("agent1")] } });
    const agentPath = `${base}/callq_recipients/${id("agent1")}`;
    expect((await api.call("POST", agentPath, { token: token("agent1"), data: { action: "login" } })).status).toBe(200);
    await api.call("POST", agentPath, { token: token("agent1"), data: { action: "away" } });

    const socket = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
    expect(await socket.subscribe(t.accountId, ["callq.#"], { auth_token: admin })).toMatchObject({ status: "success" });
    const receiver = await HookReceiver.start();
    const hook = await api.call("PUT", `${base}/webhooks`, { token: admin, data: { name: "callbacks", hook: "callq_queue_callback", uri: `${receiver.url}/callback` } });
    expect(hook.status, hook.text).toBe(201);
    const simId = await callerAsksForCallback("+14155550123", { answer: "answer" });
    const [row] = await poll("the callback in the queue", async () => {
      const list = await sessions(sales.id);
      return list.some((s) => s.callback) ? list : undefined;
    });
    expect(row).toMatchObject({ state: "waiting", callback: { number: "+14155550123", attempts: 0 } });
    const sessionId = row?.session_id ?? "";
    // The caller heard it agreed and the line ended.
    await poll("the simulated call to end", async () => ((await api.call("GET", `${base}/sim/calls/${simId}`, { token: admin })).status === 404 ? true : undefined));
    expect(await stats(sales.id)).toMatchObject({ callbacks_waiting: 1, callbacks_requested: 1, active_session_count: 0, abandoned_sessions: 0 });

    const invitesBefore = t.signalling.invites.length;
    expect((await api.call("POST", agentPath, { token: token("agent1"), data: { action: "ready" } })).status).toBe(200);
    const offered = await t.phone("agent1").incoming(15_000);
    const invite = t.signalling.invites.slice(invitesBefore).find((i) => i.callId === offered.callId);
    expect(new Map(invite?.options.headers).get("X-Callback-Number")).toBe("+14155550123");
    expect(offered.from).toMatchObject({ user: "+14155550123", display: "Sales: Casey Customer" });
    const status = await api.call<Record<string, unknown>>("GET", `${agentPath}/status`, { token: token("agent1") });
    expect(status.body.data).toMatchObject({ availability_state: "Call-Offer", offered_call: { callback_number: "+14155550123", session_id: sessionId } });

    await offered.answer();
    await connected(offered);
    await poll("the callback connected", async () => (sessionEvents(sessionId).includes("callback_connected") ? true : undefined), 15_000);
    // The simulated caller's phone answered and plays its steady 440 Hz tone to the agent.
    const heard = await offered.hears([440], 600);
    expect(heard[440] ?? 0).toBeGreaterThan(0.01);
    expect(await stats(sales.id)).toMatchObject({ callbacks_waiting: 0, callbacks_connected: 1 });
    offered.hangup();
    await until(() => api.server.calls.channels.size === 0, "both legs to end", 10_000);
    expect(sessionEvents(sessionId)).toEqual(["create", "callback_requested", "callback_offered", "callback_dialing", "callback_connected", "handled", "end"]);
    expect(await sessions(sales.id)).toEqual([]);
    // The local callback hook: one delivery per step, in order, each naming the session and number.
    const deliveries = await poll("the four callback webhooks", async () => {
      const mine = receiver.at("/callback").filter((b) => b.session_id === sessionId);
      return mine.length >= 4 ? mine : undefined;
    });
    expect(deliveries.map((b) => b.callback_step)).toEqual(["requested", "offered", "dialing", "connected"]);
    for (const b of deliveries) {
      expect(b).toMatchObject({ hook_event: "callq_queue_callback", queue_id: sales.id, caller_id_number: "+14155550123" });
      expect(JSON.parse(b.callback ?? "{}")).toMatchObject({ number: "+14155550123" });
    }
    await receiver.close();

    // Every callq event of it as the websocket sent it is one the AsyncAPI document describes.
    const doc = (await (await fetch(`${api.url}/v2/asyncapi.json`)).json()) as { channels: { events: { messages: Record<string, { payload: object }> } } };
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validators = ["callqQueueEvent", "callqSessionEvent", "callqRecipientEvent"].map((name) => ajv.compile(doc.channels.events.messages[name]?.payload ?? {}));
    const seen = socket.events.filter((e) => e.routing_key === `callq.session.${sessionId}` || e.routing_key === `callq.queue.${sales.id}`);
    expect(seen.map((e) => e.name)).toContain("callback_connected");
    for (const event of socket.events) expect(validators.filter((v) => v(event)).length, `${event.routing_key} ${event.name} ${JSON.stringify(event.data)}`).toBe(1);
    await socket.close();

    const cdrs = await poll("the callback's CDRs", async () => {
      const res = await api.call<Record<string, unknown>[]>("GET", `${base}/cdrs`, { token: admin });
      const legs = res.body.data.filter((c) => c.callq_callback_number === "+14155550123");
      return legs.length >= 2 ? legs : undefined;
    });
    // The agent's leg and the leg that dialled the caller, both of the session.
    expect(cdrs.map((c) => c.callq_session_id)).toEqual([sessionId, sessionId]);
    expect(cdrs.some((c) => c.callee_id_number === "+14155550123" && c.call_direction === "outbound")).toBe(true);
  });

  for (const [what, phone, reason] of [
    ["a busy phone", { answer: "busy" }, "busy"],
    ["a number no phone answers for (a caller who gave no phone)", undefined, "unreachable"],
  ] as const) {
    it(`${what}: the attempt fails, the callback waits again, then is given up after its last attempt`, async () => {
      const sales = await queueByName("Sales");
      const agentPath = `${base}/callq_recipients/${id("agent1")}`;
      await api.call("POST", agentPath, { token: token("agent1"), data: { action: "login" } });
      await api.call("POST", agentPath, { token: token("agent1"), data: { action: "away" } });
      await callerAsksForCallback(reason === "busy" ? "+14155550199" : "+14155550188", phone);
      const [row] = await poll("the callback in the queue", async () => {
        const list = await sessions(sales.id);
        return list.some((s) => s.callback) ? list : undefined;
      });
      const sessionId = row?.session_id ?? "";
      await api.call("POST", agentPath, { token: token("agent1"), data: { action: "ready" } });
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        const offered = await t.phone("agent1").incoming(15_000);
        await offered.answer();
        // The server hangs the agent up once the phone said busy.
        await offered.reaches("ended", 15_000);
      }
      await poll("the callback given up", async () => (sessionEvents(sessionId).includes("end") ? true : undefined), 15_000);
      const failed = events.filter((e) => e.routing_key === `callq.session.${sessionId}` && e.name === "callback_failed").map((e) => [e.data.reason, e.data.retry]);
      expect(failed).toEqual([
        [reason, true],
        [reason, false],
      ]);
      expect(await stats(sales.id)).toMatchObject({ callbacks_waiting: 0, callbacks_failed: reason === "busy" ? 1 : 2 });
      await api.call("POST", agentPath, { token: token("agent1"), data: { action: "logout" } });
    });
  }
});

describe("a caller's digit where callbacks are off", () => {
  it("changes nothing: the caller keeps waiting on the line", async () => {
    const support = await queueByName("Support");
    const before = events.length;
    const simId = await callerAsksForCallback("+14155550177", undefined, "5002");
    await poll("the caller in Support", async () => ((await sessions(support.id)).length > 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await sessions(support.id)).map((s) => s.callback)).toEqual([undefined]);
    expect(events.slice(before).some((e) => e.name === "callback_requested")).toBe(false);
    await api.call("POST", `${base}/sim/calls/${simId}`, { token: admin, data: { action: "hangup" } });
  });
});
