// A queue's service level and its 15-minute intervals, on a real store with the server's time run
// by hand: the day's figures (service level, average speed of answer, abandonment, handle time,
// longest wait), intervals rolling over at 15-minute borders and at local midnight, each figure
// counted in the interval its caller entered, and nothing lost across a restart mid-interval.
import { afterEach, describe, expect, it } from "vitest";
import { dayBounds, dayOf, intervalStart, type QueueInterval } from "../../server/callq/index.js";
import { IntervalDays } from "../../server/callq-host/index.js";
import { storeIntervals } from "../../server/callq-host/intervals.js";
import { erlangAAgents, erlangCAgents } from "../../server/callq/erlang.js";
import { ACCOUNT, callqRig, members, settle, TestCall, type CallqRig } from "../helpers/callq.js";

let rig: CallqRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

async function start(): Promise<{ r: CallqRig; agent: string; queue: string }> {
  const r = await callqRig();
  rig = r;
  const agent = await r.user("agent");
  await r.engine.recipientAction(ACCOUNT, agent, "login_ready");
  const queue = await r.queue({ name: "Q", timeout: 3600, service_level: { answered_within_s: 20, target_percent: 80 }, members: members(agent) });
  return { r, agent, queue };
}

/** A caller who joins, waits `waitS` while the agent's phone rings, then is answered and talks `talkS`. */
async function answered(r: CallqRig, queue: string, id: string, waitS: number, talkS: number): Promise<void> {
  const call = new TestCall(id);
  const done = r.engine.join(ACCOUNT, queue, call);
  await settle();
  await r.scheduler.advance(waitS * 1000);
  const end = call.last().answer();
  await settle();
  await r.scheduler.advance(talkS * 1000);
  end();
  await done;
  await settle();
}

/** A caller who hangs up after `waitS`; `rejected`: the agent refused the offer first. */
async function abandoned(r: CallqRig, queue: string, id: string, waitS: number, rejected = false): Promise<void> {
  const call = new TestCall(id);
  const done = r.engine.join(ACCOUNT, queue, call);
  await settle();
  if (rejected) {
    call.last().resolve({ kind: "rejected" });
    await settle();
  }
  await r.scheduler.advance(waitS * 1000);
  call.hangup();
  await done;
  await settle();
}

async function storedIntervals(r: CallqRig): Promise<QueueInterval[]> {
  await r.engine.intervalsWritten();
  // Yesterday's and today's day collections: no test here runs longer than a day.
  const now = r.scheduler.now();
  const yesterday = dayBounds(dayOf((dayBounds(dayOf(now))?.start ?? now) - 1))?.start ?? now;
  return [...(await storeIntervals(r.store).load(ACCOUNT, yesterday, now))].sort((a, b) => a.start - b.start);
}

/** Moves the server's time on to `at` (Unix ms). */
async function advanceTo(r: CallqRig, at: number): Promise<void> {
  await r.scheduler.advance(at - r.scheduler.now());
}

describe("a queue's service level", () => {
  it("counts answers within the threshold over every caller who stopped waiting", async () => {
    const { r, agent, queue } = await start();
    await answered(r, queue, "c1", 5, 60);
    await answered(r, queue, "c2", 30, 30);
    await abandoned(r, queue, "c3", 10);
    await r.engine.recipientAction(ACCOUNT, agent, "ready");
    await abandoned(r, queue, "c4", 40, true);

    const waiting = new TestCall("c5");
    void r.engine.join(ACCOUNT, queue, waiting);
    await settle();
    await r.scheduler.advance(7_000);
    const status = await r.engine.queueStatus(ACCOUNT, queue);
    expect(status.service_level).toEqual({ answered_within_s: 20, target_percent: 80 });
    expect(status.stats).toMatchObject({
      total_sessions: 5,
      answered_sessions: 2,
      abandoned_sessions: 2,
      missed_offers: 1,
      answered_within: 1,
      abandoned_within: 1,
      // 1 answered in time of 4 that stopped waiting: the abandoned within 20 s counts as not in time.
      service_level: 25,
      average_speed_of_answer: 17.5,
      abandonment_rate: 50,
      average_handle_time: 45,
      longest_wait: 7,
      active_session_count: 1,
    });
    expect(status.recipients_by_state).toEqual({ "Call-Offer": 1 });
    const floor = await r.engine.accountFloor(ACCOUNT);
    expect(floor.stats).toMatchObject({ total_sessions: 5, service_level: 25, longest_wait: 7, active_session_count: 1 });
    expect(floor.queue_count).toBe(1);
    waiting.hangup();
    await settle();
  });
});

describe("a queue's intervals", () => {
  it("rolls over at 15-minute borders, counting each caller in the interval they entered", async () => {
    const { r, queue } = await start();
    // The history's index of a day, built before the calls: the store's change feed keeps it.
    const days = new IntervalDays(r.store);
    expect(await days.day(ACCOUNT, queue, dayOf(r.scheduler.now()))).toEqual([]);
    const first = intervalStart(r.scheduler.now()) + 15 * 60_000;
    // Enters at 14:50 past the interval, answered after the border: still the first interval's.
    await advanceTo(r, first + 14 * 60_000 + 50_000);
    await answered(r, queue, "late", 20, 10);
    await answered(r, queue, "next", 3, 10);
    const stored = await storedIntervals(r);
    expect(stored.map((i) => [i.start - first, i.offered, i.answered, i.answered_within, i.answered_wait_sum, i.handled])).toEqual([
      [0, 1, 1, 1, 20, 1],
      [15 * 60_000, 1, 1, 1, 3, 1],
    ]);
    const indexed = (await days.day(ACCOUNT, queue, dayOf(first))).filter((i) => dayOf(i.start) === dayOf(first)).sort((a, b) => a.start - b.start);
    expect(indexed).toEqual(stored.filter((i) => dayOf(i.start) === dayOf(first)));
    expect(await days.day(ACCOUNT, "someone else's queue", dayOf(first))).toEqual([]);
  });

  it("starts a new day at local midnight; a call across it stays with the day it entered", async () => {
    const { r, queue } = await start();
    const tomorrow = dayBounds(dayOf(r.scheduler.now()))?.end ?? 0;
    await advanceTo(r, tomorrow - 10_000);
    await answered(r, queue, "before", 15, 5);
    let stats = (await r.engine.queueStatus(ACCOUNT, queue)).stats;
    // Now past midnight: yesterday's caller is not today's.
    expect(r.scheduler.now()).toBeGreaterThan(tomorrow);
    expect(stats).toMatchObject({ total_sessions: 0, answered_sessions: 0, service_level: null });
    await answered(r, queue, "after", 2, 5);
    stats = (await r.engine.queueStatus(ACCOUNT, queue)).stats;
    expect(stats).toMatchObject({ total_sessions: 1, answered_sessions: 1, service_level: 100, average_speed_of_answer: 2 });
    const stored = await storedIntervals(r);
    expect(stored.map((i) => [dayOf(i.start), i.start - tomorrow, i.offered])).toEqual([
      [dayOf(tomorrow - 1), -15 * 60_000, 1],
      [dayOf(tomorrow), 0, 1],
    ]);
  });

  it("keeps the day's figures across a restart in the middle of an interval", async () => {
    const started = await start();
    let r = started.r;
    const { queue, agent } = started;
    await answered(r, queue, "c1", 5, 60);
    await abandoned(r, queue, "c2", 30);
    const before = (await r.engine.queueStatus(ACCOUNT, queue)).stats;
    expect(before).toMatchObject({ total_sessions: 2, answered_sessions: 1, abandoned_sessions: 1, service_level: 50 });

    r = await r.restart();
    rig = r;
    const after = (await r.engine.queueStatus(ACCOUNT, queue)).stats;
    expect(after).toEqual(before);

    // The same interval goes on counting from what was stored: one document, not two.
    await r.engine.recipientAction(ACCOUNT, agent, "login_ready");
    await answered(r, queue, "c3", 1, 10);
    const stored = await storedIntervals(r);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ offered: 3, answered: 2, abandoned: 1, answered_within: 2, handled: 2, handle_sum: 70 });
    expect((await r.engine.queueStatus(ACCOUNT, queue)).stats).toMatchObject({ total_sessions: 3, service_level: 66.7 });
  });
});

describe("a queue's staffing estimate", () => {
  it("takes the window's arrival rate, handle time and patience, and adds Erlang A once somebody abandoned", async () => {
    const { r, queue } = await start();
    const from = intervalStart(r.scheduler.now() - 60 * 60_000);
    await answered(r, queue, "c1", 5, 100);
    await answered(r, queue, "c2", 15, 200);
    let estimate = await r.engine.staffing(ACCOUNT, queue, 60);
    let windowS = (r.scheduler.now() - from) / 1000;
    expect(estimate).toMatchObject({ estimate: true, window_minutes: 60, handle_time: 150, patience: null, agents_needed_with_abandonment: null, logged_in: 1, ready: 1 });
    expect(estimate.calls_per_hour).toBeCloseTo((2 * 3600) / windowS, 1);
    expect(estimate.agents_needed).toBe(erlangCAgents({ arrivalRate: 2 / windowS, handleTime: 150 }, 20, 0.8));

    await abandoned(r, queue, "c3", 40, true);
    estimate = await r.engine.staffing(ACCOUNT, queue, 60);
    windowS = (r.scheduler.now() - from) / 1000;
    // Patience: every wait (5 + 15 + 40 s) over the one abandonment.
    expect(estimate.patience).toBe(60);
    expect(estimate.agents_needed_with_abandonment).toBe(erlangAAgents({ arrivalRate: 3 / windowS, handleTime: 150, patience: 60 }, 20, 0.8));
    // What-if inputs replace the measured ones.
    const whatIf = await r.engine.staffing(ACCOUNT, queue, 60, { calls_per_hour: 200, handle_time: 180, target_percent: 80, patience: 0 });
    expect(whatIf).toMatchObject({ calls_per_hour: 200, handle_time: 180, offered_load: 10, agents_needed: 14, patience: 60 });
  });
});
