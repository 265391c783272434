// The OpenAPI document against what the server really answers: representative requests of each
// resource, successes and refusals (400, 401, 403, 404, 405, 410), the texting API included, each
// answer held against the documented response of its status.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { textingUser } from "../texting/texting-client.js";
import { OpenApiChecker } from "./openapi-check.js";

let api: TestApi;
let checker: OpenApiChecker;
let admin: { token: string; accountId: string; ownerId: string };
let agent: { token: string; accountId: string; ownerId: string };
const problems: string[] = [];

beforeAll(async () => {
  api = await startApi();
  checker = await OpenApiChecker.load(`${api.url}/v2/openapi.json`);
  admin = await api.login("admin");
  agent = await api.login("agent1");
});
afterAll(async () => {
  await api.close();
});

interface Sent {
  status: number;
  body: Record<string, unknown>;
}

/** Sends a request the way a client would and checks the answer against `template`. */
async function send(method: string, template: string, values: Record<string, string>, options: { token?: string | null; data?: unknown; headers?: Record<string, string>; raw?: string } = {}): Promise<Sent> {
  const path = template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => values[name] ?? name);
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? admin.token : options.token;
  if (token && !template.startsWith("/texting/")) headers["X-Auth-Token"] = token;
  let body: string | undefined = options.raw;
  if (options.data !== undefined) body = JSON.stringify({ data: options.data });
  if (body !== undefined && !("Content-Type" in headers)) headers["Content-Type"] = "application/json";
  const res = await fetch(new URL(path, api.url), { method, headers, body });
  const text = await res.text();
  const parsed: unknown = res.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text;
  problems.push(...checker.check(method, template, res.status, res.headers.get("content-type"), parsed));
  return { status: res.status, body: (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown> };
}

const A = "/v2/accounts/{account_id}";
const idOf = (sent: Sent): string => String((sent.body.data as { id?: unknown } | undefined)?.id ?? "");

describe("the OpenAPI document against real answers", () => {
  it("describes the auth routes' answers and refusals", async () => {
    const ok = await send("GET", "/v2/token_auth", {});
    expect(ok.status).toBe(200);
    expect((await send("GET", "/v2/token_auth", {}, { token: "not-a-token" })).status).toBe(401);
    expect((await send("PUT", "/v2/user_auth", {}, { token: null, data: {} })).status).toBe(400);
    expect(problems.splice(0)).toEqual([]);
  });

  it("describes each document resource: create, read, list, patch, replace, delete, and their refusals", async () => {
    const v = { account_id: admin.accountId };
    const resources: [string, Record<string, unknown>][] = [
      ["devices", { name: "Contract phone" }],
      ["callflows", { name: "Contract flow", numbers: ["7771"], flow: { module: "user", data: { id: agent.ownerId }, children: {} } }],
      ["blacklists", { name: "Contract list", numbers: { "+14155550111": {} } }],
      ["webhooks", { name: "Contract hook", hook: "object", uri: "http://127.0.0.1:9/hook" }],
      ["callq_queues", { name: "Contract queue" }],
      ["users", { first_name: "Contract", last_name: "User" }],
    ];
    for (const [name, data] of resources) {
      const created = await send("PUT", `${A}/${name}`, v, { data });
      expect(created.status, `${name} ${JSON.stringify(created.body)}`).toBe(201);
      const item = { ...v, id: idOf(created) };
      expect((await send("GET", `${A}/${name}/{id}`, item)).status).toBe(200);
      expect((await send("GET", `${A}/${name}`, v)).status).toBe(200);
      expect((await send("PATCH", `${A}/${name}/{id}`, item, { data: { name: `${String(data.name ?? "x")} 2` } })).status).toBeLessThan(500);
      expect((await send("GET", `${A}/${name}/{id}`, { ...v, id: "0123456789abcdef0123456789abcdef" })).status).toBe(404);
      expect((await send("PUT", `${A}/${name}`, v, { data: { name: 7 } })).status).toBe(400);
      expect((await send("PUT", `${A}/${name}`, v, { token: agent.token, data })).status).toBe(403);
      expect((await send("DELETE", `${A}/${name}/{id}`, item)).status).toBe(200);
    }
    expect(problems.splice(0)).toEqual([]);
  });

  it("describes the read-only and engine resources, the refusals every endpoint shares, and version 1", async () => {
    const v = { account_id: admin.accountId };
    for (const name of ["cdrs", "channels", "recordings", "media", "callq_recipients", "webhooks/attempts"]) {
      const res = await send("GET", `${A}/${name}`, v);
      expect(res.status, name).toBe(200);
    }
    expect((await send("GET", A, v)).status).toBe(200);
    // Answers other than the verb's usual status: a simulated caller waiting in a demo queue is created (201) and driven (202).
    const sim = await send("POST", `${A}/sim/calls`, v, { data: { to: "5001", caller_id_number: "+14155550100", audio: "silence_stream://60000" } });
    expect(sim.status).toBe(201);
    const call = { ...v, id: idOf(sim) };
    expect((await send("GET", `${A}/sim/calls/{id}`, call)).status).toBe(200);
    expect((await send("POST", `${A}/sim/calls/{id}`, call, { data: { action: "hangup" } })).status).toBe(202);
    expect((await send("GET", `${A}/users/{id}/texting`, { ...v, id: agent.ownerId }, { token: agent.token })).status).toBe(200);
    expect((await send("GET", "/v2/webhooks", {})).status).toBe(200);
    expect((await send("GET", `${A}/devices`, v, { token: null })).status).toBe(401);
    expect((await send("GET", `${A}/devices`, { account_id: "0123456789abcdef0123456789abcdef" })).status).toBe(403);
    expect((await send("DELETE", `${A}/devices`, v)).status).toBe(405);
    expect((await send("PUT", `${A}/devices`, v, { raw: "{not json" })).status).toBe(400);
    expect((await send("GET", "/v1/{path}", { path: "accounts" })).status).toBe(410);
    expect((await send("GET", "/v2/openapi.json", {})).status).toBe(200);
    expect((await send("GET", "/v2/asyncapi.json", {})).status).toBe(200);
    expect(problems.splice(0)).toEqual([]);
  });

  it("describes the texting API's answers and refusals", async () => {
    const user = await textingUser(api, "agent1");
    const bearer = { Authorization: user.bearer };
    const contact = await send("POST", "/texting/api/contacts", {}, { headers: bearer, raw: JSON.stringify({ phoneNumber: "+14155550123", fullName: "Contract Contact" }) });
    expect(contact.status).toBe(200);
    const id = String(contact.body.id);
    expect((await send("GET", "/texting/api/contacts", {}, { headers: bearer })).status).toBe(200);
    expect((await send("GET", "/texting/api/contacts/{id}", { id }, { headers: bearer })).status).toBe(200);
    const sent = await send("POST", "/texting/api/send", {}, { headers: bearer, raw: JSON.stringify({ to: "+14155550123", from: user.number, message: "contract" }) });
    expect(sent.status).toBe(200);
    expect((await send("GET", "/texting/api/contacts/{id}/messages", { id }, { headers: bearer })).status).toBe(200);
    expect((await send("POST", "/texting/api/contacts/{id}/read", { id }, { headers: bearer })).status).toBe(200);
    expect((await send("POST", "/texting/api/send", {}, { headers: bearer, raw: JSON.stringify({ to: "nope" }) })).status).toBe(400);
    expect((await send("GET", "/texting/api/contacts", {}, { headers: { Authorization: "Bearer x:y" } })).status).toBe(401);
    expect((await send("GET", "/texting/api/contacts/{id}", { id: "0123456789abcdef0123456789abcdef" }, { headers: bearer })).status).toBe(400);
    expect(problems.splice(0)).toEqual([]);
    expect(checker.checked.length).toBeGreaterThan(60);
  });
});
