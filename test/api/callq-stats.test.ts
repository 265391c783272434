// The floor's figures over the API: a queue's service-level goal (validated, defaulted), the
// account's floor, a queue's intervals by day as JSON and CSV, and the staffing estimate with its
// what-if inputs; admins and supervisors read them, agents are refused, bad input changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { erlangCAgents } from "../../server/callq/erlang.js";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let admin: { token: string; accountId: string };
let supervisor: { token: string };
let agent: { token: string };
let base: string;

beforeAll(async () => {
  api = await startApi();
  admin = await api.login("admin");
  supervisor = await api.login("supervisor");
  agent = await api.login("agent1");
  base = `/v2/accounts/${admin.accountId}/callq_queues`;
});
afterAll(async () => {
  await api?.close();
});

async function createQueue(data: Record<string, unknown>): Promise<string> {
  const res = await api.call<{ id: string }>("PUT", base, { token: admin.token, data });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

describe("a queue's service-level goal", () => {
  it("is stored as given and shown in the status; the default is 80% within 20 s", async () => {
    const id = await createQueue({ name: "Goal", service_level: { answered_within_s: 30, target_percent: 90 } });
    const read = await api.call<Record<string, unknown>>("GET", `${base}/${id}`, { token: admin.token });
    expect(read.body.data.service_level).toEqual({ answered_within_s: 30, target_percent: 90 });
    const status = await api.call<Record<string, unknown>>("GET", `${base}/${id}/status`, { token: admin.token });
    expect(status.body.data.service_level).toEqual({ answered_within_s: 30, target_percent: 90 });
    const plain = await createQueue({ name: "No goal" });
    const plainStatus = await api.call<Record<string, unknown>>("GET", `${base}/${plain}/status`, { token: admin.token });
    expect(plainStatus.body.data.service_level).toEqual({ answered_within_s: 20, target_percent: 80 });
  });

  it("refuses a goal out of bounds or with unknown fields, naming the field, and stores nothing", async () => {
    const before = (await api.call<unknown[]>("GET", base, { token: admin.token, query: { paginate: "false" } })).body.data.length;
    for (const [goal, field] of [
      [{ answered_within_s: 0 }, "service_level.answered_within_s"],
      [{ target_percent: 101 }, "service_level.target_percent"],
      [{ answered_within_s: 2.5 }, "service_level.answered_within_s"],
      [{ within: 20 }, "service_level"],
      ["80/20", "service_level"],
    ] as const) {
      const res = await api.call("PUT", base, { token: admin.token, data: { name: "Bad goal", service_level: goal } });
      expect(res.status, res.text).toBe(400);
      expect(res.text).toContain(field);
    }
    expect((await api.call<unknown[]>("GET", base, { token: admin.token, query: { paginate: "false" } })).body.data.length).toBe(before);
  });
});

describe("the floor's figures", () => {
  it("are read by admins and supervisors, refused to agents", async () => {
    const id = await createQueue({ name: "Watched" });
    const paths = [`${base}/stats`, `${base}/${id}/intervals`, `${base}/${id}/staffing`];
    for (const path of paths) {
      expect((await api.call("GET", path, { token: admin.token })).status, path).toBe(200);
      expect((await api.call("GET", path, { token: supervisor.token })).status, path).toBe(200);
      const refused = await api.call("GET", path, { token: agent.token });
      expect(refused.status, path).toBe(403);
      expect(refused.body).toMatchObject({ error: "403", message: "forbidden" });
    }
  });

  it("answers the account's floor with every queue together", async () => {
    const res = await api.call<Record<string, unknown>>("GET", `${base}/stats`, { token: admin.token });
    expect(res.body.data).toMatchObject({
      queue_count: expect.any(Number),
      logged_in_recipient_count: expect.any(Number),
      recipients_by_state: expect.any(Object),
      stats: { service_level: null, abandonment_rate: null, active_session_count: 0, longest_wait: 0, total_sessions: 0 },
    });
  });

  it("lists every 15-minute interval of a day, as JSON or CSV; a bad day or queue is refused", async () => {
    const id = await createQueue({ name: "History" });
    const res = await api.call<Record<string, unknown>[]>("GET", `${base}/${id}/intervals`, { token: admin.token, query: { day: "2026-03-02" } });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(96);
    expect(res.body.data[0]).toMatchObject({ queue_id: id, day: "2026-03-02", time: "00:00", offered: 0, answered: 0, service_level: null });
    expect(res.body.data[95]).toMatchObject({ time: "23:45" });
    const csv = await api.call("GET", `${base}/${id}/intervals`, { token: admin.token, query: { day: "2026-03-02", accept: "csv" } });
    expect(csv.status).toBe(200);
    const lines = csv.text.trim().split("\r\n");
    expect(lines).toHaveLength(97);
    expect(lines[0]?.split(",").slice(0, 6)).toEqual(["queue_id", "day", "time", "interval_start", "offered", "answered"]);
    for (const day of ["2026-02-30", "yesterday", "2026-3-2"]) {
      const bad = await api.call("GET", `${base}/${id}/intervals`, { token: admin.token, query: { day } });
      expect(bad.status, day).toBe(400);
      expect(bad.text).toContain("day");
    }
    const missing = await api.call("GET", `${base}/${"0".repeat(32)}/intervals`, { token: admin.token });
    expect(missing.status).toBe(404);
  });

  it("estimates the agents needed by Erlang C, with what-if inputs, labelled as an estimate", async () => {
    const id = await createQueue({ name: "Staffed", service_level: { answered_within_s: 20, target_percent: 80 } });
    const idle = await api.call<Record<string, unknown>>("GET", `${base}/${id}/staffing`, { token: admin.token });
    expect(idle.body.data).toMatchObject({ estimate: true, window_minutes: 60, calls_per_hour: 0, handle_time: null, agents_needed: null, logged_in: 0, ready: 0 });
    const whatIf = await api.call<Record<string, unknown>>("GET", `${base}/${id}/staffing`, { token: admin.token, query: { calls_per_hour: "200", handle_time: "180" } });
    expect(whatIf.body.data).toMatchObject({
      estimate: true,
      calls_per_hour: 200,
      handle_time: 180,
      offered_load: 10,
      agents_needed: erlangCAgents({ arrivalRate: 200 / 3600, handleTime: 180 }, 20, 0.8),
      agents_needed_with_abandonment: null,
    });
    const patient = await api.call<Record<string, unknown>>("GET", `${base}/${id}/staffing`, {
      token: admin.token,
      query: { calls_per_hour: "200", handle_time: "180", patience: "60", target_percent: "90" },
    });
    expect(patient.body.data).toMatchObject({ target_percent: 90, patience: 60, agents_needed_with_abandonment: expect.any(Number) });
    for (const [name, value] of [["minutes", "5"], ["calls_per_hour", "-1"], ["handle_time", "abc"], ["target_percent", "0"]]) {
      const bad = await api.call("GET", `${base}/${id}/staffing`, { token: admin.token, query: { [name ?? ""]: value ?? "" } });
      expect(bad.status, name).toBe(400);
      expect(bad.text).toContain(name);
    }
  });
});
