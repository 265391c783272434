// /v2/accounts/{id}/training_scenarios over real HTTP: the document in the house conventions, its
// checks, the shareable file (export, import, round trip), the headless preview, and who may do
// what: admins and trainers (training.trainer in the user's document); other users get 403.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";
import { OpenApiChecker } from "../contracts/openapi-check.js";

let api: TestApi;
let admin: string;
let accountId: string;
let base: string;

beforeAll(async () => {
  api = await startApi();
  ({ token: admin, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}/training_scenarios`;
});
afterAll(async () => {
  await api.close();
});

type Doc = Record<string, unknown> & { id: string };

const minimal = (name = "Monday morning"): Record<string, unknown> => ({
  name,
  duration_s: 1800,
  seed: 7,
  queues: [{ number: "+14155550100", name: "Support", rate_per_hour: 60, profile: [{ from_s: 0, to_s: 900, multiplier: 2 }] }],
  personas: [{ name: "Pat", weight: 1, number: "+1415555####", patience: { distribution: "exponential", mean_s: 60 } }],
  agents: { count: 2 },
});

async function create(data: Record<string, unknown>, token = admin): Promise<Doc> {
  const res = await api.call<Doc>("PUT", base, { token, data });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function count(): Promise<number> {
  const res = await api.call<unknown[]>("GET", base, { token: admin, query: { paginate: "false" } });
  return res.body.data.length;
}

describe("training scenarios: the document", () => {
  it("creates with the defaults filled in, reads it back and lists it by name", async () => {
    const doc = await create(minimal("Alpha shift"));
    expect(doc).toMatchObject({
      name: "Alpha shift",
      faults: [],
      targets: { service_level: { answered_within_s: 20, percent: 80 }, handle_time_s: 300 },
      agents: { count: 2, ring_delay_s: 3, handle_time: { distribution: "exponential", mean_s: 180 }, wrapup_s: 10 },
      personas: [{ name: "Pat", language: "en-US", lines: [], abandons: true, asks_for_supervisor: false, texts_instead: false }],
    });
    const read = await api.call<Doc>("GET", `${base}/${doc.id}`, { token: admin });
    expect(read.body.data).toEqual(doc);
    const list = await api.call<Doc[]>("GET", base, { token: admin });
    expect(list.body.data).toContainEqual({ id: doc.id, name: "Alpha shift", duration_s: 1800, seed: 7 });
  });

  it("refuses what the schema and the scenario's own rules refuse, naming the field and the rule, and stores nothing", async () => {
    const before = await count();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...minimal(), queues: undefined }, "queues", "required"],
      [{ ...minimal(), duration_s: 10 }, "duration_s", "minimum"],
      [{ ...minimal(), seed: -1 }, "seed", "minimum"],
      [{ ...minimal(), queues: [{ rate_per_hour: 10 }] }, "queues.0", "required"],
      [{ ...minimal(), queues: [{ number: "+1415", rate_per_hour: 10 }, { number: "+1415", rate_per_hour: 5 }] }, "queues.1", "unique"],
      [{ ...minimal(), queues: [{ number: "+1415", rate_per_hour: 10, profile: [{ from_s: 0, to_s: 600, multiplier: 1 }, { from_s: 300, to_s: 900, multiplier: 2 }] }] }, "queues.0.profile.1.from_s", "overlap"],
      [{ ...minimal(), queues: [{ number: "+1415", rate_per_hour: 10, profile: [{ from_s: 0, to_s: 3600, multiplier: 1 }] }] }, "queues.0.profile.0.to_s", "maximum"],
      [{ ...minimal(), personas: [{ name: "P", weight: 1, number: "+1###", patience: { distribution: "normal", mean_s: 30 } }] }, "personas.0.patience.sd_s", "required"],
      [{ ...minimal(), personas: [{ name: "P", weight: 0, number: "+1###", patience: { distribution: "fixed", mean_s: 30 } }] }, "personas", "weight"],
      [{ ...minimal(), faults: [{ at_s: 60, kind: "burst", target: "+1999", count: 3 }] }, "faults.0.target", "enum"],
      [{ ...minimal(), faults: [{ at_s: 60, kind: "earthquake" }] }, "faults.0.kind", "enum"],
      [{ ...minimal(), agents: { count: 201 } }, "agents.count", "maximum"],
    ];
    for (const [data, field, rule] of cases) {
      const res = await api.call<Record<string, Record<string, unknown>>>("PUT", base, { token: admin, data });
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      expect(res.body.data[field]?.[rule], `${field} ${rule}: ${res.text}`).toBeDefined();
    }
    expect(await count()).toBe(before);
  });
});

describe("training scenarios: who may", () => {
  it("refuses a user who is neither admin nor trainer everything, reads included, and changes nothing", async () => {
    const doc = await create(minimal("Guarded"));
    const { token } = await api.login("agent1");
    const attempts: [string, string, unknown?][] = [
      ["GET", base],
      ["PUT", base, minimal()],
      ["POST", base, { format: "switchboard.training_scenario.v1", ...minimal() }],
      ["GET", `${base}/${doc.id}`],
      ["POST", `${base}/${doc.id}`, minimal("Taken")],
      ["PATCH", `${base}/${doc.id}`, { name: "Taken" }],
      ["DELETE", `${base}/${doc.id}`],
      ["GET", `${base}/${doc.id}/export`],
      ["POST", `${base}/${doc.id}/preview`],
    ];
    const before = await count();
    for (const [method, path, data] of attempts) {
      const res = await api.call(method, path, { token, ...(data === undefined ? {} : { data }) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toMatchObject({ error: "403", message: "forbidden" });
    }
    expect(await count()).toBe(before);
    expect((await api.call<Doc>("GET", `${base}/${doc.id}`, { token: admin })).body.data.name).toBe("Guarded");
    // No token, and another account's admin, are refused as everywhere.
    expect((await api.call("GET", base)).status).toBe(401);
    const other = await createAccount(api, "elsewhere");
    expect((await api.call("GET", base, { token: other.token })).status).toBe(403);
    expect((await api.call("GET", `${base}/${doc.id}/export`, { token: other.token })).status).toBe(403);
  });

  it("lets a user marked training.trainer read, write, export, import and preview", async () => {
    const { token, ownerId } = await api.login("agent2");
    expect((await api.call("GET", base, { token })).status).toBe(403);
    const marked = await api.call("PATCH", `/v2/accounts/${accountId}/users/${ownerId}`, { token: admin, data: { training: { trainer: true } } });
    expect(marked.status, marked.text).toBe(200);
    expect((await api.call("GET", base, { token })).status).toBe(200);
    const doc = await create(minimal("Trainer's own"), token);
    expect((await api.call("PATCH", `${base}/${doc.id}`, { token, data: { seed: 9 } })).status).toBe(200);
    const file = await api.call<Record<string, unknown>>("GET", `${base}/${doc.id}/export`, { token });
    expect(file.status).toBe(200);
    expect((await api.call("POST", base, { token, body: file.text })).status).toBe(201);
    expect((await api.call("POST", `${base}/${doc.id}/preview`, { token })).status).toBe(200);
    expect((await api.call("DELETE", `${base}/${doc.id}`, { token })).status).toBe(200);
  });
});

describe("training scenarios: the file", () => {
  it("exports a scenario as an attachment that imports back as the same scenario, bare or as data", async () => {
    const doc = await create({ ...minimal("Round trip"), faults: [{ at_s: 120, kind: "one_way_audio", target: "trainee-1" }] });
    const res = await api.call<Record<string, unknown>>("GET", `${base}/${doc.id}/export`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="Round-trip.scenario.json"');
    const file = JSON.parse(res.text) as Record<string, unknown>;
    const { id: _id, ...fields } = doc;
    expect(file).toEqual({ format: "switchboard.training_scenario.v1", ...fields });
    for (const body of [res.text, JSON.stringify({ data: file })]) {
      const imported = await api.call<Doc>("POST", base, { token: admin, body });
      expect(imported.status, imported.text).toBe(201);
      expect(imported.headers.get("location")).toBe(`${base}/${imported.body.data.id}`);
      const { id, ...again } = imported.body.data;
      expect(id).not.toBe(doc.id);
      expect(again).toEqual(fields);
    }
  });

  it("refuses a file of another format or holding a bad scenario, and stores nothing", async () => {
    const before = await count();
    const wrong = await api.call<Record<string, Record<string, unknown>>>("POST", base, { token: admin, body: JSON.stringify({ format: "something.else", ...minimal() }) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.data.format?.enum).toBeDefined();
    const bad = await api.call<Record<string, Record<string, unknown>>>("POST", base, { token: admin, data: { format: "switchboard.training_scenario.v1", ...minimal(), duration_s: "long" } });
    expect(bad.status).toBe(400);
    expect(bad.body.data.duration_s?.type).toBeDefined();
    const none = await api.call<Record<string, Record<string, unknown>>>("POST", base, { token: admin, data: "a file" });
    expect(none.status).toBe(400);
    expect(await count()).toBe(before);
  });
});

describe("training scenarios: the headless preview", () => {
  it("runs the scenario and answers its summary; the same seed answers the same summary", async () => {
    const doc = await create({ ...minimal("Preview"), duration_s: 3600, queues: [{ number: "+14155550100", rate_per_hour: 90 }], agents: { count: 2, handle_time: { distribution: "exponential", mean_s: 100 } } });
    const first = await api.call<Record<string, unknown>>("POST", `${base}/${doc.id}/preview`, { token: admin });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ scenario_id: doc.id, name: "Preview", seed: 7 });
    const summary = first.body.data as { offered: number; answered: number; abandoned: number; timed_out: number; agents: unknown[]; service_level: { percent: number } };
    expect(summary.offered).toBeGreaterThan(50);
    expect(summary.answered + summary.abandoned + summary.timed_out).toBe(summary.offered);
    expect(summary.agents).toHaveLength(2);
    expect(first.text.length).toBeLessThan(10_000);
    const second = await api.call("POST", `${base}/${doc.id}/preview`, { token: admin });
    expect(second.body.data).toEqual(first.body.data);
  });

  it("takes the settings of the account's queue a scenario names: callers who never abandon time out at its timeout", async () => {
    const queue = await api.call<Doc>("PUT", `/v2/accounts/${accountId}/callq_queues`, { token: admin, data: { name: "Training queue", timeout: 45 } });
    expect(queue.status, queue.text).toBe(201);
    const doc = await create({
      ...minimal("No agents"),
      queues: [{ queue_id: queue.body.data.id, rate_per_hour: 60 }],
      personas: [{ name: "Stays", weight: 1, number: "+1415555####", abandons: false, patience: { distribution: "fixed", mean_s: 1 } }],
      agents: { count: 0 },
    });
    const res = await api.call<{ offered: number; timed_out: number; longest_wait_s: number }>("POST", `${base}/${doc.id}/preview`, { token: admin });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.offered).toBeGreaterThan(0);
    expect(res.body.data.timed_out).toBe(res.body.data.offered);
    expect(res.body.data.longest_wait_s).toBe(45);
  });

  it("checks a hand-edited document again before it runs: 400 naming the field", async () => {
    const scenarios = await api.server.store.account(accountId, "training_scenarios");
    const edited = await scenarios.create({ ...minimal("Hand-edited"), personas: [{ name: "P", weight: 1, number: "+1###", patience: { distribution: "lognormal", mean_s: 30 } }] });
    const res = await api.call<Record<string, Record<string, unknown>>>("POST", `${base}/${edited.id}/preview`, { token: admin });
    expect(res.status, res.text).toBe(400);
    expect(res.body.data["personas.0.patience.sd_s"]?.required).toBeDefined();
  });

  it("refuses a scenario too big to preview with 400, and an unknown one with 404", async () => {
    const doc = await create({ ...minimal("Huge"), duration_s: 86_400, queues: [{ number: "+14155550100", rate_per_hour: 5000 }] });
    const res = await api.call<Record<string, Record<string, unknown>>>("POST", `${base}/${doc.id}/preview`, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "400", message: "invalid data" });
    expect(res.body.data.scenario?.too_big).toMatchObject({ target: 20_000 });
    const missing = await api.call("POST", `${base}/${"0".repeat(32)}/preview`, { token: admin });
    expect(missing.status).toBe(404);
  });
});

describe("training scenarios: the OpenAPI document", () => {
  it("documents every answer of the resource, its import, its preview and their refusals", async () => {
    const checker = await OpenApiChecker.load(`${api.url}/v2/openapi.json`);
    const { token: agent } = await api.login("agent1");
    const T = "/v2/accounts/{account_id}/training_scenarios";
    const problems: string[] = [];
    const send = async (method: string, template: string, id: string, options: { token?: string; data?: unknown; body?: string } = {}) => {
      const res = await api.call(method, template.replace("{account_id}", accountId).replace("{id}", id), { token: options.token ?? admin, data: options.data, ...(options.body === undefined ? {} : { body: options.body }) });
      problems.push(...checker.check(method, template, res.status, res.headers.get("content-type"), res.body));
      return res;
    };
    const made = await send("PUT", T, "", { data: minimal("Documented") });
    const id = String((made.body.data as Doc).id);
    await send("GET", T, "");
    await send("GET", `${T}/{id}`, id);
    await send("PATCH", `${T}/{id}`, id, { data: { seed: 3 } });
    await send("POST", `${T}/{id}`, id, { data: minimal("Documented again") });
    await send("POST", T, "", { body: JSON.stringify({ format: "switchboard.training_scenario.v1", ...minimal("Imported") }) });
    await send("POST", `${T}/{id}/preview`, id);
    await send("GET", `${T}/{id}/export`, id);
    await send("PUT", T, "", { data: { name: "" } });
    await send("GET", T, "", { token: agent });
    await send("POST", `${T}/{id}/preview`, id, { token: agent });
    await send("GET", `${T}/{id}`, "0".repeat(32));
    await send("DELETE", `${T}/{id}`, id);
    expect(problems).toEqual([]);
    expect(checker.checked).toHaveLength(13);
  });
});
