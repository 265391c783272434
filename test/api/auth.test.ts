// Authentication as the hosted API does it: user_auth (md5 or sha1 credentials, account by name,
// realm or number), api_auth, token_auth, token sources, sliding expiry, the login throttle.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentials, DEMO_PASSWORD, startApi, TestClock, type TestApi, localServerConfig } from "../helpers/api.js";

const TTL_S = 300;
const clock = new TestClock();
let api: TestApi;
let accountId: string;

beforeAll(async () => {
  api = await startApi({ clock, tokenTtlS: TTL_S });
  ({ accountId } = await api.login("admin"));
});
afterAll(async () => {
  await api.close();
});

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

describe("user_auth", () => {
  it("answers 201 with a token and the authentication result", async () => {
    const res = await api.call<Record<string, unknown>>("PUT", "/v2/user_auth", {
      data: { credentials: credentials("agent1", DEMO_PASSWORD), account_name: "demo" },
    });
    expect(res.status).toBe(201);
    expect(res.body.auth_token).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.data).toMatchObject({ account_id: accountId, owner_id: expect.stringMatching(/^[0-9a-f]{32}$/), apps: [], language: "en-US", is_reseller: false, account_name: "demo" });
    expect(res.body.data.reseller_id).toEqual(expect.any(String));
  });

  it("takes sha1 credentials with method sha, and finds the account by realm or by one of its numbers", async () => {
    const bySha = await api.call("PUT", "/v2/user_auth", { data: { credentials: sha1(`agent2:${DEMO_PASSWORD}`), method: "sha", account_name: "DEMO" } });
    expect(bySha.status).toBe(201);
    const byRealm = await api.call("PUT", "/v2/user_auth", { data: { credentials: credentials("agent2", DEMO_PASSWORD), account_realm: "demo.switchboard.local" } });
    expect(byRealm.status).toBe(201);
    const byNumber = await api.call("PUT", "/v2/user_auth", { data: { credentials: credentials("agent2", DEMO_PASSWORD), phone_number: "5001" } });
    expect(byNumber.status).toBe(201);
  });

  it("answers 401 invalid_credentials for a wrong password or an unknown account, and 400 for malformed input", async () => {
    const wrong = await api.call("PUT", "/v2/user_auth", { data: { credentials: credentials("agent3", "nope"), account_name: "demo" } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ status: "error", error: "401", message: "invalid_credentials" });
    const unknown = await api.call("PUT", "/v2/user_auth", { data: { credentials: credentials("agent3", DEMO_PASSWORD), account_name: "nobody" } });
    expect(unknown.status).toBe(401);
    const malformed = await api.call<Record<string, Record<string, unknown>>>("PUT", "/v2/user_auth", { data: { credentials: "plain-password", account_name: "demo" } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.data.credentials).toHaveProperty("pattern");
    expect((await api.call("GET", "/v2/user_auth")).status).toBe(405);
  });
});

describe("tokens", () => {
  it("are read from X-Auth-Token, auth_token in the query or the envelope, and Authorization: Bearer", async () => {
    const { token } = await api.login("agent1");
    const path = `/v2/accounts/${accountId}/devices`;
    expect((await api.call("GET", path, { headers: { "X-Auth-Token": token } })).status).toBe(200);
    expect((await api.call("GET", path, { query: { auth_token: token } })).status).toBe(200);
    expect((await api.call("GET", path, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    const viaEnvelope = await api.call("POST", path, { body: JSON.stringify({ auth_token: token, verb: "GET" }) });
    expect(viaEnvelope.status).toBe(200);
    expect((await api.call("GET", path)).status).toBe(401);
  });

  it("slide: each use restarts the inactivity window; idle past it, the token is dead", async () => {
    const { token } = await api.login("agent1");
    const path = "/v2/token_auth";
    for (let i = 0; i < 4; i++) {
      clock.advance((TTL_S - 10) * 1000);
      expect((await api.call("GET", path, { token })).status, `use ${i}`).toBe(200);
    }
    clock.advance((TTL_S + 1) * 1000);
    expect((await api.call("GET", path, { token })).status).toBe(401);
  });

  it("survive a server restart", async () => {
    const { token } = await api.login("agent1");
    // Reopen this server's data directory in a new server and use the same token there.
    const { startServer } = await import("../../server/index.js");
    await api.server.close();
    const again = await startServer(localServerConfig(api.dataDir, { assetsDir: "", demo: false, tokenTtlS: TTL_S, clock }))
    try {
      const res = await fetch(`${again.url}/v2/token_auth`, { headers: { "X-Auth-Token": token } });
      expect(res.status).toBe(200);
    } finally {
      await again.close();
      api = await startApi({ clock, tokenTtlS: TTL_S });
      ({ accountId } = await api.login("admin"));
    }
  });

  it("token_auth describes the token, DELETE revokes it", async () => {
    const { token, ownerId } = await api.login("agent1");
    const about = await api.call<Record<string, unknown>>("GET", "/v2/token_auth", { token });
    expect(about.status).toBe(200);
    // Kazoo's fields (token_auth.md "Response when OK"), then the local ones.
    expect(about.body.data).toMatchObject({
      id: token,
      account_id: accountId,
      account_name: "demo",
      owner_id: ownerId,
      method: "cb_user_auth",
      apps: [],
      language: expect.any(String),
      is_reseller: false,
      reseller_id: expect.any(String),
      is_admin: false,
      expires_in: TTL_S,
    });
    expect((await api.call("DELETE", "/v2/token_auth", { token })).status).toBe(200);
    expect((await api.call("GET", "/v2/token_auth", { token })).status).toBe(401);
  });
});

describe("api_auth and the API key", () => {
  it("shows the key to admins only, and logs in with it as an account admin", async () => {
    const admin = await api.login("admin");
    const agent = await api.login("agent1");
    expect((await api.call("GET", `/v2/accounts/${accountId}/api_key`, { token: agent.token })).status).toBe(403);
    const key = await api.call<{ api_key: string }>("GET", `/v2/accounts/${accountId}/api_key`, { token: admin.token });
    expect(key.body.data.api_key).toMatch(/^[0-9a-f]{64}$/);
    const login = await api.call<{ account_id: string; owner_id: string | null }>("PUT", "/v2/api_auth", { data: { api_key: key.body.data.api_key } });
    expect(login.status).toBe(201);
    expect(login.body.data).toMatchObject({ account_id: accountId });
    // No user owns an API key's token: Kazoo leaves owner_id out.
    expect(login.body.data).not.toHaveProperty("owner_id");
    const created = await api.call("PUT", `/v2/accounts/${accountId}/devices`, { token: login.body.auth_token ?? "", data: { name: "via api key" } });
    expect(created.status).toBe(201);
    const about = await api.call<Record<string, unknown>>("GET", "/v2/token_auth", { token: login.body.auth_token ?? "" });
    expect(about.body.data).toMatchObject({ method: "cb_api_auth", is_admin: true });
    expect(about.body.data).not.toHaveProperty("owner_id");
    expect((await api.call("PUT", "/v2/api_auth", { data: { api_key: "f".repeat(64) } })).status).toBe(401);
  });

  it("PUT api_key makes a new key (admins): the new one logs in, the old one no longer does", async () => {
    const admin = await api.login("admin");
    const agent = await api.login("agent1");
    const path = `/v2/accounts/${accountId}/api_key`;
    const old = (await api.call<{ api_key: string }>("GET", path, { token: admin.token })).body.data.api_key;
    const oldKeyToken = (await api.call("PUT", "/v2/api_auth", { data: { api_key: old } })).body.auth_token ?? "";
    expect((await api.call("PUT", path, { token: agent.token })).status).toBe(403);
    expect((await api.call<{ api_key: string }>("GET", path, { token: admin.token })).body.data.api_key).toBe(old);
    const renewed = await api.call<{ api_key: string }>("PUT", path, { token: admin.token });
    expect(renewed.status, renewed.text).toBe(200);
    const fresh = renewed.body.data.api_key;
    expect(fresh).toMatch(/^[0-9a-f]{64}$/);
    expect(fresh).not.toBe(old);
    expect((await api.call<{ api_key: string }>("GET", path, { token: admin.token })).body.data.api_key).toBe(fresh);
    expect((await api.call("PUT", "/v2/api_auth", { data: { api_key: old } })).status).toBe(401);
    // What the old key opened closes with it; the admin's own session goes on.
    expect((await api.call("GET", "/v2/token_auth", { token: oldKeyToken })).status).toBe(401);
    expect((await api.call("GET", "/v2/token_auth", { token: admin.token })).status).toBe(200);
    expect((await api.call("PUT", "/v2/api_auth", { data: { api_key: fresh } })).status).toBe(201);
  });
});

describe("the failed-login throttle", () => {
  it("answers 429 with Retry-After to wrong attempts after five failures in a row, lets the right password in meanwhile, and not other accounts", async () => {
    const bad = { credentials: credentials("agent3", "guess"), account_name: "demo" };
    for (let i = 0; i < 5; i++) expect((await api.call("PUT", "/v2/user_auth", { data: bad })).status).toBe(401);
    const slowed = await api.call("PUT", "/v2/user_auth", { data: bad });
    expect(slowed.status).toBe(429);
    expect(slowed.body).toMatchObject({ error: "429", message: "too_many_requests" });
    expect(Number(slowed.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another account from this client is not slowed.
    expect((await api.call("PUT", "/v2/user_auth", { data: { credentials: credentials("x", "y"), account_name: "elsewhere" } })).status).toBe(401);
    const real = await api.call("PUT", "/v2/user_auth", { data: { credentials: credentials("agent3", DEMO_PASSWORD), account_name: "demo" } });
    expect(real.status).toBe(201);
    // A success clears the slate.
    expect((await api.call("PUT", "/v2/user_auth", { data: bad })).status).toBe(401);
  });
});
