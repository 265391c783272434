// The modules Kazoo documents that this server does not serve (voicemail, conferences, faxes,
// hotdesks, menus, temporal rules, groups, ...): each answers as crossbar does for a module that
// is not loaded. Crossbar looks for the module in allowed_methods, before is_authorized, so the
// answer is 404 `not_found` with `data.message` "not found" whether a token came or not, for
// whichever account, for every verb (tunnelled ones too) and OPTIONS. Its early authentication runs
// first, though: a token that is not live is 401, as on every other path.
// Documents: 41 (one test each: 39 module documents, every verb on the collection and on an item;
// quickcall.md and access_lists.md with their nested paths). Passing as Kazoo answers: 41.
// Marked differs: 41 (the modules themselves are not served). See docs/design-notes.md.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, type CurlResult } from "../helpers/kazoo-docs.js";

/** Kazoo's document and the module path it documents under /v2/accounts/{ACCOUNT_ID}/. */
const UNSERVED: ReadonlyArray<readonly [doc: string, module: string]> = [
  ["voicemail", "vmboxes"],
  ["conference", "conferences"],
  ["faxboxes", "faxboxes"],
  ["faxes", "faxes"],
  ["hotdesks", "hotdesks"],
  ["menus", "menus"],
  ["temporal_rules", "temporal_rules"],
  ["temporal_rules_sets", "temporal_rules_sets"],
  ["groups", "groups"],
  ["directories", "directories"],
  ["parked_calls", "parked_calls"],
  ["notifications", "notifications"],
  ["ledgers", "ledgers"],
  ["limits", "limits"],
  ["resources", "resources"],
  ["phone_numbers", "phone_numbers"],
  ["connectivity", "connectivity"],
  ["registrations", "registrations"],
  ["lists", "lists"],
  ["metaflows", "metaflows"],
  ["sms", "sms"],
  ["storage", "storage"],
  ["port_requests", "port_requests"],
  ["whitelabeling", "whitelabel"],
  ["queues", "queues"],
  ["clicktocall", "clicktocall"],
  ["presence", "presence"],
  ["alerts", "alerts"],
  ["apps_store", "apps_store"],
  ["dialplans", "dialplans"],
  ["contact_list", "contact_list"],
  ["ips", "ips"],
  ["services", "services"],
  ["transactions", "transactions"],
  ["tasks", "tasks"],
  ["multi_factor", "multi_factor"],
  ["skels", "skels"],
  ["comments", "comments"],
  ["call_inspector", "call_inspector"],
];

const VERBS = ["GET", "PUT", "POST", "PATCH", "DELETE"] as const;
const ITEM = "0123456789abcdef0123456789abcdef";

let api: TestApi;
let accountId: string;
let adminToken: string;
let agentToken: string;
let strangerToken: string;

function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

/** Crossbar's answer for a module that is not loaded. */
function expectNotLoaded(res: CurlResult, what: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(404);
  expect(res.json, what).toMatchObject({ status: "error", error: "404", message: "not_found", data: { message: "not found" }, request_id: expect.any(String) });
  // Exactly Kazoo's data: nothing about the path beside the message.
  expect(res.json["data"], what).toEqual({ message: "not found" });
}

/** Every verb, on the collection and on an item, with each of the callers, answers not loaded. */
async function expectModuleNotLoaded(paths: string[]): Promise<void> {
  const callers: Record<string, Record<string, string>> = {
    "no token": {},
    admin: { "X-Auth-Token": adminToken },
    agent: { "X-Auth-Token": agentToken },
    // Another account's token on this account's path: still no module, as in crossbar.
    stranger: { "X-Auth-Token": strangerToken },
  };
  for (const path of paths) {
    for (const [who, headers] of Object.entries(callers)) {
      for (const verb of VERBS) {
        const body = verb === "GET" || verb === "DELETE" ? undefined : '{"data":{}}';
        const withType = body === undefined ? headers : { ...headers, "Content-Type": "application/json" };
        expectNotLoaded(await curl(verb, path, withType, body), `${verb} ${path} (${who})`);
      }
      expectNotLoaded(await curl("POST", `${path}?verb=DELETE`, headers), `POST ?verb=DELETE ${path} (${who})`);
    }
    expectNotLoaded(await curl("OPTIONS", path), `OPTIONS ${path}`);
    // A dead token is refused before the module is looked for.
    expectError(await curl("GET", path, { "X-Auth-Token": "0".repeat(64) }), 401, "invalid_credentials", { message: "invalid credentials" });
    expectError(await curl("PUT", path, { Authorization: `Bearer ${"0".repeat(64)}`, "Content-Type": "application/json" }, '{"data":{}}'), 401, "invalid_credentials");
  }
}

beforeAll(async () => {
  api = await startApi();
  ({ accountId, token: adminToken } = await api.login("admin"));
  ({ token: agentToken } = await api.login("agent1"));
  ({ token: strangerToken } = await createAccount(api, "stranger"));
});

afterAll(async () => {
  await api.close();
});

describe("unserved modules", () => {
  for (const [doc, module] of UNSERVED) {
    it(`${doc}.md › /${module} [differs: not served, answers as a module not loaded]`, async () => {
      const base = `/v2/accounts/${accountId}/${module}`;
      await expectModuleNotLoaded([base, `${base}/${ITEM}`]);
    });
  }

  it("quickcall.md › /users/{USER_ID}/quickcall and /devices/{DEVICE_ID}/quickcall [differs: not served, answers as a module not loaded]", async () => {
    const { ownerId } = await api.login("agent1");
    const devices = (await curl("GET", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": adminToken })).json.data as { id: string }[];
    const deviceId = devices[0]?.id ?? ITEM;
    await expectModuleNotLoaded([`/v2/accounts/${accountId}/users/${ownerId}/quickcall/1001`, `/v2/accounts/${accountId}/devices/${deviceId}/quickcall/1001`]);
  });

  it("access_lists.md › /access_lists and /devices/{DEVICE_ID}/access_lists [differs: not served, answers as a module not loaded]", async () => {
    await expectModuleNotLoaded([`/v2/accounts/${accountId}/access_lists`, `/v2/accounts/${accountId}/devices/${ITEM}/access_lists`]);
  });

  it("the not-loaded answer leaves the served modules alone: a live token on a served path is still answered", async () => {
    const res = await curl("GET", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": adminToken });
    expect(res.status).toBe(200);
    // And a dead token on a served path is the same 401 as on an unserved one.
    expectError(await curl("GET", `/v2/accounts/${accountId}/users`, { "X-Auth-Token": "0".repeat(64) }), 401, "invalid_credentials");
  });
});
