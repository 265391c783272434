// The texting API fuzzed against serve mode, with a fixed seed so a failure reproduces: every
// route of the OpenAPI document under /texting/api, with documented and undocumented verbs,
// arbitrary bodies and content types, garbage ids and garbage Authorization. The texting API
// has its own failure shape (service-api.md: `{errors: [<message>, ...]}`), not the platform's
// envelope: every 4xx is that shape with at least one message, the server never answers 5xx,
// a refused request changes no contact and no thread, and a legitimate request is served after
// each property.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGrant, serve, type Served } from "../helpers/serve.js";

const SEED = Number(process.env.FUZZ_SEED ?? 1515);
const VERBS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "image/png", "application/octet-stream", ";;;"];

let served: Served;
let bearer: string;
let contactId: string;
let routes: { path: string; verbs: string[] }[];
let tried = 0;

interface Answer {
  status: number;
  type: string;
  text: string;
}

async function ask(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  tried += 1;
  const res = await fetch(`${served.url}${path}`, { method, headers, body: method === "GET" ? undefined : body });
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
}

/** The texting API's failure shape, and never a 5xx. */
function expectTextingFailure(answer: Answer, what: string): void {
  expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  if (answer.status < 400) return;
  expect(answer.type, what).toContain("application/json");
  const body: unknown = JSON.parse(answer.text);
  expect(body, `${what}: ${answer.text.slice(0, 300)}`).toEqual({ errors: expect.arrayContaining([expect.any(String)]) });
  const errors = (body as { errors: unknown[] }).errors;
  expect(errors.length, what).toBeGreaterThan(0);
  for (const message of errors) expect(typeof message === "string" && message.length > 0, what).toBe(true);
  // Not the platform's envelope.
  expect(body, what).not.toHaveProperty("status");
}

/** Every contact with its thread: what a refused request must leave as it was. */
async function snapshot(): Promise<string> {
  const auth = { Authorization: bearer };
  const list = (await (await fetch(`${served.url}/texting/api/contacts`, { headers: auth })).json()) as { contacts: { id: string }[] };
  const threads = await Promise.all(list.contacts.map(async (c) => (await fetch(`${served.url}/texting/api/contacts/${c.id}/messages`, { headers: auth })).text()));
  return JSON.stringify([list, threads]);
}

async function stillServed(): Promise<void> {
  const res = await fetch(`${served.url}/texting/api/contacts/${contactId}`, { headers: { Authorization: bearer } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { id: string }).id).toBe(contactId);
}

beforeAll(async () => {
  served = await serve();
  const agent = await demoGrant(served.url, "agent1");
  const settings = await fetch(`${served.url}/v2/accounts/${agent.accountId}/users/${agent.ownerId}/texting`, { headers: { "X-Auth-Token": agent.token } });
  const s = ((await settings.json()) as { data: { account_uid: string; access_token: string } }).data;
  bearer = `Bearer ${s.account_uid}:${s.access_token}`;
  const created = await fetch(`${served.url}/texting/api/contacts`, {
    method: "POST",
    headers: { Authorization: bearer, "Content-Type": "application/json" },
    body: JSON.stringify({ phoneNumber: "+14155550142", fullName: "Fuzz Target" }),
  });
  expect(created.status).toBe(200);
  contactId = ((await created.json()) as { id: string }).id;
  const doc = (await (await fetch(`${served.url}/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  routes = Object.entries(doc.paths)
    .filter(([path]) => path.startsWith("/texting/api/"))
    .map(([path, ops]) => ({ path, verbs: Object.keys(ops).map((v) => v.toUpperCase()) }));
}, 60_000);

afterAll(async () => {
  await served?.stop();
  console.info(`texting fuzz: ${tried} requests tried`);
});

describe("texting API under hostile input", () => {
  it("covers every texting route of the OpenAPI document", () => {
    expect(routes.map((r) => r.path)).toEqual(expect.arrayContaining(["/texting/api/send", "/texting/api/contacts", "/texting/api/contacts/{id}"]));
  });

  it("never answers 5xx, every failure is {errors: [...]}, a refused request changes nothing", async () => {
    const body = fc.oneof(
      fc.json(),
      fc.string(),
      fc.record({ to: fc.oneof(fc.string(), fc.integer(), fc.constant("+14155550199")), from: fc.oneof(fc.string(), fc.constant(null)), body: fc.oneof(fc.string(), fc.integer(), fc.constant("")) }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
      fc.record({ phoneNumber: fc.oneof(fc.string(), fc.integer(), fc.constant("+1")), fullName: fc.oneof(fc.string({ maxLength: 300 }), fc.constant(null)), email: fc.string() }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
    );
    const property = fc.asyncProperty(
      fc.nat(),
      fc.oneof(fc.constant("documented"), fc.constantFrom(...VERBS)),
      fc.oneof(fc.constant(contactId), fc.constantFrom("0", "..%2F..", "%00", "%E0%A4%A", "x".repeat(300), "ffffffffffffffffffffffffffffffff")),
      fc.constantFrom(...CONTENT_TYPES),
      body,
      async (pick, verb, id, type, text) => {
        const route = routes[pick % routes.length];
        if (route === undefined) return;
        const method = verb === "documented" ? (route.verbs[pick % route.verbs.length] ?? "GET") : verb;
        const path = route.path.replace("{id}", id);
        const before = await snapshot();
        const answer = await ask(method, path, { Authorization: bearer, "Content-Type": type }, text);
        expectTextingFailure(answer, `${method} ${path} (${type}) ${text.slice(0, 80)}`);
        if (answer.status >= 400) expect(await snapshot(), `${method} ${path} refused but changed data`).toBe(before);
      },
    );
    await fc.assert(property, { numRuns: 250, seed: SEED });
    await stillServed();
  }, 240_000);

  it("answers garbage or missing credentials with 401 {errors: [...]} before reading the body", async () => {
    const property = fc.asyncProperty(
      fc.oneof(fc.constant(undefined), fc.string(), fc.constantFrom("Bearer", "Bearer :", "Bearer a:b", "Basic Zm9vOmJhcg==", `${bearer}x`, bearer.replace("Bearer ", "bearer  "))),
      fc.nat(),
      async (authorization, pick) => {
        const route = routes[pick % routes.length];
        if (route === undefined) return;
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        if (authorization !== undefined) {
          // Only values a header can hold.
          if (!/^[\t\x20-\x7e]*$/.test(authorization)) return;
          headers.Authorization = authorization;
        }
        const before = await snapshot();
        const answer = await ask(route.verbs[0] ?? "GET", route.path.replace("{id}", contactId), headers, "{not json");
        if (answer.status !== 401) {
          // Only a spelling of the real credentials (the scheme's case and spacing are free) gets past.
          expect(authorization?.toLowerCase().replace(/\s+/g, " "), `${answer.status} ${answer.text}`).toBe(bearer.toLowerCase());
        }
        expectTextingFailure(answer, `Authorization ${String(authorization)}`);
        expect(await snapshot()).toBe(before);
      },
    );
    await fc.assert(property, { numRuns: 150, seed: SEED });
    await stillServed();
  }, 120_000);
});
