// Qubicle's quickstart guide (docs.2600hz.com/qubicle/doc/guides/quickstart_guide): its curl lines
// sent as written, headers and body, one after the other as the guide runs them (queue, callflow,
// user), each checked for status, envelope and data shape. The callflow line is written against
// /v1, which this server answers 410 by design (docs/design-notes.md, "Kazoo fidelity II"); the
// same line on /v2 is what the 410 tells the script's author to send, and is checked too.
//
// Examples: 3. Passing as documented: 2. Marked differs: 1 (/v1).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let token: string;
let agentToken: string;
let userId: string;
let callflowId: string;

function curl(method: string, url: string, headers: Record<string, string>, body?: string): Promise<CurlResult> {
  return send(api.url, method, url, headers, body);
}

/** The guide's `-d` without `-H "Content-Type: ..."`: curl sends its form type. */
const CURL_FORM = { "Content-Type": "application/x-www-form-urlencoded" };

beforeAll(async () => {
  api = await startApi();
  const login = await api.login("admin");
  ({ accountId, token } = login);
  // "A valid user that has a device configured": the demo's admin has a softphone and is not yet a
  // recipient.
  userId = login.ownerId;
  agentToken = (await api.login("agent1")).token;
  // "A valid extension that is set up in callflows": one routed to a user, to be sent to the queue.
  const callflow = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/callflows`, {
    token,
    data: { name: "Quickstart line", numbers: ["5099"], flow: { module: "user", data: { id: userId }, children: {} } },
  });
  expect(callflow.status, callflow.text).toBe(201);
  callflowId = callflow.body.data.id;
});

afterAll(async () => {
  await api.close();
});

/** The queue of the guide's first step, as that step makes it. */
async function configureQueue(name: string): Promise<CurlResult> {
  return curl("PUT", `/v2/accounts/${accountId}/qubicle_queues`, { "X-Auth-Token": token, "Content-Type": "application/json" }, JSON.stringify({ data: { name } }));
}

describe("quickstart_guide.md", () => {
  it("quickstart_guide.md › Configure the queue", async () => {
    const res = await configureQueue("Quickstart queue");
    // "a queue with default values": the spec's defaults, no members yet.
    expectSuccess(res, 201, { id: expect.stringMatching(/^[0-9a-f]{32}$/), name: "Quickstart queue", members: {}, queue_type: "queue_basic", queue_router: "route_round_robin", timeout: 3600, ring_timeout: 20 });
    expect(res.json.auth_token).toBe(token);
    // Configuring queues is an admin's.
    expectError(await curl("PUT", `/v2/accounts/${accountId}/qubicle_queues`, { "X-Auth-Token": agentToken, "Content-Type": "application/json" }, JSON.stringify({ data: { name: "Agent's" } })), 403, "forbidden");
  });

  it("quickstart_guide.md › Configure the Callflows document [differs: /v1 answers 410 gone, naming /v2]", async () => {
    const queueId = String(((await configureQueue("Callflow target")).json.data as { id: string }).id);
    const body = JSON.stringify({ data: { flow: { data: { queue_id: queueId }, module: "qubicle" } } });
    const v1 = await curl("PATCH", `/v1/accounts/${accountId}/callflows/${callflowId}`, { "X-Auth-Token": token, ...CURL_FORM }, body);
    expectError(v1, 410, "gone", { message: expect.stringContaining("/v2") });
    // Nothing changed.
    const unchanged = await curl("GET", `/v2/accounts/${accountId}/callflows/${callflowId}`, { "X-Auth-Token": token });
    expect(unchanged.json.data).toMatchObject({ flow: { module: "user" } });

    // The same line on /v2, still without a Content-Type of JSON, sends the extension to the queue;
    // callflows are an admin's to change.
    expectError(await curl("PATCH", `/v2/accounts/${accountId}/callflows/${callflowId}`, { "X-Auth-Token": agentToken, ...CURL_FORM }, body), 403, "forbidden");
    const v2 = await curl("PATCH", `/v2/accounts/${accountId}/callflows/${callflowId}`, { "X-Auth-Token": token, ...CURL_FORM }, body);
    expectSuccess(v2, 200, { id: callflowId, numbers: ["5099"], flow: { module: "qubicle", data: { queue_id: queueId } } });
  });

  it("quickstart_guide.md › Configure the user", async () => {
    const before = await curl("GET", `/v2/accounts/${accountId}/qubicle_recipients`, { "X-Auth-Token": token });
    expect((before.json.data as { id: string }[]).map((r) => r.id)).not.toContain(userId);
    // An agent may not make another user a recipient.
    expectError(await curl("PATCH", `/v2/accounts/${accountId}/users/${userId}`, { "X-Auth-Token": agentToken, "Content-Type": "application/json" }, '{"data":{"qubicle":{"enabled":"true"}}}'), 403, "forbidden");

    // As written: `enabled` is the text "true", which Qubicle reads as true.
    const res = await curl("PATCH", `/v2/accounts/${accountId}/users/${userId}`, { "X-Auth-Token": token, "Content-Type": "application/json" }, '{"data":{"qubicle":{"enabled":"true"}}}');
    expectSuccess(res, 200, { id: userId, callq: { enabled: true } });
    const after = await curl("GET", `/v2/accounts/${accountId}/qubicle_recipients`, { "X-Auth-Token": token });
    expect(after.json.data).toContainEqual({ id: userId, name: "admin" });
    // The new recipient can log in at once.
    const login = await curl("POST", `/v2/accounts/${accountId}/qubicle_recipients/${userId}/status`, { "X-Auth-Token": token, "Content-Type": "application/json" }, '{"data":{"status":"login"}}');
    expectSuccess(login, 200, { availability_state: "Away" });
  });
});
