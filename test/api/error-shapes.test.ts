// Error bodies shaped as Kazoo's crossbar shapes them: every error that is not about fields
// carries Kazoo's `data.message` ("invalid credentials", "bad identifier" with the id as `cause`,
// "forbidden", "invalid method", "not found", "faulty request", "conflicting documents"), and a
// 401 says nothing else.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let token: string;
let accountId: string;

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
});

afterAll(async () => {
  await api.close();
});

describe("error data as Kazoo's", () => {
  it("401: only the message, whether the token is missing, unknown or the password wrong", async () => {
    const users = `/v2/accounts/${accountId}/users`;
    for (const res of [
      await api.call("GET", users, { token: null }),
      await api.call("GET", users, { token: "f".repeat(32) }),
      await api.call("PUT", "/v2/user_auth", { token: null, data: { credentials: "0".repeat(32), account_name: "demo" } }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ status: "error", error: "401", message: "invalid_credentials", data: { message: "invalid credentials" } });
      expect(Object.keys(res.body.data as object)).toEqual(["message"]);
    }
  });

  it("404 bad_identifier: the message and the id as cause; 404 not_found and faulty_request: their messages", async () => {
    const id = "0".repeat(32);
    const missing = await api.call("GET", `/v2/accounts/${accountId}/devices/${id}`, { token });
    expect(missing.body).toMatchObject({ error: "404", message: "bad_identifier", data: { cause: id, message: "bad identifier" } });
    const path = await api.call("GET", `/v2/accounts/${accountId}/nothing_here`, { token });
    expect(path.body).toMatchObject({ error: "404", message: "not_found", data: { message: "not found" } });
    const paging = await api.call("GET", `/v2/accounts/${accountId}/devices`, { token, query: { page_size: "0" } });
    expect(paging.body).toMatchObject({ error: "404", message: "faulty_request", data: { message: "faulty request" } });
  });

  it("403, 405 and 409 carry Kazoo's messages beside their own details", async () => {
    const other = await createAccount(api, "Error Shapes Co");
    const forbidden = await api.call("GET", `/v2/accounts/${other.accountId}/users`, { token });
    expect(forbidden.body).toMatchObject({ error: "403", message: "forbidden", data: { message: "forbidden" } });
    const method = await api.call("PATCH", `/v2/accounts/${accountId}/cdrs`, { token, data: {} });
    expect(method.body).toMatchObject({ error: "405", message: "invalid_method", data: { message: "invalid method" } });
    const created = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/devices`, { token, data: { name: "Shapes phone" } });
    const stale = await api.call("POST", `/v2/accounts/${accountId}/devices/${created.body.data.id}`, {
      token,
      data: { name: "Shapes phone 2" },
      headers: { "If-Match": `"1-${"0".repeat(32)}"` },
    });
    expect(stale.body).toMatchObject({ error: "409", message: "datastore_conflict", data: { message: "conflicting documents" } });
  });

  it("field errors stay field errors, with no message of their own", async () => {
    const res = await api.call("PUT", `/v2/accounts/${accountId}/devices`, { token, data: {} });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: "validation error", data: { name: { required: expect.any(Object) } } });
    expect(res.body.data).not.toHaveProperty("message");
  });
});

describe("Kazoo's output switches", () => {
  it("names a CSV download by X-File-Name or file_name, never as a path", async () => {
    const path = `/v2/accounts/${accountId}/users`;
    const byHeader = await fetch(`${api.url}${path}?accept=csv`, { headers: { "X-Auth-Token": token, "X-File-Name": "agents.csv" } });
    expect(byHeader.headers.get("content-disposition")).toBe('attachment; filename="agents.csv"');
    const byQuery = await fetch(`${api.url}${path}?accept=csv&file_name=${encodeURIComponent("../../etc/team list.csv")}`, { headers: { "X-Auth-Token": token } });
    expect(byQuery.headers.get("content-disposition")).toBe('attachment; filename="team list.csv"');
    const plain = await fetch(`${api.url}${path}?accept=csv`, { headers: { "X-Auth-Token": token } });
    expect(plain.headers.get("content-disposition")).toBe('attachment; filename="result.csv"');
  });

  it("pretty prints the envelope for X-Pretty-Print: true or pretty_print=true, the same document either way", async () => {
    const path = `${api.url}/v2/accounts/${accountId}`;
    const compact = await (await fetch(path, { headers: { "X-Auth-Token": token } })).text();
    const header = await (await fetch(path, { headers: { "X-Auth-Token": token, "X-Pretty-Print": "true" } })).text();
    const query = await (await fetch(`${path}?pretty_print=true`, { headers: { "X-Auth-Token": token } })).text();
    expect(compact).not.toContain("\n");
    for (const pretty of [header, query]) {
      expect(pretty).toContain('\n  "data": {');
      const { request_id: _a, timestamp: _b, ...prettyRest } = JSON.parse(pretty) as Record<string, unknown>;
      const { request_id: _c, timestamp: _d, ...compactRest } = JSON.parse(compact) as Record<string, unknown>;
      expect(prettyRest).toEqual(compactRest);
    }
  });
});
