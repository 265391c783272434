// A queue's alerts over the API: stored as given and read back, the status listing those that
// hold (none on a quiet queue), limits out of bounds or unknown refused with the field named and
// nothing stored, and only admins may set them (a supervisor or an agent is refused, nothing changed).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const ALERTS = { service_level_window_s: 900, longest_wait_s: 60, state_limits: { Away: 600, "Wrapup-Time": 120, "On-A-Call": 1200 } };

async function createQueue(data: Record<string, unknown>): Promise<string> {
  const res = await api.call<{ id: string }>("PUT", base, { token: admin.token, data });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

describe("a queue's alerts", () => {
  it("are stored as given, and the status lists none while nothing holds", async () => {
    const id = await createQueue({ name: "Alerted", alerts: ALERTS });
    const read = await api.call<Record<string, unknown>>("GET", `${base}/${id}`, { token: admin.token });
    expect(read.body.data.alerts).toEqual(ALERTS);
    for (const token of [admin.token, supervisor.token]) {
      const status = await api.call<Record<string, unknown>>("GET", `${base}/${id}/status`, { token });
      expect(status.status, status.text).toBe(200);
      expect(status.body.data.alerts).toEqual([]);
    }
    const patched = await api.call<Record<string, unknown>>("PATCH", `${base}/${id}`, { token: admin.token, data: { alerts: { longest_wait_s: 30 } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.alerts).toMatchObject({ longest_wait_s: 30 });
  });

  it("refuses limits out of bounds, of another type or unknown, naming the field, and stores nothing", async () => {
    const before = (await api.call<unknown[]>("GET", base, { token: admin.token, query: { paginate: "false" } })).body.data.length;
    for (const [alerts, field] of [
      [{ longest_wait_s: 0 }, "alerts.longest_wait_s"],
      [{ longest_wait_s: 86_401 }, "alerts.longest_wait_s"],
      [{ service_level_window_s: 2.5 }, "alerts.service_level_window_s"],
      [{ service_level_window_s: "15m" }, "alerts.service_level_window_s"],
      [{ state_limits: { Away: -1 } }, "alerts.state_limits.Away"],
      [{ state_limits: { Lunch: 60 } }, "alerts.state_limits"],
      [{ state_limits: { "Not-Logged-In": 60 } }, "alerts.state_limits"],
      [{ wait: 60 }, "alerts"],
      ["60", "alerts"],
    ] as const) {
      const res = await api.call("PUT", base, { token: admin.token, data: { name: "Bad alerts", alerts } });
      expect(res.status, JSON.stringify(alerts)).toBe(400);
      expect(res.text).toContain(field);
    }
    expect((await api.call<unknown[]>("GET", base, { token: admin.token, query: { paginate: "false" } })).body.data.length).toBe(before);
  });

  it("are set by admins only: a supervisor and an agent are refused and nothing changes", async () => {
    const id = await createQueue({ name: "Admin's alerts", alerts: { longest_wait_s: 60 } });
    for (const token of [supervisor.token, agent.token]) {
      const res = await api.call("PATCH", `${base}/${id}`, { token, data: { alerts: { longest_wait_s: 1 } } });
      expect(res.status, res.text).toBe(403);
    }
    const read = await api.call<Record<string, unknown>>("GET", `${base}/${id}`, { token: admin.token });
    expect(read.body.data.alerts).toEqual({ longest_wait_s: 60 });
  });
});
