// Issue 14, items 10 and 15, against serve mode: a stranger's body is never parsed (the token
// outside the body is checked first, a no-route request is 404 without reading it), bodies are
// bounded (1 MiB, 5,000 values, 128 levels; 64 KiB when the token is inside the envelope),
// PATCH takes only an object, server-owned fields are never stored, and only JSON is JSON.
// Every refusal is the error envelope and changes nothing.
import { request } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGrant, serve, type DemoGrant, type Served } from "../helpers/serve.js";

let served: Served;
let admin: DemoGrant;
let agent: DemoGrant;
let devices: string;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

async function http(method: string, path: string, options: { token?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.body === undefined ? {} : { "Content-Type": "application/json" }), ...options.headers };
  if (options.token) headers["X-Auth-Token"] = options.token;
  const res = await fetch(`${served.url}${path}`, { method, headers, body: options.body });
  const text = await res.text();
  const body = (res.headers.get("content-type") ?? "").includes("json") ? (JSON.parse(text) as Record<string, unknown>) : {};
  return { status: res.status, headers: res.headers, body, text };
}

/** The list's content revision and every device's revision: any write changes it. */
async function devicesState(): Promise<string> {
  const res = await http("GET", `${devices}?paginate=false`, { token: admin.token });
  expect(res.status).toBe(200);
  return `${String(res.body.revision)}:${JSON.stringify(res.body.data)}`;
}

function expectEnvelope(res: Answer, status: number, message: string): void {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(res.body).toMatchObject({ status: "error", error: String(status), message });
}

/** Sends only the request head over a raw socket and returns the status line of the answer. */
function headOnly(head: string): Promise<string> {
  const { hostname, port } = new URL(served.url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(head));
    let got = "";
    socket.on("data", (chunk: Buffer) => {
      got += chunk.toString("latin1");
      const line = got.indexOf("\r\n");
      if (line >= 0) {
        resolve(got.slice(0, line));
        socket.destroy();
      }
    });
    socket.on("error", reject);
  });
}

/**
 * Sends a request the way curl sends a large body: the head with `Expect: 100-continue`, the body
 * only if no final answer comes first. A server refusing by the declared length answers at once
 * and never reads the body; a client that pushed the body anyway would race the server's close
 * (fetch fails with EPIPE now and then), which is no answer to test.
 */
function exchange(method: string, path: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const { hostname, port } = new URL(served.url);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, "Connection: close", "Expect: 100-continue", `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(head));
    let got = "";
    let sent = false;
    const finalAnswer = (): string | undefined => got.replace(/^HTTP\/1\.1 100 [^\r]*\r\n\r\n/, "").match(/^HTTP\/1\.1 [2-5]\d\d[\s\S]*\r\n\r\n[\s\S]*$/)?.[0];
    const sendBody = (): void => {
      if (sent || finalAnswer() !== undefined) return;
      sent = true;
      socket.write(body);
    };
    socket.on("data", (chunk: Buffer) => {
      got += chunk.toString("utf8");
      if (/^HTTP\/1\.1 100 /.test(got) && finalAnswer() === undefined) setTimeout(sendBody, 300);
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const text = finalAnswer() ?? "";
      const [top = "", payload = ""] = text.split("\r\n\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(top)?.[1] ?? 0);
      const answer = new Headers();
      for (const line of top.split("\r\n").slice(1)) {
        const at = line.indexOf(":");
        if (at > 0) answer.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
      }
      const json = payload.trim().startsWith("{") ? (JSON.parse(payload) as Record<string, unknown>) : {};
      resolve({ status, headers: answer, body: json, text: payload });
    });
  });
}

beforeAll(async () => {
  served = await serve();
  admin = await demoGrant(served.url, "admin");
  agent = await demoGrant(served.url, "agent1");
  devices = `/v2/accounts/${admin.accountId}/devices`;
}, 60_000);
afterAll(async () => {
  await served.stop();
});

describe("a stranger's body is never parsed", () => {
  it("answers a missing, unknown or foreign token with 401/403 before reading a body that is not even JSON", async () => {
    const garbage = `{"data": ${"x".repeat(200_000)}`;
    const before = await devicesState();
    expectEnvelope(await http("PUT", devices, { token: "0".repeat(32), body: garbage }), 401, "invalid_credentials");
    expectEnvelope(await http("PUT", devices, { body: garbage, headers: { Authorization: "Bearer nope" } }), 401, "invalid_credentials");
    expectEnvelope(await http("PUT", `${devices}?auth_token=nope`, { body: garbage }), 401, "invalid_credentials");
    // Past the 1 MiB bound too: still 401, the size is never looked at.
    expectEnvelope(await http("PUT", devices, { token: "0".repeat(32), body: "[".repeat(2 * 1024 * 1024) }), 401, "invalid_credentials");
    // A live token of another account, and an agent on an admin verb: refused before the body.
    expectEnvelope(await http("PUT", devices.replace(admin.accountId, "f".repeat(32)), { token: admin.token, body: garbage }), 403, "forbidden");
    expectEnvelope(await http("PUT", devices, { token: agent.token, body: garbage }), 403, "forbidden");
    expect(await devicesState()).toBe(before);
  });

  it("answers a request head declaring 50 MB with 401 without waiting for a byte of its body", async () => {
    const { host } = new URL(served.url);
    const status = await headOnly(
      `PUT ${devices} HTTP/1.1\r\nHost: ${host}\r\nX-Auth-Token: ${"0".repeat(32)}\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n`,
    );
    expect(status).toBe("HTTP/1.1 401 Unauthorized");
  });

  it("answers a path that is no route with 404 without parsing its body", async () => {
    expectEnvelope(await http("POST", "/v2/nowhere", { body: "{not json" }), 404, "not_found");
    expectEnvelope(await http("PUT", `/v2/accounts/${admin.accountId}/nothing_here`, { body: "{not json" }), 404, "not_found");
  });

  it("caps a body whose token travels inside the envelope at 64 KiB, and a sign-in's too", async () => {
    const before = await devicesState();
    const small = await http("PUT", devices, { body: JSON.stringify({ auth_token: admin.token, data: { name: "inside token", notes: "n".repeat(1000) } }) });
    expect(small.status, small.text).toBe(201);
    const afterSmall = await devicesState();
    expect(afterSmall).not.toBe(before);
    const big = await http("PUT", devices, { body: JSON.stringify({ auth_token: admin.token, data: { name: "big inside token", notes: "n".repeat(70 * 1024) } }) });
    expectEnvelope(big, 413, "payload_too_large");
    expect(JSON.stringify(big.body.data)).toContain("X-Auth-Token");
    // The same body with the token in the header is fine.
    const header = await http("PUT", devices, { token: admin.token, body: JSON.stringify({ data: { name: "big header token", notes: "n".repeat(70 * 1024) } }) });
    expect(header.status, header.text).toBe(201);
    const login = await http("PUT", "/v2/user_auth", { body: JSON.stringify({ data: { credentials: "0".repeat(32), account_name: "demo", pad: "p".repeat(70 * 1024) } }) });
    expectEnvelope(login, 413, "payload_too_large");
  });
});

describe("bounded bodies", () => {
  it("refuses over 1 MiB with 413, over 5,000 values with 400 naming json.maxEntries, and takes 5,000", async () => {
    const before = await devicesState();
    // The 300,000-key admin PUT: refused by its size.
    const huge = { name: "huge", ...Object.fromEntries(Array.from({ length: 300_000 }, (_, i) => [`k${i}`, i])) };
    expectEnvelope(await exchange("PUT", devices, { "X-Auth-Token": admin.token, "Content-Type": "application/json" }, JSON.stringify({ data: huge })), 413, "payload_too_large");
    // Under 1 MiB but 5,001 values (the envelope's data, the name and 4,999 more).
    const many = (n: number) => JSON.stringify({ data: { name: `many ${n}`, ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])) } });
    const refused = await http("PUT", devices, { token: admin.token, body: many(4_999) });
    expectEnvelope(refused, 400, "validation error");
    expect(refused.body.data).toMatchObject({ json: { maxEntries: { target: 5_000 } } });
    // Arrays count too.
    const array = await http("POST", `/v2/accounts/${admin.accountId}/callq_recipients/status`, { token: admin.token, body: JSON.stringify({ data: { recipient_ids: Array.from({ length: 6_000 }, (_, i) => String(i)) } }) });
    expectEnvelope(array, 400, "validation error");
    expect(await devicesState()).toBe(before);
    const taken = await http("PUT", devices, { token: admin.token, body: many(4_998) });
    expect(taken.status, taken.text.slice(0, 300)).toBe(201);
  });

  it("refuses nesting deeper than 128 levels, found before parsing", async () => {
    const before = await devicesState();
    const deep = await http("PUT", devices, { token: admin.token, body: `{"data":{"name":"deep","x":${"[".repeat(200)}${"]".repeat(200)}}}` });
    expectEnvelope(deep, 400, "validation error");
    expect(deep.body.data).toMatchObject({ json: { maxDepth: { target: 128 } } });
    expect(await devicesState()).toBe(before);
  });
});

describe("PATCH takes an object; server-owned fields are never data", () => {
  it("answers PATCH with a body that is not an object, or data that is not one, with 400 and writes no revision", async () => {
    const created = await http("PUT", devices, { token: admin.token, body: JSON.stringify({ data: { name: "patch target" } }) });
    expect(created.status).toBe(201);
    const path = `${devices}/${String((created.body.data as { id: string }).id)}`;
    const revision = created.body.revision;
    for (const body of ["null", '"str"', "123", "[]", '[{"data":{"name":"x"}}]', "true", '{"data":null}', '{"data":"str"}', '{"data":[1]}']) {
      const res = await http("PATCH", path, { token: admin.token, body });
      expectEnvelope(res, 400, "validation error");
      const read = await http("GET", path, { token: admin.token });
      expect(read.body.revision, body).toBe(revision);
    }
  });

  it("drops revision, created, modified, attachments, id, pvt_ and _ fields on PUT, POST and PATCH", async () => {
    const owned = { revision: "1-x", created: 1, modified: 2, attachments: { "a.wav": {} }, pvt_api_key: "k", _rev: "9-y", _id: "zz", id: "not-this" };
    const created = await http("PUT", devices, { token: admin.token, body: JSON.stringify({ data: { name: "owned put", ...owned } }) });
    expect(created.status, created.text).toBe(201);
    const id = String((created.body.data as { id: string }).id);
    expect(id).not.toBe("not-this");
    const path = `${devices}/${id}`;
    const check = async () => {
      const read = await http("GET", path, { token: admin.token });
      expect(read.status).toBe(200);
      const data = read.body.data as Record<string, unknown>;
      for (const key of ["revision", "created", "modified", "attachments", "pvt_api_key", "_rev", "_id"]) expect(data, key).not.toHaveProperty(key);
      expect(data.id).toBe(id);
      expect(read.body.revision).not.toBe("1-x");
    };
    await check();
    expect((await http("PATCH", path, { token: admin.token, body: JSON.stringify({ data: { ...owned, name: "owned patch" } }) })).status).toBe(200);
    await check();
    expect((await http("POST", path, { token: admin.token, body: JSON.stringify({ data: { ...owned, name: "owned post" } }) })).status).toBe(200);
    await check();
  });
});

/** A request sent with exactly these headers (fetch would add a Content-Type of its own). */
function bare(method: string, path: string, headers: Record<string, string>, body: string): Promise<Answer> {
  const { hostname, port } = new URL(served.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port: Number(port), method, path, headers: { ...headers, "Content-Length": String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const answer = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") answer.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: answer, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {}, text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("bodies Kazoo reads as JSON", () => {
  it("reads a JSON body sent with no Content-Type, with curl's form type or as application/x-json; refuses real form fields with 415", async () => {
    const envelope = (name: string) => JSON.stringify({ data: { name } });
    const none = await bare("PUT", devices, { "X-Auth-Token": admin.token }, envelope("no type"));
    expect(none.status, none.text).toBe(201);
    const form = await bare("PUT", devices, { "X-Auth-Token": admin.token, "Content-Type": "application/x-www-form-urlencoded" }, envelope("curl form"));
    expect(form.status, form.text).toBe(201);
    const xjson = await bare("PUT", devices, { "X-Auth-Token": admin.token, "Content-Type": "application/x-json" }, envelope("x-json"));
    expect(xjson.status, xjson.text).toBe(201);
    // The envelope's token works in such a body too, as in Kazoo's api_auth curl example.
    const tokenInBody = await bare("PUT", devices, {}, JSON.stringify({ auth_token: admin.token, data: { name: "token inside" } }));
    expect(tokenInBody.status, tokenInBody.text).toBe(201);
    const before = await devicesState();
    const fields = await bare("PUT", devices, { "X-Auth-Token": admin.token, "Content-Type": "application/x-www-form-urlencoded" }, "data%5Bname%5D=fields");
    expectEnvelope(fields, 415, "unsupported_media_type");
    const broken = await bare("PUT", devices, { "X-Auth-Token": admin.token }, "{not json");
    expectEnvelope(broken, 400, "validation error");
    expect(await devicesState()).toBe(before);
  });
});

describe("only JSON is JSON", () => {
  it("answers application/jsonx, text/plain, XML and forms with 415 in the envelope, writing nothing", async () => {
    const before = await devicesState();
    const body = JSON.stringify({ data: { name: "typed" } });
    for (const type of ["application/jsonx", "application/json-seq", "text/plain", "application/xml", "text/json", "audio/wav"]) {
      const res = await http("PUT", devices, { token: admin.token, body, headers: { "Content-Type": type } });
      expectEnvelope(res, 415, "unsupported_media_type");
      expect(res.body.data, type).toHaveProperty("content_type");
    }
    expect(await devicesState()).toBe(before);
    for (const type of ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.api+json"]) {
      const res = await http("PUT", devices, { token: admin.token, body: JSON.stringify({ data: { name: `typed ${type}` } }), headers: { "Content-Type": type } });
      expect(res.status, `${type}: ${res.text}`).toBe(201);
    }
  });
});
