// The conformance suite every configuration resource must pass, as the hosted API behaves:
// create 201 + Location, read, list with paging and every filter, update, PATCH, DELETE with the
// document, 404 bad_identifier + cause, 400 field errors by rule, 401 (none, wrong, expired),
// 403 across accounts and for non-admins, 405, verb and accept tunnelling, CSV, request ids.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toGregorianSeconds } from "../../server/clock.js";
import { createAccount, startApi, TestClock, type TestApi } from "./api.js";

export interface InvalidCase {
  /** What the case is, for the test name. */
  title: string;
  data: Record<string, unknown>;
  /** The dotted field and the rule the error must name. */
  field: string;
  rule: string;
}

export interface ConformanceSpec {
  /** The module name in the path (`devices`). */
  name: string;
  /** A valid new document; `n` makes each one distinct. */
  valid(n: number, ctx: { accountId: string; ownerId: string }): Record<string, unknown>;
  /** A top-level string field the update and PATCH tests change, e.g. `name`. */
  field: string;
  invalid: InvalidCase[];
  /** True when writes need an admin (tested with agent1's token). */
  adminWrites: boolean;
  /** Input-only fields (a password): accepted, never shown back. */
  writeOnly?: string[];
  /** Fields a read adds to the document (callflows' `metadata`); a write's answer has none. */
  readOnly?: string[];
  /** Verbs the item path must refuse with 405 (e.g. PUT). */
  refusedOnItem?: string[];
  /** Verbs the collection path must refuse with 405 (e.g. DELETE). */
  refusedOnCollection?: string[];
}

const TTL_S = 600;

/** `data` without the fields only a read answers. */
function stored(data: Record<string, unknown>, readOnly: string[] = []): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([k]) => !readOnly.includes(k)));
}

export function describeConformance(spec: ConformanceSpec): void {
  describe(`${spec.name}: conformance`, () => {
    const clock = new TestClock();
    let api: TestApi;
    let token: string;
    let accountId: string;
    let ownerId: string;
    let base: string;
    let counter = 0;
    const make = () => spec.valid(++counter, { accountId, ownerId });

    beforeAll(async () => {
      api = await startApi({ clock, tokenTtlS: TTL_S });
      ({ token, accountId, ownerId } = await api.login("admin"));
      base = `/v2/accounts/${accountId}/${spec.name}`;
    });
    afterAll(async () => {
      await api.close();
    });

    const create = async (data: Record<string, unknown>) => {
      const res = await api.call<Record<string, unknown>>("PUT", base, { token, data });
      expect(res.status, res.text).toBe(201);
      return res;
    };

    it("creates with 201, a Location and the stored document, then reads it back", async () => {
      const data = make();
      const res = await create(data);
      const id = String(res.body.data.id);
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(res.headers.get("location")).toBe(`${base}/${id}`);
      expect(res.body.status).toBe("success");
      expect(res.body.revision).toMatch(/^1-[0-9a-f]{32}$/);
      expect(res.headers.get("etag")).toBe(`"${res.body.revision}"`);
      expect(res.body.auth_token).toBe(token);
      const writeOnly = new Set(spec.writeOnly ?? []);
      for (const [k, v] of Object.entries(data)) {
        if (writeOnly.has(k)) expect(res.body.data, `${k} is write-only`).not.toHaveProperty(k);
        else if (typeof v !== "object") expect(res.body.data[k], k).toEqual(v);
      }
      expect(Object.keys(res.body.data).some((k) => k.startsWith("pvt_"))).toBe(false);

      const read = await api.call<Record<string, unknown>>("GET", `${base}/${id}`, { token });
      expect(read.status).toBe(200);
      expect(stored(read.body.data, spec.readOnly)).toEqual(res.body.data);
      expect(read.body.revision).toBe(res.body.revision);
    });

    it("lists across pages with next_start_key, and without paging when asked", async () => {
      for (let i = 0; i < 5; i++) await create(make());
      const all = await api.call<{ id: string }[]>("GET", base, { token, query: { paginate: "false" } });
      expect(all.status).toBe(200);
      expect(all.body.next_start_key).toBeUndefined();
      expect(all.body.page_size).toBeUndefined();
      const total = all.body.data.length;
      expect(total).toBeGreaterThanOrEqual(5);

      const seen: string[] = [];
      let start: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await api.call<{ id: string }[]>("GET", base, { token, query: { page_size: "2", ...(start ? { start_key: start } : {}) } });
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        expect(page.body.page_size).toBe(page.body.data.length);
        seen.push(...page.body.data.map((r) => r.id));
        start = page.body.next_start_key;
        if (!start) break;
      }
      expect(seen.length).toBe(total);
      expect(new Set(seen).size).toBe(total);
      expect(new Set(seen)).toEqual(new Set(all.body.data.map((r) => r.id)));

      for (const bad of ["0", "-1", "abc"]) {
        const res = await api.call("GET", base, { token, query: { page_size: bad } });
        expect(res.status, bad).toBe(404);
        expect(res.body).toMatchObject({ status: "error", error: "404", message: "faulty_request" });
      }
    });

    it("filters with every filter form, AND-combined, on custom dotted keys", async () => {
      const tag = `t${Date.now()}`;
      const a = (await create({ ...make(), sb_test: { tag, kind: "a", note: "x" } })).body.data.id as string;
      const b = (await create({ ...make(), sb_test: { tag, kind: "b", note: "" } })).body.data.id as string;
      const c = (await create({ ...make(), sb_other: true })).body.data.id as string;
      const ids = async (query: Record<string, string>) => {
        const res = await api.call<{ id: string }[]>("GET", base, { token, query: { paginate: "false", ...query } });
        expect(res.status, JSON.stringify(query)).toBe(200);
        return res.body.data.map((r) => r.id);
      };
      expect(await ids({ "filter_sb_test.tag": tag })).toEqual(expect.arrayContaining([a, b]));
      expect(await ids({ "filter_sb_test.tag": tag, "filter_sb_test.kind": "a" })).toEqual([a]);
      const notA = await ids({ "filter_not_sb_test.kind": "a" });
      expect(notA).toContain(b);
      expect(notA).not.toContain(a);
      expect(await ids({ has_key: "sb_other" })).toEqual([c]);
      const missing = await ids({ key_missing: "sb_test" });
      expect(missing).toContain(c);
      expect(missing).not.toContain(a);
      expect(await ids({ has_value: "sb_test.note", "filter_sb_test.tag": tag })).toEqual([a]);
      expect(await ids({ missing_value: "sb_test.note", "filter_sb_test.tag": tag })).toEqual([b]);

      const nowG = toGregorianSeconds(clock.now());
      expect(await ids({ created_from: String(nowG - 3600), "filter_sb_test.tag": tag })).toHaveLength(2);
      expect(await ids({ created_to: String(nowG - 3600), "filter_sb_test.tag": tag })).toHaveLength(0);
      expect(await ids({ modified_from: String(nowG + 3600), "filter_sb_test.tag": tag })).toHaveLength(0);
      expect(await ids({ modified_to: String(nowG + 3600), "filter_sb_test.tag": tag })).toHaveLength(2);
      const bad = await api.call("GET", base, { token, query: { created_from: "yesterday" } });
      expect(bad.status).toBe(400);
    });

    it("updates with POST (new revision), refuses a stale If-Match with 409", async () => {
      const first = await create(make());
      const id = String(first.body.data.id);
      const changed = { ...make(), [spec.field]: `changed ${counter}` };
      const res = await api.call<Record<string, unknown>>("POST", `${base}/${id}`, { token, data: changed });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data[spec.field]).toBe(changed[spec.field]);
      expect(res.body.revision).toMatch(/^2-/);
      const stale = await api.call("POST", `${base}/${id}`, { token, data: changed, headers: { "If-Match": `"${first.body.revision ?? ""}"` } });
      expect(stale.status).toBe(409);
      expect(stale.body).toMatchObject({ error: "409", message: "datastore_conflict" });
      const fresh = await api.call("POST", `${base}/${id}`, { token, data: changed, headers: { "If-Match": `"${res.body.revision ?? ""}"` } });
      expect(fresh.status).toBe(200);
    });

    it("PATCHes by merging, then validates the whole document; a bad PATCH changes nothing", async () => {
      const first = await create({ ...make(), sb_keep: { a: 1 } });
      const id = String(first.body.data.id);
      const res = await api.call<Record<string, unknown>>("PATCH", `${base}/${id}`, { token, data: { [spec.field]: "patched", sb_keep: { b: 2 } } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data[spec.field]).toBe("patched");
      expect(res.body.data.sb_keep).toEqual({ a: 1, b: 2 });
      // A merged document still has its required fields, so use a case that breaks a rule instead.
      const invalid = spec.invalid.find((c) => c.rule !== "required");
      if (invalid) {
        const bad = await api.call("PATCH", `${base}/${id}`, { token, data: invalid.data });
        expect(bad.status).toBe(400);
      }
      const after = await api.call<Record<string, unknown>>("GET", `${base}/${id}`, { token });
      expect(stored(after.body.data, spec.readOnly)).toEqual(res.body.data);
    });

    it("DELETE answers the deleted document; it is then 404 bad_identifier with the id as cause", async () => {
      const first = await create(make());
      const id = String(first.body.data.id);
      const res = await api.call<Record<string, unknown>>("DELETE", `${base}/${id}`, { token });
      expect(res.status).toBe(200);
      expect(res.body.data.id).toBe(id);
      for (const method of ["GET", "DELETE"]) {
        const gone = await api.call("GET" === method ? "GET" : "DELETE", `${base}/${id}`, { token });
        expect(gone.status).toBe(404);
        expect(gone.body).toMatchObject({ status: "error", error: "404", message: "bad_identifier", data: { cause: id } });
      }
    });

    for (const c of spec.invalid) {
      it(`refuses ${c.title} with 400 naming ${c.field}.${c.rule}, storing nothing`, async () => {
        const before = await api.call<unknown[]>("GET", base, { token, query: { paginate: "false" } });
        const res = await api.call<Record<string, Record<string, { message: string }>>>("PUT", base, { token, data: c.data });
        expect(res.status, res.text).toBe(400);
        expect(res.body).toMatchObject({ status: "error", error: "400", message: "validation error" });
        expect(res.body.data[c.field]?.[c.rule]?.message, JSON.stringify(res.body.data)).toEqual(expect.any(String));
        const after = await api.call<unknown[]>("GET", base, { token, query: { paginate: "false" } });
        expect(after.body.data).toEqual(before.body.data);
      });
    }

    it("answers a body that is not JSON with 400 naming json", async () => {
      const res = await api.call("PUT", base, { token, body: "{not json" });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: "validation error", data: { json: { invalid: expect.any(Object) } } });
    });

    it("needs a live token: 401 without, with a wrong one, and once expired", async () => {
      const none = await api.call("GET", base);
      expect(none.status).toBe(401);
      expect(none.body).toMatchObject({ status: "error", error: "401", message: "invalid_credentials" });
      expect((await api.call("GET", base, { token: "f".repeat(64) })).status).toBe(401);
      const { token: shortLived } = await api.login("admin");
      expect((await api.call("GET", base, { token: shortLived })).status).toBe(200);
      clock.advance((TTL_S + 1) * 1000);
      expect((await api.call("GET", base, { token: shortLived })).status).toBe(401);
      // The suite's own token expired too: log in again.
      ({ token } = await api.login("admin"));
    });

    it("isolates accounts: another account's token gets 403 on this account's paths", async () => {
      const doc = await create(make());
      const other = await createAccount(api, `other${spec.name}${Date.now()}`);
      const id = String(doc.body.data.id);
      for (const [method, path] of [
        ["GET", base],
        ["GET", `${base}/${id}`],
        ["PUT", base],
        ["DELETE", `${base}/${id}`],
      ] as const) {
        const res = await api.call(method, path, { token: other.token, ...(method === "PUT" ? { data: make() } : {}) });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body).toMatchObject({ error: "403", message: "forbidden" });
      }
      expect((await api.call("GET", `${base}/${id}`, { token })).status).toBe(200);
      const theirs = await api.call<unknown[]>("GET", `/v2/accounts/${other.accountId}/${spec.name}`, { token: other.token, query: { paginate: "false" } });
      expect(theirs.status).toBe(200);
      expect(JSON.stringify(theirs.body.data)).not.toContain(id);
    });

    if (spec.adminWrites) {
      it("lets a non-admin read but not write (403)", async () => {
        const agent = await api.login("agent1");
        expect((await api.call("GET", base, { token: agent.token })).status).toBe(200);
        const res = await api.call("PUT", base, { token: agent.token, data: make() });
        expect(res.status).toBe(403);
      });
    }

    it("answers unsupported verbs with 405 invalid_method and an Allow header", async () => {
      const doc = await create(make());
      const id = String(doc.body.data.id);
      for (const method of spec.refusedOnItem ?? ["PUT"]) {
        const res = await api.call(method, `${base}/${id}`, { token, data: make() });
        expect(res.status, method).toBe(405);
        expect(res.body).toMatchObject({ error: "405", message: "invalid_method" });
        expect(res.headers.get("allow")).toContain("GET");
      }
      for (const method of spec.refusedOnCollection ?? ["DELETE"]) {
        const res = await api.call(method, base, { token });
        expect(res.status, method).toBe(405);
      }
    });

    it("tunnels PUT and DELETE through POST (envelope verb or query verb)", async () => {
      const res = await api.call<Record<string, unknown>>("POST", base, { token, body: JSON.stringify({ verb: "PUT", data: make() }) });
      expect(res.status, res.text).toBe(201);
      const id = String(res.body.data.id);
      const del = await api.call("POST", `${base}/${id}`, { token, query: { verb: "DELETE" } });
      expect(del.status).toBe(200);
      expect((await api.call("GET", `${base}/${id}`, { token })).status).toBe(404);
    });

    it("answers CSV when accept=csv comes in the query or the envelope, or as the Accept header", async () => {
      await create(make());
      for (const how of ["query", "header"] as const) {
        const res = await api.call("GET", base, {
          token,
          ...(how === "query" ? { query: { accept: "csv" } } : { headers: { Accept: "text/csv" } }),
        });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toContain("text/csv");
        expect(res.headers.get("content-disposition")).toBe('attachment; filename="result.csv"');
        const [header, ...rows] = res.text.trim().split("\r\n");
        expect(header?.split(",")).toContain("id");
        expect(rows.length).toBeGreaterThan(0);
      }
      const env = await api.call("POST", base, { token, body: JSON.stringify({ verb: "PUT", accept: "csv", data: make() }) });
      expect(env.status).toBe(201);
      expect(env.headers.get("content-type")).toContain("text/csv");
    });

    it("echoes X-Request-ID in the header and the envelope, and makes one when absent", async () => {
      const res = await api.call("GET", base, { token, headers: { "X-Request-ID": "conformance-42" } });
      expect(res.headers.get("x-request-id")).toBe("conformance-42");
      expect(res.body.request_id).toBe("conformance-42");
      const err = await api.call("GET", `${base}/${"0".repeat(32)}`, { token, headers: { "X-Request-ID": "conformance-43" } });
      expect(err.body.request_id).toBe("conformance-43");
      const fresh = await api.call("GET", base, { token });
      expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f]{32}$/);
    });
  });
}
