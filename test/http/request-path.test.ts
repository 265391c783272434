// The request path every route shares (server/http/app.ts, endpoint.ts): the headers every
// answer carries, whoever makes the answer (a route, the guard, the error handler, the 404
// handler, Fastify's own path errors, the static files, a CORS preflight); request ids that never
// repeat; and the success envelope's bytes, which the server writes itself instead of Fastify.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { rawRequest, type RawAnswer } from "../helpers/raw-request.js";

const ALLOWED_ORIGIN = "http://console.example:9000";


let api: TestApi;
let rendererDir: string;
let token: string;
let accountId: string;
let deviceId: string;

/** One request as written, over a fresh connection (test/helpers/raw-request.ts). */
const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> =>
  rawRequest(api.server.port, method, path, headers, body);

beforeAll(async () => {
  rendererDir = await mkdtemp(join(tmpdir(), "sb-request-path-renderer-"));
  await writeFile(join(rendererDir, "index.html"), "<!doctype html><title>console</title>\n");
  api = await startApi({ config: { rendererDir, allowOrigins: [ALLOWED_ORIGIN] } });
  ({ token, accountId } = await api.login());
  const created = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/devices`, {
    token,
    data: { name: "path probe", device_type: "softphone", sip: { username: "pathprobe", password: "0123456789abcdef01234567" } },
  });
  expect(created.status, created.text).toBe(201);
  deviceId = created.body.data.id;
});

afterAll(async () => {
  await api.close();
  await rm(rendererDir, { recursive: true, force: true });
});

describe("the headers on every answer", () => {
  it("carry the request id and the browser hardening on successes, refusals, errors and 404s alike", async () => {
    const devices = `/v2/accounts/${accountId}/devices`;
    const json = { "X-Auth-Token": token, "Content-Type": "application/json" };
    const cases: { name: string; answer: () => Promise<RawAnswer>; status: number; page?: boolean }[] = [
      { name: "GET by id", answer: () => send("GET", `${devices}/${deviceId}`, { "X-Auth-Token": token }), status: 200 },
      { name: "a list", answer: () => send("GET", `${devices}?page_size=1`, { "X-Auth-Token": token }), status: 200 },
      { name: "a create", answer: () => send("PUT", devices, json, JSON.stringify({ data: { name: "second", device_type: "sip_device" } })), status: 201 },
      { name: "OPTIONS on an endpoint", answer: () => send("OPTIONS", devices), status: 200 },
      { name: "no token", answer: () => send("GET", devices), status: 401 },
      { name: "a dead token", answer: () => send("GET", devices, { "X-Auth-Token": "f".repeat(64) }), status: 401 },
      { name: "another account", answer: () => send("GET", `/v2/accounts/${"0".repeat(32)}/devices`, { "X-Auth-Token": token }), status: 403 },
      { name: "a missing document", answer: () => send("GET", `${devices}/${"0".repeat(32)}`, { "X-Auth-Token": token }), status: 404 },
      { name: "a verb the endpoint lacks", answer: () => send("DELETE", devices, { "X-Auth-Token": token }), status: 405 },
      { name: "bad JSON", answer: () => send("PUT", devices, json, "{not json"), status: 400 },
      { name: "a body type no parser takes", answer: () => send("PUT", devices, { "X-Auth-Token": token, "Content-Type": "text/plain" }, "x"), status: 415 },
      { name: "a stranger's big body", answer: () => send("PUT", "/v2/user_auth", { "Content-Type": "application/json" }, `{"data":"${"x".repeat(70_000)}"}`), status: 413 },
      { name: "no module", answer: () => send("GET", "/v2/no_such_module"), status: 404 },
      { name: "a forged Host (the guard)", answer: () => send("GET", devices, { Host: "evil.example", "X-Auth-Token": token }), status: 421 },
      { name: "a foreign Origin (the guard)", answer: () => send("GET", devices, { Origin: "http://evil.example", "X-Auth-Token": token }), status: 403 },
      { name: "bad percent-encoding (Fastify's own path error)", answer: () => send("GET", `${devices}/%zz`, { "X-Auth-Token": token }), status: 400 },
      { name: "a segment too long to route (Fastify's own path error)", answer: () => send("GET", `${devices}/${"a".repeat(120)}`, { "X-Auth-Token": token }), status: 404 },
      {
        name: "a CORS preflight",
        answer: () => send("OPTIONS", devices, { Origin: ALLOWED_ORIGIN, "Access-Control-Request-Method": "GET" }),
        status: 204,
      },
      { name: "the console page", answer: () => send("GET", "/"), status: 200, page: true },
      { name: "a missing asset", answer: () => send("GET", "/assets/none.js"), status: 404, page: true },
    ];
    for (const c of cases) {
      const res = await c.answer();
      expect(res.status, `${c.name}: ${res.body}`).toBe(c.status);
      const id = res.headers["x-request-id"];
      expect(id, c.name).toMatch(/^[0-9a-f]{32}$/);
      if (res.body !== "" && String(res.headers["content-type"]).startsWith("application/json")) {
        expect((JSON.parse(res.body) as { request_id?: string }).request_id, c.name).toBe(id);
      }
      expect(res.headers["x-frame-options"], c.name).toBe("DENY");
      expect(res.headers["x-content-type-options"], c.name).toBe("nosniff");
      expect(res.headers["referrer-policy"], c.name).toBe("no-referrer");
      if (c.page) expect(res.headers["content-security-policy"], c.name).toContain("default-src 'none'");
      else if (!String(res.headers["content-type"] ?? "").startsWith("text/html")) expect(res.headers["content-security-policy"], c.name).toBeUndefined();
    }
  });

  it("gives the docs page its own policy", async () => {
    const res = await send("GET", "/docs/");
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
    expect(res.headers["content-security-policy"]).toContain("style-src 'self' 'sha256-");
    expect(res.headers["x-frame-options"]).toBe("DENY");
  });
});

describe("request ids", () => {
  it("are 32 hex digits that never repeat, across more answers than one draw of random bytes serves", async () => {
    const seen = new Set<string>();
    const path = `/v2/accounts/${accountId}/devices/${deviceId}`;
    for (let batch = 0; batch < 6; batch++) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => api.call("GET", path, { token })));
      for (const res of answers) {
        const id = res.headers.get("x-request-id") ?? "";
        expect(id).toMatch(/^[0-9a-f]{32}$/);
        expect(res.body.request_id).toBe(id);
        seen.add(id);
      }
    }
    expect(seen.size).toBe(300);
  });

  it("echo a well-formed X-Request-ID and replace one that is not", async () => {
    const path = `/v2/accounts/${accountId}/devices/${deviceId}`;
    const given = await api.call("GET", path, { token, headers: { "X-Request-ID": "client-chosen.id:1" } });
    expect(given.headers.get("x-request-id")).toBe("client-chosen.id:1");
    expect(given.body.request_id).toBe("client-chosen.id:1");
    const refused = await api.call("GET", path, { token, headers: { "X-Request-ID": "has spaces" } });
    expect(refused.headers.get("x-request-id")).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe("the success envelope's bytes", () => {
  it("are JSON.stringify of the envelope in its key order, the document last keyed by its id and no private field", async () => {
    const res = await api.call<Record<string, unknown>>("GET", `/v2/accounts/${accountId}/devices/${deviceId}`, { token });
    const e = res.body;
    const { timestamp } = JSON.parse(res.text) as { timestamp: string };
    const expected = JSON.stringify({ status: "success", data: e.data, revision: e.revision, request_id: e.request_id, auth_token: token, timestamp });
    expect(res.text).toBe(expected);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(expected)));
    expect(res.headers.get("etag")).toBe(`"${String(e.revision)}"`);
    const keys = Object.keys(e.data);
    expect(keys.at(-1)).toBe("id");
    expect(keys.filter((k) => k === "id")).toHaveLength(1);
    expect(keys.some((k) => k.startsWith("pvt_"))).toBe(false);
    expect(e.data).toMatchObject({ id: deviceId, name: "path probe", device_type: "softphone" });
  });

  it("are the same envelope pretty-printed when asked", async () => {
    const res = await api.call("GET", `/v2/accounts/${accountId}/devices/${deviceId}`, { token, headers: { "X-Pretty-Print": "true" } });
    expect(res.text).toBe(`${JSON.stringify(res.body, null, 2)}\n`);
  });

  it("put a list's paging keys after the timestamp", async () => {
    const res = await api.call("GET", `/v2/accounts/${accountId}/devices`, { token, query: { page_size: "1" } });
    const e = res.body;
    expect(Object.keys(e)).toEqual(["status", "data", "revision", "request_id", "auth_token", "timestamp", "page_size", "start_key", "next_start_key"]);
    expect(res.text).toBe(JSON.stringify(e));
  });
});
