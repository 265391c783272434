// Every endpoint answers every method on its own path, though only its own verbs are routes of
// their own (server/http/endpoint.ts, registerOtherMethods): a method it lacks is 405 with Allow
// (after the token and the account are checked), OPTIONS lists its verbs, HEAD beside no GET is
// 405, a POST may tunnel one of its verbs, a static path wins over a parameter as in the router,
// an over-long segment is 404 bad_identifier, and a path of no endpoint stays 404 with its body
// unread. Walked over the whole catalogue as /v2/openapi.json documents it.
import { describe, expect, it } from "vitest";
import { catalogueApi, OTHER_ACCOUNT_ID } from "../helpers/catalogue-api.js";
import type { RawAnswer } from "../helpers/raw-request.js";

const VERBS = ["get", "put", "post", "patch", "delete"];

const served = catalogueApi();
const send = served.send;

function allowOf(raw: RawAnswer): string[] {
  return String(raw.headers.allow ?? "")
    .split(",")
    .map((m) => m.trim().toLowerCase())
    .filter((m) => m !== "")
    .sort();
}

function documented(path: string): string[] {
  return Object.keys(served.paths[path] ?? {})
    .filter((m) => VERBS.includes(m))
    .sort();
}

/** The catalogue's paths (the API's, not the texting API's, the websockets' or the documents'). */
function catalogue(): string[] {
  return served.apiPaths().filter((p) => documented(p).length > 0);
}

/** The token, and for the verbs that carry one an empty envelope with its length declared. */
function withBody(verb: string): [Record<string, string>, string | undefined] {
  if (verb === "get" || verb === "delete") return [{ "X-Auth-Token": served.token }, undefined];
  return [{ "X-Auth-Token": served.token, "Content-Type": "application/json", "Content-Length": "2" }, "{}"];
}

describe("the methods an endpoint does not have", () => {
  it("are 405 with the endpoint's own verbs in Allow, on every path of the catalogue", async () => {
    const wrong: string[] = [];
    let tried = 0;
    for (const path of catalogue()) {
      const own = documented(path);
      for (const verb of VERBS.filter((v) => !own.includes(v))) {
        const res = await send(verb.toUpperCase(), served.fill(path), ...withBody(verb));
        tried++;
        const errorCode = res.body === "" ? undefined : (JSON.parse(res.body) as { error?: string }).error;
        if (res.status !== 405 || errorCode !== "405" || allowOf(res).join() !== own.join()) wrong.push(`${verb} ${path}: ${res.status} allow=${allowOf(res).join()} ${res.body.slice(0, 120)}`);
      }
    }
    expect(tried).toBeGreaterThan(200);
    expect(wrong).toEqual([]);
  });

  it("OPTIONS lists the endpoint's verbs on every path", async () => {
    const wrong: string[] = [];
    for (const path of catalogue()) {
      const res = await send("OPTIONS", served.fill(path));
      if (res.status !== 200 || allowOf(res).join() !== documented(path).join()) wrong.push(`${path}: ${res.status} ${allowOf(res).join()}`);
    }
    expect(wrong).toEqual([]);
  });

  it("check a token outside the body and its account first: 401 for a dead one, 403 for another account, before 405", async () => {
    const getOnly = catalogue().find((p) => p.startsWith("/v2/accounts/{account_id}/") && documented(p).join() === "get");
    expect(getOnly).toBeDefined();
    const path = served.fill(getOnly ?? "");
    const json = { "Content-Type": "application/json", "Content-Length": "2" };
    expect((await send("PATCH", path, { "X-Auth-Token": "f".repeat(64), ...json }, "{}")).status, "dead token").toBe(401);
    // No token outside the body: it could be in the envelope, which is read only for a verb it has.
    expect((await send("PATCH", path, json, "{}")).status, "no token").toBe(405);
    const other = path.replace(served.accountId, OTHER_ACCOUNT_ID);
    expect((await send("DELETE", other, { "X-Auth-Token": served.token })).status, "other account").toBe(403);
    // A body that is not JSON is refused before anything else when no token came outside it.
    expect((await send("PUT", path, { "Content-Type": "text/plain", "Content-Length": "1" }, "x")).status, "text body, no token").toBe(401);
    expect((await send("PUT", path, { "X-Auth-Token": served.token, "Content-Type": "application/json", "Content-Length": "1" }, "{")).status, "bad JSON").toBe(400);
  });

  it("HEAD is 405 where the endpoint has no GET, and the GET's headers where it has one", async () => {
    const noGet = catalogue().find((p) => !documented(p).includes("get") && p.startsWith("/v2/accounts/{account_id}/"));
    expect(noGet).toBeDefined();
    const head = await send("HEAD", served.fill(noGet ?? ""), { "X-Auth-Token": served.token });
    expect(head.status).toBe(405);
    expect(head.body).toBe("");
    const devices = await send("HEAD", `/v2/accounts/${served.accountId}/devices`, { "X-Auth-Token": served.token });
    expect(devices.status).toBe(200);
    expect(devices.body).toBe("");
  });

  it("a POST tunnels a verb the endpoint has on a path without POST", async () => {
    const getNoPost = catalogue().find((p) => p.startsWith("/v2/accounts/{account_id}/") && !p.includes("{id}") && documented(p).includes("get") && !documented(p).includes("post"));
    expect(getNoPost).toBeDefined();
    const path = served.fill(getNoPost ?? "");
    const read = await send("GET", path, { "X-Auth-Token": served.token });
    const tunnelled = await send("POST", `${path}?verb=GET`, { "X-Auth-Token": served.token, "Content-Type": "application/json" }, "{}");
    expect(tunnelled.status).toBe(read.status);
    expect(JSON.parse(tunnelled.body).data).toEqual(JSON.parse(read.body).data);
    const refused = await send("POST", `${path}?verb=PATCH`, { "X-Auth-Token": served.token, "Content-Type": "application/json" }, "{}");
    expect(documented(getNoPost ?? "").includes("patch") ? refused.status : 405).toBe(refused.status);
  });

  it("takes a static segment before a parameter, as the router does", async () => {
    // Pairs of documented paths that differ only where one has a static segment and the other a parameter.
    const all = catalogue();
    const pairs: [string, string][] = [];
    for (const a of all) {
      for (const b of all) {
        const sa = a.split("/");
        const sb = b.split("/");
        if (a === b || sa.length !== sb.length) continue;
        const diff = sa.map((s, i) => [s, sb[i] ?? ""] as const).filter(([x, y]) => x !== y);
        if (diff.length === 1 && !diff[0]?.[0].startsWith("{") && diff[0]?.[1].startsWith("{")) pairs.push([a, b]);
      }
    }
    expect(pairs.length).toBeGreaterThan(0);
    for (const [staticPath] of pairs) {
      const own = documented(staticPath);
      const missing = VERBS.find((v) => !own.includes(v));
      if (missing === undefined) continue;
      const res = await send(missing.toUpperCase(), served.fill(staticPath), ...withBody(missing));
      expect(allowOf(res), `${missing} ${staticPath}`).toEqual(own);
    }
  });

  it("a segment over 100 characters is 404 bad_identifier, a trailing slash is the same path", async () => {
    const getOnly = catalogue().find((p) => p.startsWith("/v2/accounts/{account_id}/") && p.endsWith("}") && !documented(p).includes("patch"));
    expect(getOnly).toBeDefined();
    const long = served.fill(getOnly ?? "").replace(/[0-9a-f]{32}$/, "a".repeat(101));
    const res = await send("PATCH", long, { "X-Auth-Token": served.token, "Content-Type": "application/json" }, "{}");
    expect(res.status).toBe(404);
    expect(res.body).toContain("bad_identifier");
    const slash = await send("PATCH", `/v2/accounts/${served.accountId}/devices/`, { "X-Auth-Token": served.token, "Content-Type": "application/json" }, "{}");
    expect(slash.status).toBe(405);
  });

  it("a path of no endpoint is 404 for every method, its body unread; 401 first for a dead token", async () => {
    for (const method of ["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"]) {
      const res = await send(method, `/v2/accounts/${served.accountId}/no_such_things`, { "X-Auth-Token": served.token, "Content-Type": "application/json", "Content-Length": "9" }, "{not json");
      expect(res.status, method).toBe(404);
      expect(res.body, method).toContain("not_found");
      const dead = await send(method, `/v2/no_such_module`, { "X-Auth-Token": "f".repeat(64) });
      expect(dead.status, method).toBe(method === "OPTIONS" ? 404 : 401);
    }
    expect((await send("HEAD", `/v2/accounts/${served.accountId}/no_such_things`, { "X-Auth-Token": served.token })).status).toBe(404);
  });
});
