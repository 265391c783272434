// Kazoo's users.md, each example sent as written (its headers and body), checked for the
// documented status, envelope and data shape.
// Count: 10 examples in the document, plus the Quickcalls section, which points elsewhere and is
// tested as not served: 11 tests; 6 pass as documented, 5 are marked differs (the vCard, the
// photo and quickcall are not served: the spec has no such thing).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;

function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

const JSON_TYPE = { "Content-Type": "application/json" };

/** The user every answer of the document shows (User Three), `enabled` as the answer has it. */
function userThree(enabled: boolean): Record<string, unknown> {
  return {
    call_restriction: {},
    caller_id: {},
    contact_list: {},
    dial_plan: {},
    enabled,
    first_name: "User",
    hotdesk: { enabled: false, keep_logged_in_elsewhere: false, require_pin: false },
    last_name: "Three",
    media: { audio: { codecs: ["PCMU"] }, encryption: { enforce_security: false, methods: [] }, video: { codecs: [] } },
    music_on_hold: {},
    priv_level: "user",
    profile: {},
    require_password_update: false,
    ringtones: {},
    verified: false,
    vm_to_email_enabled: true,
  };
}

const CREATE_BODY = '{"data":{"first_name":"User", "last_name":"Three"}}';

/** "Create a new user" as written, returning the new user's id. */
async function createUserThree(): Promise<string> {
  const res = await curl("PUT", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": admin, ...JSON_TYPE }, CREATE_BODY);
  expectSuccess(res, 201);
  return String((res.json.data as { id: string }).id);
}

beforeAll(async () => {
  api = await startApi();
  ({ token: admin, accountId } = await api.login("admin"));
  ({ token: agent } = await api.login("agent1"));
});

afterAll(async () => {
  await api.close();
});

describe("users.md", () => {
  it("users.md › Fetch", async () => {
    const id = await createUserThree();
    // The document's curl lines lose a closing quote after {AUTH_TOKEN}: sent as the header.
    const res = await curl("GET", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows.length).toBe(res.json.page_size);
    for (const row of rows) {
      expect(row).toMatchObject({ features: expect.any(Array), first_name: expect.any(String), id: expect.stringMatching(/^[0-9a-f]{32}$/), last_name: expect.any(String), priv_level: expect.any(String) });
    }
    // Kazoo's listing derives `features` from the document: vm_to_email is on by default.
    expect(rows.find((r) => r.id === id)).toMatchObject({ features: ["vm_to_email"], first_name: "User", last_name: "Three", priv_level: "user" });
    expect(rows.find((r) => r.username === "admin")).toMatchObject({ email: expect.any(String), priv_level: "admin" });
  });

  it("users.md › Create a new user", async () => {
    const res = await curl("PUT", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": admin, ...JSON_TYPE }, CREATE_BODY);
    expectSuccess(res, 201, { ...userThree(true), id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(res.json.auth_token).toBe(admin);
    // Writes to users are admins'.
    expectError(await curl("PUT", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": agent, ...JSON_TYPE }, CREATE_BODY), 403, "forbidden");
  });

  it("users.md › Remove a user", async () => {
    const id = await createUserThree();
    expectError(await curl("DELETE", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    // The document removes the user it disabled in "Patch a user's doc".
    await curl("PATCH", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": admin, ...JSON_TYPE }, '{"data":{"enabled":false}}');
    const res = await curl("DELETE", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { ...userThree(false), id });
    expectError(await curl("GET", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id });
  });

  it("users.md › Fetch a user", async () => {
    const id = await createUserThree();
    const res = await curl("GET", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { ...userThree(true), id });
  });

  it("users.md › Patch a user's doc", async () => {
    const id = await createUserThree();
    expectError(await curl("PATCH", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": agent, ...JSON_TYPE }, '{"data":{"enabled":false}}'), 403, "forbidden");
    const res = await curl("PATCH", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": admin, ...JSON_TYPE }, '{"data":{"enabled":false}}');
    expectSuccess(res, 200, { ...userThree(false), id });
  });

  it("users.md › Change the user doc", async () => {
    const id = await createUserThree();
    const body =
      '{"data":{"first_name":"User","last_name":"Three","call_restriction":{},"caller_id":{},"contact_list":{},"dial_plan":{},"enabled":false,"hotdesk":{"enabled":false,"keep_logged_in_elsewhere":false,"require_pin":false},"media":{"audio":{"codecs":["PCMU"]},"encryption":{"enforce_security":false,"methods":[]},"video":{"codecs":[]}},"music_on_hold":{},"priv_level":"user","profile":{},"require_password_update":false,"ringtones":{},"verified":false,"vm_to_email_enabled":true}}';
    expectError(await curl("POST", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": agent, ...JSON_TYPE }, body), 403, "forbidden");
    const res = await curl("POST", `/v2/accounts/${accountId}/users/${id}`, { "X-Auth-Token": admin, ...JSON_TYPE }, body);
    expectSuccess(res, 200, { ...userThree(false), id });
  });

  it("users.md › Fetch (or create) a vCard [differs: vCards are not served]", async () => {
    const id = await createUserThree();
    const res = await curl("GET", `/v2/accounts/${accountId}/users/${id}/vcard`, { "X-Auth-Token": admin, Accept: "text/x-vcard" });
    expectError(res, 404, "not_found", { message: "not found" });
  });

  it("users.md › Remove the photo from the user [differs: photos are not served]", async () => {
    const id = await createUserThree();
    expectError(await curl("DELETE", `/v2/accounts/${accountId}/users/${id}/photo`, { "X-Auth-Token": admin }), 404, "not_found", { message: "not found" });
  });

  it("users.md › Fetch the user's photo, if any [differs: photos are not served]", async () => {
    const id = await createUserThree();
    // As written: no token (the document leaves it out).
    expectError(await curl("GET", `/v2/accounts/${accountId}/users/${id}/photo`, { Accept: "application/base64" }), 404, "not_found", { message: "not found" });
  });

  it("users.md › Create or change the user's photo [differs: photos are not served]", async () => {
    const id = await createUserThree();
    // A JPEG's first bytes stand for the document's --data-binary @/path/to/image.jpg.
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
    const res = await send(api.url, "POST", `/v2/accounts/${accountId}/users/${id}/photo`, { "Content-Type": "application/octet-stream" }, jpeg);
    expectError(res, 404, "not_found", { message: "not found" });
  });

  it("users.md › Quickcalls [differs: quickcall is not served]", async () => {
    const id = await createUserThree();
    expectError(await curl("GET", `/v2/accounts/${accountId}/users/${id}/quickcall/1000`, { "X-Auth-Token": admin }), 404, "not_found", { message: "not found" });
  });
});
