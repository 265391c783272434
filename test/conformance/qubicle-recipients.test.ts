// Qubicle's "Crossbar Recipient API" (docs.2600hz.com/qubicle/doc/crossbar/qubicle_recipients) and
// the recipient requests of its "Qubicle User Guide" (guides/user-crossbar), each example sent as
// written on the qubicle_recipients path (X-Auth-Token and Content-Type: application/json, as the
// curl lines have) and checked for the documented status, envelope and data shape. Sections after
// "Get recipient status" are named after the spec's endpoint table (service-api.md), which was
// written from this document: the search tool here returns only the first part of the page.
//
// Examples: 10 (9 of the recipient document, 1 of the user guide), plus one refusal ("unknown
// status"). Passing as documented: 10. Marked differs: 0.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let admin: string;
const tokens: Record<string, string> = {};
const users: Record<string, string> = {};

const JSON_TYPE = { "Content-Type": "application/json" };
const as = (token: string) => ({ "X-Auth-Token": token, ...JSON_TYPE });
const path = (rest = "") => `/v2/accounts/${accountId}/qubicle_recipients${rest}`;
const id = (name: string) => users[name] ?? "";
const token = (name: string) => tokens[name] ?? "";

function curl(method: string, url: string, headers: Record<string, string>, body?: string): Promise<CurlResult> {
  return send(api.url, method, url, headers, body);
}

/** `POST .../qubicle_recipients/{USER_ID}/status -d '{"data":{"status":...}}'` as `name` sends it. */
const setStatus = (name: string, status: string, by = name) => curl("POST", path(`/${id(name)}/status`), as(token(by)), JSON.stringify({ data: { status } }));

const STATES = ["Ready", "Away", "Wrapup-Time", "Call-Offer", "On-A-Call", "Not-Logged-In"];

const STATUS_SHAPE = {
  available: expect.any(Boolean),
  availability_state: expect.toBeOneOf(STATES),
  wrapup_time_seconds: expect.any(Number),
  stats: {
    total_calls: expect.any(Number),
    missed_calls: expect.any(Number),
    avg_call_time: expect.any(Number),
    login_time: expect.any(Number),
    last_action_time: expect.any(Number),
    last_handled_time: expect.any(Number),
  },
  node: expect.any(String),
};

beforeAll(async () => {
  api = await startApi();
  const login = await api.login("admin");
  ({ accountId } = login);
  admin = login.token;
  tokens.admin = admin;
  users.admin = login.ownerId;
  for (const name of ["agent1", "agent2", "agent3", "supervisor"]) {
    const l = await api.login(name);
    users[name] = l.ownerId;
    tokens[name] = l.token;
  }
});

afterAll(async () => {
  await api.close();
});

describe("qubicle_recipients.md", () => {
  it("qubicle_recipients.md › List recipients", async () => {
    const res = await curl("GET", path(), as(admin));
    expectSuccess(res, 200);
    const rows = res.json.data as { id: string; name: string }[];
    expect(res.json).toMatchObject({ page_size: rows.length, auth_token: admin });
    expect(rows).toContainEqual({ id: id("agent1"), name: "agent1" });
    for (const row of rows) expect(row).toEqual({ id: expect.any(String), name: expect.any(String) });
    // The account's users read it too.
    expectSuccess(await curl("GET", path(), as(token("agent2"))), 200);
  });

  it("qubicle_recipients.md › Get recipient configuration", async () => {
    const res = await curl("GET", path(`/${id("agent1")}`), as(admin));
    // "NOTE this is actually a users document".
    expectSuccess(res, 200, { id: id("agent1"), username: "agent1", first_name: expect.any(String), callq: { enabled: true } });
    // An admin is a user of the account but no recipient: 404 as Kazoo's bad identifier.
    expectError(await curl("GET", path(`/${id("admin")}`), as(admin)), 404, "bad_identifier", { cause: id("admin") });
  });

  it("qubicle_recipients.md › Get recipient status", async () => {
    expectSuccess(await setStatus("agent2", "login"), 200);
    const res = await curl("GET", path(`/${id("agent2")}/status`), as(token("agent2")));
    expectSuccess(res, 200, { ...STATUS_SHAPE, available: false, availability_state: "Away" });
    expect(res.json.auth_token).toBe(token("agent2"));
    await setStatus("agent2", "logout");
  });

  it("qubicle_recipients.md › Get multiple recipient status", async () => {
    expectSuccess(await setStatus("agent3", "login"), 200);
    const res = await curl("POST", path("/status"), as(admin), JSON.stringify({ data: { recipient_ids: [id("agent3"), id("supervisor")] } }));
    expectSuccess(res, 200);
    const data = res.json.data as Record<string, unknown>;
    expect(Object.keys(data).sort()).toEqual([id("agent3"), id("supervisor")].sort());
    expect(data[id("agent3")]).toMatchObject({ ...STATUS_SHAPE, availability_state: "Away" });
    expect(data[id("supervisor")]).toBe("not_logged_in");
    await setStatus("agent3", "logout");
  });

  it("qubicle_recipients.md › Set recipient status (login)", async () => {
    const res = await setStatus("agent1", "login");
    expectSuccess(res, 200, { ...STATUS_SHAPE, available: false, availability_state: "Away" });
  });

  it("qubicle_recipients.md › Set recipient status (ready)", async () => {
    await setStatus("agent1", "login");
    const res = await setStatus("agent1", "ready");
    expectSuccess(res, 200, { ...STATUS_SHAPE, available: true, availability_state: "Ready" });
  });

  it("qubicle_recipients.md › Set recipient status (away)", async () => {
    await setStatus("agent1", "login");
    await setStatus("agent1", "ready");
    const res = await setStatus("agent1", "away");
    expectSuccess(res, 200, { ...STATUS_SHAPE, available: false, availability_state: "Away" });
  });

  it("qubicle_recipients.md › Set recipient status (logout)", async () => {
    await setStatus("agent1", "login");
    const res = await setStatus("agent1", "logout");
    expectSuccess(res, 200, { availability_state: "Not-Logged-In", available: false });
    // A recipient changes their own state; another agent is refused and nothing changes.
    expectError(await setStatus("agent1", "login", "agent2"), 403, "forbidden");
    const after = await curl("POST", path("/status"), as(admin), JSON.stringify({ data: { recipient_ids: [id("agent1")] } }));
    expect(after.json.data).toEqual({ [id("agent1")]: "not_logged_in" });
    // An admin may change anyone's.
    expectSuccess(await setStatus("agent1", "login", "admin"), 200, { availability_state: "Away" });
    await setStatus("agent1", "logout");
  });

  it("qubicle_recipients.md › Set recipient status (unknown status)", async () => {
    const res = await setStatus("agent1", "lunch");
    expectError(res, 400, "validation error", { status: { enum: expect.any(Object) } });
  });

  it("qubicle_recipients.md › Eavesdrop (no call to listen to)", async () => {
    // The supervisor has call_monitor; agent3 is on no call, so there is nothing to listen to.
    const res = await curl("POST", path(`/${id("supervisor")}`), as(token("supervisor")), JSON.stringify({ data: { action: "monitor", target: id("agent3"), mode: "eavesdrop" } }));
    expectError(res, 400, "invalid data");
    // An agent without call_monitor may not listen in at all.
    const refused = await curl("POST", path(`/${id("agent1")}`), as(token("agent1")), JSON.stringify({ data: { action: "monitor", target: id("agent3") } }));
    expectError(refused, 403, "forbidden");
  });
});

describe("user-crossbar.md (Qubicle User Guide)", () => {
  it("user-crossbar.md › A quick example (login, then ready)", async () => {
    const login = await curl("POST", path(`/${id("agent2")}/status`), as(token("agent2")), '{"data":{"status":"login"}}');
    expectSuccess(login, 200, { availability_state: "Away" });
    const ready = await curl("POST", path(`/${id("agent2")}/status`), as(token("agent2")), '{"data":{"status":"ready"}}');
    expectSuccess(ready, 200, { availability_state: "Ready", available: true });
    await setStatus("agent2", "logout");
  });
});
