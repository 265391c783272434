// The trainee's own scorecards and a run's replay data, on a started server over HTTP: runs are
// stored as an ended run leaves its document (timeline, the queue and recipient events it kept),
// written through the store before the reads, so the figures expected are the events' own.
// GET .../users/{id}/training_scorecards: the user themself, admins and trainers; newest first,
// only runs that offered the user a call, the user's row alone. GET .../training_runs/{id}/replay:
// admins and trainers; the recipients' steps on the run's time (a pause holds it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OwnScorecard, RunReplay } from "../../contract/training.js";
import { toGregorianSeconds } from "../../server/clock.js";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let admin: string;
let base: string;
let accountId: string;
const users: Record<string, { id: string; token: string }> = {};
const BOT = "b0".repeat(16);
const QUEUE = "9a".repeat(16);
const runIds: Record<"older" | "newer" | "other", string> = { older: "", newer: "", other: "" };

interface Observed {
  at: number;
  key: string;
  name: string;
  data?: Record<string, unknown>;
}

/** A run's document as an ended run saves it; `t0` its start on the server's clock. */
function runDocument(name: string, t0: number, timeline: { at_s: number; at: number; name: string; [field: string]: unknown }[], observed: Observed[]): Record<string, unknown> {
  const end = timeline[timeline.length - 1];
  if (end === undefined) throw new Error("a run has a timeline");
  return {
    scenario_id: "5c".repeat(16),
    scenario_name: name,
    seed: 42,
    status: "ended",
    started: toGregorianSeconds(t0),
    ended: toGregorianSeconds(end.at),
    started_by: null,
    run_seconds: end.at_s,
    duration_s: end.at_s,
    targets: { service_level: { answered_within_s: 20, percent: 80 }, handle_time_s: 120 },
    agents: [{ id: BOT, name: "Simulated agent 1" }],
    callers: [],
    timeline: timeline.map(({ at, ...entry }) => ({ ...entry, at_ms: at })),
    pvt_started_ms: t0,
    pvt_ended_ms: end.at,
    pvt_observed: observed.map((e) => ({ at_ms: e.at, routing_key: e.key, name: e.name, data: e.data ?? {} })),
  };
}

const recipient = (id: string) => `callq.recipient.${id}`;
const queue = `callq.queue.${QUEUE}`;

beforeAll(async () => {
  api = await startApi();
  ({ token: admin, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}`;
  for (const name of ["agent1", "agent2", "agent3"]) {
    const login = await api.login(name);
    users[name] = { id: login.ownerId, token: login.token };
  }
  const a1 = users.agent1?.id ?? "";
  const a2 = users.agent2?.id ?? "";
  const runs = await api.server.store.account(accountId, "training_runs");
  const hour = 3_600_000;
  const t1 = Date.now() - 3 * hour;
  // agent1 is offered a caller and rejects it.
  runIds.older = (
    await runs.create(
      runDocument("Older run", t1, [{ at_s: 0, at: t1, name: "started" }, { at_s: 30, at: t1 + 30_000, name: "ended", reason: "completed" }], [
        { at: t1 + 1000, key: queue, name: "join", data: { session_id: "s0" } },
        { at: t1 + 2000, key: recipient(a1), name: "offer", data: { session_id: "s0", availability_state: "Call-Offer" } },
        { at: t1 + 3000, key: recipient(a1), name: "reject", data: { availability_state: "Ready" } },
      ]),
    )
  ).id;
  // agent1 answers after 3 s of waiting, with a 10 s pause in the run between the caller's join and the offer; the bot misses one.
  const t2 = Date.now() - 2 * hour;
  runIds.newer = (
    await runs.create(
      runDocument(
        "Newer run",
        t2,
        [
          { at_s: 0, at: t2, name: "started" },
          { at_s: 1, at: t2 + 1000, name: "caller_arrived", index: 0 },
          { at_s: 1.5, at: t2 + 1500, name: "caller_waiting", index: 0 },
          { at_s: 2, at: t2 + 2000, name: "paused" },
          { at_s: 2, at: t2 + 12_000, name: "resumed" },
          { at_s: 4, at: t2 + 14_000, name: "caller_answered", index: 0, agent_id: a1, wait_s: 2.5 },
          { at_s: 10, at: t2 + 20_000, name: "ended", reason: "stopped" },
        ],
        [
          { at: t2 + 1500, key: queue, name: "join", data: { session_id: "s1" } },
          { at: t2 + 5000, key: recipient(a1), name: "ready", data: { availability_state: "Ready" } },
          { at: t2 + 13_000, key: recipient(a1), name: "offer", data: { session_id: "s1", availability_state: "Call-Offer" } },
          { at: t2 + 14_000, key: recipient(a1), name: "delivered", data: { session_id: "s1", availability_state: "On-A-Call" } },
          { at: t2 + 14_000, key: queue, name: "answered", data: { session_id: "s1", recipient_id: a1, wait_time: 3 } },
          { at: t2 + 15_000, key: recipient(BOT), name: "offer", data: { session_id: "s2", availability_state: "Call-Offer" } },
          { at: t2 + 16_000, key: recipient(BOT), name: "reject", data: { availability_state: "Ready" } },
          { at: t2 + 18_000, key: recipient(a1), name: "wrapup", data: { availability_state: "Wrap-Up", previous_state: "On-A-Call" } },
          { at: t2 + 19_000, key: recipient(a1), name: "ready", data: { availability_state: "Ready" } },
        ],
      ),
    )
  ).id;
  // Only agent2 takes part.
  const t3 = Date.now() - hour;
  runIds.other = (
    await runs.create(
      runDocument("Other run", t3, [{ at_s: 0, at: t3, name: "started" }, { at_s: 5, at: t3 + 5000, name: "ended", reason: "completed" }], [
        { at: t3 + 2000, key: recipient(a2), name: "offer", data: { session_id: "s3", availability_state: "Call-Offer" } },
        { at: t3 + 3000, key: recipient(a2), name: "delivered", data: { session_id: "s3", availability_state: "On-A-Call" } },
      ]),
    )
  ).id;
});

afterAll(async () => {
  await api?.close();
});

const scorecardsOf = (userId: string, token: string) => api.call<OwnScorecard[]>("GET", `${base}/users/${userId}/training_scorecards`, { token });

describe("a user's own training scorecards", () => {
  it("lists the runs that offered the trainee a call, newest first, with their own row and the run's targets", async () => {
    const a1 = users.agent1;
    if (!a1) throw new Error("agent1 signed in");
    const res = await scorecardsOf(a1.id, a1.token);
    expect(res.status, res.text).toBe(200);
    const rows = res.body.data;
    expect(rows.map((r) => r.run_id)).toEqual([runIds.newer, runIds.older]);
    expect(rows.map((r) => r.person.user_id)).toEqual([a1.id, a1.id]);
    // Nobody else's row travels: the bot that missed a caller in the newer run is not in the answer.
    expect(res.text).not.toContain(BOT);
    const [newer, older] = rows;
    expect(newer).toMatchObject({ scenario_name: "Newer run", seed: 42, status: "ended", targets: { handle_time_s: 120 }, person: { offered: 1, answered: 1, missed: 0, average_speed_of_answer_s: 3 } });
    expect(newer?.run).toMatchObject({ offered: 1, answered: 1, abandoned: 0, average_speed_of_answer_s: 3, service_level: { percent: 100, met: true } });
    expect(older).toMatchObject({ scenario_name: "Older run", person: { offered: 1, answered: 0, missed: 1, average_handle_time_s: null } });
    expect(newer?.started).toBeGreaterThan(older?.started ?? Infinity);
  });

  it("is empty for a user who took no calls in any run", async () => {
    const a3 = users.agent3;
    if (!a3) throw new Error("agent3 signed in");
    const res = await scorecardsOf(a3.id, a3.token);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });

  it("refuses a user reading a colleague's; admins and trainers read anyone's; an unknown user is 404", async () => {
    const [a1, a2, a3] = [users.agent1, users.agent2, users.agent3];
    if (!a1 || !a2 || !a3) throw new Error("agents signed in");
    const refused = await scorecardsOf(a2.id, a1.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: "403", message: "forbidden", data: { user_id: { own: {} } } });
    expect(refused.text).not.toContain(runIds.other);
    expect((await scorecardsOf(a2.id, a2.token)).body.data.map((r) => r.run_id)).toEqual([runIds.other]);
    expect((await scorecardsOf(a1.id, admin)).body.data.map((r) => r.run_id)).toEqual([runIds.newer, runIds.older]);
    expect((await scorecardsOf(a1.id, a3.token)).status).toBe(403);
    await api.call("PATCH", `${base}/users/${a3.id}`, { token: admin, data: { training: { trainer: true } } });
    try {
      expect((await scorecardsOf(a1.id, a3.token)).body.data.map((r) => r.run_id)).toEqual([runIds.newer, runIds.older]);
    } finally {
      await api.call("PATCH", `${base}/users/${a3.id}`, { token: admin, data: { training: { trainer: false } } });
    }
    expect((await scorecardsOf("0".repeat(32), admin)).status).toBe(404);
    expect((await scorecardsOf(a1.id, "not-a-token")).status).toBe(401);
  });
});

describe("a run's replay data", () => {
  it("gives the timeline and each recipient's steps on the run's time, a pause holding it", async () => {
    const a1 = users.agent1;
    if (!a1) throw new Error("agent1 signed in");
    const res = await api.call<RunReplay>("GET", `${base}/training_runs/${runIds.newer}/replay`, { token: admin });
    expect(res.status, res.text).toBe(200);
    const replay = res.body.data;
    expect(replay).toMatchObject({ run_id: runIds.newer, scenario_name: "Newer run", seed: 42, status: "ended", run_seconds: 10, duration_s: 10 });
    expect(replay.timeline.map((e) => e.name)).toEqual(["started", "caller_arrived", "caller_waiting", "paused", "resumed", "caller_answered", "ended"]);
    expect(replay.timeline.every((e) => !("at_ms" in e))).toBe(true);
    expect(replay.people).toEqual([
      { user_id: a1.id, name: expect.any(String), simulated: false },
      { user_id: BOT, name: "Simulated agent 1", simulated: true },
    ]);
    const mine = replay.agent_steps.filter((s) => s.user_id === a1.id);
    // Ready came 3 s into the 10 s pause: still run second 2. The offer came 1 s after the resume: run second 3.
    expect(mine.map((s) => [s.at_s, s.name, s.availability_state])).toEqual([
      [2, "ready", "Ready"],
      [3, "offer", "Call-Offer"],
      [4, "delivered", "On-A-Call"],
      [8, "wrapup", "Wrap-Up"],
      [9, "ready", "Ready"],
    ]);
    expect(replay.agent_steps.filter((s) => s.user_id === BOT).map((s) => [s.at_s, s.name])).toEqual([
      [5, "offer"],
      [6, "reject"],
    ]);
  });

  it("is for admins and trainers: a trainee of the run is refused; an unknown run is 404", async () => {
    const a1 = users.agent1;
    if (!a1) throw new Error("agent1 signed in");
    const refused = await api.call<unknown>("GET", `${base}/training_runs/${runIds.newer}/replay`, { token: a1.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: "403", data: { user: { trainer: {} } } });
    expect((await api.call("GET", `${base}/training_runs/${"0".repeat(32)}/replay`, { token: admin })).status).toBe(404);
  });
});
