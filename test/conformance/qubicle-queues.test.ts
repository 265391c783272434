// Qubicle's "Crossbar Queue API" (docs.2600hz.com/qubicle/doc/crossbar/qubicle_queues), each
// example sent as written on the qubicle_queues path (X-Auth-Token and Content-Type:
// application/json, as every curl line of the document has) and checked for the documented status,
// envelope and data shape. Sections after "Queue Status" are named after the spec's call-queue
// endpoint table (service-api.md), which was written from this document: the search tool here
// returns only the first part of the page (see the report, docs/design-notes.md).
//
// Examples: 14 (Queue Sessions empty and with a caller waiting, whose session is then removed;
// Create Queue with the new and with the old field names). Passing as documented: 14. Marked
// differs: 0.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;
const users: Record<string, string> = {};

const JSON_TYPE = { "Content-Type": "application/json" };
const asAdmin = () => ({ "X-Auth-Token": admin, ...JSON_TYPE });
const asAgent = () => ({ "X-Auth-Token": agent, ...JSON_TYPE });
const path = (rest = "") => `/v2/accounts/${accountId}/qubicle_queues${rest}`;

function curl(method: string, url: string, headers: Record<string, string>, body?: string): Promise<CurlResult> {
  return send(api.url, method, url, headers, body);
}

/** `curl -X GET ... -d '...'`: a GET with a body, which fetch() refuses to send. */
function getWithBody(url: string, headers: Record<string, string>, body: string): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${url}`, { method: "GET", headers: { ...headers, "Content-Length": String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const parsed: unknown = text === "" ? {} : JSON.parse(text);
        const json = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
        const headersOut = new Headers();
        for (const [key, value] of Object.entries(res.headers)) if (typeof value === "string") headersOut.set(key, value);
        resolve({ status: res.statusCode ?? 0, headers: headersOut, text, json });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A queue made through the documented create, with `members` set through the documented add. */
async function queue(name: string, members: string[] = []): Promise<string> {
  const created = await curl("PUT", path(), asAdmin(), JSON.stringify({ data: { name } }));
  const id = String((created.json.data as { id: string }).id);
  if (members.length > 0) await curl("POST", path(`/${id}/recipients`), asAdmin(), JSON.stringify({ data: { action: "add", members } }));
  return id;
}

const STATUS_SHAPE = {
  active_recipient_count: expect.any(Number),
  available_recipient_count: expect.any(Number),
  stats: {
    estimated_wait: expect.any(Number),
    average_wait: expect.any(Number),
    recipient_count: expect.any(Number),
    active_session_count: expect.any(Number),
    total_sessions: expect.any(Number),
    missed_sessions: expect.any(Number),
    abandoned_sessions: expect.any(Number),
  },
  node: expect.any(String),
};

beforeAll(async () => {
  api = await startApi();
  const login = await api.login("admin");
  ({ accountId } = login);
  admin = login.token;
  for (const name of ["agent1", "agent2", "agent3"]) {
    const l = await api.login(name);
    users[name] = l.ownerId;
    if (name === "agent1") agent = l.token;
  }
});

afterAll(async () => {
  await api.close();
});

describe("qubicle_queues.md", () => {
  it("qubicle_queues.md › List Queues", async () => {
    const id = await queue("Listed");
    const res = await curl("GET", path(), asAdmin());
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ page_size: expect.any(Number), auth_token: admin });
    const rows = res.json.data as { id: string; name: string }[];
    expect(res.json.page_size).toBe(rows.length);
    expect(rows).toContainEqual({ id, name: "Listed" });
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(["id", "name"]);
    // Any user of the account may read the list.
    expectSuccess(await curl("GET", path(), asAgent()), 200);
  });

  it("qubicle_queues.md › Queue Status", async () => {
    const id = await queue("With status", [users.agent1 ?? "", users.agent2 ?? ""]);
    const res = await curl("GET", path(`/${id}/status`), asAdmin());
    expectSuccess(res, 200, STATUS_SHAPE);
    expect(res.json).toMatchObject({ auth_token: admin, data: { active_recipient_count: 0, available_recipient_count: 0, stats: { recipient_count: 2, active_session_count: 0 } } });
    // A queue that is not there is Kazoo's bad identifier.
    expectError(await curl("GET", path(`/${"0".repeat(32)}/status`), asAdmin()), 404, "bad_identifier", { cause: "0".repeat(32), message: "bad identifier" });
  });

  it("qubicle_queues.md › Multiple Queue Status", async () => {
    const first = await queue("Status one");
    const second = await queue("Status two");
    const res = await getWithBody(path("/status"), asAdmin(), JSON.stringify({ data: { queue_ids: [first, second] } }));
    expectSuccess(res, 200);
    const data = res.json.data as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual([first, second].sort());
    expect(data[first]).toMatchObject(STATUS_SHAPE);
    expect(data[second]).toMatchObject(STATUS_SHAPE);
  });

  it("qubicle_queues.md › Queue Sessions", async () => {
    const id = await queue("No one waiting");
    const res = await curl("GET", path(`/${id}/sessions`), asAdmin());
    expectSuccess(res, 200, [{ queue_id: id, session_list: [] }]);
    expect(res.json.data).toEqual([{ queue_id: id, session_list: [] }]);
  });

  it("qubicle_queues.md › Queue Sessions (a caller waiting)", async () => {
    // A simulated caller dials the demo's Sales queue (5001); no recipient is logged in, so it waits.
    const sales = ((await curl("GET", path(), asAdmin())).json.data as { id: string; name: string }[]).find((q) => q.name === "Sales");
    const salesId = sales?.id ?? "";
    const call = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, { token: admin, data: { to: "5001", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "silence_stream://" } });
    expect(call.status, call.text).toBe(201);
    const res = await poll("the caller to wait in the queue", async () => {
      const answer = await curl("GET", path(`/${salesId}/sessions`), asAgent());
      return ((answer.json.data as { session_list: unknown[] }[] | undefined)?.[0]?.session_list.length ?? 0) > 0 ? answer : undefined;
    });
    expectSuccess(res, 200);
    const [entry] = res.json.data as { queue_id: string; session_list: Record<string, unknown>[] }[];
    expect(entry?.queue_id).toBe(salesId);
    expect(entry?.session_list).toEqual([
      {
        session_id: expect.any(String),
        call_id: call.body.data.id,
        queue_id: salesId,
        caller_id_name: "Casey Customer",
        caller_id_number: "+14155550100",
        queue_enter_time: expect.any(Number),
        state: "waiting",
      },
    ]);

    // Removing a waiting session is an admin's; it ends the caller's wait.
    const sessionId = String(entry?.session_list[0]?.session_id);
    const removeBody = JSON.stringify({ data: { action: "remove" } });
    expectError(await curl("POST", path(`/${salesId}/sessions/${sessionId}`), asAgent(), removeBody), 403, "forbidden");
    const removed = await curl("POST", path(`/${salesId}/sessions/${sessionId}`), asAdmin(), removeBody);
    expectSuccess(removed, 200, [{ queue_id: salesId, session_list: [] }]);
    expectError(await curl("POST", path(`/${salesId}/sessions/${sessionId}`), asAdmin(), removeBody), 404, "bad_identifier", { cause: sessionId });
  });

  it("qubicle_queues.md › Create Queue", async () => {
    const res = await curl("PUT", path(), asAdmin(), JSON.stringify({ data: { name: "Created as written" } }));
    expectSuccess(res, 201, { name: "Created as written", id: expect.stringMatching(/^[0-9a-f]{32}$/), members: {}, queue_router: "route_round_robin", queue_type: "queue_basic" });
    // Creating queues is an admin's: an agent is refused and nothing is made.
    const before = ((await curl("GET", path(), asAdmin())).json.data as unknown[]).length;
    expectError(await curl("PUT", path(), asAgent(), JSON.stringify({ data: { name: "Not by an agent" } })), 403, "forbidden");
    expect(((await curl("GET", path(), asAdmin())).json.data as unknown[]).length).toBe(before);
  });

  it("qubicle_queues.md › Create Queue (old field names)", async () => {
    const res = await curl("PUT", path(), asAdmin(), JSON.stringify({ data: { name: "Old names", agent_connect_timeout: 15, queue_timeout: 600 } }));
    expectSuccess(res, 201, { name: "Old names", ring_timeout: 15, timeout: 600 });
  });

  it("qubicle_queues.md › Get Queue", async () => {
    const id = await queue("Read back", [users.agent1 ?? ""]);
    const res = await curl("GET", path(`/${id}`), asAgent());
    expectSuccess(res, 200, {
      id,
      name: "Read back",
      members: { [users.agent1 ?? ""]: "" },
      queue_type: "queue_basic",
      queue_router: expect.any(String),
      timeout: expect.any(Number),
      ring_timeout: expect.any(Number),
      agent_wrapup_time: expect.any(Number),
      tick_time: expect.any(Number),
    });
  });

  it("qubicle_queues.md › Update Queue", async () => {
    const id = await queue("Before the PATCH");
    const res = await curl("PATCH", path(`/${id}`), asAdmin(), JSON.stringify({ data: { name: "After the PATCH", ring_timeout: 30 } }));
    expectSuccess(res, 200, { id, name: "After the PATCH", ring_timeout: 30 });
    expectError(await curl("PATCH", path(`/${id}`), asAgent(), JSON.stringify({ data: { name: "Agent's name" } })), 403, "forbidden");
    expect((await curl("GET", path(`/${id}`), asAdmin())).json.data).toMatchObject({ name: "After the PATCH" });
  });

  it("qubicle_queues.md › Queue Recipients", async () => {
    const id = await queue("Who is in it", [users.agent1 ?? "", users.agent2 ?? ""]);
    const res = await curl("GET", path(`/${id}/recipients`), asAdmin());
    expectSuccess(res, 200);
    const rows = res.json.data as { id: string }[];
    expect(rows.map((r) => r.id).sort()).toEqual([users.agent1, users.agent2].sort());
    for (const row of rows) expect(row).toEqual({ id: expect.any(String), permission_roles: ["agent"], permissions: expect.any(Array) });
  });

  it("qubicle_queues.md › Add Recipients", async () => {
    const id = await queue("Add to");
    const res = await curl("POST", path(`/${id}/recipients`), asAdmin(), JSON.stringify({ data: { action: "add", members: [users.agent1, users.agent2] } }));
    expectSuccess(res, 200, { id, members: { [users.agent1 ?? ""]: "", [users.agent2 ?? ""]: "" } });
    // Membership is an admin's to change.
    expectError(await curl("POST", path(`/${id}/recipients`), asAgent(), JSON.stringify({ data: { action: "add", members: [users.agent3] } })), 403, "forbidden");
    expect((await curl("GET", path(`/${id}`), asAdmin())).json.data).toMatchObject({ members: { [users.agent1 ?? ""]: "", [users.agent2 ?? ""]: "" } });
  });

  it("qubicle_queues.md › Remove Recipients", async () => {
    const id = await queue("Remove from", [users.agent1 ?? "", users.agent2 ?? ""]);
    const res = await curl("POST", path(`/${id}/recipients`), asAdmin(), JSON.stringify({ data: { action: "remove", members: [users.agent1] } }));
    expectSuccess(res, 200, { id });
    expect((res.json.data as { members: unknown }).members).toEqual({ [users.agent2 ?? ""]: "" });
  });

  it("qubicle_queues.md › Set Recipients", async () => {
    const id = await queue("Set exactly", [users.agent1 ?? ""]);
    const res = await curl("POST", path(`/${id}/recipients`), asAdmin(), JSON.stringify({ data: { action: "set", members: [users.agent3, users.agent2] } }));
    expectSuccess(res, 200, { id });
    // Set is exact and ordered: the round-robin order.
    expect(Object.keys((res.json.data as { members: Record<string, string> }).members)).toEqual([users.agent3, users.agent2]);
  });

  it("qubicle_queues.md › Delete Recipients", async () => {
    const id = await queue("Emptied", [users.agent1 ?? "", users.agent2 ?? ""]);
    expectError(await curl("DELETE", path(`/${id}/recipients`), asAgent()), 403, "forbidden");
    const res = await curl("DELETE", path(`/${id}/recipients`), asAdmin());
    expectSuccess(res, 200, { id });
    expect((res.json.data as { members: unknown }).members).toEqual({});
  });
});
