// Kazoo's basics.md, each request example sent as written (its headers and body, only the
// {PLACEHOLDERS} filled in), checked for the documented status, envelope and data shape; the
// conventions it describes without a curl line (verbs, tunnelling, envelopes, sorting, chunking)
// are sent as the text describes them. Request ids, ETag and CORS preflight, which crossbar
// answers on every request, are checked under the section they belong to.
// Examples in the document: 25 (8 curl lines, 17 described requests). Passing as documented: 22.
// Marked differs: 3 (accept=text/html answers JSON; chunking is not served; the Range example is
// on voicemail, not served). See docs/design-notes.md, "Accounts, basics, filters, unserved modules".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toGregorianSeconds } from "../../server/clock.js";
import { CDRS_COLLECTION } from "../../server/calls/cdrs.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

const ALLOWED_ORIGIN = "http://client.example";
/** More than one default page (50) of CDRs, so the CDR pagination examples have pages to turn. */
const CDR_COUNT = 60;

let api: TestApi;
let accountId: string;
let token: string;
let agentToken: string;
let adminId: string;
let base: string;

function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

const auth = (): Record<string, string> => ({ "X-Auth-Token": token });
const authJson = (): Record<string, string> => ({ "X-Auth-Token": token, "Content-Type": "application/json" });

/** A blacklist to act on, created with the API. */
async function newBlacklist(name: string): Promise<string> {
  const res = await curl("PUT", `${base}/blacklists`, authJson(), JSON.stringify({ data: { name } }));
  expect(res.status, res.text).toBe(201);
  return String((res.json.data as { id: string }).id);
}

function rows(res: CurlResult): Record<string, unknown>[] {
  return res.json.data as Record<string, unknown>[];
}

beforeAll(async () => {
  // An origin allowed by --allow-origin, so the CORS preflight has someone to answer.
  api = await startApi({ config: { allowOrigins: [ALLOWED_ORIGIN] } });
  ({ accountId, token, ownerId: adminId } = await api.login("admin"));
  ({ token: agentToken } = await api.login("agent1"));
  base = `/v2/accounts/${accountId}`;
  const cdrs = await api.server.store.account(accountId, CDRS_COLLECTION);
  for (let i = 0; i < CDR_COUNT; i++) {
    const started = Date.UTC(2026, 0, 1, 12, 0, i);
    await cdrs.create(
      { call_id: `call-${i}`, direction: "inbound", call_direction: "inbound", timestamp: toGregorianSeconds(started) + 5, duration_seconds: 5, billing_seconds: 4, hangup_cause: "NORMAL_CLEARING", pvt_started_ms: started },
      { modb: true },
    );
  }
});

afterAll(async () => {
  await api.close();
});

describe("basics.md", () => {
  it("basics.md › Resources (/v2/accounts/{ACCOUNT_ID}/devices/{DEVICE_ID})", async () => {
    const list = await curl("GET", `${base}/devices`, auth());
    expectSuccess(list, 200);
    const deviceId = String(rows(list)[0]?.id);
    expectSuccess(await curl("GET", `${base}/devices/${deviceId}`, auth()), 200, { id: deviceId });
  });

  it("basics.md › HTTP Verbs", async () => {
    const created = await curl("PUT", `${base}/blacklists`, authJson(), '{"data":{"name":"verbs"}}');
    expectSuccess(created, 201, { name: "verbs", id: expect.any(String) });
    const id = String((created.json.data as { id: string }).id);
    const summary = await curl("GET", `${base}/blacklists`, auth());
    expectSuccess(summary, 200);
    expect(rows(summary).map((r) => r.id)).toContain(id);
    expectSuccess(await curl("GET", `${base}/blacklists/${id}`, auth()), 200, { id, name: "verbs" });
    expectSuccess(await curl("POST", `${base}/blacklists/${id}`, authJson(), '{"data":{"name":"verbs renamed"}}'), 200, { id, name: "verbs renamed" });
    expectSuccess(await curl("DELETE", `${base}/blacklists/${id}`, auth()), 200, { id });
    expectError(await curl("GET", `${base}/blacklists/${id}`, auth()), 404, "bad_identifier", { cause: id, message: "bad identifier" });
  });

  it("basics.md › HTTP Verbs (ETag and If-Match)", async () => {
    const id = await newBlacklist("etag");
    const read = await curl("GET", `${base}/blacklists/${id}`, auth());
    const revision = String(read.json.revision);
    expect(read.headers.get("etag")).toBe(`"${revision}"`);
    const stale = await curl("POST", `${base}/blacklists/${id}`, { ...authJson(), "If-Match": `"1-${"0".repeat(32)}"` }, '{"data":{"name":"late"}}');
    expectError(stale, 409, "datastore_conflict");
    expectSuccess(await curl("POST", `${base}/blacklists/${id}`, { ...authJson(), "If-Match": `"${revision}"` }, '{"data":{"name":"on time"}}'), 200, { name: "on time" });
  });

  it("basics.md › HTTP Verbs (OPTIONS, CORS preflight)", async () => {
    const preflight = await curl("OPTIONS", `${base}/users`, { Origin: ALLOWED_ORIGIN, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "X-Auth-Token, Content-Type" });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("PUT");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("X-Auth-Token");
    // Without a preflight, OPTIONS names the endpoint's verbs, and needs no token (as crossbar's).
    const plain = await curl("OPTIONS", `${base}/users`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get("allow")).toBe("GET, PUT");
  });

  it("basics.md › PATCH", async () => {
    // As written: the URL comes before -d, the headers first.
    const res = await curl("PATCH", `${base}/users/${adminId}`, { "Content-Type": "application/json", "X-Auth-Token": token }, '{"data":{"vm_to_email_enabled":true}}');
    expectSuccess(res, 200, { id: adminId, vm_to_email_enabled: true, first_name: "Ada" });
    // "If a resource does not support PATCH yet, clients can expect to receive a 405".
    const refused = await curl("PATCH", "/v2/token_auth", { "Content-Type": "application/json", "X-Auth-Token": token }, '{"data":{}}');
    expectError(refused, 405, "invalid_method", { message: "invalid method" });
    expect(refused.headers.get("allow")).toBe("GET, DELETE");
    // An agent may not PATCH another user.
    const agent = await curl("PATCH", `${base}/users/${adminId}`, { "Content-Type": "application/json", "X-Auth-Token": agentToken }, '{"data":{"vm_to_email_enabled":false}}');
    expectError(agent, 403, "forbidden");
  });

  it("basics.md › Tunneling the HTTP Verb (in the request envelope)", async () => {
    const res = await curl("POST", `${base}/blacklists`, authJson(), '{"data":{"name":"tunnelled"},"verb":"PUT"}');
    expectSuccess(res, 201, { name: "tunnelled", id: expect.any(String) });
  });

  it("basics.md › Tunneling the HTTP Verb (as a query string parameter)", async () => {
    const res = await curl("POST", `${base}/blacklists?verb=PUT`, authJson(), '{"data":{"name":"tunnelled by query"}}');
    expectSuccess(res, 201, { name: "tunnelled by query" });
    const id = String((res.json.data as { id: string }).id);
    expectSuccess(await curl("POST", `${base}/blacklists/${id}?verb=DELETE`, auth()), 200, { id });
    expectError(await curl("GET", `${base}/blacklists/${id}`, auth()), 404, "bad_identifier");
    // A tunnelled verb keeps the verb's permissions: an agent cannot create a blacklist by POST.
    expectError(await curl("POST", `${base}/blacklists?verb=PUT`, { "X-Auth-Token": agentToken, "Content-Type": "application/json" }, '{"data":{"name":"agent"}}'), 403, "forbidden");
  });

  it("basics.md › Tunneling the Accept Header (accept=csv)", async () => {
    for (const accept of ["csv", "text/csv"]) {
      const res = await curl("GET", `${base}/users?accept=${encodeURIComponent(accept)}`, auth());
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
      expect(res.text.split("\n")[0]).toContain("first_name");
    }
  });

  it("basics.md › Tunneling the Accept Header (accept=text/html) [differs: no HTML view, the JSON envelope]", async () => {
    const res = await curl("GET", `${base}/users?accept=text/html`, auth());
    expectSuccess(res, 200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });

  it("basics.md › Request Envelope", async () => {
    const id = await newBlacklist("envelope");
    // The sample envelope: the token inside it (no header), the verb in lower case.
    const body = JSON.stringify({ data: { foo: "bar" }, auth_token: token, verb: "delete" });
    const res = await curl("POST", `${base}/blacklists/${id}`, { "Content-Type": "application/json" }, body);
    expectSuccess(res, 200, { id });
    expect(res.json).toMatchObject({ auth_token: token });
    expectError(await curl("GET", `${base}/blacklists/${id}`, auth()), 404, "bad_identifier");
    // A wrong token in the envelope is no token at all.
    const wrong = JSON.stringify({ data: {}, auth_token: "0".repeat(64), verb: "delete" });
    expectError(await curl("POST", `${base}/blacklists/${id}`, { "Content-Type": "application/json" }, wrong), 401, "invalid_credentials");
  });

  it("basics.md › Request Data", async () => {
    const id = await newBlacklist("request data");
    await curl("PATCH", `${base}/blacklists/${id}`, authJson(), '{"data":{"exists":"yes"}}');
    const res = await curl("PATCH", `${base}/blacklists/${id}`, authJson(), '{"data":{"update":"this","exists":null}}');
    expectSuccess(res, 200, { update: "this" });
    expect(res.json.data).not.toHaveProperty("exists");
  });

  it("basics.md › Response Envelope", async () => {
    const res = await curl("GET", `${base}/users/${adminId}`, auth());
    expectSuccess(res, 200, { id: adminId });
    expect(res.json).toMatchObject({ auth_token: token, status: "success", request_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(res.headers.get("x-request-id")).toBe(res.json.request_id);
    const error = await curl("GET", `${base}/users/${"0".repeat(32)}`, auth());
    expect(error.json).toMatchObject({ status: "error", error: "404", message: "bad_identifier", data: expect.any(Object), request_id: expect.any(String) });
  });

  it("basics.md › Response Envelope (request_id echoes X-Request-ID)", async () => {
    const requestId = "0123456789abcdef0123456789abcdef";
    const res = await curl("GET", `${base}/users/${adminId}`, { ...auth(), "X-Request-ID": requestId });
    expect(res.json.request_id).toBe(requestId);
    expect(res.headers.get("x-request-id")).toBe(requestId);
  });

  it("basics.md › CDR Pagination", async () => {
    // As written: a GET with a Content-Type and no body.
    const res = await curl("GET", `${base}/cdrs`, authJson());
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ page_size: 50, start_key: expect.any(String), next_start_key: expect.any(String), auth_token: token });
    expect(rows(res)).toHaveLength(50);
    // URL-safe, as the encoded keys are.
    expect(String(res.json.next_start_key)).toMatch(/^[A-Za-z0-9_.~-]+$/);
  });

  it("basics.md › Requesting next page", async () => {
    const first = await curl("GET", `${base}/cdrs`, authJson());
    const next = String(first.json.next_start_key);
    const res = await curl("GET", `${base}/cdrs?start_key=${next}`, authJson());
    expectSuccess(res, 200);
    expect(res.json.start_key).toBe(next);
    expect(res.json.page_size).toBe(CDR_COUNT - 50);
    // The last page: no next_start_key.
    expect(res.json).not.toHaveProperty("next_start_key");
    const seen = new Set([...rows(first), ...rows(res)].map((r) => r.id));
    expect(seen.size).toBe(CDR_COUNT);
    // The document's own key, from another server, is a position like any other, not an error.
    expectSuccess(await curl("GET", `${base}/cdrs?start_key=g2wAAAACbgUAb0ZX1A5oAWpq`, authJson()), 200);
  });

  it("basics.md › Setting Page Size", async () => {
    const res = await curl("GET", `${base}/cdrs?page_size=25`, authJson());
    expectSuccess(res, 200);
    expect(res.json.page_size).toBe(25);
    expect(rows(res)).toHaveLength(25);
    // The same start_key with another page_size changes next_start_key.
    const bigger = await curl("GET", `${base}/cdrs?page_size=30`, authJson());
    expect(bigger.json.start_key).toBe(res.json.start_key);
    expect(bigger.json.next_start_key).not.toBe(res.json.next_start_key);
    expectError(await curl("GET", `${base}/cdrs?page_size=0`, authJson()), 404, "faulty_request");
  });

  it("basics.md › Setting sorting order (ascending=true)", async () => {
    const newest = rows(await curl("GET", `${base}/cdrs?paginate=false`, auth())).map((r) => r.call_id);
    expect(newest[0]).toBe(`call-${CDR_COUNT - 1}`);
    const oldest = rows(await curl("GET", `${base}/cdrs?paginate=false&ascending=true`, auth())).map((r) => r.call_id);
    expect(oldest).toEqual([...newest].reverse());
  });

  it("basics.md › Setting sorting order (descending=false)", async () => {
    const oldest = rows(await curl("GET", `${base}/cdrs?paginate=false&descending=false`, auth())).map((r) => r.call_id);
    expect(oldest[0]).toBe("call-0");
    expect(oldest).toHaveLength(CDR_COUNT);
    // And the other way on a list that is ascending by default.
    const users = rows(await curl("GET", `${base}/users?paginate=false`, auth())).map((r) => r.id);
    const reversed = rows(await curl("GET", `${base}/users?paginate=false&ascending=false`, auth())).map((r) => r.id);
    expect(reversed).toEqual([...users].reverse());
  });

  it("basics.md › Disabling Pagination", async () => {
    const res = await curl("GET", `${base}/cdrs?paginate=false`, authJson());
    expectSuccess(res, 200);
    expect(rows(res)).toHaveLength(CDR_COUNT);
    for (const key of ["page_size", "start_key", "next_start_key"]) expect(res.json).not.toHaveProperty(key);
  });

  it("basics.md › Chunked Response [differs: answers are not chunked; the parameters change nothing]", async () => {
    const plain = await curl("GET", `${base}/cdrs?page_size=10`, authJson());
    const chunked = await curl("GET", `${base}/cdrs?page_size=10&is_chunked=true&chunk_size=3`, authJson());
    expectSuccess(chunked, 200);
    // Not read as filters: the same rows.
    expect(rows(chunked)).toEqual(rows(plain));
  });

  it("basics.md › Pretty Printing (X-Pretty-Print header)", async () => {
    // As written, with the trailing slash.
    const res = await curl("GET", `${base}/`, { "X-Auth-Token": token, "Content-Type": "application/json", "X-Pretty-Print": "true" });
    expectSuccess(res, 200, { id: accountId });
    expect(res.text).toContain('\n  "status": "success"');
  });

  it("basics.md › Pretty Printing (pretty_print in the URI)", async () => {
    const res = await curl("GET", `${base}?pretty_print=true`, { "X-Auth-Token": token, "Content-Type": "application/json" });
    expectSuccess(res, 200, { id: accountId });
    expect(res.text).toContain('\n  "data": {');
    const compact = await curl("GET", base, auth());
    expect(compact.text).not.toContain("\n");
  });

  it("basics.md › Requesting a range of binary data [differs: voicemail is not served]", async () => {
    const res = await curl("GET", `${base}/vmboxes/${"1".repeat(32)}/messages/${"2".repeat(32)}/raw`, {
      "X-Auth-Token": token,
      "Content-Type": "application/json",
      Accept: "audio/mpeg",
      Range: "bytes=0-99",
    });
    expectError(res, 404, "not_found", { message: "not found" });
    // The same request on a media file that is served answers the part asked for.
    const media = rows(await curl("GET", `${base}/media`, auth()))[0];
    const part = await curl("GET", `${base}/media/${String(media?.id)}/raw`, { "X-Auth-Token": token, Accept: "audio/wav", Range: "bytes=0-99" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toMatch(/^bytes 0-99\/\d+$/);
  });

  it("basics.md › Requesting data in CSV format (X-File-Name header)", async () => {
    const res = await curl("GET", `${base}/cdrs`, { Accept: "text/csv", "X-Auth-Token": token, "X-File-Name": "calls.csv" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="calls.csv"');
    expect(res.text.split("\n")[0]).toContain("call_id");
  });

  it("basics.md › Requesting data in CSV format (file_name in the URL)", async () => {
    const res = await curl("GET", `${base}/cdrs?file_name=january.csv`, { Accept: "text/csv", "X-Auth-Token": token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="january.csv"');
    // Every row of the page, plus the header line.
    expect(res.text.trim().split("\n")).toHaveLength(51);
  });
});
