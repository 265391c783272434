// Kazoo's authentication documents, each example sent as written (its headers and body), checked
// for the documented status, envelope and data shape. One test per example, named
// "<document> › <section>". Documents: user_authentication.md, api_authentication.md,
// token_auth.md, and the api_key sections of accounts.md.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PASSWORD, startApi, type TestApi } from "../helpers/api.js";
import { curl as send, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;

/** A curl line of the documents against this server. */
function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

const md5 = (text: string): string => createHash("md5").update(text).digest("hex");
const sha1 = (text: string): string => createHash("sha1").update(text).digest("hex");

beforeAll(async () => {
  api = await startApi();
  ({ accountId } = await api.login("admin"));
});

afterAll(async () => {
  await api.close();
});

/** PUT /v2/user_auth as the document writes it, for `username` of the demo account. */
async function userAuth(username: string, method: "md5" | "sha" = "md5"): Promise<{ status: number; json: Record<string, unknown> }> {
  const credentials = method === "md5" ? md5(`${username}:${DEMO_PASSWORD}`) : sha1(`${username}:${DEMO_PASSWORD}`);
  return curl("PUT", "/v2/user_auth", { "Content-Type": "application/json" }, JSON.stringify({ data: { credentials, account_name: "demo", method } }));
}

describe("user_authentication.md", () => {
  it("user_authentication.md › Create (md5 credentials)", async () => {
    const res = await userAuth("agent1");
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      auth_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      data: { account_id: accountId, apps: [], is_reseller: expect.any(Boolean), language: expect.any(String), owner_id: expect.stringMatching(/^[0-9a-f]{32}$/), reseller_id: expect.any(String) },
      request_id: expect.any(String),
      revision: expect.any(String),
      status: "success",
    });
  });

  it("user_authentication.md › Create (sha credentials)", async () => {
    const res = await userAuth("agent2", "sha");
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ status: "success", auth_token: expect.any(String), data: { account_id: accountId } });
  });

  it("user_authentication.md › Fetch Token Auth Information", async () => {
    const token = String((await userAuth("agent1")).json.auth_token);
    const res = await curl("GET", `/v2/user_auth/${token}`, { "X-Auth-Token": token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      auth_token: token,
      status: "success",
      data: { account_id: accountId, owner_id: expect.any(String), method: "cb_user_auth", id: token, reseller_id: expect.any(String), is_reseller: false, account_name: "demo", language: expect.any(String), apps: [] },
    });
    // Deliberately narrower than Kazoo: another token in the path is not looked up (404).
    const other = String((await userAuth("agent2")).json.auth_token);
    expect((await curl("GET", `/v2/user_auth/${other}`, { "X-Auth-Token": token })).status).toBe(404);
  });
});

describe("api_authentication.md", () => {
  it("api_authentication.md › Create", async () => {
    const admin = String((await userAuth("admin")).json.auth_token);
    const key = await curl("GET", `/v2/accounts/${accountId}/api_key`, { "X-Auth-Token": admin });
    const apiKey = String((key.json.data as { api_key: string }).api_key);
    // As written: the document's curl sends no Content-Type (curl's default form type).
    const res = await curl("PUT", "/v2/api_auth", { "Content-Type": "application/x-www-form-urlencoded" }, JSON.stringify({ data: { api_key: apiKey } }));
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ auth_token: expect.any(String), data: { account_id: accountId, apps: [], is_reseller: expect.any(Boolean), language: expect.any(String), reseller_id: expect.any(String) }, status: "success" });
    // No user owns an API key's token: owner_id is left out (the document shows {OWNER_ID} for a key that has one).
    expect(res.json.data).not.toHaveProperty("owner_id");
  });
});

describe("token_auth.md", () => {
  it("token_auth.md › Check auth token validity (Response when OK)", async () => {
    const token = String((await userAuth("agent3")).json.auth_token);
    const res = await curl("GET", "/v2/token_auth", { "X-Auth-Token": token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      auth_token: token,
      status: "success",
      data: { account_id: accountId, account_name: "demo", apps: [], id: token, is_reseller: false, language: expect.any(String), method: "cb_user_auth", owner_id: expect.any(String), reseller_id: expect.any(String) },
    });
  });

  it("token_auth.md › Check auth token validity (Response when invalid)", async () => {
    const res = await curl("GET", "/v2/token_auth", { "X-Auth-Token": "0".repeat(64) });
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({ data: { message: "invalid credentials" }, error: "401", message: "invalid_credentials", status: "error" });
  });

  it("token_auth.md › Delete an authentication token", async () => {
    const token = String((await userAuth("supervisor")).json.auth_token);
    const res = await curl("DELETE", "/v2/token_auth", { "X-Auth-Token": token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: "success", request_id: expect.any(String), revision: expect.any(String) });
    expect((await curl("GET", "/v2/token_auth", { "X-Auth-Token": token })).status).toBe(401);
  });
});

describe("accounts.md (API key)", () => {
  it("accounts.md › Fetch the account's API key", async () => {
    const admin = String((await userAuth("admin")).json.auth_token);
    const res = await curl("GET", `/v2/accounts/${accountId}/api_key`, { "X-Auth-Token": admin });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ auth_token: admin, data: { api_key: expect.stringMatching(/^[0-9a-f]{64}$/) }, request_id: expect.any(String), revision: expect.any(String), status: "success" });
  });

  it("accounts.md › Re-create the account's API key", async () => {
    const admin = String((await userAuth("admin")).json.auth_token);
    const before = await curl("GET", `/v2/accounts/${accountId}/api_key`, { "X-Auth-Token": admin });
    const res = await curl("PUT", `/v2/accounts/${accountId}/api_key`, { "X-Auth-Token": admin });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ auth_token: admin, data: { api_key: expect.stringMatching(/^[0-9a-f]{64}$/) }, status: "success" });
    expect((res.json.data as { api_key: string }).api_key).not.toBe((before.json.data as { api_key: string }).api_key);
  });
});
