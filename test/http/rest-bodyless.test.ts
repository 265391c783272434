// An endpoint's GET (and Fastify's HEAD beside it) runs in a route with no hooks of its own, its
// token check in the handler (server/http/endpoint.ts, bodylessHandler), and the app's not-found
// answers keep their body unread through a hook of the not-found handlers alone (server/http/app.ts,
// unreadBodyOf404): the same answers as when the route's onRequest and preParsing hooks did it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, TestClock, type TestApi } from "../helpers/api.js";
import { rawRequest, type RawAnswer } from "../helpers/raw-request.js";

const TTL_S = 300;
const clock = new TestClock();
let api: TestApi;
let token: string;
let accountId: string;
let ownerId: string;
let deviceId: string;


/** One request as written, over a fresh connection (test/helpers/raw-request.ts). */
const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> =>
  rawRequest(api.server.port, method, path, headers, body);

/** The headers that differ between any two answers (or between a GET's and a HEAD's, for the body's framing). */
const PER_ANSWER = new Set(["date", "x-request-id", "connection", "keep-alive"]);

function sameHeaders(a: RawAnswer): Record<string, unknown> {
  return Object.fromEntries(Object.entries(a.headers).filter(([k]) => !PER_ANSWER.has(k)));
}

function errorOf(a: RawAnswer): string {
  return (JSON.parse(a.body) as { error?: string; message?: string }).message ?? "";
}

beforeAll(async () => {
  api = await startApi({ clock, tokenTtlS: TTL_S });
  ({ token, accountId, ownerId } = await api.login());
  const created = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/devices`, {
    token,
    data: { name: "bodyless probe", device_type: "softphone", sip: { username: "bodyless", password: "0123456789abcdef01234567" } },
  });
  expect(created.status, created.text).toBe(201);
  deviceId = created.body.data.id;
});

afterAll(async () => {
  await api.close();
});

describe("a GET and a HEAD of an endpoint", () => {
  it("answer with the same status and headers (ETag, Vary, type, length), the HEAD without a body, for a document, a list and CSV", async () => {
    for (const path of [`/v2/accounts/${accountId}/devices/${deviceId}`, `/v2/accounts/${accountId}/devices?page_size=5`, `/v2/accounts/${accountId}/devices?accept=csv`]) {
      const get = await send("GET", path, { "X-Auth-Token": token });
      const head = await send("HEAD", path, { "X-Auth-Token": token });
      expect(get.status, path).toBe(200);
      expect(head.status, path).toBe(200);
      expect(head.body, path).toBe("");
      expect(get.body.length, path).toBeGreaterThan(0);
      expect(sameHeaders(head), path).toEqual(sameHeaders(get));
      if (!path.includes("csv")) {
        expect(get.headers.etag, path).toMatch(/^"/);
        expect(get.headers.vary, path).toBe("X-Auth-Token, Authorization");
      }
    }
  });

  it("answer 304 to a held ETag, both of them", async () => {
    const path = `/v2/accounts/${accountId}/devices/${deviceId}`;
    const etag = String((await send("GET", path, { "X-Auth-Token": token })).headers.etag);
    for (const method of ["GET", "HEAD"]) {
      const held = await send(method, path, { "X-Auth-Token": token, "If-None-Match": etag });
      expect(held.status, method).toBe(304);
      expect(held.body, method).toBe("");
      expect(held.headers.etag, method).toBe(etag);
    }
  });

  it("refuse in the hooks' old order: a body that cannot carry a token 401, a tokenless declared body over 64 KiB 413, a dead token 401 before it, another account 403", async () => {
    const path = `/v2/accounts/${accountId}/devices/${deviceId}`;
    for (const method of ["GET", "HEAD"]) {
      const plain = await send(method, path, { "Content-Type": "text/plain", "Content-Length": "1" }, "x");
      expect(plain.status, method).toBe(401);
      const large = await send(method, path, { "Content-Type": "application/json", "Content-Length": String(70 * 1024) }, "{");
      expect(large.status, method).toBe(413);
      const dead = await send(method, path, { "X-Auth-Token": "0".repeat(32), "Content-Type": "application/json", "Content-Length": String(70 * 1024) }, "{");
      expect(dead.status, method).toBe(401);
      const other = await send(method, path.replace(accountId, "f".repeat(32)), { "X-Auth-Token": token });
      expect(other.status, method).toBe(403);
      const none = await send(method, path);
      expect(none.status, method).toBe(401);
    }
    expect(errorOf(await send("GET", path, { "Content-Type": "application/json", "Content-Length": String(70 * 1024) }, "{"))).toBe("payload_too_large");
    expect(errorOf(await send("GET", path))).toBe("invalid_credentials");
  });

  it("refuse a token idle past its expiry, held or not, and take a fresh one", async () => {
    const path = `/v2/accounts/${accountId}/devices/${deviceId}`;
    const { token: idle } = await api.login();
    expect((await send("GET", path, { "X-Auth-Token": idle })).status).toBe(200);
    clock.advance((TTL_S + 10) * 1000);
    const expired = await send("GET", path, { "X-Auth-Token": idle });
    expect(expired.status).toBe(401);
    expect(errorOf(expired)).toBe("invalid_credentials");
    expect((await send("HEAD", path, { "X-Auth-Token": idle })).status).toBe(401);
    const { token: fresh } = await api.login();
    expect((await send("GET", path, { "X-Auth-Token": fresh })).status).toBe(200);
  });
});

describe("a path of no route", () => {
  it("outside /v2/ is the 404 envelope, its body never parsed", async () => {
    const res = await send("POST", "/no-such-page", { "Content-Type": "application/json", "Content-Length": "9" }, "{not json");
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ status: "error", error: "404", message: "not_found" });
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/);
  });

  it("in the texting API is its own 404, its body never parsed", async () => {
    // (A fresh token: the clock has moved past the first one's expiry.)
    const { token: fresh } = await api.login();
    const settings = await api.call<{ account_uid: string; access_token: string }>("GET", `/v2/accounts/${accountId}/users/${ownerId}/texting`, { token: fresh });
    expect(settings.status, settings.text).toBe(200);
    const bearer = `Bearer ${settings.body.data.account_uid}:${settings.body.data.access_token}`;
    const res = await send("POST", "/texting/api/no-such-thing", { Authorization: bearer, "Content-Type": "application/json", "Content-Length": "9" }, "{not json");
    expect(JSON.parse(res.body)).toEqual({ errors: ["Not found"] });
    expect(res.status).toBe(404);
  });
});
