// The directory, the user preferences and the missed calls (local additions) on a real server:
// presence composed from registrations, the queue engine and do not disturb, each change published
// as directory.user.<id>; who may read and set what; bad input changing nothing.
import { Ajv } from "ajv";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";
import { EventsClient, type EventMessage } from "../helpers/events-client.js";
import { poll } from "../helpers/poll.js";
import { newDevice, SipPhone, SipSocket } from "../helpers/sip-client.js";

interface Entry {
  id: string;
  name: string;
  username?: string;
  extensions: string[];
  presence: string;
  registered: boolean;
  do_not_disturb: boolean;
  availability_state?: string;
}

let api: TestApi;
let admin: { token: string; accountId: string; ownerId: string };
let agent: { token: string; accountId: string; ownerId: string };
let events: EventsClient;
const sockets: SipSocket[] = [];
let ids: Record<string, string> = {};

beforeAll(async () => {
  api = await startApi();
  admin = await api.login("admin");
  agent = await api.login("agent3");
  const users = await api.call<{ id: string; username: string }[]>("GET", `/v2/accounts/${admin.accountId}/users`, { token: admin.token, query: { paginate: "false" } });
  ids = Object.fromEntries(users.body.data.map((u) => [u.username, u.id]));
  events = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
  expect(await events.subscribe(admin.accountId, "directory.user.*", { auth_token: agent.token })).toMatchObject({ status: "success" });
});
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await events.close();
  await api.close();
});

const directory = async (token = agent.token) => api.call<Entry[]>("GET", `/v2/accounts/${admin.accountId}/directory`, { token });
const entryOf = async (username: string): Promise<Entry | undefined> => (await directory()).body.data.find((e) => e.id === ids[username]);
const prefsPath = (username: string) => `/v2/accounts/${admin.accountId}/users/${ids[username] ?? ""}/preferences`;

/** The next presence event for `username` whose presence is `presence`. */
function presenceEvent(username: string, presence: string): Promise<EventMessage> {
  return events.next((m) => m.action === "event" && m.routing_key === `directory.user.${ids[username] ?? ""}` && (m.data as { presence?: string }).presence === presence) as Promise<EventMessage>;
}

async function registerFor(username: string): Promise<SipPhone> {
  const device = await newDevice(api, admin, { owner_id: ids[username] });
  const socket = await SipSocket.connect(api.url);
  sockets.push(socket);
  const phone = new SipPhone(socket, { ...device, realm: "demo.switchboard.local" });
  expect((await phone.register({ expires: 300 })).status).toBe(200);
  return phone;
}

describe("the directory", () => {
  it("lists every user of the account with name, username, extension and presence; offline without a registered device", async () => {
    const res = await directory();
    expect(res.status, res.text).toBe(200);
    const agent1 = res.body.data.find((e) => e.username === "agent1");
    expect(agent1).toMatchObject({ name: "Alex Agent", extensions: ["1002"], presence: "offline", registered: false, do_not_disturb: false });
    expect(res.body.data.map((e) => e.username)).toEqual(expect.arrayContaining(["admin", "agent1", "agent2", "agent3", "supervisor"]));
  });

  it("follows a colleague: registered (available), Ready, Away, do not disturb, each published as directory.user.<id>", async () => {
    const available = presenceEvent("agent2", "available");
    const phone = await registerFor("agent2");
    expect((await available).data).toMatchObject({ id: ids.agent2, registered: true });
    expect(await entryOf("agent2")).toMatchObject({ presence: "available", registered: true });

    const recipient = `/v2/accounts/${admin.accountId}/callq_recipients/${ids.agent2 ?? ""}/status`;
    const loggedIn = presenceEvent("agent2", "away");
    expect((await api.call("POST", recipient, { token: admin.token, data: { status: "login" } })).status).toBe(200);
    expect((await loggedIn).data).toMatchObject({ availability_state: "Away" });

    const ready = presenceEvent("agent2", "ready");
    expect((await api.call("POST", recipient, { token: admin.token, data: { status: "ready" } })).status).toBe(200);
    expect((await ready).data).toMatchObject({ availability_state: "Ready" });

    const away = presenceEvent("agent2", "away");
    expect((await api.call("POST", recipient, { token: admin.token, data: { status: "away" } })).status).toBe(200);
    expect((await away).data).toMatchObject({ availability_state: "Away" });

    const dnd = presenceEvent("agent2", "do_not_disturb");
    expect((await api.call("PATCH", prefsPath("agent2"), { token: admin.token, data: { do_not_disturb: { enabled: true } } })).status).toBe(200);
    expect((await dnd).data).toMatchObject({ do_not_disturb: true });

    const offline = presenceEvent("agent2", "offline");
    expect((await phone.unregister()).status).toBe(200);
    await offline;
    await api.call("POST", recipient, { token: admin.token, data: { status: "logout" } });
    await api.call("PATCH", prefsPath("agent2"), { token: admin.token, data: { do_not_disturb: { enabled: false } } });
  });

  it("sends directory events as the AsyncAPI document describes them", async () => {
    const doc = (await (await fetch(`${api.url}/v2/asyncapi.json`)).json()) as { channels: { events: { messages: Record<string, { payload: object }> } } };
    const payload = doc.channels.events.messages.directoryEvent?.payload;
    expect(payload).toBeDefined();
    const validate = new Ajv({ strict: false, allErrors: true }).compile(payload ?? {});
    const sent = events.events.filter((m) => m.routing_key.startsWith("directory.user."));
    expect(sent.length).toBeGreaterThan(3);
    for (const message of sent) expect(validate(message), JSON.stringify(validate.errors)).toBe(true);
  });

  it("is read by any user of the account and refused to others", async () => {
    const other = await createAccount(api, "Elsewhere directory");
    expect((await directory(other.token)).status).toBe(403);
    expect((await directory("0".repeat(64))).status).toBe(401);
  });
});

describe("a user's preferences", () => {
  it("are set by the user themself: do not disturb and auto-answer, shown on the user document", async () => {
    const res = await api.call<Record<string, unknown>>("PATCH", prefsPath("agent3"), { token: agent.token, data: { auto_answer: { enabled: true, delay_s: 2 } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ do_not_disturb: { enabled: false }, auto_answer: { enabled: true, delay_s: 2 } });
    const user = await api.call<Record<string, unknown>>("GET", `/v2/accounts/${admin.accountId}/users/${ids.agent3 ?? ""}`, { token: admin.token });
    expect(user.body.data.auto_answer).toEqual({ enabled: true, delay_s: 2 });
    expect((await api.call("GET", prefsPath("agent3"), { token: agent.token })).body.data).toEqual(res.body.data);
  });

  it("refuses another user's preferences to an agent, and bad input changes nothing", async () => {
    expect((await api.call("PATCH", prefsPath("agent1"), { token: agent.token, data: { do_not_disturb: { enabled: true } } })).status).toBe(403);
    expect((await api.call("GET", prefsPath("agent1"), { token: agent.token })).status).toBe(403);
    const before = (await api.call("GET", prefsPath("agent3"), { token: agent.token })).body.data;
    const tooLong = await api.call("PATCH", prefsPath("agent3"), { token: agent.token, data: { auto_answer: { delay_s: 99 } } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.text).toContain("auto_answer.delay_s");
    const unknown = await api.call("PATCH", prefsPath("agent3"), { token: agent.token, data: { ring_louder: true } });
    expect(unknown.status).toBe(400);
    const notBoolean = await api.call("PATCH", prefsPath("agent3"), { token: agent.token, data: { do_not_disturb: { enabled: "yes" } } });
    expect(notBoolean.status).toBe(400);
    expect((await api.call("GET", prefsPath("agent3"), { token: agent.token })).body.data).toEqual(before);
  });

  it("an admin sets anyone's; an unknown user is 404", async () => {
    expect((await api.call("PATCH", prefsPath("agent1"), { token: admin.token, data: { do_not_disturb: { enabled: true } } })).status).toBe(200);
    expect(await entryOf("agent1")).toMatchObject({ do_not_disturb: true });
    expect((await api.call("PATCH", prefsPath("agent1"), { token: admin.token, data: { do_not_disturb: { enabled: false } } })).status).toBe(200);
    const missing = `/v2/accounts/${admin.accountId}/users/${"0".repeat(32)}/preferences`;
    expect((await api.call("GET", missing, { token: admin.token })).status).toBe(404);
  });
});

describe("missed calls", () => {
  const missedPath = (username: string) => `/v2/accounts/${admin.accountId}/users/${ids[username] ?? ""}/missed_calls`;

  it("keeps a direct call that rang nobody, unseen until the user says so; only they and admins read them", async () => {
    const call = await api.call("PUT", `/v2/accounts/${admin.accountId}/sim/calls`, {
      token: admin.token,
      data: { to: "1004", caller_id_number: "+14155550123", caller_id_name: "Pat Caller", audio: "silence_stream://1000" },
    });
    expect([200, 201]).toContain(call.status);
    const rows = await poll("the missed call to be kept", async () => {
      const res = await api.call<{ caller_id_number: string; seen: boolean }[]>("GET", missedPath("agent3"), { token: agent.token });
      return res.body.data.length > 0 ? res.body.data : undefined;
    });
    expect(rows[0]).toMatchObject({ caller_id_number: "+14155550123", seen: false });

    expect((await api.call("GET", missedPath("agent3"), { token: (await api.login("agent1")).token })).status).toBe(403);
    expect((await api.call("GET", missedPath("agent3"), { token: admin.token })).status).toBe(200);

    const seen = await api.call<{ seen: number }>("POST", `${missedPath("agent3")}/seen`, { token: agent.token });
    expect(seen.body.data.seen).toBe(1);
    const after = await api.call<{ seen: boolean }[]>("GET", missedPath("agent3"), { token: agent.token });
    expect(after.body.data.every((r) => r.seen)).toBe(true);
  });
});
