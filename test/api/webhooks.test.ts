import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConformance } from "../helpers/conformance.js";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";

const NOTIFICATION_TYPES = ["missed_call", "voicemail_new", "voicemail_full", "inbound_fax", "inbound_fax_error", "outbound_fax_error", "register", "deregister"];
const HOOKS = [
  "channel_create",
  "channel_answer",
  "channel_bridge",
  "channel_destroy",
  "parking",
  "notifications",
  "object",
  "sms",
  "callq_queue_join",
  "callq_queue_leave",
  "callq_recipient_login",
  "callq_recipient_logout",
  "callq_recipient_ready",
  "callq_recipient_away",
  "callq_recipient_offer",
  "callq_recipient_delivered",
  "callq_recipient_rejected",
  // Local additions (issues 18, 19 and 20), marked local_addition in the catalogue.
  "callq_recipient_disposition",
  "callq_queue_alert",
  "callq_queue_callback",
  "user_presence",
  "training_run",
];

describeConformance({
  name: "webhooks",
  field: "name",
  adminWrites: true,
  valid: (n) => ({ name: `hook ${n}`, hook: "channel_create", uri: `https://hooks.example.com/calls/${n}` }),
  invalid: [
    { title: "a missing name", data: { hook: "channel_create", uri: "https://example.com/" }, field: "name", rule: "required" },
    { title: "an empty name", data: { name: "", hook: "channel_create", uri: "https://example.com/" }, field: "name", rule: "minLength" },
    { title: "a name over 128 characters", data: { name: "x".repeat(129), hook: "channel_create", uri: "https://example.com/" }, field: "name", rule: "maxLength" },
    { title: "a missing hook", data: { name: "h", uri: "https://example.com/" }, field: "hook", rule: "required" },
    { title: "an unknown hook", data: { name: "h", hook: "channel_explode", uri: "https://example.com/" }, field: "hook", rule: "enum" },
    { title: "a missing uri", data: { name: "h", hook: "channel_create" }, field: "uri", rule: "required" },
    { title: "an ftp uri", data: { name: "h", hook: "channel_create", uri: "ftp://example.com/x" }, field: "uri", rule: "pattern" },
    { title: "a uri that is not absolute", data: { name: "h", hook: "channel_create", uri: "example.com/hook" }, field: "uri", rule: "format" },
    { title: "an unknown http_verb", data: { name: "h", hook: "channel_create", uri: "https://example.com/", http_verb: "put" }, field: "http_verb", rule: "enum" },
    { title: "retries above 4", data: { name: "h", hook: "channel_create", uri: "https://example.com/", retries: 5 }, field: "retries", rule: "maximum" },
    { title: "negative retries", data: { name: "h", hook: "channel_create", uri: "https://example.com/", retries: -1 }, field: "retries", rule: "minimum" },
    { title: "fractional retries", data: { name: "h", hook: "channel_create", uri: "https://example.com/", retries: 1.5 }, field: "retries", rule: "type" },
    { title: "a non-boolean enabled", data: { name: "h", hook: "channel_create", uri: "https://example.com/", enabled: "yes" }, field: "enabled", rule: "type" },
    { title: "custom_data with a non-string value", data: { name: "h", hook: "channel_create", uri: "https://example.com/", custom_data: { n: 1 } }, field: "custom_data.n", rule: "type" },
    { title: "an unknown format", data: { name: "h", hook: "channel_create", uri: "https://example.com/", format: "xml" }, field: "format", rule: "enum" },
    {
      title: "a notification hook of an unknown type",
      data: { name: "h", hook: "notifications", uri: "https://example.com/", custom_data: { type: "birthday" } },
      field: "custom_data.type",
      rule: "enum",
    },
    {
      title: "a notification hook without a type",
      data: { name: "h", hook: "notifications", uri: "https://example.com/" },
      field: "custom_data.type",
      rule: "required",
    },
  ],
});

describe("webhooks: the hosted service's shapes", () => {
  let api: TestApi;
  let token: string;
  let accountId: string;
  let base: string;
  beforeAll(async () => {
    api = await startApi();
    ({ token, accountId } = await api.login("admin"));
    base = `/v2/accounts/${accountId}/webhooks`;
  });
  afterAll(async () => {
    await api.close();
  });

  const hook = (name: string, extra: Record<string, unknown> = {}) => ({ name, hook: "channel_answer", uri: "https://hooks.example.com/in", ...extra });
  const create = async (data: Record<string, unknown>) => {
    const res = await api.call<Record<string, unknown>>("PUT", base, { token, data });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  /** What the auto-disabler of a later issue will do: a direct store write. */
  const autoDisable = async (id: unknown) => {
    const hooks = await api.server.store.account(accountId, "webhooks");
    const doc = hooks.get(String(id));
    expect(doc).toBeDefined();
    if (doc) await hooks.update(doc.id, { ...doc.data, enabled: false, disable_reason: "too many failed attempts" });
  };
  const read = async (id: unknown) => (await api.call<Record<string, unknown>>("GET", `${base}/${String(id)}`, { token })).body.data;

  it("shows in each call-queue recipient sample a transition the queue engine makes (a login leads to Away)", async () => {
    const transitions: Record<string, [string, string]> = {
      login: ["Not-Logged-In", "Away"],
      logout: ["Ready", "Not-Logged-In"],
      ready: ["Away", "Ready"],
      away: ["Ready", "Away"],
      offer: ["Ready", "Call-Offer"],
      delivered: ["Call-Offer", "On-A-Call"],
      rejected: ["Call-Offer", "Ready"],
    };
    for (const [hookName, [from, to]] of Object.entries(transitions)) {
      const res = await api.call<Record<string, unknown>[]>("GET", `/v2/webhooks/samples/webhooks_callq_recipient_${hookName}`, {});
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual([expect.objectContaining({ hook_event: `callq_recipient_${hookName}`, previous_state: from, availability_state: to })]);
    }
  });

  it("fills Kazoo's defaults: http_verb post, retries 2, enabled true, format form-data", async () => {
    const created = await create(hook("defaults"));
    expect(created).toMatchObject({ http_verb: "post", retries: 2, enabled: true, format: "form-data" });
    expect(await read(created.id)).toEqual(created);
  });

  it("takes Kazoo's format values, keeps the old `form` as an alias of form-data, refuses others", async () => {
    expect(await create(hook("kazoo form", { format: "form-data" }))).toMatchObject({ format: "form-data" });
    expect(await create(hook("json", { format: "json" }))).toMatchObject({ format: "json" });
    expect(await create(hook("old form", { format: "form" }))).toMatchObject({ format: "form-data" });
    const bad = await api.call("PUT", base, { token, data: hook("xml", { format: "xml" }) });
    expect(bad.status).toBe(400);
  });

  it("keeps every documented field as sent", async () => {
    const data = hook("full", {
      hook: "notifications",
      http_verb: "get",
      retries: 0,
      enabled: false,
      format: "json",
      custom_data: { type: "missed_call", tenant: "acme" },
      include_subaccounts: true,
      include_internal_legs: false,
      type: "account",
      action: "doc_created",
    });
    expect(await create(data)).toMatchObject(data);
    expect((await create(hook("four", { retries: 4 }))).retries).toBe(4);
  });

  it("accepts http and https URIs, in any case, with path and query", async () => {
    for (const uri of ["http://10.0.0.5:8080/hook", "https://example.com/a/b?c=d#e", "HTTPS://EXAMPLE.COM"]) {
      expect((await create(hook("uri", { uri }))).uri).toBe(uri);
    }
    for (const uri of ["mailto:ops@example.com", "https://", "", "https://exa mple.com/"]) {
      const res = await api.call<Record<string, Record<string, unknown>>>("PUT", base, { token, data: hook("bad uri", { uri }) });
      expect(res.status, uri).toBe(400);
      expect(Object.keys(res.body.data.uri ?? {}).some((rule) => rule === "format" || rule === "pattern"), uri).toBe(true);
    }
  });

  it("takes every notification type the hosted service knows", async () => {
    for (const type of NOTIFICATION_TYPES) {
      const created = await create(hook(`notify ${type}`, { hook: "notifications", custom_data: { type } }));
      expect(created.custom_data).toEqual({ type });
    }
  });

  it("lists rows of {id, hook, name, uri, enabled}, with disable_reason once auto-disabled", async () => {
    const created = await create(hook("row"));
    await autoDisable(created.id);
    const res = await api.call<Record<string, unknown>[]>("GET", base, { token, query: { paginate: "false" } });
    expect(res.body.data.find((r) => r.id === created.id)).toEqual({
      id: created.id,
      hook: "channel_answer",
      name: "row",
      uri: "https://hooks.example.com/in",
      enabled: false,
      disable_reason: "too many failed attempts",
    });
  });

  describe("disable_reason is read-only", () => {
    it("ignores a client's disable_reason on create, update and PATCH", async () => {
      const created = await create(hook("sneaky", { enabled: false, disable_reason: "I say so" }));
      expect(created).not.toHaveProperty("disable_reason");
      const path = `${base}/${String(created.id)}`;
      const updated = await api.call<Record<string, unknown>>("POST", path, { token, data: hook("sneaky", { enabled: false, disable_reason: "still me" }) });
      expect(updated.status).toBe(200);
      expect(updated.body.data).not.toHaveProperty("disable_reason");
      const patched = await api.call<Record<string, unknown>>("PATCH", path, { token, data: { disable_reason: "and again" } });
      expect(patched.status).toBe(200);
      expect(patched.body.data).not.toHaveProperty("disable_reason");
    });

    it("keeps the auto-disabler's reason across edits that leave the hook disabled", async () => {
      const created = await create(hook("flaky"));
      await autoDisable(created.id);
      const path = `${base}/${String(created.id)}`;
      const patched = await api.call<Record<string, unknown>>("PATCH", path, { token, data: { name: "flaky, renamed", disable_reason: "fixed, honest" } });
      expect(patched.body.data).toMatchObject({ name: "flaky, renamed", enabled: false, disable_reason: "too many failed attempts" });
      const updated = await api.call<Record<string, unknown>>("POST", path, { token, data: hook("flaky again", { enabled: false }) });
      expect(updated.body.data).toMatchObject({ enabled: false, disable_reason: "too many failed attempts" });
    });

    it("clears the reason when the hook is enabled again", async () => {
      const created = await create(hook("revived"));
      await autoDisable(created.id);
      const res = await api.call<Record<string, unknown>>("PATCH", `${base}/${String(created.id)}`, { token, data: { enabled: true } });
      expect(res.status).toBe(200);
      expect(res.body.data.enabled).toBe(true);
      expect(res.body.data).not.toHaveProperty("disable_reason");
      expect(await read(created.id)).not.toHaveProperty("disable_reason");
    });
  });

  describe("PATCH on the collection re-enables auto-disabled hooks", () => {
    it("re-enables every hook with a disable_reason, answers them, and leaves hooks a user disabled", async () => {
      const failing = [await create(hook("failing 1")), await create(hook("failing 2"))];
      for (const h of failing) await autoDisable(h.id);
      const paused = await create(hook("paused by hand", { enabled: false }));
      const running = await create(hook("running"));

      // Earlier tests leave auto-disabled hooks behind; they are re-enabled too.
      const list = await api.call<Record<string, unknown>[]>("GET", base, { token, query: { paginate: "false" } });
      const autoDisabled = list.body.data.filter((r) => r.disable_reason !== undefined).map((r) => r.id);
      expect(autoDisabled).toEqual(expect.arrayContaining(failing.map((h) => h.id)));
      expect(autoDisabled).not.toContain(paused.id);

      const res = await api.call<Record<string, unknown>[]>("PATCH", base, { token, data: { "re-enable": true } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.map((r) => r.id).sort()).toEqual(autoDisabled.sort());
      for (const row of res.body.data) {
        expect(row.enabled).toBe(true);
        expect(row).not.toHaveProperty("disable_reason");
      }

      for (const h of failing) {
        const now = await read(h.id);
        expect(now.enabled).toBe(true);
        expect(now).not.toHaveProperty("disable_reason");
      }
      expect((await read(paused.id)).enabled).toBe(false);
      expect((await read(running.id)).enabled).toBe(true);

      const again = await api.call<unknown[]>("PATCH", base, { token, data: { "re-enable": true } });
      expect(again.body.data).toEqual([]);
    });

    it("refuses any other body with 400 naming re-enable", async () => {
      for (const [data, field, rule] of [
        [{}, "re-enable", "required"],
        [{ "re-enable": false }, "re-enable", "enum"],
        [{ enabled: true }, "re-enable", "required"],
        [{ "re-enable": true, enabled: false }, "enabled", "additionalProperties"],
      ] as const) {
        const res = await api.call<Record<string, Record<string, unknown>>>("PATCH", base, { token, data });
        expect(res.status, JSON.stringify(data)).toBe(400);
        expect(res.body.message).toBe("validation error");
        expect(res.body.data[field]?.[rule], JSON.stringify(res.body.data)).toBeDefined();
      }
    });

    it("needs an admin", async () => {
      const failing = await create(hook("agent cannot fix"));
      await autoDisable(failing.id);
      const agent = await api.login("agent1");
      const res = await api.call("PATCH", base, { token: agent.token, data: { "re-enable": true } });
      expect(res.status).toBe(403);
      expect((await read(failing.id)).enabled).toBe(false);
    });
  });

  describe("GET /v2/webhooks lists the hooks", () => {
    it("answers the catalogue, notifications with its types as modifiers", async () => {
      const res = await api.call<{ id: string; name: string; description: string; modifiers?: unknown }[]>("GET", "/v2/webhooks", {
        token,
        query: { paginate: "false" },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.map((h) => h.id).sort()).toEqual([...HOOKS].sort());
      for (const h of res.body.data) {
        expect(h.name).toEqual(expect.any(String));
        expect(h.description).toEqual(expect.any(String));
      }
      expect(res.body.data.find((h) => h.id === "channel_create")?.name).toBe("Channel Create");
      // Kazoo's shape: the notification types are an object of {friendly_name, description}, "all" first.
      const notifications = res.body.data.find((h) => h.id === "notifications");
      const types = { all: { friendly_name: "All", description: expect.any(String) } } as Record<string, unknown>;
      for (const type of NOTIFICATION_TYPES) types[type] = { friendly_name: expect.any(String), description: expect.any(String) };
      expect(notifications?.modifiers).toEqual({ type: { type: "object", description: expect.any(String), items: types } });
      expect(res.body.data.filter((h) => h.modifiers).map((h) => h.id)).toEqual(["notifications", "object"]);
    });

    it("accepts a webhook on every hook it lists", async () => {
      for (const id of HOOKS) {
        const extra = id === "notifications" ? { custom_data: { type: "voicemail_new" } } : {};
        await create(hook(`on ${id}`, { hook: id, ...extra }));
      }
    });

    it("is paginated like every v2 list", async () => {
      const res = await api.call<{ id: string }[]>("GET", "/v2/webhooks", { token, query: { page_size: "5" } });
      expect(res.body.data).toHaveLength(5);
      expect(res.body.next_start_key).toEqual(expect.any(String));
    });

    it("needs a token, but of any account", async () => {
      const none = await api.call("GET", "/v2/webhooks");
      expect(none.status).toBe(401);
      expect(none.body).toMatchObject({ error: "401", message: "invalid_credentials" });
      const other = await createAccount(api, `hooks${Date.now()}`);
      expect((await api.call("GET", "/v2/webhooks", { token: other.token })).status).toBe(200);
      expect((await api.call("PUT", "/v2/webhooks", { token, data: hook("x") })).status).toBe(405);
    });
  });
});
