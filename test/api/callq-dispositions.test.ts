// Dispositions and Away reasons over real HTTP (local additions, issue 19), with a simulated
// caller reaching an agent's phone through a queue: the queue's disposition fields and their
// refusals, the account's Away reasons (admins edit them), Away with a reason in the status, the
// disposition of a real queue call (refused Ready until given, given by the agent only) landing
// on both legs' CDRs, and who may read it.
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../server/events/index.js";
import { createAccount, type TestApi } from "../helpers/api.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { EventsClient, type Incoming } from "../helpers/events-client.js";
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
  for (const username of ["agent1", "agent2", "supervisor"]) {
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

const CODES = [
  { code: "sale", label: "Sale" },
  { code: "wrong_number", label: "Wrong number" },
];

describe("a queue's dispositions (local additions)", () => {
  it("are stored and read back; a queue without them reads as before", async () => {
    const support = await queueByName("Support");
    expect(support.data.dispositions).toBeUndefined();
    expect(support.data.wrapup_policy).toBeUndefined();
    const res = await api.call<Record<string, unknown>>("PATCH", `${base}/callq_queues/${support.id}`, {
      token: admin,
      data: { dispositions: CODES, disposition_required: true, wrapup_policy: "timeboxed_no_exit" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ dispositions: CODES, disposition_required: true, wrapup_policy: "timeboxed_no_exit" });
  });

  it("refuses bad input with the field named, and changes nothing", async () => {
    const sales = await queueByName("Sales");
    const cases: [Record<string, unknown>, string, string][] = [
      [{ dispositions: [CODES[0], CODES[0]] }, "dispositions", "unique"],
      [{ disposition_required: true, dispositions: [] }, "disposition_required", "dispositions"],
      [{ wrapup_policy: "whenever" }, "wrapup_policy", "enum"],
      [{ dispositions: [{ code: "Big Sale", label: "x" }] }, "dispositions.0.code", "pattern"],
      [{ dispositions: [{ code: "sale" }] }, "dispositions.0.label", "required"],
    ];
    for (const [data, field, rule] of cases) {
      const res = await api.call<Record<string, Record<string, unknown>>>("PATCH", `${base}/callq_queues/${sales.id}`, { token: admin, data });
      expect(res.status, JSON.stringify(data)).toBe(400);
      expect(res.body.data[field], `${field} in ${res.text}`).toHaveProperty(rule);
    }
    expect((await queueByName("Sales")).data).toEqual(sales.data);
    const byAgent = await api.call("PATCH", `${base}/callq_queues/${sales.id}`, { token: token("agent1"), data: { dispositions: CODES } });
    expect(byAgent.status).toBe(403);
  });
});

describe("Away reasons", () => {
  const path = () => `${base}/callq_away_reasons`;

  it("lists the default reasons and the engine's; an admin replaces the account's, an agent may not", async () => {
    const read = await api.call<{ reasons: { code: string }[]; engine_reasons: { code: string }[] }>("GET", path(), { token: token("agent1") });
    expect(read.status).toBe(200);
    expect(read.body.data.reasons.map((r) => r.code)).toEqual(["break", "lunch", "meeting", "training"]);
    expect(read.body.data.engine_reasons.map((r) => r.code)).toEqual(["missed_offers", "no_device"]);

    const byAgent = await api.call("POST", path(), { token: token("agent1"), data: { reasons: [{ code: "nap", label: "Nap" }] } });
    expect(byAgent.status).toBe(403);
    for (const [reasons, rule] of [
      [[{ code: "missed_offers", label: "Missed" }], "reserved"],
      [[{ code: "lunch", label: "Lunch" }, { code: "lunch", label: "Dinner" }], "unique"],
    ] as const) {
      const res = await api.call<Record<string, Record<string, unknown>>>("POST", path(), { token: admin, data: { reasons } });
      expect(res.status).toBe(400);
      expect(res.body.data.reasons).toHaveProperty(rule);
    }
    expect((await api.call<{ reasons: unknown[] }>("GET", path(), { token: admin })).body.data.reasons).toHaveLength(4);

    const reasons = [...read.body.data.reasons, { code: "coaching", label: "Coaching" }];
    const set = await api.call<{ reasons: unknown[] }>("POST", path(), { token: admin, data: { reasons } });
    expect(set.status, set.text).toBe(200);
    expect((await api.call<{ reasons: unknown[] }>("GET", path(), { token: token("agent2") })).body.data.reasons).toEqual(reasons);
  });

  it("Away takes one of them: in the status with since when, in the event and the away webhook; unknown, the engine's, or with ready or a queue_id is 400 and changes nothing", async () => {
    const receiver = await HookReceiver.start();
    const hook = await api.call<{ id: string }>("PUT", `${base}/webhooks`, { token: admin, data: { name: "away", hook: "callq_recipient_away", uri: `${receiver.url}/away` } });
    expect(hook.status, hook.text).toBe(201);
    const statusPath = `${base}/callq_recipients/${id("agent2")}/status`;
    const as = { token: token("agent2") };
    expect((await api.call("POST", statusPath, { ...as, data: { status: "login" } })).status).toBe(200);
    const away = await api.call<Record<string, unknown>>("POST", statusPath, { ...as, data: { status: "away", reason: "coaching" } });
    expect(away.status, away.text).toBe(200);
    expect(away.body.data).toMatchObject({ availability_state: "Away", away_reason: "coaching", away_since: expect.any(Number) });
    const event = events.filter((e) => e.routing_key === `callq.recipient.${id("agent2")}` && e.name === "away").at(-1);
    expect(event?.data).toMatchObject({ away_reason: "coaching", away_since: away.body.data.away_since });
    const delivered = await poll("the away webhook with its reason", async () => receiver.at("/away").find((b) => b.away_reason === "coaching"));
    expect(delivered).toMatchObject({ hook_event: "callq_recipient_away", recipient_id: id("agent2"), away_since: String(away.body.data.away_since) });
    await api.call("DELETE", `${base}/webhooks/${hook.body.data.id}`, { token: admin });
    await receiver.close();
    const sales = await queueByName("Sales");
    for (const [data, rule] of [
      [{ status: "away", reason: "nap" }, "enum"],
      [{ status: "away", reason: "missed_offers" }, "enum"],
      [{ status: "ready", reason: "lunch" }, "not_allowed"],
      [{ status: "away", reason: "lunch", queue_id: sales.id }, "not_allowed"],
    ] as const) {
      const res = await api.call<Record<string, Record<string, unknown>>>("POST", statusPath, { ...as, data });
      expect(res.status, JSON.stringify(data)).toBe(400);
      expect(res.body.data.reason).toHaveProperty(rule);
    }
    const byAction = await api.call<Record<string, unknown>>("POST", `${base}/callq_recipients/${id("agent2")}`, { ...as, data: { action: "away", reason: "lunch" } });
    expect(byAction.body.data).toMatchObject({ away_reason: "lunch" });
    const read = await api.call<Record<string, unknown>>("GET", statusPath, { token: token("agent1") });
    expect(read.body.data).toMatchObject({ availability_state: "Away", away_reason: "lunch" });
    await api.call("POST", statusPath, { ...as, data: { status: "logout" } });
  });
});

describe("the disposition of a queue call", () => {
  it("is required before Ready, given by the agent alone, lands on both legs' CDRs, and is read by the queue's supervisors and admins only", async () => {
    const sales = await queueByName("Sales");
    const patched = await api.call("PATCH", `${base}/callq_queues/${sales.id}`, {
      token: admin,
      data: { dispositions: CODES, disposition_required: true, wrapup_policy: "required", members: {} },
    });
    expect(patched.status, patched.text).toBe(200);
    const receiver = await HookReceiver.start();
    const hook = await api.call("PUT", `${base}/webhooks`, { token: admin, data: { name: "disposition", hook: "callq_recipient_disposition", uri: `${receiver.url}/disposition` } });
    expect(hook.status, hook.text).toBe(201);
    await api.call("POST", `${base}/callq_queues/${sales.id}/recipients`, { token: admin, data: { action: "set", members: [id("agent1"), id("supervisor")] } });
    const agentPath = `${base}/callq_recipients/${id("agent1")}`;
    const socket = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
    expect(await socket.subscribe(t.accountId, [`callq.recipient.${id("agent1")}`, "callq.session.*"], { auth_token: admin })).toMatchObject({ status: "success" });
    const disposition = (data: Record<string, unknown>, as: string) => api.call<Record<string, unknown>>("POST", `${agentPath}/disposition`, { token: as, data });
    expect((await api.call("POST", agentPath, { token: token("agent1"), data: { action: "login_ready" } })).status).toBe(200);

    const sim = await api.call<{ id: string }>("POST", `${base}/sim/calls`, {
      token: admin,
      data: { to: "5001", caller_id_name: "Casey Customer", caller_id_number: "+14155550123", audio: "silence_stream://60000" },
    });
    expect(sim.status, sim.text).toBe(201);
    const offered = await t.phone("agent1").incoming(15_000);
    await offered.answer();
    await connected(offered);
    const onCall = await poll("the agent on the call", async () => {
      const res = await api.call<Record<string, unknown> & { last_call?: { session_id: string } }>("GET", `${agentPath}/status`, { token: token("agent1") });
      return res.body.data.availability_state === "On-A-Call" ? res.body.data : undefined;
    });
    const sessionId = onCall.last_call?.session_id ?? "";
    expect(onCall.last_call).toMatchObject({ queue_id: sales.id, dispositions: CODES, disposition_required: true, wrapup_policy: "required" });

    offered.hangup();
    await until(() => api.server.calls.channels.size === 0, "both legs to end");
    const wrapup = await api.call<Record<string, unknown>>("GET", `${agentPath}/status`, { token: token("agent1") });
    expect(wrapup.body.data).toMatchObject({ availability_state: "Wrapup-Time", disposition_pending: true });

    const refused = await api.call<Record<string, Record<string, unknown>>>("POST", agentPath, { token: token("agent1"), data: { action: "ready" } });
    expect(refused.status).toBe(400);
    expect(refused.body.data.action).toHaveProperty("disposition_required");
    expect(JSON.stringify(refused.body.data)).toContain("disposition");

    // Another agent, the admin, even the queue's supervisor: not theirs to give.
    for (const as of [token("agent2"), admin, token("supervisor")]) expect((await disposition({ code: "sale", note: "x" }, as)).status).toBe(403);
    const bad = await api.call<Record<string, Record<string, unknown>>>("POST", `${agentPath}/disposition`, { token: token("agent1"), data: { code: "refund" } });
    expect(bad.status).toBe(400);
    expect(bad.body.data.code).toHaveProperty("enum");
    expect((await disposition({ code: "sale", session_id: "nope" }, token("agent1"))).status).toBe(404);
    expect((await disposition({ note: "no code" }, token("agent1"))).status).toBe(400);
    expect((await disposition({ code: "sale", note: "x".repeat(2001) }, token("agent1"))).status).toBe(400);
    expect((await api.call<Record<string, unknown>>("GET", `${agentPath}/status`, { token: token("agent1") })).body.data).toMatchObject({ disposition_pending: true });

    const given = await disposition({ code: "wrong_number", note: "asked for the bakery", session_id: sessionId }, token("agent1"));
    expect(given.status, given.text).toBe(200);
    expect(given.body.data).toMatchObject({ availability_state: "Wrapup-Time", last_call: { session_id: sessionId, disposition: { code: "wrong_number", label: "Wrong number", note: "asked for the bakery" } } });
    expect(given.body.data.disposition_pending).toBeUndefined();
    const event = events.find((e) => e.routing_key === `callq.recipient.${id("agent1")}` && e.name === "disposition");
    expect(event?.data).toMatchObject({ session_id: sessionId, disposition: { code: "wrong_number", note: "asked for the bakery" } });
    expect(events.some((e) => e.routing_key === `callq.session.${sessionId}` && e.name === "disposition")).toBe(true);
    // The local disposition hook: one delivery, the code and note JSON-encoded in the form.
    const hooked = await poll("the disposition webhook", async () => receiver.at("/disposition")[0]);
    expect(hooked).toMatchObject({ hook_event: "callq_recipient_disposition", recipient_id: id("agent1"), session_id: sessionId, queue_id: sales.id });
    expect(JSON.parse(hooked.disposition ?? "{}")).toMatchObject({ code: "wrong_number", label: "Wrong number", note: "asked for the bakery" });
    expect(receiver.at("/disposition")).toHaveLength(1);
    await receiver.close();

    // Both disposition events as the websocket sends them, each valid for its AsyncAPI message.
    const asyncapi = (await (await fetch(`${api.url}/v2/asyncapi.json`)).json()) as { channels: { events: { messages: Record<string, { payload: object }> } } };
    const ajv = new Ajv({ strict: false, allErrors: true });
    const isDisposition = (key: string) => (m: Incoming) => "routing_key" in m && m.routing_key === key && m.name === "disposition";
    for (const [key, message] of [
      [`callq.recipient.${id("agent1")}`, "callqRecipientEvent"],
      [`callq.session.${sessionId}`, "callqSessionEvent"],
    ] as const) {
      const sent = await socket.next(isDisposition(key));
      const payload = asyncapi.channels.events.messages[message]?.payload;
      expect(payload, message).toBeDefined();
      const valid = ajv.compile(payload ?? {});
      expect(valid(sent), `${message}: ${JSON.stringify(valid.errors)}`).toBe(true);
    }
    await socket.close();

    // Both legs of the call: the caller's (the simulated call) and the agent's.
    const legs = await poll("both legs' CDRs with the disposition", async () => {
      const res = await api.call<Record<string, unknown>[]>("GET", `${base}/cdrs`, { token: admin, query: { paginate: "false" } });
      const marked = res.body.data.filter((c) => (c.disposition as { code?: string } | undefined)?.code === "wrong_number");
      return marked.length === 2 ? marked : undefined;
    });
    expect(legs.map((c) => c.call_id)).toContain(sim.body.data.id);
    for (const leg of legs) expect(leg.disposition).toMatchObject({ code: "wrong_number", label: "Wrong number", note: "asked for the bakery", recipient_id: id("agent1"), queue_id: sales.id });

    // Reading: the agent, an admin and a supervisor member of the queue see it; another agent does not.
    for (const as of [token("agent1"), admin, token("supervisor")]) {
      const read = await api.call<Record<string, unknown>>("GET", `${agentPath}/status`, { token: as });
      expect(read.body.data.last_call).toMatchObject({ disposition: { code: "wrong_number" } });
    }
    const other = await api.call<Record<string, unknown>>("GET", `${agentPath}/status`, { token: token("agent2") });
    expect(other.body.data.availability_state).toBe("Wrapup-Time");
    expect(other.body.data.last_call).toBeUndefined();

    const ready = await api.call<Record<string, unknown>>("POST", agentPath, { token: token("agent1"), data: { action: "ready" } });
    expect(ready.status, ready.text).toBe(200);
    expect(ready.body.data.availability_state).toBe("Ready");
    await api.call("POST", agentPath, { token: token("agent1"), data: { action: "logout" } });
  });
});

describe("who may call the new endpoints at all", () => {
  it("no token is 401; another account's admin is refused for this account's reasons and dispositions", async () => {
    const paths = [`${base}/callq_away_reasons`, `${base}/callq_recipients/${id("agent1")}/disposition`];
    for (const path of paths) expect((await api.call("POST", path, { data: { reasons: [], code: "sale" } })).status, path).toBe(401);
    expect((await api.call("GET", paths[0] ?? "")).status).toBe(401);
    const other = await createAccount(api, "elsewhere");
    for (const path of paths) expect((await api.call("POST", path, { token: other.token, data: { reasons: [], code: "sale" } })).status, path).toBe(403);
    expect((await api.call("GET", paths[0] ?? "", { token: other.token })).status).toBe(403);
    const own = await api.call<{ reasons: unknown[] }>("GET", `/v2/accounts/${other.accountId}/callq_away_reasons`, { token: other.token });
    expect(own.body.data.reasons, "an account's reasons are its own: the new one has the defaults").toHaveLength(4);
  });
});
