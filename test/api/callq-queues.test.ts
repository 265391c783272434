// /v2/accounts/{id}/callq_queues over real HTTP: the configuration resource (conformance, every
// default and bound, old names, routers, timeout_redirect, hold_treatment, read-only members),
// membership add/remove/set/clear, status and multi-status, sessions, ensure_started, the static
// paths (status, recipients, ensure_started) beside the queue ids, and a simulated caller in a
// queue whose session is listed and removed while a registered SIP phone refuses the offer, with
// the websocket event and the callq_queue_* / callq_recipient_* hooks it fires.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUE_DEFAULTS } from "../../server/callq/queue-config.js";
import { ROUTERS } from "../../server/callq/queue-router.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { describeConformance } from "../helpers/conformance.js";
import { EventsClient } from "../helpers/events-client.js";
import { poll } from "../helpers/poll.js";
import { HookReceiver } from "../helpers/webhook-receiver.js";
import { hex, newDevice, responseTo, SipPhone, SipSocket } from "../helpers/sip-client.js";

type Queue = Record<string, unknown> & { id: string; members: Record<string, string> };
type FieldErrors = Record<string, Record<string, { message: string; value?: unknown }>>;

describeConformance({
  name: "callq_queues",
  valid: (n) => ({ name: `Queue ${n}`, ring_timeout: 15 + (n % 5) }),
  field: "name",
  adminWrites: true,
  invalid: [
    { title: "a missing name", data: { timeout: 60 }, field: "name", rule: "required" },
    { title: "an empty name", data: { name: "" }, field: "name", rule: "minLength" },
    { title: "a name over 128 characters", data: { name: "q".repeat(129) }, field: "name", rule: "maxLength" },
    { title: "timeout under 10 s", data: { name: "q", timeout: 9 }, field: "timeout", rule: "minimum" },
    { title: "ring_timeout under 1 s", data: { name: "q", ring_timeout: 0 }, field: "ring_timeout", rule: "minimum" },
    { title: "a negative agent_wrapup_time", data: { name: "q", agent_wrapup_time: -1 }, field: "agent_wrapup_time", rule: "minimum" },
    { title: "tick_time under 250 ms", data: { name: "q", tick_time: 249 }, field: "tick_time", rule: "minimum" },
    { title: "a timeout no timer can keep", data: { name: "q", timeout: 3_000_000 }, field: "timeout", rule: "maximum" },
    { title: "a fractional timeout", data: { name: "q", timeout: 60.5 }, field: "timeout", rule: "type" },
    { title: "an unknown router", data: { name: "q", queue_router: "route_random" }, field: "queue_router", rule: "enum" },
    { title: "an unknown queue_type", data: { name: "q", queue_type: "queue_fancy" }, field: "queue_type", rule: "enum" },
    { title: "a non-boolean force_away_on_reject", data: { name: "q", force_away_on_reject: "yes" }, field: "force_away_on_reject", rule: "type" },
    { title: "a negative max_missed_offers", data: { name: "q", max_missed_offers: -1 }, field: "max_missed_offers", rule: "minimum" },
    { title: "a fractional max_missed_offers", data: { name: "q", max_missed_offers: 1.5 }, field: "max_missed_offers", rule: "type" },
    { title: "a negative timeout_if_size_exceeds", data: { name: "q", timeout_if_size_exceeds: -1 }, field: "timeout_if_size_exceeds", rule: "minimum" },
    { title: "a timeout_redirect to no queue", data: { name: "q", timeout_redirect: "0".repeat(32) }, field: "timeout_redirect", rule: "not_found" },
    { title: "a hold_treatment that is no media", data: { name: "q", hold_treatment: "f".repeat(32) }, field: "hold_treatment", rule: "not_found" },
  ],
});

let api: TestApi;
let token: string;
let accountId: string;
let base: string;
let agents: Record<string, string>;
let adminId: string;

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId, ownerId: adminId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}/callq_queues`;
  const users = await api.call<{ id: string; username: string }[]>("GET", `/v2/accounts/${accountId}/users`, { token, query: { paginate: "false" } });
  agents = Object.fromEntries(users.body.data.map((u) => [u.username, u.id]));
});
afterAll(async () => {
  await api.close();
});

async function createQueue(data: Record<string, unknown>): Promise<Queue> {
  const res = await api.call<Queue>("PUT", base, { token, data });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** GET with a JSON body, which fetch() refuses to send. */
function getWithBody(path: string, data: unknown): Promise<{ status: number; body: { data: Record<string, unknown> } }> {
  const body = JSON.stringify({ data });
  return new Promise((resolve, reject) => {
    const req = request(
      `${api.url}${path}`,
      { method: "GET", headers: { "X-Auth-Token": token, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { data: Record<string, unknown> } }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("queue configuration", () => {
  it("fills every default of the spec and starts with no members", async () => {
    const queue = await createQueue({ name: "Defaults" });
    expect(queue).toEqual({ id: queue.id, name: "Defaults", ...QUEUE_DEFAULTS, members: {} });
    expect(QUEUE_DEFAULTS).toEqual({
      queue_type: "queue_basic",
      queue_router: "route_round_robin",
      timeout: 3600,
      ring_timeout: 20,
      agent_wrapup_time: 0,
      tick_time: 1000,
      force_away_on_reject: false,
      // A local addition (not in the spec): three missed offers in a row set the recipient Away.
      max_missed_offers: 3,
      timeout_if_size_exceeds: 0,
      timeout_immediately_if_empty: false,
    });
  });

  it("accepts every bound at its minimum, and every router", async () => {
    const lowest = await createQueue({ name: "Lowest", timeout: 10, ring_timeout: 1, agent_wrapup_time: 0, tick_time: 250, timeout_if_size_exceeds: 0 });
    expect(lowest).toMatchObject({ timeout: 10, ring_timeout: 1, agent_wrapup_time: 0, tick_time: 250 });
    for (const router of ROUTERS) expect((await createQueue({ name: router, queue_router: router })).queue_router).toBe(router);
  });

  it("takes the old names queue_name, agent_connect_timeout and queue_timeout on create, update and PATCH", async () => {
    const queue = await createQueue({ queue_name: "Old names", agent_connect_timeout: 7, queue_timeout: 120 });
    expect(queue).toMatchObject({ name: "Old names", ring_timeout: 7, timeout: 120 });
    for (const alias of ["queue_name", "agent_connect_timeout", "queue_timeout"]) expect(queue).not.toHaveProperty(alias);

    // A new name given beside its old one wins.
    const both = await createQueue({ name: "New wins", queue_name: "Old loses", ring_timeout: 9, agent_connect_timeout: 30 });
    expect(both).toMatchObject({ name: "New wins", ring_timeout: 9 });

    const patched = await api.call<Queue>("PATCH", `${base}/${queue.id}`, { token, data: { agent_connect_timeout: 12, queue_timeout: 600 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({ ring_timeout: 12, timeout: 600 });
    expect(patched.body.data).not.toHaveProperty("agent_connect_timeout");

    const updated = await api.call<Queue>("POST", `${base}/${queue.id}`, { token, data: { queue_name: "Renamed", queue_timeout: 30 } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.data).toMatchObject({ name: "Renamed", timeout: 30, ring_timeout: 20 });

    // The old name is validated as the field it stands for.
    const bad = await api.call<FieldErrors>("PUT", base, { token, data: { name: "Bad alias", queue_timeout: 5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.data.timeout?.minimum).toBeDefined();
  });

  it("names an unknown router with 400 enum and the routers there are", async () => {
    const res = await api.call<Record<string, Record<string, { target?: unknown }>>>("PUT", base, { token, data: { name: "q", queue_router: "route_random" } });
    expect(res.status).toBe(400);
    expect(res.body.data.queue_router?.enum?.target).toEqual([...ROUTERS]);
  });

  it("redirects timed-out calls only to another existing queue, and forgets a redirect to a deleted queue", async () => {
    const overflow = await createQueue({ name: "Overflow" });
    const front = await createQueue({ name: "Front", timeout_redirect: overflow.id });
    expect(front.timeout_redirect).toBe(overflow.id);
    const self = await api.call<FieldErrors>("PATCH", `${base}/${front.id}`, { token, data: { timeout_redirect: front.id } });
    expect(self.status).toBe(400);
    expect(self.body.data.timeout_redirect?.self?.value).toBe(front.id);

    expect((await api.call("DELETE", `${base}/${overflow.id}`, { token })).status).toBe(200);
    const after = await api.call<Queue>("GET", `${base}/${front.id}`, { token });
    expect(after.body.data).not.toHaveProperty("timeout_redirect");
  });

  it("plays a media id or a media URI as hold_treatment", async () => {
    const media = await api.call<{ id: string }[]>("GET", `/v2/accounts/${accountId}/media`, { token });
    const mediaId = media.body.data[0]?.id ?? "";
    expect((await createQueue({ name: "Media hold", hold_treatment: mediaId })).hold_treatment).toBe(mediaId);
    const uri = "tone_stream://%(400,200,440)";
    expect((await createQueue({ name: "Tone hold", hold_treatment: uri })).hold_treatment).toBe(uri);
  });

  it("keeps members read-only: what a write sends for them is ignored", async () => {
    const queue = await createQueue({ name: "Read-only members", members: { [agents.agent1 ?? ""]: "" } });
    expect(queue.members).toEqual({});
    await api.call("POST", `${base}/${queue.id}/recipients`, { token, data: { action: "set", members: [agents.agent1] } });
    const replaced = await api.call<Queue>("POST", `${base}/${queue.id}`, { token, data: { name: "Still members", members: {} } });
    expect(replaced.body.data.members).toEqual({ [agents.agent1 ?? ""]: "" });
    const patched = await api.call<Queue>("PATCH", `${base}/${queue.id}`, { token, data: { members: { [agents.agent2 ?? ""]: "" } } });
    expect(patched.body.data.members).toEqual({ [agents.agent1 ?? ""]: "" });
  });
});

describe("membership", () => {
  it("adds, removes, sets and clears, answering the queue each time, in offer order", async () => {
    const queue = await createQueue({ name: "Membership" });
    const path = `${base}/${queue.id}/recipients`;
    const { agent1 = "", agent2 = "", agent3 = "", supervisor = "" } = agents;
    const members = async (action: string, ids: string[]) => {
      const res = await api.call<Queue>("POST", path, { token, data: { action, members: ids } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.id).toBe(queue.id);
      expect(res.body.revision).toMatch(/^\d+-/);
      return Object.keys(res.body.data.members);
    };
    expect(await members("add", [agent2, agent1])).toEqual([agent2, agent1]);
    expect(await members("add", [agent1, agent3])).toEqual([agent2, agent1, agent3]);
    expect(await members("remove", [agent2, supervisor])).toEqual([agent1, agent3]);
    expect(await members("set", [supervisor, agent2, supervisor])).toEqual([supervisor, agent2]);

    const listed = await api.call<{ id: string; permission_roles: string[]; permissions: string[] }[]>("GET", path, { token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((r) => r.id).sort()).toEqual([supervisor, agent2].sort());
    expect(listed.body.data.find((r) => r.id === supervisor)).toEqual({ id: supervisor, permission_roles: ["agent"], permissions: ["call_monitor"] });

    const all = await api.call<{ queue_id: string; members: string[] }[]>("GET", `${base}/recipients`, { token, query: { paginate: "false" } });
    expect(all.body.data.find((q) => q.queue_id === queue.id)?.members).toEqual([supervisor, agent2]);

    const status = await api.call<{ stats: { recipient_count: number } }>("GET", `${base}/${queue.id}/status`, { token });
    expect(status.body.data.stats.recipient_count).toBe(2);

    const cleared = await api.call<Queue>("DELETE", path, { token });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.members).toEqual({});
    expect((await api.call<Queue>("GET", `${base}/${queue.id}`, { token })).body.data.members).toEqual({});
  });

  it("refuses users who are not recipients, naming each, and changes nothing", async () => {
    const queue = await createQueue({ name: "Picky" });
    const path = `${base}/${queue.id}/recipients`;
    const ghost = "a".repeat(32);
    const res = await api.call<FieldErrors>("POST", path, { token, data: { action: "add", members: [agents.agent1, adminId, ghost] } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: "validation error" });
    expect(res.body.data["members.1"]?.not_recipient?.value).toBe(adminId);
    expect(res.body.data["members.2"]?.not_found?.value).toBe(ghost);
    expect(res.body.data["members.0"]).toBeUndefined();
    expect((await api.call<Queue>("GET", `${base}/${queue.id}`, { token })).body.data.members).toEqual({});

    // Removing never needs the user to still be a recipient.
    expect((await api.call("POST", path, { token, data: { action: "remove", members: [ghost] } })).status).toBe(200);
  });

  it("refuses a bad membership request with the error that names it", async () => {
    const queue = await createQueue({ name: "Strict" });
    const path = `${base}/${queue.id}/recipients`;
    const unknown = await api.call("POST", path, { token, data: { action: "shuffle", members: [] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ message: "invalid data", data: { action: { enum: { value: "shuffle" } } } });
    const missing = await api.call("POST", path, { token, data: { members: [] } });
    expect(missing.body).toMatchObject({ message: "validation error", data: { action: { required: {} } } });
    const notArray = await api.call("POST", path, { token, data: { action: "add", members: agents.agent1 } });
    expect(notArray.body).toMatchObject({ message: "validation error", data: { members: { type: {} } } });
    const noQueue = await api.call("POST", `${base}/${"0".repeat(32)}/recipients`, { token, data: { action: "add", members: [] } });
    expect(noQueue.status).toBe(404);
    expect(noQueue.body).toMatchObject({ message: "bad_identifier", data: { cause: "0".repeat(32) } });
  });

  it("lets only admins change membership", async () => {
    const queue = await createQueue({ name: "Admins only" });
    const agent = await api.login("agent1");
    const path = `${base}/${queue.id}/recipients`;
    expect((await api.call("GET", path, { token: agent.token })).status).toBe(200);
    expect((await api.call("POST", path, { token: agent.token, data: { action: "add", members: [agent.ownerId] } })).status).toBe(403);
    expect((await api.call("DELETE", path, { token: agent.token })).status).toBe(403);
  });
});

describe("status, sessions and start-up", () => {
  const STATUS_SHAPE = {
    active_recipient_count: expect.any(Number),
    available_recipient_count: expect.any(Number),
    node: expect.any(String),
    service_level: { answered_within_s: 20, target_percent: 80 },
    alerts: [],
    recipients_by_state: expect.any(Object),
    away_reasons: expect.any(Object),
    // How far the account's queue time is behind the server's (a training run's pauses): none here.
    queue_clock: { behind_ms: 0, paused: false },
    stats: {
      service_level: null,
      answered_within: expect.any(Number),
      abandoned_within: expect.any(Number),
      average_speed_of_answer: expect.any(Number),
      abandonment_rate: null,
      average_handle_time: expect.any(Number),
      longest_wait: expect.any(Number),
      estimated_wait: expect.any(Number),
      average_wait: expect.any(Number),
      recipient_count: expect.any(Number),
      active_session_count: expect.any(Number),
      total_sessions: expect.any(Number),
      missed_sessions: expect.any(Number),
      abandoned_sessions: expect.any(Number),
      answered_sessions: expect.any(Number),
      missed_offers: expect.any(Number),
    },
  };

  it("answers a queue's status with every field, and counts who is logged in and ready", async () => {
    const queue = await createQueue({ name: "Counted" });
    await api.call("POST", `${base}/${queue.id}/recipients`, { token, data: { action: "set", members: [agents.agent1, agents.agent2] } });
    const before = await api.call<Record<string, unknown>>("GET", `${base}/${queue.id}/status`, { token });
    expect(before.status).toBe(200);
    expect(before.body.data).toEqual(STATUS_SHAPE);
    expect(before.body.data).toMatchObject({ active_recipient_count: 0, available_recipient_count: 0, stats: { recipient_count: 2, active_session_count: 0 } });

    const recipients = `/v2/accounts/${accountId}/callq_recipients`;
    expect((await api.call("POST", `${recipients}/${agents.agent1 ?? ""}/status`, { token, data: { status: "login" } })).status).toBe(200);
    expect((await api.call("POST", `${recipients}/${agents.agent2 ?? ""}`, { token, data: { action: "login_ready" } })).status).toBe(200);
    const after = await api.call<Record<string, unknown>>("GET", `${base}/${queue.id}/status`, { token });
    expect(after.body.data).toMatchObject({ active_recipient_count: 2, available_recipient_count: 1 });
    for (const id of [agents.agent1, agents.agent2]) await api.call("POST", `${recipients}/${id ?? ""}/status`, { token, data: { status: "logout" } });
    expect((await api.call("GET", `${base}/${"0".repeat(32)}/status`, { token })).body).toMatchObject({ error: "404", message: "bad_identifier", data: { cause: "0".repeat(32) } });
  });

  it("answers several statuses with queue_ids from the query string, a GET body or a POST; all queues without ids", async () => {
    const a = await createQueue({ name: "Multi A" });
    const b = await createQueue({ name: "Multi B" });
    const path = `${base}/status`;
    const byQuery = await api.call<Record<string, unknown>>("GET", path, { token, query: { queue_ids: `${a.id},${b.id}` } });
    expect(byQuery.status, byQuery.text).toBe(200);
    expect(Object.keys(byQuery.body.data).sort()).toEqual([a.id, b.id].sort());
    expect(byQuery.body.data[a.id]).toEqual(STATUS_SHAPE);

    const byGetBody = await getWithBody(path, { queue_ids: [b.id] });
    expect(byGetBody.status).toBe(200);
    expect(Object.keys(byGetBody.body.data)).toEqual([b.id]);

    const byPost = await api.call<Record<string, unknown>>("POST", path, { token, data: { queue_ids: [a.id] } });
    expect(Object.keys(byPost.body.data)).toEqual([a.id]);

    const every = await api.call<Record<string, unknown>>("GET", path, { token });
    const ids = (await api.call<{ id: string }[]>("GET", base, { token, query: { paginate: "false" } })).body.data.map((q) => q.id);
    expect(Object.keys(every.body.data).sort()).toEqual(ids.sort());

    const ghost = "0".repeat(32);
    const unknown = await api.call("GET", path, { token, query: { queue_ids: `${a.id},${ghost}` } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ message: "bad_identifier", data: { cause: ghost } });
    const bad = await api.call("POST", path, { token, data: { queue_ids: a.id } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ message: "validation error", data: { queue_ids: { type: {} } } });
  });

  it("lists sessions as [{queue_id, session_list}] and refuses to remove a session that is not there", async () => {
    const queue = await createQueue({ name: "Sessions" });
    const res = await api.call("GET", `${base}/${queue.id}/sessions`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ queue_id: queue.id, session_list: [] }]);

    const ghost = "b".repeat(32);
    const gone = await api.call("POST", `${base}/${queue.id}/sessions/${ghost}`, { token, data: { action: "remove" } });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ message: "bad_identifier", data: { cause: ghost } });
    const unknown = await api.call("POST", `${base}/${queue.id}/sessions/${ghost}`, { token, data: { action: "transfer" } });
    expect(unknown.body).toMatchObject({ error: "400", message: "invalid data", data: { action: { enum: { value: "transfer" } } } });
    const agent = await api.login("agent1");
    expect((await api.call("POST", `${base}/${queue.id}/sessions/${ghost}`, { token: agent.token, data: { action: "remove" } })).status).toBe(403);
    expect((await api.call("GET", `${base}/${"0".repeat(32)}/sessions`, { token })).status).toBe(404);
  });

  it("ensure_started lists every queue of the account, a new one included", async () => {
    const queue = await createQueue({ name: "Started" });
    const res = await api.call<string[]>("GET", `${base}/ensure_started`, { token });
    expect(res.status).toBe(200);
    const ids = (await api.call<{ id: string }[]>("GET", base, { token, query: { paginate: "false" } })).body.data.map((q) => q.id);
    expect([...res.body.data].sort()).toEqual(ids.sort());
    expect(res.body.data).toContain(queue.id);
    // The engine follows deletes too.
    await api.call("DELETE", `${base}/${queue.id}`, { token });
    expect((await api.call<string[]>("GET", `${base}/ensure_started`, { token })).body.data).not.toContain(queue.id);
  });

  it("never reads status, recipients or ensure_started as a queue id", async () => {
    for (const word of ["status", "recipients", "ensure_started"]) {
      const res = await api.call("GET", `${base}/${word}`, { token });
      expect(res.status, word).toBe(200);
      expect(res.body.status).toBe("success");
      // These are read-only collections: a write is 405, not an edit of a queue called `word`.
      expect((await api.call("PATCH", `${base}/${word}`, { token, data: { name: "x" } })).status, word).toBe(405);
    }
  });
});

describe("a real caller in a queue", () => {
  it("shows the session, fires join, offer, rejected and leave hooks, and removes the session on request", async () => {
    const receiver = await HookReceiver.start();
    const closers: (() => Promise<void>)[] = [];
    try {
      const hooks = ["callq_queue_join", "callq_queue_leave", "callq_recipient_offer", "callq_recipient_rejected"];
      for (const hook of hooks) {
        const res = await api.call("PUT", `/v2/accounts/${accountId}/webhooks`, { token, data: { name: hook, hook, uri: `${receiver.url}/${hook}` } });
        expect(res.status, res.text).toBe(201);
      }
      const agentId = agents.agent1 ?? "";
      const queue = await createQueue({ name: "Live", ring_timeout: 10, hold_treatment: "silence_stream://60000" });
      await api.call("POST", `${base}/${queue.id}/recipients`, { token, data: { action: "set", members: [agentId] } });
      const flow = await api.call("PUT", `/v2/accounts/${accountId}/callflows`, { token, data: { name: "Live queue", numbers: ["5099"], flow: { module: "callq", data: { id: queue.id }, children: {} } } });
      expect(flow.status, flow.text).toBe(201);

      const events = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
      closers.push(() => events.close());
      // The hosted product's old spelling of the binding works too.
      expect(await events.subscribe(accountId, `qubicle.queue.${queue.id}`, { auth_token: token })).toMatchObject({ status: "success" });

      const sim = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
        token,
        data: { to: "5099", caller_id_number: "+15550001111", caller_id_name: "Queue Tester", audio: "silence_stream://60000" },
      });
      expect(sim.status, sim.text).toBe(201);
      const sessionsPath = `${base}/${queue.id}/sessions`;
      const session = await poll("the caller's session", async () => {
        const res = await api.call<{ queue_id: string; session_list: Record<string, unknown>[] }[]>("GET", sessionsPath, { token });
        return res.body.data[0]?.session_list[0];
      });
      expect(session).toMatchObject({ queue_id: queue.id, caller_id_name: "Queue Tester", caller_id_number: "+15550001111", state: "waiting" });
      expect(session.session_id).toEqual(expect.any(String));
      expect(session.call_id).toEqual(expect.any(String));
      expect(Number(session.queue_enter_time)).toBeGreaterThan(63_000_000_000);
      const status = await api.call<{ stats: Record<string, number> }>("GET", `${base}/${queue.id}/status`, { token });
      expect(status.body.data.stats).toMatchObject({ active_session_count: 1, total_sessions: 1 });
      const joined = await events.next((m) => m.action === "event" && m.name === "join");
      expect(joined).toMatchObject({ routing_key: `callq.queue.${queue.id}`, data: { session_id: session.session_id, queue_id: queue.id } });
      const join = await poll("the join hook", async () => receiver.at("/callq_queue_join")[0]);
      expect(join).toMatchObject({ hook_event: "callq_queue_join", account_id: accountId, queue_id: queue.id, session_id: session.session_id, call_id: session.call_id, caller_id_number: "+15550001111" });

      // The agent's phone registers and is offered the caller, and refuses.
      const device = await newDevice(api, { token, accountId }, { owner_id: agentId });
      const socket = await SipSocket.connect(api.url);
      closers.push(() => socket.close());
      const phone = new SipPhone(socket, { ...device, realm: "demo.switchboard.local" });
      expect((await phone.register({ expires: 300 })).status).toBe(200);
      expect((await api.call("POST", `/v2/accounts/${accountId}/callq_recipients/${agentId}`, { token, data: { action: "login_ready" } })).status).toBe(200);
      let invite = await socket.next(5_000);
      while (invite.method !== "INVITE") invite = await socket.next(5_000);
      socket.send(responseTo(invite, 486, { toTag: hex(4), reason: "Busy Here" }));
      const offer = await poll("the offer hook", async () => receiver.at("/callq_recipient_offer")[0]);
      expect(offer).toMatchObject({ hook_event: "callq_recipient_offer", recipient_id: agentId, queue_id: queue.id, session_id: session.session_id, caller_id_name: "Queue Tester" });
      const rejected = await poll("the rejected hook", async () => receiver.at("/callq_recipient_rejected")[0]);
      expect(rejected).toMatchObject({ hook_event: "callq_recipient_rejected", recipient_id: agentId, previous_state: "Call-Offer" });
      await api.call("POST", `/v2/accounts/${accountId}/callq_recipients/${agentId}/status`, { token, data: { status: "logout" } });

      const removed = await api.call("POST", `${sessionsPath}/${String(session.session_id)}`, { token, data: { action: "remove" } });
      expect(removed.status, removed.text).toBe(200);
      expect(removed.body.data).toEqual([{ queue_id: queue.id, session_list: [] }]);
      const leave = await poll("the leave hook", async () => receiver.at("/callq_queue_leave")[0]);
      expect(leave).toMatchObject({ hook_event: "callq_queue_leave", queue_id: queue.id, session_id: session.session_id, reason: "removed" });
      const again = await api.call("POST", `${sessionsPath}/${String(session.session_id)}`, { token, data: { action: "remove" } });
      expect(again.status).toBe(404);
    } finally {
      await Promise.all(closers.map((close) => close()));
      await receiver.close();
    }
  });
});

describe("paths as the spec writes them", () => {
  it("PUT /callq_queues/ with a trailing slash creates, GET /callq_recipients/ lists", async () => {
    const created = await api.call<Queue>("PUT", `${base}/`, { token, data: { name: "Slash" } });
    expect(created.status).toBe(201);
    expect(created.body.data.name).toBe("Slash");
    const recipients = await api.call<{ id: string; name: string }[]>("GET", `/v2/accounts/${accountId}/callq_recipients/`, { token });
    expect(recipients.status).toBe(200);
    expect(recipients.body.data.map((r) => r.name)).toContain("agent1");
  });
});

describe("a deleted user", () => {
  it("leaves every queue they were a member of", async () => {
    const user = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/users`, {
      token,
      data: { username: "leaver", password: "leaver-pw", first_name: "Lee", last_name: "Ver", callq: { enabled: true } },
    });
    expect(user.status).toBe(201);
    const id = user.body.data.id;
    const queue = await api.call<Queue>("PUT", base, { token, data: { name: "With leaver" } });
    const added = await api.call<Queue>("POST", `${base}/${queue.body.data.id}/recipients`, { token, data: { action: "add", members: [id, agents.agent1] } });
    expect(Object.keys(added.body.data.members)).toContain(id);
    expect((await api.call("DELETE", `/v2/accounts/${accountId}/users/${id}`, { token })).status).toBe(200);
    const after = await api.call<Queue>("GET", `${base}/${queue.body.data.id}`, { token });
    expect(Object.keys(after.body.data.members)).toEqual([agents.agent1]);
  });
});
