// A Qubicle client's spellings work unchanged: the `qubicle_queues` and `qubicle_recipients`
// paths (every verb and sub-path, with the same permissions), the user key `qubicle`, and the
// callflow modules `qubicle` and `qubicle_recipient`, down to a simulated caller waiting in a
// queue reached through a `qubicle` callflow.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";

let api: TestApi;
let token: string;
let accountId: string;
let account: string;

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
  account = `/v2/accounts/${accountId}`;
});

afterAll(async () => {
  await api.close();
});

describe("Qubicle spellings", () => {
  it("serves queues and recipients under qubicle_* paths, with the callq_* permissions", async () => {
    const created = await api.call<{ id: string; name: string }>("PUT", `${account}/qubicle_queues`, { token, data: { name: "Qubicle Sales" } });
    expect(created.status, created.text).toBe(201);
    const queueId = created.body.data.id;
    const listed = await api.call<{ id: string }[]>("GET", `${account}/callq_queues`, { token, query: { paginate: "false" } });
    expect(listed.body.data.map((q) => q.id)).toContain(queueId);
    const status = await api.call<{ stats: Record<string, number> }>("GET", `${account}/qubicle_queues/${queueId}/status`, { token });
    expect(status.status).toBe(200);
    expect(status.body.data.stats).toMatchObject({ total_sessions: 0 });
    expect((await api.call("GET", `${account}/qubicle_queues/${queueId}`, { token })).body.data).toMatchObject({ id: queueId, name: "Qubicle Sales" });

    const agent = await api.login("agent1");
    const refused = await api.call("PUT", `${account}/qubicle_queues`, { token: agent.token, data: { name: "Not mine" } });
    expect(refused.status).toBe(403);
    // A misspelt alias is no alias.
    expect((await api.call("GET", `${account}/qubicle_queuesx`, { token })).status).toBe(404);
  });

  it("takes the user key `qubicle` as `callq`, and a user so enabled is a qubicle recipient", async () => {
    const users = await api.call<{ id: string; username: string }[]>("GET", `${account}/users`, { token, query: { paginate: "false" } });
    const userId = users.body.data.find((u) => u.username === "agent3")?.id ?? "";
    expect(userId).not.toBe("");
    const off = await api.call("PATCH", `${account}/users/${userId}`, { token, data: { qubicle: { enabled: false } } });
    expect(off.status, off.text).toBe(200);
    expect(off.body.data).toMatchObject({ callq: { enabled: false } });
    expect(off.body.data).not.toHaveProperty("qubicle");
    const on = await api.call("PATCH", `${account}/users/${userId}`, { token, data: { qubicle: { enabled: true } } });
    expect(on.body.data).toMatchObject({ callq: { enabled: true } });
    const recipients = await api.call<{ id: string }[]>("GET", `${account}/qubicle_recipients`, { token, query: { paginate: "false" } });
    expect(recipients.body.data.map((r) => r.id)).toContain(userId);
    const login = await api.call<{ status: string }>("POST", `${account}/qubicle_recipients/${userId}/status`, { token, data: { status: "login" } });
    expect(login.status, login.text).toBe(200);
    const read = await api.call<Record<string, unknown>>("GET", `${account}/qubicle_recipients/${userId}/status`, { token });
    expect(read.status).toBe(200);
    await api.call("POST", `${account}/qubicle_recipients/${userId}/status`, { token, data: { status: "logout" } });
  });

  it("routes a caller through a callflow whose module is `qubicle` into the queue", async () => {
    const queue = await api.call<{ id: string }>("PUT", `${account}/qubicle_queues`, { token, data: { name: "Qubicle Flow", hold_treatment: "silence_stream://60000" } });
    const flow = await api.call("PUT", `${account}/callflows`, {
      token,
      data: { name: "Qubicle queue", numbers: ["5199"], flow: { module: "qubicle", data: { queue_id: queue.body.data.id }, children: {} } },
    });
    expect(flow.status, flow.text).toBe(201);
    const recipientFlow = await api.call("PUT", `${account}/callflows`, {
      token,
      data: { name: "Qubicle login", numbers: ["5198"], flow: { module: "qubicle_recipient", data: { action: "login" }, children: {} } },
    });
    expect(recipientFlow.status, recipientFlow.text).toBe(201);
    const badAction = await api.call("PUT", `${account}/callflows`, {
      token,
      data: { name: "Bad", numbers: ["5197"], flow: { module: "qubicle_recipient", data: { action: "dance" }, children: {} } },
    });
    expect(badAction.status).toBe(400);

    const sim = await api.call<{ id: string }>("POST", `${account}/sim/calls`, {
      token,
      data: { to: "5199", caller_id_number: "+15550002222", caller_id_name: "Qubicle Caller", audio: "silence_stream://60000" },
    });
    expect(sim.status, sim.text).toBe(201);
    const session = await poll("the caller's session", async () => {
      const res = await api.call<{ session_list: Record<string, unknown>[] }[]>("GET", `${account}/qubicle_queues/${queue.body.data.id}/sessions`, { token });
      return res.body.data[0]?.session_list[0];
    });
    expect(session).toMatchObject({ queue_id: queue.body.data.id, caller_id_name: "Qubicle Caller", state: "waiting" });
    const removed = await api.call("POST", `${account}/qubicle_queues/${queue.body.data.id}/sessions/${String(session.session_id)}`, { token, data: { action: "remove" } });
    expect(removed.status).toBe(200);
  });
});
