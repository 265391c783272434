// A recipient's day over real HTTP (local addition, issue 19 item 8 and issue 20 item 2):
// GET callq_recipients/{id}/day for today (from the engine, the state in progress counted up to
// now) and for a past day (from callq_recipient_days), the same figures on the status as `day`,
// and who may read them: the recipient, admins, and supervisors who share a queue with them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dayOf } from "../../server/callq/intervals.js";
import { RECIPIENT_DAYS_COLLECTION } from "../../server/callq-host/index.js";
import { startApi, TestClock, type TestApi } from "../helpers/api.js";

interface Day {
  recipient_id: string;
  day: string;
  calls_handled: number;
  missed_offers: number;
  average_handle_time: number;
  time_in_state: Record<string, number>;
  away_by_reason: { reason: string | null; seconds: number }[];
  occupancy: number | null;
  current: { state: string; away_reason?: string; seconds: number } | null;
}

const clock = new TestClock();
let api: TestApi;
let admin: string;
let base: string;
let accountId: string;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};

beforeAll(async () => {
  api = await startApi({ clock });
  ({ token: admin, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}`;
  for (const username of ["agent1", "agent2", "supervisor"]) {
    const login = await api.login(username);
    tokens[username] = login.token;
    ids[username] = login.ownerId;
  }
});
afterAll(async () => {
  await api?.close();
});

const id = (username: string): string => ids[username] ?? "";
const token = (username: string): string => tokens[username] ?? "";
const dayPath = (username: string) => `${base}/callq_recipients/${id(username)}/day`;

async function queueIds(): Promise<string[]> {
  return (await api.call<{ id: string }[]>("GET", `${base}/callq_queues`, { token: admin })).body.data.map((q) => q.id);
}

async function setMembership(queueId: string, action: "add" | "remove", username: string): Promise<void> {
  const res = await api.call("POST", `${base}/callq_queues/${queueId}/recipients`, { token: admin, data: { action, members: [id(username)] } });
  expect(res.status, res.text).toBe(200);
}

describe("a recipient's day", () => {
  it("shows the agent their own day: time in each state, Away by reason, the state in progress", async () => {
    const as = { token: token("agent1") };
    const statusPath = `${base}/callq_recipients/${id("agent1")}/status`;
    expect((await api.call("POST", statusPath, { ...as, data: { status: "login" } })).status).toBe(200);
    expect((await api.call("POST", statusPath, { ...as, data: { status: "ready" } })).status).toBe(200);
    clock.advance(120_000);
    expect((await api.call("POST", statusPath, { ...as, data: { status: "away", reason: "lunch" } })).status).toBe(200);
    clock.advance(60_000);
    const res = await api.call<Day>("GET", dayPath("agent1"), as);
    expect(res.status, res.text).toBe(200);
    const day = res.body.data;
    expect(day).toMatchObject({ recipient_id: id("agent1"), day: dayOf(clock.now()), calls_handled: 0, missed_offers: 0, average_handle_time: 0, occupancy: 0, current: { state: "Away", away_reason: "lunch" } });
    expect(day.time_in_state.Ready).toBeGreaterThanOrEqual(120);
    expect(day.time_in_state.Ready).toBeLessThan(130);
    // Logged in (Away, no reason) and Ready a moment later, then Away for lunch.
    expect(day.away_by_reason[0]).toMatchObject({ reason: "lunch" });
    expect(day.away_by_reason[0]?.seconds).toBeGreaterThanOrEqual(60);
    expect(day.current?.seconds).toBeGreaterThanOrEqual(60);
    // The status carries the same figures for the agent themself.
    const status = await api.call<{ day?: Day }>("GET", statusPath, as);
    expect(status.body.data.day).toMatchObject({ recipient_id: id("agent1"), current: { state: "Away", away_reason: "lunch" } });
  });

  it("is for the recipient, admins and the supervisors of their queues: others get 403, and the status without it", async () => {
    const forbidden = await api.call("GET", dayPath("agent1"), { token: token("agent2") });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ message: "forbidden", data: { user: { self_supervisor_or_admin: {} } } });
    expect((await api.call("GET", dayPath("agent1"), { token: admin })).status).toBe(200);
    expect((await api.call("GET", dayPath("agent1"), { token: token("supervisor") })).status).toBe(200);
    const multi = async (as: string) =>
      (await api.call<Record<string, { day?: Day }>>("POST", `${base}/callq_recipients/status`, { token: as, data: { recipient_ids: [id("agent1")] } })).body.data[id("agent1")];
    expect((await multi(token("supervisor")))?.day?.recipient_id).toBe(id("agent1"));
    expect(await multi(token("agent2")), "another agent reads the status without the day").not.toHaveProperty("day");
    expect((await api.call<{ day?: Day }>("GET", `${base}/callq_recipients/${id("agent1")}/status`, { token: token("agent2") })).body.data).not.toHaveProperty("day");

    // A supervisor who shares no queue with the agent is refused; sharing one again, allowed.
    const queues = await queueIds();
    for (const q of queues) await setMembership(q, "remove", "supervisor");
    try {
      const refused = await api.call("GET", dayPath("agent1"), { token: token("supervisor") });
      expect(refused.status).toBe(403);
      expect(await multi(token("supervisor"))).not.toHaveProperty("day");
      // Their own day is theirs, whatever their queues.
      expect((await api.call("GET", dayPath("supervisor"), { token: token("supervisor") })).status).toBe(200);
    } finally {
      for (const q of queues) await setMembership(q, "add", "supervisor");
    }
    expect((await api.call("GET", dayPath("agent1"), { token: token("supervisor") })).status).toBe(200);
  });

  it("refuses a day that is no date, and a user who is no recipient, and changes nothing", async () => {
    for (const day of ["yesterday", "2026-02-30", "2026-1-1", ""]) {
      const res = await api.call<Record<string, Record<string, unknown>>>("GET", dayPath("agent1"), { token: token("agent1"), query: { day } });
      expect(res.status, day).toBe(400);
      expect(res.body.data.day, res.text).toHaveProperty("format");
    }
    const ghost = "0".repeat(32);
    expect((await api.call("GET", `${base}/callq_recipients/${ghost}/day`, { token: admin })).status).toBe(404);
    const users = await api.call<{ id: string; username: string }[]>("GET", `${base}/users`, { token: admin, query: { paginate: "false" } });
    const adminId = users.body.data.find((u) => u.username === "admin")?.id ?? "";
    expect((await api.call("GET", `${base}/callq_recipients/${adminId}/day`, { token: admin })).status, "the admin is no recipient").toBe(404);
    const stored = await api.server.store.account(accountId, RECIPIENT_DAYS_COLLECTION);
    expect(stored.all().every((d) => d.data.day === dayOf(clock.now())), "no day written for a refused read").toBe(true);
  });

  it("reads a past day from the store, with no state in progress; a day with nothing is all zeros", async () => {
    const stored = await api.server.store.account(accountId, RECIPIENT_DAYS_COLLECTION);
    await stored.create(
      {
        recipient_id: id("agent2"),
        day: "2026-03-02",
        calls_handled: 4,
        handle_ms: 600_000,
        offers: 6,
        missed_offers: 2,
        state_ms: { Ready: 1_200_000, "Call-Offer": 60_000, "On-A-Call": 480_000, "Wrapup-Time": 120_000, Away: 900_000 },
        away_ms: { lunch: 900_000 },
      },
      { id: `${id("agent2")}-20260302` },
    );
    const res = await api.call<Day & Record<string, unknown>>("GET", dayPath("agent2"), { token: token("agent2"), query: { day: "2026-03-02" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({
      day: "2026-03-02",
      calls_handled: 4,
      handle_time: 600,
      average_handle_time: 150,
      offers: 6,
      missed_offers: 2,
      time_in_state: { Ready: 1200, "Call-Offer": 60, "On-A-Call": 480, "Wrapup-Time": 120, Away: 900 },
      away_by_reason: [{ reason: "lunch", seconds: 900 }],
      signed_in_time: 2760,
      // 600 s on calls and wrap-up of 1,860 s signed in and not Away.
      occupancy: 32.3,
      current: null,
    });
    const empty = await api.call<Day & Record<string, unknown>>("GET", dayPath("agent2"), { token: token("agent2"), query: { day: "2026-03-03" } });
    expect(empty.body.data).toMatchObject({ calls_handled: 0, signed_in_time: 0, occupancy: null, away_by_reason: [], current: null });
  });

  it("is in the OpenAPI document as a local addition", async () => {
    const doc = (await (await fetch(`${api.url}/v2/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary: string }>> };
    expect(doc.paths["/v2/accounts/{account_id}/callq_recipients/{id}/day"]?.get?.summary).toMatch(/^Local addition: /);
  });
});
