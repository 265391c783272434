// The agent's own day in the queue engine, on a real store with the server's time run by hand:
// every figure of a day (calls handled, handle time, offers and missed offers, time in each
// state, Away by reason, occupancy, the state in progress), the roll-over at local midnight, and
// the day so far kept across a restart through the callq_recipient_days documents.
import { afterEach, describe, expect, it } from "vitest";
import { dayOf } from "../../server/callq/intervals.js";
import { toGregorianSeconds } from "../../server/clock.js";
import { RECIPIENT_DAYS_COLLECTION } from "../../server/callq-host/index.js";
import { ACCOUNT, callqRig, members, settle, TestCall, type CallqRig } from "../helpers/callq.js";

let rig: CallqRig;
afterEach(async () => {
  await rig.close();
});

const S = 1000;

function day(id: string, date?: string) {
  return rig.engine.recipientDay(ACCOUNT, id, date);
}

/** A caller joins `queue` and is offered to the one Ready member at once. */
async function offered(queue: string, name: string): Promise<TestCall> {
  const call = new TestCall(name);
  void rig.engine.join(ACCOUNT, queue, call);
  await settle();
  return call;
}

/**
 * The agent's morning: logged in Away for 60 s, Ready 120 s, an offer rung 5 s and rejected,
 * Ready 10 s, an offer rung 3 s and answered, 90 s of talk, 20 s of wrap-up, Ready 30 s, then
 * Away for lunch 300 s and for a break 60 s.
 */
async function morning(agent: string, queue: string): Promise<void> {
  await rig.engine.recipientAction(ACCOUNT, agent, "login");
  await rig.scheduler.advance(60 * S);
  await rig.engine.recipientAction(ACCOUNT, agent, "ready");
  await rig.scheduler.advance(120 * S);
  const first = await offered(queue, "first");
  await rig.scheduler.advance(5 * S);
  first.last().resolve({ kind: "rejected" });
  first.hangup();
  await settle();
  await rig.scheduler.advance(10 * S);
  const second = await offered(queue, "second");
  await rig.scheduler.advance(3 * S);
  const hangup = second.last().answer();
  await settle();
  await rig.scheduler.advance(90 * S);
  hangup();
  await settle();
  expect((await rig.engine.recipientStatus(ACCOUNT, agent)).availability_state).toBe("Wrapup-Time");
  await rig.scheduler.advance(20 * S);
  expect((await rig.engine.recipientStatus(ACCOUNT, agent)).availability_state).toBe("Ready");
  await rig.scheduler.advance(30 * S);
  await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "lunch" });
  await rig.scheduler.advance(300 * S);
  await rig.engine.recipientAction(ACCOUNT, agent, "away");
  await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "break" });
  await rig.scheduler.advance(60 * S);
}

describe("the recipient's day", () => {
  it("counts calls handled, handle time (talk and wrap-up), offers, missed offers, time in each state, Away by reason and occupancy", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    const queue = await rig.queue({ name: "Q", agent_wrapup_time: 20, members: members(agent) });
    const start = rig.scheduler.now();
    await morning(agent, queue);
    const now = rig.scheduler.now();
    const figures = await day(agent);
    expect(figures).toEqual({
      recipient_id: agent,
      day: dayOf(start),
      calls_handled: 1,
      handle_time: 110,
      average_handle_time: 110,
      offers: 2,
      missed_offers: 1,
      time_in_state: { Ready: 160, "Call-Offer": 8, "On-A-Call": 90, "Wrapup-Time": 20, Away: 420 },
      away_by_reason: [
        { reason: "lunch", seconds: 300 },
        { reason: null, seconds: 60 },
        { reason: "break", seconds: 60 },
      ],
      signed_in_time: 698,
      // 110 s on calls and wrap-up of 278 s signed in and not Away.
      occupancy: 39.6,
      current: { state: "Away", away_reason: "break", since: toGregorianSeconds(now - 60 * S), seconds: 60 },
      as_of: toGregorianSeconds(now),
    });
    // The same figures ride on the status, which the recipient, admins and supervisors read.
    expect((await rig.engine.recipientStatus(ACCOUNT, agent)).day).toEqual(figures);
    // The day figures are the day's share of the recipient's running stats.
    expect((await rig.engine.recipientStatus(ACCOUNT, agent)).stats).toMatchObject({ total_calls: 1, missed_calls: 1 });
  });

  it("counts no time logged out; occupancy is null with no time Ready or working; a handle time counts when its part ends", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    const queue = await rig.queue({ name: "Q", members: members(agent) });
    await rig.scheduler.advance(600 * S);
    expect(await day(agent)).toMatchObject({ signed_in_time: 0, occupancy: null, current: null, calls_handled: 0, average_handle_time: 0 });
    await rig.engine.recipientAction(ACCOUNT, agent, "login");
    await rig.scheduler.advance(30 * S);
    expect(await day(agent)).toMatchObject({ signed_in_time: 30, occupancy: null, time_in_state: { Away: 30 }, away_by_reason: [{ reason: null, seconds: 30 }] });
    await rig.engine.recipientAction(ACCOUNT, agent, "ready");
    const call = await offered(queue, "c");
    const hangup = call.last().answer();
    await settle();
    await rig.scheduler.advance(40 * S);
    // On the call: its time shows in the state and in occupancy, but no call is handled yet.
    expect(await day(agent)).toMatchObject({ calls_handled: 0, handle_time: 0, time_in_state: { "On-A-Call": 40 }, occupancy: 100, current: { state: "On-A-Call", seconds: 40 } });
    hangup();
    await settle();
    // No wrap-up in this queue: Ready at once, the call handled in 40 s.
    expect(await day(agent)).toMatchObject({ calls_handled: 1, handle_time: 40, average_handle_time: 40, current: { state: "Ready", seconds: 0 } });
    await rig.engine.recipientAction(ACCOUNT, agent, "logout");
    await rig.scheduler.advance(3600 * S);
    expect(await day(agent)).toMatchObject({ signed_in_time: 70, current: null, time_in_state: { Ready: 0, Away: 30, "On-A-Call": 40 } });
  });

  it("missed offers count rejections, ring timeouts and the unreachable; the engine's missed_offers Away is a reason of its own", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    const queue = await rig.queue({ name: "Q", max_missed_offers: 2, members: members(agent) });
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    const a = await offered(queue, "a");
    a.last().resolve({ kind: "timeout" });
    a.hangup();
    await settle();
    const b = await offered(queue, "b");
    b.last().resolve({ kind: "rejected" });
    b.hangup();
    await settle();
    expect((await rig.engine.recipientStatus(ACCOUNT, agent)).away_reason).toBe("missed_offers");
    await rig.scheduler.advance(45 * S);
    expect(await day(agent)).toMatchObject({ offers: 2, missed_offers: 2, away_by_reason: [{ reason: "missed_offers", seconds: 45 }], current: { state: "Away", away_reason: "missed_offers", seconds: 45 } });
    // A withdrawn offer (the caller left while it rang) is no miss.
    await rig.engine.recipientAction(ACCOUNT, agent, "ready");
    const c = await offered(queue, "c");
    c.hangup();
    await settle();
    expect(await day(agent)).toMatchObject({ offers: 3, missed_offers: 2 });
  });

  it("rolls over at local midnight: a state held across it counts in both days, each figure in the day it happened", async () => {
    const lateEvening = new Date(2026, 10, 21, 23, 50, 0).getTime();
    rig = await callqRig(undefined, lateEvening);
    const agent = await rig.user("agent1");
    const queue = await rig.queue({ name: "Q", members: members(agent) });
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    await rig.scheduler.advance(5 * 60 * S);
    const late = await offered(queue, "late");
    late.last().resolve({ kind: "rejected" });
    late.hangup();
    await settle();
    // Ready from 23:55 until 00:10.
    await rig.scheduler.advance(15 * 60 * S);
    const today = dayOf(rig.scheduler.now());
    const yesterday = dayOf(lateEvening);
    expect(today).not.toBe(yesterday);
    expect(await day(agent, yesterday)).toMatchObject({ day: yesterday, missed_offers: 1, offers: 1, time_in_state: { Ready: 600 }, current: null });
    expect(await day(agent)).toMatchObject({ day: today, missed_offers: 0, offers: 0, time_in_state: { Ready: 600 }, signed_in_time: 600 });
    // The state in progress began yesterday: since then, not since midnight.
    expect((await day(agent))?.current).toEqual({ state: "Ready", since: toGregorianSeconds(lateEvening + 5 * 60 * S), seconds: 900 });
    const early = await offered(queue, "early");
    early.last().resolve({ kind: "rejected" });
    early.hangup();
    await settle();
    expect(await day(agent)).toMatchObject({ missed_offers: 1, offers: 1 });
    expect(await day(agent, yesterday)).toMatchObject({ missed_offers: 1, time_in_state: { Ready: 600 } });
    // Both days are stored, yesterday's with its share of the state held across midnight.
    await rig.engine.daysWritten();
    const stored = await rig.store.account(ACCOUNT, RECIPIENT_DAYS_COLLECTION);
    expect(stored.get(`${agent}-${yesterday.replace(/-/g, "")}`)?.data).toMatchObject({ day: yesterday, missed_offers: 1, state_ms: { Ready: 600_000 } });
    expect(stored.get(`${agent}-${today.replace(/-/g, "")}`)?.data).toMatchObject({ day: today, missed_offers: 1 });
  });

  it("keeps the day so far across a restart mid-day, and goes on counting in the same day", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    const queue = await rig.queue({ name: "Q", agent_wrapup_time: 20, members: members(agent) });
    await morning(agent, queue);
    const before = await day(agent);
    // Stopped while Away for a break, started again 10 minutes later.
    const stoppedAt = rig.scheduler.now();
    rig = await rig.restart(stoppedAt + 600 * S);
    const after = await day(agent);
    expect(after).toMatchObject({
      calls_handled: 1,
      handle_time: 110,
      offers: 2,
      missed_offers: 1,
      time_in_state: before?.time_in_state,
      away_by_reason: before?.away_by_reason,
      occupancy: before?.occupancy,
      // Back Away for the break; the time the server was stopped counts in no state.
      current: { state: "Away", away_reason: "break", seconds: 0 },
    });
    await rig.scheduler.advance(40 * S);
    await rig.engine.recipientAction(ACCOUNT, agent, "ready");
    expect(await day(agent)).toMatchObject({ time_in_state: { Away: 460 }, away_by_reason: [{ reason: "lunch", seconds: 300 }, { reason: "break", seconds: 100 }, { reason: null, seconds: 60 }] });
  });
});
