// A HEAD of an endpoint that has GET is that GET without its body, on every path of the catalogue
// and whoever asks: a valid token, none, a dead one, another account's path, an upgrade, a body
// declared too large, a held ETag. Since session 24 such a HEAD is no route of its own (Fastify's
// HEAD beside each GET cost a fifth of a start's route building): the one route of
// registerOtherMethods (server/http/endpoint.ts) runs the endpoint's GET handler for it and drops
// the body as Fastify's HEAD route did. These answers pin what the HEAD routes answered.
import { connect } from "node:net";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { catalogueApi, OTHER_ACCOUNT_ID } from "../helpers/catalogue-api.js";
import type { RawAnswer } from "../helpers/raw-request.js";
import { systemClock } from "../../server/clock.js";
import { registerEndpoint, type EndpointDeps, type EndpointSpec } from "../../server/http/endpoint.js";

const served = catalogueApi();
const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> =>
  headers.Upgrade === undefined ? served.send(method, path, headers, body) : upgrade(method, path, headers);

/**
 * An upgrade asked for, over a bare socket (the refusal may be a handshake then a close, or an
 * answer with a body even to a HEAD): the status line and headers of what the server wrote first.
 */
function upgrade(method: string, path: string, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(served.api.server.port, "127.0.0.1");
    let text = "";
    const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${served.api.server.port}`, "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => {
      const head = text.slice(0, text.indexOf("\r\n\r\n"));
      const [status = "", ...rest] = head.split("\r\n");
      const got: Record<string, string> = {};
      for (const line of rest) got[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
      resolve({ status: Number(status.split(" ")[1]), headers: got, body: "" });
    });
    socket.end(`${lines.join("\r\n")}\r\n\r\n`);
  });
}

/** The headers that differ between any two answers. */
const PER_ANSWER = new Set(["date", "x-request-id", "connection", "keep-alive", "sec-websocket-accept"]);

function sameHeaders(a: RawAnswer, withLength: boolean): Record<string, unknown> {
  return Object.fromEntries(Object.entries(a.headers).filter(([k]) => !PER_ANSWER.has(k) && (withLength || k !== "content-length")));
}

/** The catalogue's paths that have GET (the API's, not the texting API's, the websockets' or the documents'). */
function withGet(): string[] {
  return served.apiPaths().filter((p) => "get" in (served.paths[p] ?? {}));
}

/**
 * GET, GET, HEAD, GET: the HEAD's status and headers are the last GET's (its length too where the
 * GETs agree on it), with no body. (A list's page is kept from its second ask on, a path apart
 * from its first, so the HEAD is compared with the asks around it, not with the first.)
 */
async function compare(path: string, headers: Record<string, string>, body?: string): Promise<string | null> {
  await send("GET", path, headers, body);
  const get = await send("GET", path, headers, body);
  const head = await send("HEAD", path, headers, body);
  const again = await send("GET", path, headers, body);
  const stable = get.headers["content-length"] === again.headers["content-length"] && get.status === again.status;
  if (head.body !== "") return `${path}: HEAD had a body`;
  // An upgrade the GET takes (a public endpoint's, whatever the token) is no handshake as a HEAD.
  if (again.status === 101) return head.status === 405 ? null : `${path}: HEAD ${head.status} to an upgrade the GET took`;
  if (head.status !== again.status) return `${path}: HEAD ${head.status}, GET ${again.status} ${again.body.slice(0, 100)}`;
  const a = JSON.stringify(sameHeaders(head, stable));
  const b = JSON.stringify(sameHeaders(again, stable));
  return a === b ? null : `${path}: HEAD headers ${a} against GET ${b}`;
}

describe("a HEAD of an endpoint with GET", () => {
  it("is its GET without the body, on every path, for a caller with a token", async () => {
    const wrong: string[] = [];
    for (const path of withGet()) {
      const w = await compare(served.fill(path), { "X-Auth-Token": served.token });
      if (w) wrong.push(w);
    }
    expect(withGet().length).toBeGreaterThan(60);
    expect(wrong).toEqual([]);
  });

  it("is its GET's refusal for no token, a dead one, another account, a text body, a body too large, an upgrade", async () => {
    const wrong: string[] = [];
    const dead = "f".repeat(64);
    for (const path of withGet()) {
      const filled = served.fill(path);
      const other = filled.replace(served.accountId, OTHER_ACCOUNT_ID);
      for (const [what, p, headers] of [
        ["no token", filled, {}],
        ["dead token", filled, { "X-Auth-Token": dead }],
        ["other account", other, { "X-Auth-Token": served.token }],
        ["text body, no token", filled, { "Content-Type": "text/plain" }],
        ["declared too large, no token", filled, { "Content-Type": "application/json", "Content-Length": "99999999" }],
        ["upgrade with a dead token", filled, { "X-Auth-Token": dead, Connection: "Upgrade", Upgrade: "websocket" }],
      ] as const) {
        const w = await compare(p, { ...headers }, headers["Content-Length"] === undefined ? undefined : "{").catch((err: unknown) => String(err));
        if (w) wrong.push(`${what}: ${w}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("with a token and an upgrade is refused as the GET's upgrade is, by the handshake's own rule (a HEAD is no handshake: 405)", async () => {
    const wrong: string[] = [];
    for (const path of withGet()) {
      const headers = { "X-Auth-Token": served.token, Connection: "Upgrade", Upgrade: "websocket" };
      const get = await send("GET", served.fill(path), headers);
      const head = await send("HEAD", served.fill(path), headers);
      if (get.status !== 101 || head.status !== 405 || head.headers.connection !== "close") wrong.push(`${path}: GET ${get.status}, HEAD ${head.status}`);
    }
    expect(wrong).toEqual([]);
  });

  it("answers 304 to the GET's held ETag, and the same query and trailing slash as the GET", async () => {
    const path = `/v2/accounts/${served.accountId}`;
    const etag = String((await send("GET", path, { "X-Auth-Token": served.token })).headers.etag);
    expect(etag).toMatch(/^"/);
    const held = await send("HEAD", path, { "X-Auth-Token": served.token, "If-None-Match": etag });
    expect(held.status).toBe(304);
    expect(held.headers.etag).toBe(etag);
    for (const p of [`${path}/`, `/v2/accounts/${served.accountId}/users?page_size=1`, `/v2/accounts/${served.accountId}/users?accept=csv`, `/v2/accounts/${"a".repeat(101)}`]) {
      expect(await compare(p, { "X-Auth-Token": served.token })).toBeNull();
    }
  });
});

describe("an endpoint's routes", () => {
  it("list HEAD beside each GET in the server's routes, as when HEAD was a route of its own", () => {
    const listed = new Set(served.api.server.routes.map((r) => `${r.method} ${r.url}`));
    // The endpoints' own GETs (the catalogue lists the 405 of a GET an endpoint lacks too, and no HEAD for it).
    const own = new Set(withGet());
    const gets = served.api.server.routes.filter((r) => r.method === "GET" && own.has(r.url.replace(/:([a-z_]+)/g, "{$1}")));
    expect(gets.length).toBeGreaterThan(60);
    expect(gets.filter((r) => !listed.has(`HEAD ${r.url}`)).map((r) => r.url)).toEqual([]);
  });

  it("have no HEAD route beside a GET: the other methods' route answers it", async () => {
    const app = Fastify();
    const auth = { authenticateHeld: () => undefined, authenticate: () => Promise.reject(new Error("no tokens here")) } as unknown as EndpointDeps["auth"];
    const spec: EndpointSpec = {
      path: "/v2/things/:id",
      access: "public",
      tag: "things",
      verbs: { GET: { summary: "a thing", handler: ({ params }) => ({ data: { id: params.id } }) } },
    };
    registerEndpoint(app, { clock: systemClock, auth, catalogue: [] }, spec);
    await app.ready();
    expect(app.hasRoute({ method: "GET", url: "/v2/things/:id" })).toBe(true);
    expect(app.hasRoute({ method: "HEAD", url: "/v2/things/:id" })).toBe(false);
    const get = await app.inject({ method: "GET", url: "/v2/things/x1" });
    const head = await app.inject({ method: "HEAD", url: "/v2/things/x1" });
    expect(get.statusCode).toBe(200);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe("");
    expect(head.headers["content-length"]).toBe(get.headers["content-length"]);
    await app.close();
  });
});
