// Kazoo's accounts.md, each request example sent as written (its headers and body, only the
// {PLACEHOLDERS} filled in), checked for the documented status, envelope and data shape. The
// api_key sections are in authentication.test.ts.
// Examples in the document (besides api_key): 14. Passing as documented: 7 (fetch, patch,
// change, parents, tree, children, descendants). Marked differs: 7 (create, create child,
// remove, siblings, demote, promote, move: this server hosts root accounts only; see
// docs/design-notes.md, "Accounts, basics, filters, unserved modules").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toGregorianSeconds } from "../../server/clock.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let adminToken: string;
let agentToken: string;

function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

/** The account document's shape in every answer of accounts.md. */
const accountShape = {
  billing_mode: expect.any(String),
  call_restriction: {},
  caller_id: {},
  created: expect.any(Number),
  dial_plan: {},
  enabled: true,
  id: expect.stringMatching(/^[0-9a-f]{32}$/),
  is_reseller: false,
  language: expect.any(String),
  music_on_hold: {},
  name: expect.any(String),
  preflow: {},
  realm: expect.any(String),
  reseller_id: expect.any(String),
  ringtones: {},
  superduper_admin: false,
  timezone: expect.any(String),
  wnm_allow_additions: false,
};

beforeAll(async () => {
  api = await startApi();
  ({ accountId, token: adminToken } = await api.login("admin"));
  ({ token: agentToken } = await api.login("agent1"));
});

afterAll(async () => {
  await api.close();
});

describe("accounts.md", () => {
  it("accounts.md › Create New Account [differs: accounts are not created through the API]", async () => {
    const res = await curl("PUT", "/v2/accounts", { "X-Auth-Token": adminToken, "Content-Type": "application/json" }, '{"data":{"name":"child account"}}');
    expectError(res, 403, "forbidden", { message: "forbidden", cause: expect.any(String) });
    // Kazoo's /v2/accounts takes PUT only.
    const listed = await curl("GET", "/v2/accounts", { "X-Auth-Token": adminToken });
    expectError(listed, 405, "invalid_method");
    expect(listed.headers.get("allow")).toBe("PUT");
    expectError(await curl("PUT", "/v2/accounts", {}, '{"data":{"name":"child account"}}'), 401, "invalid_credentials");
    const agent = await curl("PUT", "/v2/accounts", { "X-Auth-Token": agentToken, "Content-Type": "application/json" }, '{"data":{"name":"child account"}}');
    expectError(agent, 403, "forbidden", { user: { admin: expect.any(Object) } });
  });

  it("accounts.md › Remove an account [differs: an account cannot delete itself]", async () => {
    const res = await curl("DELETE", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken });
    // As Kazoo answers for its master account: DELETE is not among the allowed methods.
    expectError(res, 405, "invalid_method", { message: "invalid method" });
    expect(res.headers.get("allow")).not.toContain("DELETE");
    expectSuccess(await curl("GET", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken }), 200, { id: accountId });
  });

  it("accounts.md › Fetch the account doc", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken });
    expectSuccess(res, 200, { ...accountShape, id: accountId, name: "demo" });
    expect(res.json).toMatchObject({ auth_token: adminToken });
    // Gregorian seconds, as every Kazoo timestamp.
    const created = (res.json.data as { created: number }).created;
    expect(Number.isInteger(created)).toBe(true);
    expect(Math.abs(created - toGregorianSeconds(Date.now()))).toBeLessThan(3600);
    // Any user of the account may read it.
    expectSuccess(await curl("GET", `/v2/accounts/${accountId}`, { "X-Auth-Token": agentToken }), 200, { id: accountId });
  });

  it("accounts.md › Patch the account doc", async () => {
    // As written: -d with no Content-Type header, so curl sends its form type.
    const res = await curl("PATCH", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken, "Content-Type": "application/x-www-form-urlencoded" }, '{"data":{"some_key":"some_value"}}');
    expectSuccess(res, 200, { ...accountShape, id: accountId, some_key: "some_value" });
    const refused = await curl("PATCH", `/v2/accounts/${accountId}`, { "X-Auth-Token": agentToken, "Content-Type": "application/x-www-form-urlencoded" }, '{"data":{"some_key":"other"}}');
    expectError(refused, 403, "forbidden");
    const read = await curl("GET", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken });
    expect(read.json.data).toMatchObject({ some_key: "some_value" });
  });

  it("accounts.md › Change the account doc", async () => {
    const before = await curl("GET", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken });
    const { realm } = before.json.data as { realm: string };
    // The document's body as written, its realm and name made this account's (they are unique keys).
    const body = `{"data": {"billing_mode": "manual","call_restriction": {},"caller_id": {},"created": 63621662701,"dial_plan": {},"enabled": true,"is_reseller": false,"language": "en-us","music_on_hold": {},"name": "demo","preflow": {},"realm": "${realm}","reseller_id": "undefined","ringtones": {},"some_key":"some_value","superduper_admin": false,"timezone": "America/Los_Angeles","wnm_allow_additions": false}}`;
    const res = await curl("POST", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken, "Content-Type": "application/json" }, body);
    expectSuccess(res, 200, { ...accountShape, id: accountId, language: "en-us", timezone: "America/Los_Angeles", some_key: "some_value" });
    // What Kazoo leaks of its private fields is the server's, not the client's: sent back, they change nothing.
    const data = res.json.data as Record<string, unknown>;
    expect(data.reseller_id).toBe(accountId);
    expect(data.created).not.toBe(63621662701);
    const refused = await curl("POST", `/v2/accounts/${accountId}`, { "X-Auth-Token": agentToken, "Content-Type": "application/json" }, body);
    expectError(refused, 403, "forbidden");
  });

  it("accounts.md › Create a new child account [differs: accounts are not nested here]", async () => {
    const res = await curl("PUT", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken, "Content-Type": "application/json" }, '{"data":{"name":"child account"}}');
    expectError(res, 403, "forbidden", { message: "forbidden", cause: expect.any(String) });
    const children = await curl("GET", `/v2/accounts/${accountId}/children`, { "X-Auth-Token": adminToken });
    expect(children.json.data).toEqual([]);
  });

  it("accounts.md › Fetch the parent account IDs", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/parents`, { "X-Auth-Token": adminToken });
    // Every account here is a root: no parents.
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ data: [], page_size: 0, auth_token: adminToken });
  });

  it("accounts.md › Fetch an account's ancestor tree", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/tree`, { "X-Auth-Token": adminToken });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ data: [], page_size: 0 });
  });

  it("accounts.md › Fetch sibling accounts [differs: own account's siblings are superduper-only, as Kazoo]", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/siblings`, { "X-Auth-Token": adminToken });
    expectError(res, 403, "forbidden", { message: "forbidden" });
  });

  it("accounts.md › Fetch all descendants of an account", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/descendants`, { "X-Auth-Token": adminToken });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ data: [], page_size: 0 });
  });

  it("accounts.md › Fetch immediate children of an account", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/children`, { "X-Auth-Token": agentToken });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ data: [], page_size: 0 });
    // Another account's tree is not this token's to read.
    expectError(await curl("GET", `/v2/accounts/${"0".repeat(32)}/children`, { "X-Auth-Token": agentToken }), 403, "forbidden");
  });

  it("accounts.md › Demote a reseller [differs: no superduper admin here]", async () => {
    expectError(await curl("DELETE", `/v2/accounts/${accountId}/reseller`, { "X-Auth-Token": adminToken }), 403, "forbidden", { message: "forbidden" });
    expectError(await curl("DELETE", `/v2/accounts/${accountId}/reseller`, { "X-Auth-Token": agentToken }), 403, "forbidden");
  });

  it("accounts.md › Promote a reseller [differs: no superduper admin here]", async () => {
    expectError(await curl("PUT", `/v2/accounts/${accountId}/reseller`, { "X-Auth-Token": adminToken }), 403, "forbidden", { message: "forbidden" });
    const read = await curl("GET", `/v2/accounts/${accountId}`, { "X-Auth-Token": adminToken });
    expect(read.json.data).toMatchObject({ is_reseller: false });
  });

  it("accounts.md › Move an account [differs: no superduper admin here]", async () => {
    const res = await curl("POST", `/v2/accounts/${accountId}/move`, { "X-Auth-Token": adminToken, "Content-Type": "application/x-www-form-urlencoded" }, `{"data": {"to": "${"1".repeat(32)}"}}`);
    expectError(res, 403, "forbidden", { message: "forbidden" });
    // As Kazoo: no destination is a field error first.
    const noTo = await curl("POST", `/v2/accounts/${accountId}/move`, { "X-Auth-Token": adminToken, "Content-Type": "application/x-www-form-urlencoded" }, '{"data": {}}');
    expectError(noTo, 400, "validation error", { to: { required: expect.any(Object) } });
    const agent = await curl("POST", `/v2/accounts/${accountId}/move`, { "X-Auth-Token": agentToken, "Content-Type": "application/x-www-form-urlencoded" }, '{"data": {}}');
    expectError(agent, 403, "forbidden");
  });
});
