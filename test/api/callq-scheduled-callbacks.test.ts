// Scheduled callbacks over real HTTP (local addition, issue 19 item 4): an agent schedules one
// (number, time, note), lists and cancels their own; a supervisor sees their queues' members';
// an admin all; refusals for bad input and for others' callbacks change nothing; at the time, one
// reminder event for its user, as the AsyncAPI document describes it, and the callback reads
// `reminded`. The server's clock is a TestClock jumped ahead to the time.
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toGregorianSeconds } from "../../server/clock.js";
import type { BusEvent } from "../../server/events/index.js";
import { startApi, TestClock, type TestApi } from "../helpers/api.js";
import { describeConformance } from "../helpers/conformance.js";
import { poll } from "../helpers/poll.js";

/** A time far enough ahead that no clock jump of the suite reaches it (a reminder would change the document). */
const LATER = () => toGregorianSeconds(Date.now()) + 200 * 86_400;

describeConformance({
  name: "callq_callbacks",
  field: "note",
  adminWrites: false,
  valid: (n, { ownerId }) => ({ number: `+1415555${3000 + n}`, remind_at: LATER(), user_id: ownerId, note: `callback ${n}` }),
  invalid: [
    { title: "a number with letters", data: { number: "call-me", remind_at: LATER() }, field: "number", rule: "pattern" },
    { title: "no number", data: { remind_at: LATER() }, field: "number", rule: "required" },
    { title: "a time that is not a whole number", data: { number: "+14155550100", remind_at: "tomorrow" }, field: "remind_at", rule: "type" },
    { title: "a time in the past", data: { number: "+14155550100", remind_at: 1000 }, field: "remind_at", rule: "minimum" },
    { title: "a time over a year ahead", data: { number: "+14155550100", remind_at: LATER() + 400 * 86_400 }, field: "remind_at", rule: "maximum" },
    { title: "a user not in the account", data: { number: "+14155550100", remind_at: LATER(), user_id: "0123456789abcdef0123456789abcdef" }, field: "user_id", rule: "not_found" },
    { title: "a queue not in the account", data: { number: "+14155550100", remind_at: LATER(), queue_id: "0123456789abcdef0123456789abcdef" }, field: "queue_id", rule: "not_found" },
    { title: "a note over 2000 characters", data: { number: "+14155550100", remind_at: LATER(), note: "x".repeat(2001) }, field: "note", rule: "maxLength" },
  ],
});

let api: TestApi;
let base = "";
let admin = "";
const clock = new TestClock();
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
const events: BusEvent[] = [];

beforeAll(async () => {
  api = await startApi({ clock });
  const login = await api.login("admin");
  admin = login.token;
  base = `/v2/accounts/${login.accountId}`;
  for (const username of ["agent1", "agent2", "supervisor"]) {
    const user = await api.login(username);
    tokens[username] = user.token;
    ids[username] = user.ownerId;
  }
  api.server.events.bus.subscribe((e) => events.push(e));
  // The supervisor supervises Sales, whose only member besides them is agent1.
  const queues = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
  const sales = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
  const support = queues.body.data.find((q) => q.name === "Support")?.id ?? "";
  await api.call("POST", `${base}/callq_queues/${sales}/recipients`, { token: admin, data: { action: "set", members: [ids.agent1, ids.supervisor] } });
  await api.call("POST", `${base}/callq_queues/${support}/recipients`, { token: admin, data: { action: "set", members: [ids.agent2] } });
});
afterAll(async () => {
  await api?.close();
});

const token = (username: string): string => tokens[username] ?? "";
const path = (): string => `${base}/callq_callbacks`;
const inS = (s: number): number => toGregorianSeconds(clock.now()) + s;

interface Row {
  id: string;
  number: string;
  user_id: string;
  note: string;
  state: string;
  remind_at: number;
}

async function list(as: string): Promise<Row[]> {
  const res = await api.call<Row[]>("GET", path(), { token: as });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe("scheduled callbacks", () => {
  it("an agent schedules their own and sees only theirs; a supervisor sees their queues' members'; an admin all", async () => {
    const mine = await api.call<Row>("PUT", path(), { token: token("agent1"), data: { number: "+14155550123", remind_at: inS(3600), note: "Quote for 40 seats" } });
    expect(mine.status, mine.text).toBe(201);
    expect(mine.body.data).toMatchObject({ number: "+14155550123", user_id: ids.agent1, note: "Quote for 40 seats", state: "scheduled" });
    const theirs = await api.call<Row>("PUT", path(), { token: token("agent2"), data: { number: "+14155550199", remind_at: inS(7200) } });
    expect(theirs.status, theirs.text).toBe(201);

    expect((await list(token("agent1"))).map((r) => r.number)).toEqual(["+14155550123"]);
    expect((await list(token("agent2"))).map((r) => r.number)).toEqual(["+14155550199"]);
    expect((await list(token("supervisor"))).map((r) => r.number)).toEqual(["+14155550123"]);
    expect((await list(admin)).map((r) => r.number)).toEqual(["+14155550123", "+14155550199"]);
  });

  it("refuses bad input and others' callbacks with the reason named, and changes nothing", async () => {
    const before = await list(admin);
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["agent1", { number: "call me", remind_at: inS(60) }, "number", "pattern"],
      ["agent1", { number: "+14155550123" }, "remind_at", "required"],
      ["agent1", { number: "+14155550123", remind_at: inS(-120) }, "remind_at", "minimum"],
      ["agent1", { number: "+14155550123", remind_at: inS(400 * 86_400) }, "remind_at", "maximum"],
      ["agent1", { number: "+14155550123", remind_at: inS(60), note: "x".repeat(2001) }, "note", "maxLength"],
      ["agent1", { number: "+14155550123", remind_at: inS(60), queue_id: "nope" }, "queue_id", "not_found"],
      ["admin", { number: "+14155550123", remind_at: inS(60), user_id: "nope" }, "user_id", "not_found"],
    ];
    for (const [who, data, field, rule] of cases) {
      const res = await api.call<Record<string, Record<string, unknown>>>("PUT", path(), { token: who === "admin" ? admin : token(who), data });
      expect(res.status, JSON.stringify(data)).toBe(400);
      expect(res.body.data[field], `${field} in ${res.text}`).toHaveProperty(rule);
    }
    // An agent schedules for nobody else; a supervisor for their queues' members only.
    const forOther = await api.call("PUT", path(), { token: token("agent2"), data: { number: "+14155550123", remind_at: inS(60), user_id: ids.agent1 } });
    expect(forOther.status).toBe(403);
    const outsideQueues = await api.call("PUT", path(), { token: token("supervisor"), data: { number: "+14155550123", remind_at: inS(60), user_id: ids.agent2 } });
    expect(outsideQueues.status).toBe(403);
    const agent1s = before.find((r) => r.user_id === ids.agent1)?.id ?? "";
    expect((await api.call("DELETE", `${path()}/${agent1s}`, { token: token("agent2") })).status).toBe(403);
    expect((await api.call("DELETE", `${path()}/nope`, { token: token("agent2") })).status).toBe(404);
    expect(await list(admin)).toEqual(before);
  });

  it("a supervisor schedules for a member and cancels it; at the time its user is reminded once, and it reads reminded", async () => {
    const forMember = await api.call<Row>("PUT", path(), { token: token("supervisor"), data: { number: "+14155550155", remind_at: inS(120), user_id: ids.agent1, note: "Cancelled" } });
    expect(forMember.status, forMember.text).toBe(201);
    const cancelled = await api.call("DELETE", `${path()}/${forMember.body.data.id}`, { token: token("supervisor") });
    expect(cancelled.status).toBe(200);

    const soon = await api.call<Row>("PUT", path(), { token: token("agent1"), data: { number: "+14155550177", remind_at: inS(60), note: "Call before lunch" } });
    expect(soon.status, soon.text).toBe(201);
    const reminders = () => events.filter((e) => e.routing_key.startsWith("callq.callback."));
    expect(reminders()).toEqual([]);
    clock.advance(180_000);
    const [reminder] = await poll("the reminder", () => (reminders().length > 0 ? reminders() : undefined));
    expect(reminder).toMatchObject({ routing_key: `callq.callback.${soon.body.data.id}`, name: "reminder", data: { user_id: ids.agent1, number: "+14155550177", note: "Call before lunch", state: "reminded" } });
    // The cancelled one never reminds; the one an hour ahead not yet.
    expect(reminders()).toHaveLength(1);
    expect((await list(token("agent1"))).map((r) => [r.number, r.state])).toEqual([
      ["+14155550177", "reminded"],
      ["+14155550123", "scheduled"],
    ]);

    const doc = (await (await fetch(`${api.url}/v2/asyncapi.json`)).json()) as { channels: { events: { messages: Record<string, { payload: object }> } } };
    const validate = new Ajv({ strict: false, allErrors: true }).compile(doc.channels.events.messages.callqCallbackEvent?.payload ?? {});
    // As the websocket sends it: the bus event with its binding and sequence.
    const sent = { action: "event", subscribed_key: "callq.callback.*", seq: 1, routing_key: reminder?.routing_key, name: reminder?.name, data: reminder?.data, account_id: reminder?.account_id };
    expect(validate(sent) || validate.errors).toBe(true);
  });
});
