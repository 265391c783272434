// Kazoo's filters.md: every filter of its table, its dotted keys and its AND-chaining, each sent
// as a query string on a collection (the document has no curl line: the requests are the ones its
// text describes), checked for the documented status, envelope and rows. Also what
// crossbar_filter reads beyond the table (value_missing, a JSON list of values) and crossbar's
// refusal of a time range that ends before it starts.
// Examples in the document: 12 (10 filters, dotted keys, multiple filters). Passing as documented:
// 12. Marked differs: 0. Beyond the document: 3.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, TestClock, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
const clock = new TestClock();
let token: string;
let agentToken: string;
let accountId: string;
let base: string;
/** Blacklist ids by name, with the Gregorian second each was created and last changed. */
const lists: Record<string, { id: string; created: number; modified: number }> = {};

function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

/** The names of the blacklists a filtered listing answers. */
async function names(query: string, as = token): Promise<string[]> {
  const res = await curl("GET", `${base}/blacklists?${query}`, { "X-Auth-Token": as });
  expectSuccess(res, 200);
  return (res.json.data as { name: string }[]).map((r) => r.name).sort();
}

/** When the store says a blacklist was created and last changed (the API does not show it). */
async function times(id: string): Promise<{ created: number; modified: number }> {
  const doc = (await api.server.store.account(accountId, "blacklists")).get(id);
  if (!doc) throw new Error(`no blacklist ${id}`);
  return { created: doc.created, modified: doc.modified };
}

async function create(name: string, data: Record<string, unknown>): Promise<void> {
  const res = await curl("PUT", `${base}/blacklists`, { "X-Auth-Token": token, "Content-Type": "application/json" }, JSON.stringify({ data: { name, ...data } }));
  expect(res.status, res.text).toBe(201);
  const id = String((res.json.data as { id: string }).id);
  lists[name] = { id, ...(await times(id)) };
}

const at = (name: string): { id: string; created: number; modified: number } => {
  const list = lists[name];
  if (!list) throw new Error(`no blacklist ${name}`);
  return list;
};

beforeAll(async () => {
  api = await startApi({ clock });
  ({ token, accountId } = await api.login("admin"));
  ({ token: agentToken } = await api.login("agent1"));
  base = `/v2/accounts/${accountId}`;
  // Custom keys (a blacklist's schema does not know them), nested ones, empty ones; 100 s apart.
  await create("alpha", { foo: { bar: { baz: 1 } }, team: "sales", note: "" });
  clock.advance(100_000);
  await create("beta", { foo: { bar: { baz: 2 } }, team: "support", tags: [] });
  clock.advance(100_000);
  await create("gamma", { team: "sales", tags: ["vip"] });
  clock.advance(100_000);
  // alpha changes last: its modified time moves, its created time stays.
  await curl("PATCH", `${base}/blacklists/${lists.alpha?.id ?? ""}`, { "X-Auth-Token": token, "Content-Type": "application/json" }, '{"data":{"touched":true}}');
  lists.alpha = { id: at("alpha").id, ...(await times(at("alpha").id)) };
  // Tokens slide: log in again after the clock moved.
  ({ token } = await api.login("admin"));
  ({ token: agentToken } = await api.login("agent1"));
});

afterAll(async () => {
  await api.close();
});

describe("filters.md", () => {
  it("filters.md › Available Filters (filter_not_{KEY})", async () => {
    expect(await names("filter_not_team=sales")).toEqual(["beta"]);
  });

  it("filters.md › Available Filters (filter_{KEY})", async () => {
    expect(await names("filter_team=sales")).toEqual(["alpha", "gamma"]);
    // Values of other JSON types compare by their text.
    expect(await names("filter_touched=true")).toEqual(["alpha"]);
    // Any reader of the collection may filter it: an agent reads blacklists.
    expect(await names("filter_team=support", agentToken)).toEqual(["beta"]);
  });

  it("filters.md › Available Filters (has_key)", async () => {
    expect(await names("has_key=tags")).toEqual(["beta", "gamma"]);
  });

  it("filters.md › Available Filters (key_missing)", async () => {
    expect(await names("key_missing=tags")).toEqual(["alpha"]);
  });

  it("filters.md › Available Filters (has_value)", async () => {
    // beta's tags are empty, alpha's note is empty.
    expect(await names("has_value=tags")).toEqual(["gamma"]);
    expect(await names("has_value=note")).toEqual([]);
  });

  it("filters.md › Available Filters (missing_value)", async () => {
    expect(await names("missing_value=tags")).toEqual(["alpha", "beta"]);
    expect(await names("missing_value=note")).toEqual(["alpha", "beta", "gamma"]);
  });

  it("filters.md › Available Filters (created_from)", async () => {
    expect(await names(`created_from=${at("beta").created}`)).toEqual(["beta", "gamma"]);
  });

  it("filters.md › Available Filters (created_to)", async () => {
    expect(await names(`created_to=${at("beta").created}`)).toEqual(["alpha", "beta"]);
  });

  it("filters.md › Available Filters (modified_from)", async () => {
    expect(await names(`modified_from=${at("gamma").modified + 1}`)).toEqual(["alpha"]);
  });

  it("filters.md › Available Filters (modified_to)", async () => {
    expect(await names(`modified_to=${at("gamma").modified}`)).toEqual(["beta", "gamma"]);
    const bad = await curl("GET", `${base}/blacklists?modified_to=yesterday`, { "X-Auth-Token": token });
    expectError(bad, 400, "validation error", { modified_to: { type: expect.any(Object) } });
  });

  it("filters.md › Keys", async () => {
    // "filter_foo.bar.baz=1 would match a doc that had {"foo":{"bar":{"baz":1}}}".
    expect(await names("filter_foo.bar.baz=1")).toEqual(["alpha"]);
    expect(await names("has_key=foo.bar")).toEqual(["alpha", "beta"]);
    // A validated key (in the blacklist schema) filters the same way.
    expect(await names("filter_name=gamma")).toEqual(["gamma"]);
  });

  it("filters.md › Multiple Filters", async () => {
    // "?filter_foo=1&has_key=bar", on this data.
    expect(await names("filter_team=sales&has_key=foo")).toEqual(["alpha"]);
    expect(await names(`filter_team=sales&created_from=${at("beta").created}`)).toEqual(["gamma"]);
    expect(await names("filter_team=sales&filter_team_x=nothing")).toEqual([]);
  });

  it("filters.md › Available Filters (value_missing, crossbar_filter's spelling of missing_value)", async () => {
    expect(await names("value_missing=tags")).toEqual(["alpha", "beta"]);
  });

  it("filters.md › Available Filters (filter_{KEY} with a JSON list of values, as crossbar_filter reads it)", async () => {
    expect(await names(`filter_name=${encodeURIComponent('["alpha","gamma"]')}`)).toEqual(["alpha", "gamma"]);
    expect(await names(`filter_not_name=${encodeURIComponent('["alpha","gamma"]')}`)).toEqual(["beta"]);
  });

  it("filters.md › Available Filters (created_to before created_from: crossbar's date_range refusal)", async () => {
    const res = await curl("GET", `${base}/blacklists?created_from=${at("gamma").created}&created_to=${at("alpha").created}`, { "X-Auth-Token": token });
    expectError(res, 400, "validation error", { created_from: { date_range: { message: expect.stringContaining("is prior to"), cause: at("gamma").created } } });
  });
});
