// Kazoo's callflows.md, each example sent as written (its headers and body), checked for the
// documented status, envelope and data shape. The document's curl lines carry no body at all:
// Kazoo answers those as its cb_callflows module does (a create or replace with no numbers and no
// patterns is 400 `numbers.required`; an empty PATCH writes a revision).
// Count: 6 examples in the document; 6 tests pass as documented, 0 marked differs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;
let ownerId: string;

function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

const KAZOO_NO_NUMBERS = { numbers: { required: { message: "Callflows must be assigned at least one number or pattern" } } };

let nextNumber = 7100;

/** A callflow of the test's own, made through the API (the document's examples send no body). */
async function createCallflow(): Promise<string> {
  const number = String(nextNumber++);
  const res = await curl(
    "PUT",
    `/v2/accounts/${accountId}/callflows`,
    { "X-Auth-Token": admin, "Content-Type": "application/json" },
    JSON.stringify({ data: { name: `route ${number}`, numbers: [number], flow: { module: "user", data: { id: ownerId }, children: {} } } }),
  );
  expectSuccess(res, 201);
  return String((res.json.data as { id: string }).id);
}

beforeAll(async () => {
  api = await startApi();
  ({ token: admin, accountId, ownerId } = await api.login("admin"));
  ({ token: agent } = await api.login("agent1"));
});

afterAll(async () => {
  await api.close();
});

describe("callflows.md", () => {
  it("callflows.md › Fetch", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/callflows`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThan(0);
    // Kazoo's crossbar_listing row: featurecode false when the callflow is none, the modules of
    // the flow once each, flags [].
    for (const row of rows) {
      expect(row).toMatchObject({ id: expect.any(String), numbers: expect.any(Array), patterns: expect.any(Array), modules: expect.any(Array), flags: expect.any(Array) });
    }
    const queueLogin = rows.find((r) => r.name === "Queue login");
    expect(queueLogin).toMatchObject({ featurecode: { name: "callq_login", number: "20" }, modules: ["callq_recipient"] });
    expect(rows.find((r) => r.name === "Ada Admin")).toMatchObject({ featurecode: false, modules: ["user"] });
  });

  it("callflows.md › Create a new callflow", async () => {
    const res = await curl("PUT", `/v2/accounts/${accountId}/callflows`, { "X-Auth-Token": admin });
    // All that is wrong is said at once: the flow is needed here too (it is what a call runs).
    expectError(res, 400, "validation error", { ...KAZOO_NO_NUMBERS, flow: { required: { message: "Field is required but missing" } } });
    // An agent may not create one (writes are admins').
    expectError(await curl("PUT", `/v2/accounts/${accountId}/callflows`, { "X-Auth-Token": agent }), 403, "forbidden");
    // The same line with a body: the schema's defaults (numbers and patterns []) come back.
    const made = await curl("PUT", `/v2/accounts/${accountId}/callflows`, { "X-Auth-Token": admin, "Content-Type": "application/json" }, JSON.stringify({ data: { patterns: ["^\\+4420\\d{8}$"], flow: { module: "user", data: { id: ownerId } } } }));
    expectSuccess(made, 201, { id: expect.any(String), numbers: [], patterns: ["^\\+4420\\d{8}$"], flow: { module: "user", data: { id: ownerId } } });
  });

  it("callflows.md › Remove a callflow", async () => {
    const id = await createCallflow();
    expectError(await curl("DELETE", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    const res = await curl("DELETE", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, numbers: expect.any(Array), patterns: [], flow: { module: "user" } });
    expectError(await curl("GET", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id });
  });

  it("callflows.md › Fetch a callflow's details", async () => {
    const id = await createCallflow();
    const res = await curl("GET", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, name: expect.any(String), numbers: [expect.any(String)], patterns: [], flow: { module: "user", data: { id: ownerId }, children: {} } });
    expect(res.json.auth_token).toBe(admin);
    // Kazoo's cb_callflows adds what each id of the flow names.
    expect((res.json.data as { metadata: unknown }).metadata).toEqual({ [ownerId]: { name: "Ada Admin", pvt_type: "user" } });
    // Written back as read, the metadata is not stored (it is made on each read).
    const written = await curl("POST", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin, "Content-Type": "application/json" }, JSON.stringify({ data: res.json.data }));
    expectSuccess(written, 200);
    expect(written.json.data).not.toHaveProperty("metadata");
  });

  it("callflows.md › Patch a callflow object", async () => {
    const id = await createCallflow();
    const before = await curl("GET", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin });
    expectError(await curl("PATCH", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    const res = await curl("PATCH", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin });
    // Nothing to merge: the document is saved as it was, under a new revision (Kazoo does so too).
    const { metadata: _metadata, ...stored } = before.json.data as Record<string, unknown>;
    expectSuccess(res, 200, stored);
    expect(res.json.revision).not.toBe(before.json.revision);
  });

  it("callflows.md › Change a callflow object", async () => {
    const id = await createCallflow();
    const before = await curl("GET", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin });
    const res = await curl("POST", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin });
    // A POST replaces the document: an empty one has no number or pattern to route.
    expectError(res, 400, "validation error", KAZOO_NO_NUMBERS);
    expectError(await curl("POST", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    const after = await curl("GET", `/v2/accounts/${accountId}/callflows/${id}`, { "X-Auth-Token": admin });
    expect(after.json.revision).toBe(before.json.revision);
  });
});
