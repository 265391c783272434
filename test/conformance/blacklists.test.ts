// Kazoo's blacklists.md, each request example sent as written (its headers, and no body: none of
// the document's curl lines has one), checked for the status and envelope Kazoo answers, then the
// same line with the envelope a script would add, checked for the documented data shape.
//
// Examples in the document: 6. Passing as documented: 6. Marked differs: 0.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;

/** A curl line of the document against this server. */
function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

/** What `curl -d` adds when the line names no type. */
const CURL_FORM = { "Content-Type": "application/x-www-form-urlencoded" };

const blacklists = (): string => `/v2/accounts/${accountId}/blacklists`;

/** A blocklist made with the Create line and an envelope; its id. */
async function createList(data: Record<string, unknown>): Promise<string> {
  const res = await curl("PUT", blacklists(), { "X-Auth-Token": admin, ...CURL_FORM }, JSON.stringify({ data }));
  expect(res.status, res.text).toBe(201);
  return String((res.json.data as { id: string }).id);
}

beforeAll(async () => {
  api = await startApi();
  ({ accountId, token: admin } = await api.login("admin"));
  agent = (await api.login("agent1")).token;
});

afterAll(async () => {
  await api.close();
});

describe("blacklists.md", () => {
  it("blacklists.md › Fetch (the account's blocklists)", async () => {
    const id = await createList({ name: "Spammers", numbers: { "+14155550199": {} } });
    const res = await curl("GET", blacklists(), { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    expect(res.json.data).toContainEqual({ id, name: "Spammers" });
    for (const row of res.json.data as Record<string, unknown>[]) expect(Object.keys(row).sort()).toEqual(["id", "name"]);
  });

  it("blacklists.md › Create (as written: no body, so no name)", async () => {
    const before = (await curl("GET", blacklists(), { "X-Auth-Token": admin })).json.data;
    const res = await curl("PUT", blacklists(), { "X-Auth-Token": admin });
    expectError(res, 400, "validation error", { name: { required: { message: expect.any(String) } } });
    expect((await curl("GET", blacklists(), { "X-Auth-Token": admin })).json.data).toEqual(before);
    // With the envelope: the schema's fields, flags included, numbers kept in E.164.
    const made = await curl("PUT", blacklists(), { "X-Auth-Token": admin, ...CURL_FORM }, JSON.stringify({ data: { name: "Robocallers", numbers: { "+1 415 555 0142": {} }, flags: ["from_ui"] } }));
    expectSuccess(made, 201, { name: "Robocallers", numbers: { "+14155550142": {} }, flags: ["from_ui"], should_block_anonymous: false, id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expectError(await curl("PUT", blacklists(), { "X-Auth-Token": admin, ...CURL_FORM }, JSON.stringify({ data: { name: "Bad flags", flags: [7] } })), 400, "validation error", {
      "flags.0": { type: expect.any(Object) },
    });
    // Blocklists are the account's: an agent may not make one.
    expectError(await curl("PUT", blacklists(), { "X-Auth-Token": agent, ...CURL_FORM }, JSON.stringify({ data: { name: "Agent's" } })), 403, "forbidden");
  });

  it("blacklists.md › Fetch (one blocklist)", async () => {
    const id = await createList({ name: "Exes", numbers: { "+14155550123": {} }, should_block_anonymous: true });
    const res = await curl("GET", `${blacklists()}/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, name: "Exes", numbers: { "+14155550123": {} }, should_block_anonymous: true });
    expect(res.json).toMatchObject({ auth_token: admin });
  });

  it("blacklists.md › Change (as written: no body, so no name)", async () => {
    const id = await createList({ name: "Before", numbers: { "+14155550111": {} } });
    const res = await curl("POST", `${blacklists()}/${id}`, { "X-Auth-Token": admin });
    expectError(res, 400, "validation error", { name: { required: { message: expect.any(String) } } });
    expectSuccess(await curl("GET", `${blacklists()}/${id}`, { "X-Auth-Token": admin }), 200, { name: "Before", numbers: { "+14155550111": {} } });
    // With the envelope: the list is replaced.
    const changed = await curl("POST", `${blacklists()}/${id}`, { "X-Auth-Token": admin, ...CURL_FORM }, JSON.stringify({ data: { name: "After" } }));
    expectSuccess(changed, 200, { id, name: "After", numbers: {} });
    expectError(await curl("POST", `${blacklists()}/${id}`, { "X-Auth-Token": agent, ...CURL_FORM }, JSON.stringify({ data: { name: "Agent's" } })), 403, "forbidden");
  });

  it("blacklists.md › Patch (as written: no body, nothing changes)", async () => {
    const id = await createList({ name: "Patched", numbers: { "+14155550122": {} } });
    const res = await curl("PATCH", `${blacklists()}/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, name: "Patched", numbers: { "+14155550122": {} }, should_block_anonymous: false });
    // With the envelope: only the fields sent change.
    const patched = await curl("PATCH", `${blacklists()}/${id}`, { "X-Auth-Token": admin, ...CURL_FORM }, JSON.stringify({ data: { should_block_anonymous: true } }));
    expectSuccess(patched, 200, { id, name: "Patched", numbers: { "+14155550122": {} }, should_block_anonymous: true });
    expectError(await curl("PATCH", `${blacklists()}/${id}`, { "X-Auth-Token": agent, ...CURL_FORM }, JSON.stringify({ data: { name: "Agent's" } })), 403, "forbidden");
  });

  it("blacklists.md › Remove", async () => {
    const id = await createList({ name: "Gone soon" });
    expectError(await curl("DELETE", `${blacklists()}/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    const res = await curl("DELETE", `${blacklists()}/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, name: "Gone soon" });
    expectError(await curl("GET", `${blacklists()}/${id}`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id, message: "bad identifier" });
  });
});
