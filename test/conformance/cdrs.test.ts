// Kazoo's cdrs.md, each request example sent as written (its headers, only the {PLACEHOLDERS}
// filled in) against a server whose CDRs are written by the call engine from real calls between
// fake phones, checked for the documented status, envelope and data shape.
// Examples in the document: 10 (fetch, a time range, utc_offset, CSV, CSV named by header, CSV
// named by query, one CDR, interactions, an interaction's legs, a user's CDRs); as documented: 10,
// differs: 0.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromGregorianSeconds, GREGORIAN_OFFSET_S, toGregorianSeconds } from "../../server/clock.js";
import type { TestApi } from "../helpers/api.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { connected, until } from "../helpers/fake-signalling.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let t: CallApi;
let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;
let agentId: string;
/** The CDRs of one answered call: admin (1001) to agent1 (1002). */
let legs: Record<string, unknown>[] = [];

/** A curl line of the document against this server. */
function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

beforeAll(async () => {
  t = await startCallApi();
  ({ api, accountId, token: admin } = t);
  ({ token: agent, ownerId: agentId } = await api.login("agent1"));
  const caller = await t.phone("admin").dial("1002");
  const answering = await t.phone("agent1").incoming();
  await answering.answer();
  await caller.reaches("talking");
  await connected(caller, answering);
  caller.hangup();
  await until(() => api.server.calls.channels.size === 0, "every channel to end");
  // The CDRs are written as the channels go; read until both are there.
  for (let i = 0; i < 200 && legs.length < 2; i++) {
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs`, { "X-Auth-Token": admin });
    legs = res.json.data as Record<string, unknown>[];
    if (legs.length < 2) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(legs.map((cdr) => cdr.call_id).sort()).toEqual([caller.callId, answering.callId].sort());
});

afterAll(async () => {
  await t?.close();
});

/** The fields the document's schema gives a CDR, with their types. */
const CDR = {
  id: expect.stringMatching(/^\d{6}-[0-9a-f]{32}$/),
  call_id: expect.any(String),
  call_direction: expect.stringMatching(/^(inbound|outbound)$/),
  caller_id_name: expect.any(String),
  caller_id_number: expect.any(String),
  callee_id_name: expect.any(String),
  callee_id_number: expect.any(String),
  duration_seconds: expect.any(Number),
  billing_seconds: expect.any(Number),
  ringing_seconds: expect.any(Number),
  hangup_cause: expect.any(String),
  hangup_code: expect.any(String),
  interaction_id: expect.any(String),
  other_leg_call_id: expect.any(String),
  timestamp: expect.any(Number),
  datetime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}_\d{2}:\d{2}:\d{2}$/),
};

describe("cdrs.md", () => {
  it("cdrs.md › Fetch request", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: 2 });
    for (const cdr of res.json.data as unknown[]) expect(cdr).toMatchObject(CDR);
    const [newest, oldest] = res.json.data as { timestamp: number }[];
    expect(newest?.timestamp).toBeGreaterThanOrEqual(oldest?.timestamp ?? Infinity);
  });

  it("cdrs.md › Fetch CDRs within a time range", async () => {
    const nowGregorian = toGregorianSeconds(Date.now());
    const within = await curl("GET", `/v2/accounts/${accountId}/cdrs?created_from=${nowGregorian - 3600}&created_to=${nowGregorian + 60}`, { "X-Auth-Token": admin });
    expectSuccess(within, 200);
    expect(within.json.data).toHaveLength(2);
    const before = await curl("GET", `/v2/accounts/${accountId}/cdrs?created_from=${nowGregorian - 7200}&created_to=${nowGregorian - 3600}`, { "X-Auth-Token": admin });
    expectSuccess(before, 200);
    expect(before.json.data).toEqual([]);
  });

  it("cdrs.md › Convert timestamps to local timezone (vs UTC)", async () => {
    const nowGregorian = toGregorianSeconds(Date.now());
    const range = `created_from=${nowGregorian - 3600}&created_to=${nowGregorian + 60}`;
    const utc = await curl("GET", `/v2/accounts/${accountId}/cdrs?${range}`, { "X-Auth-Token": admin });
    const local = await curl("GET", `/v2/accounts/${accountId}/cdrs?${range}&utc_offset=-18000`, { "X-Auth-Token": admin });
    expectSuccess(local, 200);
    // datetime is the leg's start (a CDR's timestamp here), moved by the offset; the timestamps stay Gregorian.
    const pretty = (gregorian: number) => new Date(fromGregorianSeconds(gregorian)).toISOString().slice(0, 19).replace("T", "_");
    for (const [i, cdr] of (local.json.data as { timestamp: number; unix_timestamp: number; datetime: string }[]).entries()) {
      const same = (utc.json.data as { timestamp: number; datetime: string }[])[i];
      expect(cdr.timestamp).toBe(same?.timestamp);
      expect(cdr.unix_timestamp).toBe(cdr.timestamp - GREGORIAN_OFFSET_S);
      expect(same?.datetime).toBe(pretty(cdr.timestamp));
      expect(cdr.datetime).toBe(pretty(cdr.timestamp - 18000));
    }
    const bad = await curl("GET", `/v2/accounts/${accountId}/cdrs?${range}&utc_offset=east`, { "X-Auth-Token": admin });
    expectError(bad, 404, "faulty_request", { utc_offset: expect.any(Object) });
  });

  it("cdrs.md › Fetch as CSV instead of JSON", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs`, { Accept: "text/csv", "X-Auth-Token": admin });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="result.csv"');
    const [header, ...rows] = res.text.trim().split(/\r?\n/);
    expect(header?.split(",")).toEqual(expect.arrayContaining(["id", "call_id", "caller_id_number", "callee_id_number", "duration_seconds", "billing_seconds", "timestamp", "hangup_cause", "datetime"]));
    expect(rows).toHaveLength(2);
  });

  it("cdrs.md › Fetch as CSV with defined filename (request headers)", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs`, { Accept: "text/csv", "X-Auth-Token": admin, "X-File-Name": "november.csv" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="november.csv"');
  });

  it("cdrs.md › Fetch as CSV with defined filename (querystring)", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs?file_name=november.csv`, { Accept: "text/csv", "X-Auth-Token": admin });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="november.csv"');
  });

  it("cdrs.md › Fetch a CDR's details", async () => {
    const id = String(legs[0]?.id);
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { ...CDR, id, call_id: legs[0]?.call_id });
    const missing = await curl("GET", `/v2/accounts/${accountId}/cdrs/202611-${"0".repeat(32)}`, { "X-Auth-Token": admin });
    expectError(missing, 404, "bad_identifier", { cause: `202611-${"0".repeat(32)}`, message: "bad identifier" });
  });

  it("cdrs.md › Fetch interaction summary", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs/interaction`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...CDR, interaction_id: legs[0]?.interaction_id });
  });

  it("cdrs.md › Fetch all legs related to an interaction", async () => {
    const interaction = String(legs[0]?.interaction_id);
    const res = await curl("GET", `/v2/accounts/${accountId}/cdrs/legs/${interaction}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows.map((cdr) => cdr.id).sort()).toEqual(legs.map((cdr) => cdr.id).sort());
    for (const cdr of rows) expect(cdr).toMatchObject({ ...CDR, interaction_id: interaction });
    expectError(await curl("GET", `/v2/accounts/${accountId}/cdrs/legs/no-such-interaction`, { "X-Auth-Token": admin }), 404, "bad_identifier");
  });

  it("cdrs.md › Variations", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/users/${agentId}/cdrs`, { "X-Auth-Token": agent });
    expectSuccess(res, 200);
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ ...CDR, owner_id: agentId, call_direction: "outbound" });
  });
});
