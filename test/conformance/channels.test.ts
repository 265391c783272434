// Kazoo's channels.md, each request example sent as written (its headers and body, only the
// {PLACEHOLDERS} filled in) against a server whose calls are real call-engine legs between fake
// phones, checked for the documented status, envelope and data shape.
// Examples in the document: 8 (system-wide list, account list, user list, device list, details,
// the transfer action, the metaflow transfer, the metaflow PUT); as documented: 5, differs: 3
// (no system-wide list: there is no super-duper admin; metaflows are Konami Pro's, not served).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApi } from "../helpers/api.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { connected, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let t: CallApi;
let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;
const users = new Map<string, string>();
const devices = new Map<string, string>();

/** A curl line of the document against this server. */
function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

const headers = (token: string): Record<string, string> => ({ "Content-Type": "application/json", "X-Auth-Token": token });

beforeAll(async () => {
  t = await startCallApi();
  ({ api, accountId, token: admin } = t);
  ({ token: agent } = await api.login("agent1"));
  for (const row of (await api.call<{ id: string; username: string }[]>("GET", `${t.base}/users`, { token: admin })).body.data) users.set(row.username, row.id);
  for (const row of (await api.call<{ id: string; username: string }[]>("GET", `${t.base}/devices`, { token: admin })).body.data) devices.set(row.username, row.id);
  // The document transfers to 2600: a number of this account here, ringing agent2.
  const callflow = await api.call("PUT", `${t.base}/callflows`, {
    token: admin,
    data: { name: "Transfers", numbers: ["2600"], flow: { module: "user", data: { id: users.get("agent2") } } },
  });
  expect(callflow.status, callflow.text).toBe(201);
});

afterAll(async () => {
  await t?.close();
});

/** admin (1001) calls agent1 (1002), answered, media up. */
async function bridgedCall(): Promise<{ caller: PhoneCall; agent: PhoneCall }> {
  const caller = await t.phone("admin").dial("1002");
  const answering = await t.phone("agent1").incoming();
  answering.ring();
  await answering.answer();
  await caller.reaches("talking");
  await connected(caller, answering);
  return { caller, agent: answering };
}

async function hangUp(call: PhoneCall): Promise<void> {
  call.hangup();
  await until(() => api.server.calls.channels.size === 0, "every channel to end");
}

const ROW = {
  answered: expect.any(Boolean),
  authorizing_id: expect.any(String),
  authorizing_type: "device",
  destination: expect.any(String),
  direction: expect.stringMatching(/^(inbound|outbound)$/),
  other_leg: expect.any(String),
  owner_id: expect.any(String),
  presence_id: expect.any(String),
  timestamp: expect.any(Number),
  username: expect.any(String),
  uuid: expect.any(String),
};

describe("channels.md", () => {
  it("channels.md › Fetch active channels system wide. [differs: no super-duper admin here]", async () => {
    const res = await curl("GET", "/v2/channels", headers(admin));
    expectError(res, 404, "not_found", { message: "not found" });
  });

  it("channels.md › Fetch active channels for an account", async () => {
    const { caller, agent: answered } = await bridgedCall();
    const res = await curl("GET", `/v2/accounts/${accountId}/channels`, headers(admin));
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin });
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows.map((row) => row.uuid).sort()).toEqual([caller.callId, answered.callId].sort());
    for (const row of rows) expect(row).toMatchObject(ROW);
    expect(rows.find((row) => row.uuid === answered.callId)).toMatchObject({
      answered: true,
      authorizing_id: devices.get("agent1"),
      direction: "outbound",
      other_leg: caller.callId,
      owner_id: users.get("agent1"),
      username: "agent1",
    });
    expect(Number(rows[0]?.timestamp)).toBeGreaterThan(63_000_000_000);
    // Any user of the account reads its channels; another account's token does not.
    expectSuccess(await curl("GET", `/v2/accounts/${accountId}/channels`, headers(agent)), 200);
    await hangUp(caller);
  });

  it("channels.md › Fetch channels for a user or device (user)", async () => {
    const { caller, agent: answered } = await bridgedCall();
    const res = await curl("GET", `/v2/accounts/${accountId}/users/${users.get("agent1")}/channels`, headers(admin));
    expectSuccess(res, 200);
    expect(res.json.data).toEqual([expect.objectContaining({ ...ROW, uuid: answered.callId, owner_id: users.get("agent1") })]);
    await hangUp(caller);
  });

  it("channels.md › Fetch channels for a user or device (device)", async () => {
    const { caller } = await bridgedCall();
    const res = await curl("GET", `/v2/accounts/${accountId}/devices/${devices.get("admin")}/channels`, headers(admin));
    expectSuccess(res, 200);
    expect(res.json.data).toEqual([expect.objectContaining({ ...ROW, uuid: caller.callId, authorizing_id: devices.get("admin"), direction: "inbound", destination: "1002" })]);
    await hangUp(caller);
  });

  it("channels.md › Fetch a channel's details", async () => {
    const { caller, agent: answered } = await bridgedCall();
    const res = await curl("GET", `/v2/accounts/${accountId}/channels/${answered.callId}`, headers(admin));
    expectSuccess(res, 200, { ...ROW, uuid: answered.callId, other_leg: caller.callId });
    const missing = await curl("GET", `/v2/accounts/${accountId}/channels/no-such-call`, headers(admin));
    expectError(missing, 404, "bad_identifier", { cause: "no-such-call", message: "bad identifier" });
    await hangUp(caller);
  });

  it("channels.md › Execute an application against a Channel", async () => {
    const { caller, agent: answered } = await bridgedCall();
    const example = '{"data": {"action": "transfer", "target": "2600", "takeback_dtmf": "*1", "moh": "media_id" }}';
    // A user who is not in the call may not command it; the call stays as it was.
    const { token: outsider } = await api.login("agent2");
    const refused = await curl("POST", `/v2/accounts/${accountId}/channels/${answered.callId}`, headers(outsider), example);
    expectError(refused, 403, "forbidden", { message: "forbidden" });
    expectError(await curl("POST", `/v2/accounts/${accountId}/channels/${caller.callId}`, headers(outsider), '{"data":{"action":"hangup"}}'), 403, "forbidden");
    expect(answered.state).toBe("talking");
    const res = await curl("POST", `/v2/accounts/${accountId}/channels/${answered.callId}`, headers(admin), example);
    expectSuccess(res, 202);
    expect(res.json.data).toBe("transfer initiated");
    // Blind (the default): the channel's party, the caller, goes on to 2600, which rings agent2.
    await answered.reaches("ended");
    const target = await t.phone("agent2").incoming();
    await target.answer();
    await until(() => target.leg.state === "connected", "the target's media");
    const detail = await curl("GET", `/v2/accounts/${accountId}/channels/${caller.callId}`, headers(admin));
    expect(detail.json.data).toMatchObject({ other_leg: target.callId });
    await hangUp(caller);
  });

  it("channels.md › Execute an application against a Channel (Transfer) [differs: metaflows are not served]", async () => {
    const { caller, agent: answered } = await bridgedCall();
    const res = await curl(
      "POST",
      `/v2/accounts/${accountId}/channels/${answered.callId}`,
      headers(admin),
      '{"data":{"module":"transfer","data":{"target":"2600","Transfer-Type":"blind","leg":"bleg"}},"action":"metaflow"}',
    );
    expectError(res, 400, "invalid data", { action: { enum: { value: "metaflow" } } });
    // Nothing was done: the call is still up.
    expectSuccess(await curl("GET", `/v2/accounts/${accountId}/channels/${answered.callId}`, headers(admin)), 200);
    await hangUp(caller);
  });

  it("channels.md › Execute an application against a Channel (by a user in the call)", async () => {
    const { caller, agent: answered } = await bridgedCall();
    // agent1 answered: their own leg and the caller's leg bridged to it are theirs to command.
    const res = await curl("POST", `/v2/accounts/${accountId}/channels/${caller.callId}`, headers(agent), '{"data": {"action": "hangup"}}');
    expectSuccess(res, 202);
    expect(res.json.data).toBe("hangup initiated");
    await answered.reaches("ended");
    await until(() => api.server.calls.channels.size === 0, "every channel to end");
  });

  it("channels.md › Put a feature (metaflow) on a channel [differs: metaflows are not served]", async () => {
    const { caller, agent: answered } = await bridgedCall();
    const res = await curl("PUT", `/v2/accounts/${accountId}/channels/${answered.callId}`, headers(admin), '{"action":"metaflow", "data": {"data": { "module": "hangup" }}}');
    expectError(res, 400, "invalid data", { action: { enum: { value: "metaflow" } } });
    expectSuccess(await curl("GET", `/v2/accounts/${accountId}/channels/${answered.callId}`, headers(admin)), 200);
    await hangUp(caller);
  });
});
