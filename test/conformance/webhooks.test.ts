// Kazoo's webhooks.md, each request example sent as written (its headers and body, only the
// {PLACEHOLDERS} filled in), checked for the documented status, envelope and data shape.
// Examples in the document: 18 (available hooks, 2 sample lists, 4 samples of a hook, list,
// create, get, edit, patch, delete, 2 attempts, 2 bulk re-enables, the custom-data hook); as
// documented: 17, differs: 1 (the parking sample: parking events are not fired here). Beyond the document's examples: a hook on every documented
// event in each format, and the refusals of an agent.
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";
import { HookReceiver } from "../helpers/webhook-receiver.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;
let receiver: HookReceiver;

/** A curl line of the document against this server. */
function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

const json = { "Content-Type": "application/json" };
/** What `curl -d` sends when the line names no Content-Type. */
const curlForm = { "Content-Type": "application/x-www-form-urlencoded" };

beforeAll(async () => {
  api = await startApi({ config: { webhookRetryDelayMs: 50 } });
  receiver = await HookReceiver.start();
  ({ accountId, token: admin } = await api.login("admin"));
  ({ token: agent } = await api.login("agent1"));
});

afterAll(async () => {
  await api.close();
  await receiver.close();
});

/** The document's create example for `{SERVER}` = this server's host. */
const newCalls = (file: string): string =>
  `{"data": {
        "name": "New Calls",
        "uri": "http://my.127.0.0.1/calls/${file}",
        "http_verb": "post",
        "hook": "channel_create",
        "retries":3
    }}`;

async function createHook(body: string): Promise<string> {
  const res = await curl("PUT", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": admin, ...json }, body);
  expectSuccess(res, 201);
  return String((res.json.data as { id: string }).id);
}

/** A hook auto-disabled as the dispatcher leaves one. */
async function autoDisabled(): Promise<string> {
  const id = await createHook(newCalls("new.php"));
  const hooks = await api.server.store.account(accountId, "webhooks");
  const doc = hooks.get(id);
  if (!doc) throw new Error("the hook just created is gone");
  await hooks.update(id, { ...doc.data, enabled: false, disable_reason: "too many failed attempts" });
  return id;
}

/** Waits until `check` holds for the account's attempt rows. */
async function attemptsUntil(path: string, check: (rows: Record<string, unknown>[]) => boolean): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 400; i++) {
    const res = await curl("GET", path, { "X-Auth-Token": admin });
    const rows = res.json.data as Record<string, unknown>[];
    if (check(rows)) return rows;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`attempts never came: ${path}`);
}

describe("webhooks.md", () => {
  it("webhooks.md › Fetch available webhooks on the system", async () => {
    const res = await curl("GET", "/v2/webhooks", { "Content-Type": "application/json", "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    const data = res.json.data as { id: string; name: string; description: string; modifiers?: Record<string, { type: string; items: unknown }> }[];
    for (const hook of data) expect(hook).toMatchObject({ id: expect.any(String), name: expect.any(String), description: expect.any(String) });
    const byId = new Map(data.map((hook) => [hook.id, hook]));
    expect(byId.get("channel_create")?.name).toBe("Channel Create");
    expect(byId.get("channel_answer")?.name).toBe("Channel Answer");
    expect(byId.get("channel_bridge")?.name).toBe("Channel Bridge");
    expect(byId.get("channel_destroy")?.name).toBe("Channel Destroy");
    expect(byId.get("parking")?.name).toBe("Call Parking");
    expect(byId.get("sms")?.name).toBe("SMS");
    expect(byId.get("object")?.modifiers).toMatchObject({
      action: { type: "array", items: ["all", "doc_created", "doc_edited", "doc_deleted"] },
      type: { type: "array", items: expect.arrayContaining(["all", "callflow", "device", "media", "user", "call_recording"]) },
    });
    const notifications = byId.get("notifications")?.modifiers?.type;
    expect(notifications?.type).toBe("object");
    for (const type of ["all", "missed_call", "voicemail_new", "voicemail_full", "register", "deregister", "inbound_fax", "inbound_fax_error", "outbound_fax_error"]) {
      expect(notifications?.items).toHaveProperty(type, { friendly_name: expect.any(String), description: expect.any(String) });
    }
  });

  it("webhooks.md › Get sample payloads of all webhook events", async () => {
    const res = await curl("GET", "/v2/webhooks/samples", { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json.data).toEqual(expect.arrayContaining(["webhooks_channel_answer", "webhooks_channel_bridge", "webhooks_channel_create", "webhooks_channel_destroy", "webhooks_notifications", "webhooks_object"]));
  });

  it("webhooks.md › Get sample payloads of all webhook events (Example)", async () => {
    // As in Kazoo, the samples need no token.
    const res = await curl("GET", "/v2/webhooks/samples", { "Content-Type": "application/json" });
    expectSuccess(res, 200);
    // Kazoo's list but parking (never fired here), and the call-queue hooks.
    expect(res.json.data).toEqual([
      "webhooks_callq_queue_join",
      "webhooks_callq_queue_leave",
      "webhooks_callq_recipient_away",
      "webhooks_callq_recipient_delivered",
      "webhooks_callq_recipient_login",
      "webhooks_callq_recipient_logout",
      "webhooks_callq_recipient_offer",
      "webhooks_callq_recipient_ready",
      "webhooks_callq_recipient_rejected",
      "webhooks_channel_answer",
      "webhooks_channel_bridge",
      "webhooks_channel_create",
      "webhooks_channel_destroy",
      "webhooks_notifications",
      "webhooks_object",
    ]);
  });

  it("webhooks.md › Get sample payloads of a webhook event", async () => {
    const res = await curl("GET", "/v2/webhooks/samples/webhooks_channel_destroy", { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json.data).toEqual([
      expect.objectContaining({
        hook_event: "channel_destroy",
        call_direction: "inbound",
        timestamp: expect.any(Number),
        account_id: expect.any(String),
        request: expect.any(String),
        to: expect.any(String),
        from: expect.any(String),
        call_id: expect.any(String),
        other_leg_call_id: expect.any(String),
        caller_id_name: expect.any(String),
        caller_id_number: expect.any(String),
        callee_id_name: expect.any(String),
        callee_id_number: expect.any(String),
        hangup_cause: "NORMAL_CLEARING",
        hangup_code: "sip:200",
      }),
    ]);
  });

  it("webhooks.md › Get sample payloads of a webhook event (every sample is what the AsyncAPI document describes)", async () => {
    const asyncapi = (await curl("GET", "/v2/asyncapi.json")).json as { channels: { webhooks: { messages: Record<string, { payload: object }> } } };
    const ajv = new Ajv({ strict: false, allErrors: true });
    const ids = (await curl("GET", "/v2/webhooks/samples")).json.data as string[];
    for (const id of ids) {
      const hook = id.replace(/^webhooks_/, "");
      const schema = asyncapi.channels.webhooks.messages[hook]?.payload;
      expect(schema, hook).toBeDefined();
      const validate = ajv.compile(schema ?? {});
      const payloads = (await curl("GET", `/v2/webhooks/samples/${id}`)).json.data as unknown[];
      expect(payloads.length).toBeGreaterThan(0);
      for (const payload of payloads) expect(validate(payload) ? [] : validate.errors, `${id} ${JSON.stringify(payload)}`).toEqual([]);
    }
  });

  it("webhooks.md › Get sample payloads of a webhook event (filter_event_name)", async () => {
    // As written the document names `webhook_notifications`, a sample that exists in no version.
    const written = await curl("GET", "/v2/webhooks/samples/webhook_notifications?filter_event_name=missed_call", { "Content-Type": "application/json" });
    expectError(written, 404, "bad_identifier", { cause: "webhook_notifications" });
    const res = await curl("GET", "/v2/webhooks/samples/webhooks_notifications?filter_event_name=missed_call", { "Content-Type": "application/json" });
    expectSuccess(res, 200);
    expect(res.json.data).toEqual([expect.objectContaining({ hook_event: "notifications", event_name: "missed_call", type: "missed_call", call_id: expect.any(String) })]);
  });

  it("webhooks.md › Get sample payloads of a webhook event (filter_action)", async () => {
    const res = await curl("GET", "/v2/webhooks/samples/webhooks_object?filter_action=doc_created", { "Content-Type": "application/json" });
    expectSuccess(res, 200);
    expect(res.json.data).toEqual([{ hook_event: "object", timestamp: expect.any(Number), account_id: expect.any(String), action: "doc_created", type: "device", id: expect.any(String) }]);
  });

  it("webhooks.md › Get sample payloads of a webhook event (Example) [differs: parking is not fired here]", async () => {
    const res = await curl("GET", "/v2/webhooks/samples/webhooks_parking", { "Content-Type": "application/json" });
    expectError(res, 404, "bad_identifier", { cause: "webhooks_parking", message: "bad identifier" });
  });

  it("webhooks.md › List webhooks", async () => {
    const id = await autoDisabled();
    const res = await curl("GET", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows.find((row) => row.id === id)).toEqual({
      id,
      name: "New Calls",
      hook: "channel_create",
      uri: "http://my.127.0.0.1/calls/new.php",
      enabled: false,
      disable_reason: "too many failed attempts",
    });
  });

  it("webhooks.md › Create webhook", async () => {
    const res = await curl("PUT", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": admin, ...json }, newCalls("new.php"));
    expectSuccess(res, 201, {
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      name: "New Calls",
      uri: "http://my.127.0.0.1/calls/new.php",
      http_verb: "post",
      hook: "channel_create",
      retries: 3,
      enabled: true,
      format: "form-data",
    });
    const refused = await curl("PUT", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": agent, ...json }, newCalls("new.php"));
    expectError(refused, 403, "forbidden", { message: "forbidden" });
  });

  it("webhooks.md › Create webhook (each documented hook in each format)", async () => {
    const hooks: [string, Record<string, unknown>][] = [
      ["channel_create", {}],
      ["channel_answer", {}],
      ["channel_bridge", {}],
      ["channel_destroy", {}],
      ["parking", {}],
      ["sms", {}],
      ["object", { custom_data: { type: "all", action: "all" } }],
      ["notifications", { custom_data: { type: "missed_call" } }],
      ["notifications", { custom_data: { type: "all" } }],
    ];
    for (const [hook, extra] of hooks) {
      for (const format of ["form-data", "json"]) {
        const body = JSON.stringify({ data: { name: `${hook} ${format}`, uri: "http://my.127.0.0.1/hook", hook, format, ...extra } });
        const res = await curl("PUT", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": admin, ...json }, body);
        expectSuccess(res, 201, { hook, format, http_verb: "post", retries: 2, enabled: true, ...extra });
      }
    }
  });

  it("webhooks.md › Get details of the webhook", async () => {
    const id = await createHook(newCalls("new.php"));
    const res = await curl("GET", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, name: "New Calls", uri: "http://my.127.0.0.1/calls/new.php", http_verb: "post", hook: "channel_create", retries: 3, enabled: true });
  });

  it("webhooks.md › Edit webhook", async () => {
    const id = await createHook(newCalls("new.php"));
    const res = await curl("POST", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": admin, ...json }, newCalls("new_calls.php"));
    expectSuccess(res, 200, { id, name: "New Calls", uri: "http://my.127.0.0.1/calls/new_calls.php", hook: "channel_create", retries: 3 });
    const refused = await curl("POST", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": agent, ...json }, newCalls("agent.php"));
    expectError(refused, 403, "forbidden");
  });

  it("webhooks.md › Patch webhook", async () => {
    const id = await autoDisabled();
    const res = await curl("PATCH", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": admin, ...json }, '{"data":{"enabled":true}}');
    expectSuccess(res, 200, { id, name: "New Calls", enabled: true });
    expect(res.json.data).not.toHaveProperty("disable_reason");
    const refused = await curl("PATCH", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": agent, ...json }, '{"data":{"enabled":false}}');
    expectError(refused, 403, "forbidden");
  });

  it("webhooks.md › Delete a webhook", async () => {
    const id = await createHook(newCalls("new.php"));
    const refused = await curl("DELETE", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": agent });
    expectError(refused, 403, "forbidden");
    const res = await curl("DELETE", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, name: "New Calls" });
    expectError(await curl("GET", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id });
  });

  it("webhooks.md › List Webhook Attempts", async () => {
    // An object hook on users: one to a port nothing listens on (a client error), one answered 200.
    const hook = async (uri: string): Promise<string> =>
      createHook(JSON.stringify({ data: { name: "Users", uri, hook: "object", retries: 0, custom_data: { type: "user", action: "doc_created" } } }));
    const failing = await hook("http://127.0.0.1:9/users");
    const answered = await hook(`${receiver.url}/users`);
    const made = await curl("PUT", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": admin, ...json }, '{"data":{"first_name":"Hook","last_name":"Attempts"}}');
    expectSuccess(made, 201);
    const rows = await attemptsUntil(`/v2/accounts/${accountId}/webhooks/attempts`, (r) => r.some((a) => a.hook_id === failing) && r.some((a) => a.hook_id === answered));
    const res = await curl("GET", `/v2/accounts/${accountId}/webhooks/attempts`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    // Kazoo's source writes `retries_left` (the document's example spells it "retries left").
    expect(rows.find((a) => a.hook_id === failing)).toMatchObject({
      hook_id: failing,
      client_error: expect.any(String),
      reason: "kazoo http client error",
      result: "failure",
      retries_left: 0,
      timestamp: expect.any(Number),
    });
    expect(rows.find((a) => a.hook_id === answered)).toMatchObject({ hook_id: answered, result: "success", timestamp: expect.any(Number) });
    expect(Number(rows[0]?.timestamp)).toBeGreaterThan(63_000_000_000);
  });

  it("webhooks.md › List attempts for a specific attempt", async () => {
    const id = await createHook(JSON.stringify({ data: { name: "Devices", uri: `${receiver.url}/devices`, hook: "object", custom_data: { type: "device", action: "all" } } }));
    const made = await curl("PUT", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": admin, ...json }, '{"data":{"name":"Hooked phone"}}');
    expectSuccess(made, 201);
    const rows = await attemptsUntil(`/v2/accounts/${accountId}/webhooks/${id}/attempts`, (r) => r.length > 0);
    expect(rows.every((a) => a.hook_id === id)).toBe(true);
    expect(rows[0]).toMatchObject({ hook_id: id, result: "success", timestamp: expect.any(Number) });
    const res = await curl("GET", `/v2/accounts/${accountId}/webhooks/${id}/attempts`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
  });

  it("webhooks.md › Re-enable auto-disabled hooks in bulk (an account's hooks)", async () => {
    const id = await autoDisabled();
    const refused = await curl("PATCH", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": agent, ...curlForm }, '{"data":{"re-enable":true}}');
    expectError(refused, 403, "forbidden");
    const res = await curl("PATCH", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": admin, ...curlForm }, '{"data":{"re-enable":true}}');
    expectSuccess(res, 200);
    const read = await curl("GET", `/v2/accounts/${accountId}/webhooks/${id}`, { "X-Auth-Token": admin });
    expect(read.json.data).toMatchObject({ enabled: true });
    expect(read.json.data).not.toHaveProperty("disable_reason");
  });

  it("webhooks.md › Re-enable auto-disabled hooks in bulk (an account's and descendant accounts' hooks)", async () => {
    const id = await autoDisabled();
    const refused = await curl("PATCH", `/v2/accounts/${accountId}/descendants/webhooks`, { "X-Auth-Token": agent, ...curlForm }, '{"data":{"re-enable":true}}');
    expectError(refused, 403, "forbidden");
    const res = await curl("PATCH", `/v2/accounts/${accountId}/descendants/webhooks`, { "X-Auth-Token": admin, ...curlForm }, '{"data":{"re-enable":true}}');
    expectSuccess(res, 200);
    expect(res.json.data).toEqual(expect.arrayContaining([expect.objectContaining({ id, enabled: true })]));
    const bad = await curl("PATCH", `/v2/accounts/${accountId}/descendants/webhooks`, { "X-Auth-Token": admin, ...curlForm }, '{"data":{}}');
    expectError(bad, 400, "validation error", { "re-enable": { required: expect.any(Object) } });
  });

  it("webhooks.md › Hook Specific Custom Data", async () => {
    const body = JSON.stringify({ data: { name: "User edited webhook", hook: "object", custom_data: { type: "user", action: "doc_edited" }, uri: `${receiver.url}/edited` } });
    const res = await curl("PUT", `/v2/accounts/${accountId}/webhooks`, { "X-Auth-Token": admin, ...json }, body);
    expectSuccess(res, 201, { name: "User edited webhook", hook: "object", custom_data: { type: "user", action: "doc_edited" } });
    // The selectors narrow the hook: a device edit and a user creation do not fire it, a user edit does.
    const user = await curl("PUT", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": admin, ...json }, '{"data":{"first_name":"Edited","last_name":"Hook"}}');
    const userId = String((user.json.data as { id: string }).id);
    await curl("PATCH", `/v2/accounts/${accountId}/users/${userId}`, { "X-Auth-Token": admin, ...json }, '{"data":{"first_name":"Edited again"}}');
    for (let i = 0; i < 400 && receiver.at("/edited").length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(receiver.at("/edited").map((p) => [p.type, p.action, p.id])).toEqual([["user", "doc_edited", userId]]);
  });
});
