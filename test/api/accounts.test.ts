import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, credentials, DEMO_PASSWORD, startApi, type TestApi } from "../helpers/api.js";

type Account = Record<string, unknown>;
type FieldErrors = Record<string, Record<string, unknown>>;

describe("accounts: the account document", () => {
  let api: TestApi;
  let token: string;
  let accountId: string;
  let path: string;
  let apiKey: string;

  beforeAll(async () => {
    api = await startApi();
    ({ token, accountId } = await api.login("admin"));
    path = `/v2/accounts/${accountId}`;
    apiKey = String((await api.server.store.global("accounts")).get(accountId)?.data.pvt_api_key);
  });
  afterAll(async () => {
    await api.close();
  });

  const read = async () => {
    const res = await api.call<Account>("GET", path, { token });
    expect(res.status).toBe(200);
    return res;
  };
  /** What every read of the account shows beside its own fields: Kazoo's empty defaults and the fields it owns (accounts.md). */
  const kazooFields = () => ({
    call_restriction: {},
    caller_id: {},
    dial_plan: {},
    music_on_hold: {},
    preflow: {},
    ringtones: {},
    created: expect.any(Number),
    billing_mode: "manual",
    is_reseller: false,
    reseller_id: accountId,
    superduper_admin: false,
    wnm_allow_additions: false,
    id: accountId,
  });
  const stored = async () => (await api.server.store.global("accounts")).get(accountId)?.data ?? {};

  it("reads the document with its id and revision, without private fields, for any user of the account", async () => {
    const res = await read();
    expect(res.body.data).toEqual({
      ...kazooFields(),
      name: "demo",
      realm: "demo.switchboard.local",
      language: "en-US",
      timezone: "UTC",
      enabled: true,
      blacklists: [],
    });
    expect(res.body.revision).toMatch(/^\d+-[0-9a-f]{32}$/);
    expect(res.headers.get("etag")).toBe(`"${res.body.revision ?? ""}"`);
    expect(apiKey).toMatch(/^[0-9a-f]{64}$/);
    expect(res.text).not.toContain(apiKey);
    expect(res.text).not.toContain("pvt_");

    const agent = await api.login("agent1");
    expect((await api.call("GET", path, { token: agent.token })).status).toBe(200);
  });

  it("replaces the document with POST, keeping the API key and the realm when left out", async () => {
    const before = await read();
    const res = await api.call<Account>("POST", path, {
      token,
      data: { name: "demo", language: "fr-FR", timezone: "Europe/Paris", blacklists: [], sb_note: "custom keys are kept" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      ...kazooFields(),
      name: "demo",
      realm: "demo.switchboard.local",
      language: "fr-FR",
      timezone: "Europe/Paris",
      blacklists: [],
      sb_note: "custom keys are kept",
    });
    expect(Number(res.body.revision?.split("-")[0])).toBe(Number(before.body.revision?.split("-")[0]) + 1);
    expect((await stored()).pvt_api_key).toBe(apiKey);
    expect((await api.call("PUT", "/v2/api_auth", { data: { api_key: apiKey } })).status).toBe(201);

    // A client sends back what it read, id included: the id is not stored as a field.
    const roundTrip = await api.call<Account>("POST", path, { token, data: { ...(await read()).body.data, language: "en-US", timezone: "UTC" } });
    expect(roundTrip.status).toBe(200);
    expect(await stored()).not.toHaveProperty("id");
    expect(roundTrip.body.data.id).toBe(accountId);
  });

  it("renames the account, and logins follow the new name", async () => {
    const renamed = await api.call<Account>("PATCH", path, { token, data: { name: "Demo Renamed" } });
    expect(renamed.status).toBe(200);
    const login = await api.call("PUT", "/v2/user_auth", { data: { credentials: credentials("admin", DEMO_PASSWORD), account_name: "demo renamed" } });
    expect(login.status).toBe(201);
    expect((await api.call("PATCH", path, { token, data: { name: "demo" } })).status).toBe(200);
  });

  it("PATCHes one field, leaving the others, and validates the merged document", async () => {
    const before = (await read()).body.data;
    const res = await api.call<Account>("PATCH", path, { token, data: { timezone: "America/New_York" } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ...before, timezone: "America/New_York" });

    for (const [data, field, rule] of [
      [{ timezone: "Mars/Olympus_Mons" }, "timezone", "enum"],
      [{ name: "" }, "name", "minLength"],
      [{ name: null }, "name", "required"],
      [{ enabled: "yes" }, "enabled", "type"],
      [{ language: "english please" }, "language", "pattern"],
      [{ realm: "not a realm" }, "realm", "pattern"],
      [{ blacklists: "all" }, "blacklists", "type"],
    ] as const) {
      const bad = await api.call<FieldErrors>("PATCH", path, { token, data });
      expect(bad.status, JSON.stringify(data)).toBe(400);
      expect(bad.body).toMatchObject({ error: "400", message: "validation error" });
      expect(bad.body.data[field], JSON.stringify(bad.body.data)).toHaveProperty(rule);
    }
    expect((await read()).body.data).toEqual(res.body.data);
  });

  it("refuses to disable its own account, which would lock every user out", async () => {
    const res = await api.call<FieldErrors>("PATCH", path, { token, data: { enabled: false } });
    expect(res.status).toBe(400);
    expect(res.body.data.enabled).toHaveProperty("forbidden");
    expect((await read()).status).toBe(200);
    expect((await api.call("PATCH", path, { token, data: { enabled: true } })).status).toBe(200);
  });

  it("ignores pvt_ fields sent by a client and never shows the API key", async () => {
    const res = await api.call<Account>("PATCH", path, { token, data: { pvt_api_key: "chosen-by-client", pvt_enabled: false } });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty("pvt_api_key");
    expect(await stored()).toMatchObject({ pvt_api_key: apiKey });
    expect(await stored()).not.toHaveProperty("pvt_enabled");
    expect(res.text).not.toContain(apiKey);
  });

  it("accepts blacklists of its own account only, naming unknown ids", async () => {
    const mine = await (await api.server.store.account(accountId, "blacklists")).create({ name: "x", numbers: {} });
    const other = await createAccount(api, `lists${Date.now()}`);
    const theirs = await (await api.server.store.account(other.accountId, "blacklists")).create({ name: "y", numbers: {} });

    const ok = await api.call<Account>("PATCH", path, { token, data: { blacklists: [mine.id] } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.blacklists).toEqual([mine.id]);

    for (const id of [theirs.id, "0".repeat(32)]) {
      const bad = await api.call<FieldErrors>("PATCH", path, { token, data: { blacklists: [mine.id, id] } });
      expect(bad.status).toBe(400);
      expect(bad.body.data.blacklists).toMatchObject({ not_found: { value: [id] } });
    }
    const malformed = await api.call<FieldErrors>("PATCH", path, { token, data: { blacklists: ["nope"] } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.data["blacklists.0"]).toHaveProperty("pattern");
    expect((await read()).body.data.blacklists).toEqual([mine.id]);
  });

  it("keeps account names and realms unique across accounts, whatever the case", async () => {
    const name = `unique${Date.now()}`;
    await createAccount(api, name);
    const byName = await api.call<FieldErrors>("PATCH", path, { token, data: { name: name.toUpperCase() } });
    expect(byName.status).toBe(400);
    expect(byName.body.data.name).toHaveProperty("unique");
    const byRealm = await api.call<FieldErrors>("PATCH", path, { token, data: { realm: `${name}.SWITCHBOARD.local` } });
    expect(byRealm.status).toBe(400);
    expect(byRealm.body.data.realm).toHaveProperty("unique");
    // Its own name in another case is no clash.
    expect((await api.call("PATCH", path, { token, data: { name: "DEMO" } })).status).toBe(200);
    expect((await api.call("PATCH", path, { token, data: { name: "demo" } })).status).toBe(200);
  });

  it("answers a stale If-Match with 409 and a current one with 200", async () => {
    const current = await read();
    const etag = current.headers.get("etag") ?? "";
    const first = await api.call<Account>("PATCH", path, { token, data: { timezone: "Asia/Tokyo" }, headers: { "If-Match": etag } });
    expect(first.status).toBe(200);
    const stale = await api.call("PATCH", path, { token, data: { timezone: "UTC" }, headers: { "If-Match": etag } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ error: "409", message: "datastore_conflict" });
    const staleReplace = await api.call("POST", path, { token, data: { name: "demo" }, headers: { "If-Match": etag } });
    expect(staleReplace.status).toBe(409);
    expect((await read()).body.data.timezone).toBe("Asia/Tokyo");
    const fresh = await api.call("PATCH", path, { token, data: { timezone: "UTC" }, headers: { "If-Match": `"${first.body.revision ?? ""}"` } });
    expect(fresh.status).toBe(200);
  });

  it("answers DELETE with 405 and an Allow header and PUT (a child account) with 403, changing nothing", async () => {
    const before = await read();
    const deleted = await api.call("DELETE", path, { token, data: { name: "gone" } });
    expect(deleted.status).toBe(405);
    expect(deleted.body).toMatchObject({ error: "405", message: "invalid_method" });
    expect(deleted.headers.get("allow")).toBe("GET, POST, PATCH, PUT");
    const child = await api.call("PUT", path, { token, data: { name: "child" } });
    expect(child.status).toBe(403);
    expect(child.body).toMatchObject({ error: "403", message: "forbidden" });
    const tunnelled = await api.call("POST", path, { token, query: { verb: "DELETE" } });
    expect(tunnelled.status).toBe(405);
    expect((await read()).body).toMatchObject({ revision: before.body.revision });
  });

  it("is 403 for another account's token and for a non-admin's writes, 401 without a live token", async () => {
    const other = await createAccount(api, `stranger${Date.now()}`);
    for (const [method, data] of [
      ["GET", undefined],
      ["POST", { name: "taken over" }],
      ["PATCH", { timezone: "UTC" }],
    ] as const) {
      const res = await api.call(method, path, { token: other.token, data });
      expect(res.status, method).toBe(403);
      expect(res.body).toMatchObject({ error: "403", message: "forbidden" });
    }
    const theirs = await api.call<Account>("GET", `/v2/accounts/${other.accountId}`, { token: other.token });
    expect(theirs.status).toBe(200);
    expect(theirs.body.data.id).toBe(other.accountId);

    const agent = await api.login("agent1");
    for (const method of ["POST", "PATCH"]) {
      const res = await api.call(method, path, { token: agent.token, data: { name: "demo", timezone: "UTC" } });
      expect(res.status, method).toBe(403);
    }

    expect((await api.call("GET", path)).status).toBe(401);
    const wrong = await api.call("GET", path, { token: "f".repeat(64) });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ error: "401", message: "invalid_credentials" });
    expect((await read()).body.data.name).toBe("demo");
  });
});
