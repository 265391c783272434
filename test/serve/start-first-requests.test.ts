// The first request of each kind after a start is answered without a retry, in the built server
// (serve mode), including what is loaded on first use: the docs page (Swagger UI and its
// plug-ins are loaded and registered at the first /docs request, server/http/openapi.ts), the
// OpenAPI document, a sign-in and an authenticated read, a sim call. Each kind alone first, then
// all of them at once on a fresh server (concurrent first uses share one loading). And a route's
// schema at its first use, where the built server does not check schemas against the meta-schema
// (server/http/validation.ts): bad and good bodies at once get the validation envelope and answers.
// The first requests' schemas (sign-ins, a simulated call) come precompiled in the bundle
// (server/http/precompiled-validators.ts): their first uses compile nothing.
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { demoGrant, serve, type Served } from "../helpers/serve.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
});

interface Seen {
  status: number;
  type: string | null;
  csp: string | null;
  text: string;
}

async function get(path: string): Promise<Seen> {
  const res = await fetch(`${served?.url ?? ""}${path}`, { redirect: "manual" });
  return { status: res.status, type: res.headers.get("content-type"), csp: res.headers.get("content-security-policy"), text: await res.text() };
}

function expectDocsPage(page: Seen): void {
  expect(page.status).toBe(200);
  expect(page.type).toMatch(/^text\/html/);
  expect(page.text).toContain("swagger-ui");
  // This app's policy for the docs page, set on the answer it hands down.
  expect(page.csp).toContain("default-src 'none'");
}

describe("serve mode: the first request of each kind after start", () => {
  it("serves /docs/ first: the page, then its script, its JSON and its YAML", async () => {
    served = await serve({ timeoutMs: 120_000 });
    expectDocsPage(await get("/docs/"));
    const script = await get("/docs/static/swagger-initializer.js");
    expect(script.status).toBe(200);
    expect(script.type).toMatch(/javascript/);
    const json = await get("/docs/json");
    expect(json.status).toBe(200);
    expect((JSON.parse(json.text) as { openapi: string }).openapi).toBe("3.0.3");
    const yaml = await get("/docs/yaml");
    expect(yaml.status).toBe(200);
    expect(yaml.text).toMatch(/^openapi: 3\.0\.3$/m);
  });

  it("answers a path the docs page does not have with this app's not-found envelope, even first", async () => {
    served = await serve({ timeoutMs: 120_000 });
    const missing = await get("/docs/no-such-page");
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({ status: "error", error: "404" });
    expect((await get("/docs/static/no-such-file.js")).status).toBe(404);
  });

  it("serves /docs as /docs/, redirects the page's static copy to it, hands down its assets' caching headers", async () => {
    served = await serve({ timeoutMs: 120_000 });
    expectDocsPage(await get("/docs"));
    const moved = await fetch(`${served.url}/docs/static/index.html`, { redirect: "manual" });
    expect([301, 302]).toContain(moved.status);
    expect(moved.headers.get("location")).toBe("/docs/");
    const first = await fetch(`${served.url}/docs/static/swagger-ui.css`);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    expect(first.headers.get("content-type")).toMatch(/^text\/css/);
    expect(first.headers.get("etag")).toBeTruthy();
    expect(first.headers.get("last-modified")).toBeTruthy();
    expect(first.headers.get("x-frame-options")).toBe("DENY");
  });

  it("answers a first GET /docs/json that carries a body (the body is not handed down)", async () => {
    served = await serve({ timeoutMs: 120_000 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${served?.url ?? ""}/docs/json`, { method: "GET", headers: { "Content-Type": "text/plain", "Content-Length": "5" } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end("hello");
    });
    expect(status).toBe(200);
  });

  it("answers every kind at once on a fresh server: docs page, JSON, YAML, OpenAPI, sign-in, a read, a sim call", async () => {
    served = await serve({ timeoutMs: 120_000 });
    const url = served.url;
    const [page, json, yaml, openapi, grant] = await Promise.all([
      get("/docs/"),
      get("/docs/json"),
      get("/docs/yaml"),
      get("/v2/openapi.json"),
      demoGrant(url),
      get("/docs/static/swagger-ui-bundle.js"),
      get("/"),
    ]);
    expectDocsPage(page);
    expect(json.status).toBe(200);
    expect(yaml.status).toBe(200);
    expect(openapi.status).toBe(200);
    expect(JSON.parse(json.text)).toEqual(JSON.parse(openapi.text));
    const headers = { "X-Auth-Token": grant.token, "Content-Type": "application/json" };
    const [users, call] = await Promise.all([
      fetch(`${url}/v2/accounts/${grant.accountId}/users`, { headers }),
      fetch(`${url}/v2/accounts/${grant.accountId}/sim/calls`, {
        method: "POST",
        headers,
        body: JSON.stringify({ data: { to: "5001", caller_id_name: "First", caller_id_number: "+14155550100", audio: "tone_stream://1200" } }),
      }),
    ]);
    expect(users.status).toBe(200);
    expect(((await users.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    expect(call.status).toBe(201);
    const id = ((await call.json()) as { data: { id: string } }).data.id;
    const hangup = await fetch(`${url}/v2/accounts/${grant.accountId}/sim/calls/${id}`, { method: "POST", headers, body: JSON.stringify({ data: { action: "hangup" } }) });
    expect(hangup.status).toBeLessThan(300);
  });

  it("validates a route's first bodies, bad and good at once, with the validation envelope", async () => {
    served = await serve({ timeoutMs: 120_000 });
    const url = served.url;
    const signIn = (data: unknown) =>
      fetch(`${url}/v2/user_auth`, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ data }) });
    const [wrongType, missing, good] = await Promise.all([
      signIn({ credentials: 5, account_name: "demo" }),
      signIn({ account_name: "demo" }),
      demoGrant(url),
    ]);
    for (const [res, field, rule] of [
      [wrongType, "credentials", "type"],
      [missing, "credentials", "required"],
    ] as const) {
      expect(res.status).toBe(400);
      const body = (await res.json()) as { status: string; error: string; data: Record<string, Record<string, unknown>> };
      expect(body).toMatchObject({ status: "error", error: "400" });
      expect(body.data[field]?.[rule]).toBeDefined();
    }
    expect(good.token).toBeTruthy();
    // The same schema, compiled once, keeps answering both ways.
    expect((await signIn({ credentials: 5, account_name: "demo" })).status).toBe(400);
  });

  it("checks the first requests' bodies with the build's precompiled validators, compiling none; other schemas at their first use", async () => {
    // ajv compiles each validator with `new Function("self", "scope", code)`: the preload counts them
    // on stderr. The sign-ins' and a simulated call's schemas come compiled in the bundle
    // (server/api/precompiled-schemas.ts), so neither their first good nor their first bad bodies
    // compile anything; a schema the build did not compile (a simulated text's) still is, at its
    // first use, and answers the same envelope.
    const counter = `data:text/javascript,${encodeURIComponent(
      'const F = globalThis.Function; globalThis.Function = new Proxy(F, { construct(t, a, n) { if (a[0] === "self" && a[1] === "scope") process.stderr.write("[ajv-compiled]\\n"); return Reflect.construct(t, a, n); } });',
    )}`;
    served = await serve({ timeoutMs: 120_000, nodeArgs: ["--import", counter] });
    const url = served.url;
    const compiles = () => (served?.output().match(/\[ajv-compiled\]/g) ?? []).length;
    const put = (path: string, data: unknown, token?: string) =>
      fetch(`${url}${path}`, { method: "PUT", headers: { "Content-Type": "application/json", ...(token ? { "X-Auth-Token": token } : {}) }, body: JSON.stringify({ data }) });
    const post = (path: string, data: unknown, token: string) =>
      fetch(`${url}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "X-Auth-Token": token }, body: JSON.stringify({ data }) });
    const fieldErrors = async (res: Response) => {
      expect(res.status).toBe(400);
      const body = (await res.json()) as { status: string; error: string; data: Record<string, Record<string, { message: string }>> };
      expect(body).toMatchObject({ status: "error", error: "400" });
      return body.data;
    };
    const before = compiles();
    const badSignIn = await fieldErrors(await put("/v2/user_auth", { credentials: "zz", account_name: "" }));
    expect(badSignIn.credentials?.pattern?.message).toBe("Value does not match pattern ^([0-9a-fA-F]{32}|[0-9a-fA-F]{40})$");
    expect(badSignIn.account_name?.minLength).toMatchObject({ message: "Value is below the minLength of 1", target: 1, value: "" });
    const grant = await demoGrant(url);
    expect((await fetch(`${url}/v2/accounts/${grant.accountId}`, { headers: { "X-Auth-Token": grant.token } })).status).toBe(200);
    const badKey = await fieldErrors(await put("/v2/api_auth", { api_key: "" }));
    expect(badKey.api_key?.minLength).toBeDefined();
    const badCall = await fieldErrors(await post(`/v2/accounts/${grant.accountId}/sim/calls`, { to: "50 01", phone: { answer: "maybe" } }, grant.token));
    expect(Object.keys(badCall).sort()).toEqual(["caller_id_number", "phone.answer", "to"]);
    expect(compiles()).toBe(before);
    // A schema the build left out: compiled here at its first use, the same envelope.
    const badText = await fieldErrors(await post(`/v2/accounts/${grant.accountId}/sim/messages`, { from: 5 }, grant.token));
    expect(badText.from?.type).toBeDefined();
    // Its line went to stderr before the answer left; wait for the pipe, not a time.
    await vi.waitFor(() => expect(compiles()).toBeGreaterThan(before), { timeout: 30_000, interval: 50 });
  });
});
