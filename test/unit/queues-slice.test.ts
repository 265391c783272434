// The queues slice through the whole store, with a fake call-queue API, fake events and a manual
// clock: the directory after connect, live callers from queue and session events applied once per
// frame, counts read again after events touch a queue, and the day's chart samples.
import { describe, expect, it } from "vitest";
import type { QueueSession } from "../../renderer/api/callq.js";
import { queueStatusOf } from "../../renderer/api/callq.js";
import { answeredOf, callsPerBucket, dayBucket, longestWaitSince, missedOffersOf, QUEUE_RECONCILE_MS, QUEUE_REFRESH_MS, sampleDay, waitingSessions } from "../../renderer/state/queues.js";
import { queueTimeAt } from "../../renderer/state/queue-time.js";
import { callqConsole, queueStatus, toGregorian } from "../helpers/fake-callq.js";

const SALES = "1".repeat(32);
const SUPPORT = "2".repeat(32);

function session(id: string, enteredAt: number, state: QueueSession["state"] = "waiting"): QueueSession {
  return { sessionId: id, callId: `c-${id}`, queueId: SALES, callerName: `Caller ${id}`, callerNumber: "+14155550100", enteredAt, state, recipientId: null, callbackNumber: null };
}

async function watched() {
  const c = await callqConsole();
  c.callq.answers.queues = [
    { id: SALES, name: "Sales" },
    { id: SUPPORT, name: "Support" },
  ];
  c.callq.answers.membership = { [SALES]: [c.me, "other"], [SUPPORT]: ["other"] };
  c.callq.answers.queueStatuses = { [SALES]: queueStatus({ waiting: 1, total: 4 }), [SUPPORT]: queueStatus() };
  c.callq.answers.queueSessions = { [SALES]: [session("s1", c.clock.now() - 30_000)] };
  await c.store.getState().loadQueueDirectory();
  const stop = c.store.getState().watchQueues();
  await c.clock.advance(0);
  return { ...c, stop };
}

const joinData = (id: string, enteredMs: number, state = "waiting") => ({
  session_id: id,
  call_id: `c-${id}`,
  queue_id: SALES,
  queue_name: "Sales",
  caller_id_name: `Caller ${id}`,
  caller_id_number: "+14155550199",
  queue_enter_time: toGregorian(enteredMs),
  state,
});

describe("queues slice", () => {
  it("reads the queues and their members when the events come online", async () => {
    const { store, callq, me } = await watched();
    expect(callq.calls("queues").length).toBeGreaterThan(0);
    const queues = store.getState().queues;
    expect(queues.list.map((q) => q.name)).toEqual(["Sales", "Support"]);
    expect(queues.members[SALES]).toContain(me);
    expect(queues.loadedAt).not.toBeNull();
  });

  it("while watched, reads every queue's status and callers", async () => {
    const { store, clock } = await watched();
    const sales = store.getState().queues.live[SALES];
    expect(sales?.status?.stats.total).toBe(4);
    expect(waitingSessions(sales).map((s) => s.sessionId)).toEqual(["s1"]);
    expect(longestWaitSince(sales)).toBe(clock.now() - 30_000);
  });

  it("applies a burst of queue events in one store change at the next frame, then reads the touched queue's status once", async () => {
    const { store, callq, events, clock } = await watched();
    let changes = 0;
    const unsubscribe = store.subscribe((s, p) => {
      if (s.queues.live !== p.queues.live) changes += 1;
    });
    const statusReads = callq.calls("queueStatuses").length;
    for (let i = 0; i < 50; i++) events.emit(`callq.queue.${SALES}`, "join", joinData(`n${i}`, clock.now() - i * 100));
    // Nothing yet: the frame has not come.
    expect(waitingSessions(store.getState().queues.live[SALES]).length).toBe(1);
    await clock.advance(16);
    expect(changes).toBe(1);
    const waiting = waitingSessions(store.getState().queues.live[SALES]);
    expect(waiting.length).toBe(51);
    // Oldest first.
    expect(waiting[0]?.sessionId).toBe("s1");

    events.emit(`callq.session.n3`, "offer", { ...joinData("n3", clock.now() - 3000), state: "offering", recipient_id: "other" });
    events.emit(`callq.queue.${SALES}`, "leave", { ...joinData("s1", clock.now() - 30_000), reason: "abandoned" });
    await clock.advance(16);
    const after = store.getState().queues.live[SALES];
    expect(after?.sessions.find((s) => s.sessionId === "n3")).toMatchObject({ state: "offering", recipientId: "other" });
    expect(after?.sessions.some((s) => s.sessionId === "s1")).toBe(false);

    await clock.advance(QUEUE_RECONCILE_MS);
    const reads = callq.calls("queueStatuses").slice(statusReads);
    expect(reads).toEqual([{ method: "queueStatuses", args: [[SALES]] }]);
    unsubscribe();
  });

  it("keeps callers an event reported after a session list was asked for", async () => {
    const { store, callq, events, clock } = await watched();
    callq.hold("queueSessions");
    const refresh = store.getState().refreshQueues();
    events.emit(`callq.queue.${SALES}`, "join", joinData("late", clock.now()));
    await clock.advance(16);
    await callq.release("queueSessions", [session("s1", clock.now() - 30_000)]);
    await callq.release("queueSessions", []);
    await refresh;
    expect(store.getState().queues.live[SALES]?.sessions.map((s) => s.sessionId)).toEqual(["s1", "late"]);
  });

  it("reads again a queue whose members' availability changed, and every queue every half minute", async () => {
    const { callq, events, clock } = await watched();
    const before = callq.calls("queueStatuses").length;
    const listsBefore = callq.calls("queueSessions").length;
    events.emit("callq.recipient.other", "ready", { recipient_id: "other", availability_state: "Ready" });
    await clock.advance(16 + QUEUE_RECONCILE_MS);
    expect(callq.calls("queueStatuses").slice(before)).toEqual([{ method: "queueStatuses", args: [[SALES, SUPPORT]] }]);
    // A recipient's change moves the counts, not the callers: no list is read for it.
    expect(callq.calls("queueSessions").length).toBe(listsBefore);
    await clock.advance(QUEUE_REFRESH_MS);
    expect(callq.calls("queueStatuses").at(-1)?.args).toEqual([undefined]);
    expect(callq.calls("queueSessions").length).toBe(listsBefore + 2);
  });

  it("stops following events when no view watches", async () => {
    const { store, events, clock, stop } = await watched();
    stop();
    events.emit(`callq.queue.${SALES}`, "join", joinData("n1", clock.now()));
    await clock.advance(1000);
    expect(store.getState().queues.live[SALES]?.sessions.some((s) => s.sessionId === "n1")).toBe(false);
  });
});

describe("queue figures", () => {
  it("answered = the day's total less missed, abandoned and those still waiting", () => {
    expect(answeredOf(queueStatus({ total: 10, missed: 2, abandoned: 1, waiting: 3 }))).toBe(4);
    expect(answeredOf(queueStatus({ total: 1, missed: 0, abandoned: 0, waiting: 3 }))).toBe(0);
    // A session removed through the API is neither: the server's own count is preferred.
    expect(answeredOf(queueStatus({ total: 10, missed: 2, abandoned: 1, waiting: 3, answered: 3 }))).toBe(3);
  });

  it("Missed is the day's missed offers; timed-out callers (missed_sessions) stand apart", () => {
    expect(missedOffersOf(queueStatus({ missed: 1, missedOffers: 3 }))).toBe(3);
    // A server that does not count offers: its timed-out callers are all there is.
    expect(missedOffersOf(queueStatus({ missed: 1 }))).toBe(1);
  });

  it("counts the new callers of the first bucket watched: the day going from 0 to 4 shows 4, not nothing", () => {
    const t0 = new Date(2025, 4, 14, 9, 0, 0).getTime();
    const live = (total: number) => ({ [SALES]: { status: queueStatus({ total }), sessions: [] } });
    let day = sampleDay({}, live(0), t0);
    for (let total = 1; total <= 4; total++) day = sampleDay(day, live(total), t0 + total * 30_000);
    const sales = day[SALES];
    if (sales === undefined) throw new Error("no day for Sales");
    expect(callsPerBucket(sales)[dayBucket(t0)]).toBe(4);
    // After a gap (the console closed for ten minutes), the bucket counts from its own first sample:
    // the callers of the gap are not pinned on it.
    day = sampleDay(day, live(9), t0 + 15 * 60_000);
    day = sampleDay(day, live(10), t0 + 16 * 60_000);
    expect(callsPerBucket(day[SALES] ?? sales)[dayBucket(t0 + 15 * 60_000)]).toBe(1);
  });

  it("samples the day per bucket: the most waiting and the running total, new callers per bucket", () => {
    const t0 = new Date(2025, 4, 14, 9, 0, 0).getTime();
    const live = (waiting: number, total: number) => ({ [SALES]: { status: queueStatus({ total }), sessions: Array.from({ length: waiting }, (_, i) => session(`s${i}`, t0)) } });
    let day = sampleDay({}, live(2, 5), t0);
    day = sampleDay(day, live(4, 7), t0 + 60_000);
    day = sampleDay(day, live(1, 7), t0 + 120_000);
    day = sampleDay(day, live(0, 9), t0 + 5 * 60_000);
    const sales = day[SALES];
    if (sales === undefined) throw new Error("no day for Sales");
    const b = dayBucket(t0);
    expect(sales.waiting[b]).toBe(4);
    expect(sales.total[b]).toBe(7);
    expect(sales.waiting[b + 1]).toBe(0);
    expect(callsPerBucket(sales)[b + 1]).toBe(2);
    // A sample that changes nothing keeps the same object (no re-render).
    expect(sampleDay(day, live(0, 9), t0 + 5 * 60_000)).toBe(day);
    // A new date starts a new day.
    const tomorrow = sampleDay(day, live(1, 1), t0 + 24 * 3600_000);
    expect(tomorrow[SALES]?.date).not.toBe(sales.date);
    expect(tomorrow[SALES]?.total.filter((n) => n !== null)).toEqual([1]);
  });

  it("counts a caller's wait in the account's queue time: a paused training run holds it, and after the pause it is behind by the pause", async () => {
    const { store, callq, events, clock } = await watched();
    const wait = (): number => {
      const { queueTime, live } = store.getState().queues;
      const since = longestWaitSince(live[SALES]);
      if (since === null) throw new Error("nobody waits");
      return queueTimeAt(queueTime, clock.now()) - since;
    };
    // The server's own time: s1 joined 30 s ago.
    expect(store.getState().queues.queueTime).toBeNull();
    expect(wait()).toBe(30_000);
    // The run pauses: the wait stands still however long the pause.
    events.emit(`callq.clock.${"a".repeat(32)}`, "clock", { queue_clock: { behind_ms: 0, paused: true } });
    await clock.advance(60_000);
    expect(wait()).toBe(30_000);
    // A status read during the pause tells the same time.
    callq.answers.queueStatuses = { [SALES]: queueStatusOf({ stats: {}, queue_clock: { behind_ms: 60_000, paused: true } }), [SUPPORT]: queueStatus() };
    await store.getState().refreshQueues();
    expect(wait()).toBe(30_000);
    await clock.advance(5_000);
    expect(wait()).toBe(30_000);
    // Resumed after 65 s: the wait goes on from where it stood, not 65 s further.
    events.emit(`callq.clock.${"a".repeat(32)}`, "clock", { queue_clock: { behind_ms: 65_000, paused: false } });
    await clock.advance(2_000);
    expect(wait()).toBe(32_000);
    // A status read that left before the event and answers after it tells an older time: the event's stands.
    callq.answers.queueStatuses = { [SALES]: queueStatusOf({ stats: {}, queue_clock: { behind_ms: 60_000, paused: true } }), [SUPPORT]: queueStatus() };
    const stale = store.getState().refreshQueues();
    events.emit(`callq.clock.${"a".repeat(32)}`, "clock", { queue_clock: { behind_ms: 65_000, paused: false } });
    await stale;
    expect(wait()).toBe(32_000);
    // A malformed clock event changes nothing.
    events.emit(`callq.clock.${"a".repeat(32)}`, "clock", { queue_clock: { behind_ms: "soon" } });
    expect(wait()).toBe(32_000);
  });
});
