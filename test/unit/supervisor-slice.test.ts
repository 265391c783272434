// The supervisor slice through the whole store, with a fake call-queue API, fake events, a fake
// phone line and a manual clock: the board's recipients and their states, 200 events in a frame
// applied as one change and reconciled with one multi-status read, and Listen / Whisper / Barge
// (the monitor call answered by the console, the mode switched on the same call, stop).
import { describe, expect, it, vi } from "vitest";
import { ApiRequestError } from "../../renderer/api/client.js";
import { untilNextDay } from "../../renderer/state/agent-day.js";
import { MONITOR_ANSWER_WINDOW_MS, RECIPIENT_RECONCILE_MS } from "../../renderer/state/supervisor.js";
import { callqConsole, recipientStatus, toGregorian } from "../helpers/fake-callq.js";

const A = "a1".padEnd(32, "0");
const B = "b2".padEnd(32, "0");
const C = "c3".padEnd(32, "0");
const SALES = "1".repeat(32);

async function board() {
  const c = await callqConsole({ profile: { canMonitor: true } });
  c.callq.answers.recipients = [
    { id: B, name: "zoe" },
    { id: A, name: "agent1" },
    { id: C, name: "mia" },
  ];
  c.callq.answers.recipientStatuses = {
    [A]: recipientStatus({ state: "Ready", lastActionAt: c.clock.now() - 90_000, totalCalls: 3, missedCalls: 2 }),
    [B]: recipientStatus({
      state: "On-A-Call",
      lastActionAt: c.clock.now() - 20_000,
      handlingCall: { queueId: SALES, queueName: "Sales", sessionId: "s1", callId: "c1", callerName: "Casey Customer", callerNumber: "+14155550100", enteredAt: 0 },
    }),
  };
  const stop = c.store.getState().watchBoard();
  await c.clock.advance(0);
  return { ...c, stop };
}

describe("supervisor slice", () => {
  it("lists every recipient by name with state, time in state and current caller", async () => {
    const { store, clock } = await board();
    const sup = store.getState().supervisor;
    expect(sup.ids).toEqual([A, C, B]);
    expect(sup.rows[A]).toMatchObject({ name: "agent1", state: "Ready", since: clock.now() - 90_000, call: null, handledCalls: 3, missedCalls: 2 });
    expect(sup.rows[B]).toMatchObject({ state: "On-A-Call", call: { callerName: "Casey Customer", queueName: "Sales" } });
    // Logged out ("not_logged_in" in the multi-status): shown as such, with no time.
    expect(sup.rows[C]).toMatchObject({ state: "Not-Logged-In", since: null });
    // The queues are watched too.
    expect(store.getState().queues.loadedAt).not.toBeNull();
  });

  it("applies 200 events of one frame as one store change and reads the touched recipients once", async () => {
    const { store, callq, events, clock } = await board();
    let changes = 0;
    const unsubscribe = store.subscribe((s, p) => {
      if (s.supervisor.rows !== p.supervisor.rows) changes += 1;
    });
    const reads = callq.calls("recipientStatuses").length;
    for (let i = 0; i < 200; i++) {
      const id = i % 2 === 0 ? A : C;
      const state = i % 4 < 2 ? "Away" : "Ready";
      events.emit(`callq.recipient.${id}`, state === "Away" ? "away" : "ready", { recipient_id: id, availability_state: state });
    }
    events.emit(`callq.recipient.${C}`, "offer", {
      recipient_id: C,
      availability_state: "Call-Offer",
      queue_id: SALES,
      queue_name: "Sales",
      session_id: "s9",
      call_id: "c9",
      caller_id_name: "Dana Dialer",
      caller_id_number: "+14155550111",
      queue_enter_time: toGregorian(clock.now()),
    });
    await clock.advance(16);
    expect(changes).toBe(1);
    expect(store.getState().supervisor.rows[A]?.state).toBe("Ready");
    expect(store.getState().supervisor.rows[C]).toMatchObject({ state: "Call-Offer", since: clock.now(), call: { callerName: "Dana Dialer" } });

    const lastAction = clock.now() - 1000;
    callq.answers.recipientStatuses = { [A]: recipientStatus({ state: "Ready", lastActionAt: lastAction }), [C]: recipientStatus({ state: "Call-Offer", lastActionAt: lastAction }) };
    await clock.advance(RECIPIENT_RECONCILE_MS);
    const after = callq.calls("recipientStatuses").slice(reads);
    expect(after.length).toBe(1);
    expect([...(after[0]?.args[0] as string[])].sort()).toEqual([A, C].sort());
    expect(store.getState().supervisor.rows[A]?.since).toBe(lastAction);
    unsubscribe();
  });

  it("keeps a recipient's event when a status read from before it answers", async () => {
    const { store, callq, events, clock } = await board();
    callq.hold("recipientStatuses");
    events.emit(`callq.recipient.${A}`, "away", { recipient_id: A, availability_state: "Away" });
    await clock.advance(16 + RECIPIENT_RECONCILE_MS);
    events.emit(`callq.recipient.${A}`, "ready", { recipient_id: A, availability_state: "Ready" });
    await clock.advance(16);
    await callq.release("recipientStatuses", { [A]: recipientStatus({ state: "Away" }) });
    expect(store.getState().supervisor.rows[A]?.state).toBe("Ready");
  });

  it("keeps a newer status read's answer when an older read of the same recipient answers after it", async () => {
    const { store, callq, events, clock } = await board();
    callq.hold("recipientStatuses");
    // A's event: shown, and A's status read again half a second later (held).
    events.emit(`callq.recipient.${A}`, "away", { recipient_id: A, availability_state: "Away" });
    await clock.advance(16 + RECIPIENT_RECONCILE_MS);
    // The board read again meanwhile (the event websocket back online): A went Ready while no event came.
    const refresh = store.getState().refreshRecipients();
    await new Promise((r) => setTimeout(r, 0));
    expect(callq.calls("recipientStatuses").slice(-2).map((c) => (c.args[0] as string[]).length)).toEqual([1, 3]);
    await callq.release("recipientStatuses", { [A]: recipientStatus({ state: "Ready" }), [B]: "not_logged_in", [C]: "not_logged_in" }, { newest: true });
    await refresh;
    expect(store.getState().supervisor.rows[A]?.state).toBe("Ready");
    // The reconcile's read, asked before the board's, answers last: older, it does not land.
    await callq.release("recipientStatuses", { [A]: recipientStatus({ state: "Away" }) });
    expect(store.getState().supervisor.rows[A]?.state).toBe("Ready");
  });

  it("keeps the newer list of recipients when an older read of the list answers after it, and says it reads until the newest has come", async () => {
    const { store, callq } = await board();
    callq.hold("recipients");
    const older = store.getState().refreshRecipients();
    const newer = store.getState().refreshRecipients();
    // mia (C) was taken out of the queues between the two reads.
    await callq.release("recipients", [{ id: B, name: "zoe" }, { id: A, name: "agent1" }], { newest: true });
    await newer;
    expect(store.getState().supervisor).toMatchObject({ ids: [A, B], loading: false });
    await callq.release("recipients", [{ id: B, name: "zoe" }, { id: A, name: "agent1" }, { id: C, name: "mia" }]);
    await older;
    expect(store.getState().supervisor.ids).toEqual([A, B]);
    expect(store.getState().supervisor.rows[C]).toBeUndefined();

    // The older read answering first lands (nothing newer has), but the board still says it reads.
    const first = store.getState().refreshRecipients();
    const second = store.getState().refreshRecipients();
    await callq.release("recipients", [{ id: A, name: "agent1" }]);
    await first;
    expect(store.getState().supervisor).toMatchObject({ ids: [A], loading: true });
    await callq.release("recipients", [{ id: A, name: "agent1" }, { id: B, name: "zoe" }]);
    await second;
    expect(store.getState().supervisor).toMatchObject({ ids: [A, B], loading: false });
  });

  it("a read of the board asked before sign-out does not bring its rows back after it", async () => {
    const { store, callq } = await board();
    callq.hold("recipientStatuses");
    const refresh = store.getState().refreshRecipients();
    await new Promise((r) => setTimeout(r, 0));
    store.getState().signOut();
    expect(store.getState().supervisor.ids).toEqual([]);
    await callq.release("recipientStatuses", { [A]: recipientStatus({ state: "Ready" }) });
    await refresh;
    expect(store.getState().supervisor).toMatchObject({ ids: [], rows: {} });
  });

  it("keeps why the server withholds offers from each recipient: read with the statuses, then live from the events", async () => {
    const c = await callqConsole({ profile: { canMonitor: true } });
    c.callq.answers.recipients = [
      { id: A, name: "agent1" },
      { id: B, name: "zoe" },
    ];
    c.callq.answers.recipientStatuses = {
      [A]: recipientStatus({ state: "Away", awayReason: "missed_offers", missedOffers: 3 }),
      [B]: recipientStatus({ state: "Ready", unavailableReason: "no_device" }),
    };
    c.store.getState().watchBoard();
    await c.clock.advance(0);
    const rows = () => c.store.getState().supervisor.rows;
    expect(rows()[A]).toMatchObject({ state: "Away", awayReason: "missed_offers", missedOffers: 3, unavailableReason: null });
    expect(rows()[B]).toMatchObject({ state: "Ready", awayReason: null, unavailableReason: "no_device" });

    // B's phone registers again: the event lifts the reason at once, and the status is read again.
    const reads = c.callq.calls("recipientStatuses").length;
    c.events.emit(`callq.recipient.${B}`, "available", { recipient_id: B, availability_state: "Ready", available: true, previous_reason: "no_device" });
    await c.clock.advance(16);
    expect(rows()[B]).toMatchObject({ state: "Ready", unavailableReason: null });
    c.callq.answers.recipientStatuses = { [B]: recipientStatus({ state: "Ready" }) };
    await c.clock.advance(RECIPIENT_RECONCILE_MS);
    expect(c.callq.calls("recipientStatuses").length).toBe(reads + 1);

    // ... and goes after the grace period.
    c.events.emit(`callq.recipient.${B}`, "unavailable", { recipient_id: B, availability_state: "Ready", available: false, unavailable_reason: "no_device" });
    await c.clock.advance(16);
    expect(rows()[B]).toMatchObject({ unavailableReason: "no_device" });
    c.callq.answers.recipientStatuses = { [B]: recipientStatus({ state: "Ready", unavailableReason: "no_device" }) };
    await c.clock.advance(RECIPIENT_RECONCILE_MS);
    expect(c.callq.calls("recipientStatuses").length).toBe(reads + 2);
    expect(rows()[B]).toMatchObject({ unavailableReason: "no_device" });

    // A chooses Ready: the Away reason goes; a second run of misses sets it again, with the count.
    c.events.emit(`callq.recipient.${A}`, "ready", { recipient_id: A, availability_state: "Ready" });
    await c.clock.advance(16);
    expect(rows()[A]).toMatchObject({ state: "Ready", awayReason: null, missedOffers: 0 });
    c.events.emit(`callq.recipient.${A}`, "reject", { recipient_id: A, availability_state: "Away", previous_state: "Call-Offer", away_reason: "missed_offers", missed_offers: 1 });
    await c.clock.advance(16);
    expect(rows()[A]).toMatchObject({ state: "Away", awayReason: "missed_offers", missedOffers: 1 });

    // Another reason while Away: the time shown is the time in the reason, from the change.
    c.callq.answers.recipientStatuses = { [A]: recipientStatus({ state: "Away", awayReason: "missed_offers", missedOffers: 1 }) };
    await c.clock.advance(5_000);
    const awaySince = rows()[A]?.since;
    expect(rows()[A]).toMatchObject({ state: "Away", awayReason: "missed_offers" });
    await c.clock.advance(5_000);
    c.events.emit(`callq.recipient.${A}`, "away", { recipient_id: A, availability_state: "Away", away_reason: "lunch" });
    await c.clock.advance(16);
    expect(rows()[A]).toMatchObject({ state: "Away", awayReason: "lunch" });
    expect(rows()[A]?.since).toBeGreaterThanOrEqual((awaySince ?? 0) + 5_000);

    // Logged out: no reason stands.
    c.events.emit(`callq.recipient.${B}`, "logout", { recipient_id: B, availability_state: "Not-Logged-In", unavailable_reason: "no_device" });
    await c.clock.advance(16);
    expect(rows()[B]).toMatchObject({ state: "Not-Logged-In", unavailableReason: null });
  });

  it("listens: asks the server, answers the monitor call on the phone, switches mode on the same call, stops", async () => {
    const { store, callq, events, phone, clock, me } = await board();
    expect(await store.getState().monitorRecipient(B, "eavesdrop")).toBe(true);
    expect(callq.calls("monitor").at(-1)?.args).toEqual([me, B, "eavesdrop"]);
    expect(store.getState().supervisor.monitor).toMatchObject({ target: B, mode: "eavesdrop", phase: "ringing" });

    // Another call ringing is not the monitor call.
    phone.ring("x1", "Casey Customer");
    phone.ring("m1", "Monitor: Zoe Agent");
    await clock.advance(0);
    expect(phone.answered).toEqual(["m1"]);
    expect(store.getState().supervisor.monitor?.callId).toBe("m1");

    // The event names nobody (every user of the account may receive it): whom and how are what was asked.
    events.emit(`callq.recipient.${me}`, "monitor", { recipient_id: me, active: true });
    await clock.advance(16);
    expect(store.getState().supervisor.monitor).toMatchObject({ target: B, phase: "listening", mode: "eavesdrop", callId: "m1" });

    expect(await store.getState().monitorRecipient(B, "whisper")).toBe(true);
    expect(callq.calls("monitor").at(-1)?.args).toEqual([me, B, "whisper"]);
    expect(store.getState().supervisor.monitor).toMatchObject({ mode: "whisper", callId: "m1" });
    expect(phone.answered).toEqual(["m1"]);

    await store.getState().stopMonitor();
    expect(phone.hungUp).toEqual(["m1"]);
    expect(store.getState().supervisor.monitor).toBeNull();
  });

  it("ends the supervision when its call ends, and says why a request was refused", async () => {
    const { store, callq, phone, clock } = await board();
    await store.getState().monitorRecipient(B, "barge");
    phone.ring("m2", "Monitor: Zoe Agent");
    await clock.advance(0);
    phone.end("m2");
    await clock.advance(0);
    expect(store.getState().supervisor.monitor).toBeNull();

    callq.answers.monitor = new ApiRequestError("http", 400, "invalid_data", { target: { no_call: { message: "recipient is on no call" } } }, null, "400");
    expect(await store.getState().monitorRecipient(A, "eavesdrop")).toBe(false);
    expect(store.getState().supervisor.monitorError).toBe("That agent is on no call to listen to.");
    expect(store.getState().supervisor.monitor).toBeNull();
  });

  it("a refused switch of mode leaves the mode in force on the bar, and says it was refused", async () => {
    const { store, callq, events, phone, clock, me } = await board();
    await store.getState().monitorRecipient(B, "eavesdrop");
    phone.ring("m1", "Monitor: Zoe Agent");
    await clock.advance(0);
    events.emit(`callq.recipient.${me}`, "monitor", { recipient_id: me, active: true });
    await clock.advance(16);
    expect(await store.getState().monitorRecipient(B, "whisper")).toBe(true);
    // Barge refused: the supervision goes on whispering, and the bar says so.
    callq.answers.monitor = new ApiRequestError("http", 403, "forbidden", null, null, "403");
    expect(await store.getState().monitorRecipient(B, "barge")).toBe(false);
    expect(store.getState().supervisor.monitor).toMatchObject({ target: B, mode: "whisper", phase: "listening", callId: "m1" });
    expect(store.getState().supervisor.monitorError).toBe("Barge was refused; still Whisper. Only an admin or a user with the call_monitor permission may listen in.");
    // Two switches in a row, the first taken, the second refused: the first is in force.
    callq.hold("monitor");
    const sent = callq.calls("monitor").length;
    const listen = store.getState().monitorRecipient(B, "eavesdrop");
    // Listen is on its way when Barge is asked (one waiting is overtaken and never sent).
    await vi.waitFor(() => expect(callq.calls("monitor")).toHaveLength(sent + 1));
    const barge = store.getState().monitorRecipient(B, "barge");
    expect(store.getState().supervisor.monitor?.mode).toBe("barge");
    await callq.release("monitor", undefined);
    await listen;
    await callq.release("monitor", new ApiRequestError("http", 500, "", null, null, "500 boom"));
    expect(await barge).toBe(false);
    expect(store.getState().supervisor.monitor).toMatchObject({ mode: "eavesdrop", callId: "m1" });
    expect(store.getState().supervisor.monitorError).toMatch(/^Barge was refused; still Listen\. /);
    // Stop: the supervision goes, and the words about it with it.
    await store.getState().stopMonitor();
    expect(store.getState().supervisor).toMatchObject({ monitor: null, monitorError: null });
  });

  it("moving to another agent: the first supervision's end does not end the one asked for", async () => {
    const { store, events, phone, clock, me } = await board();
    await store.getState().monitorRecipient(B, "eavesdrop");
    phone.ring("m1", "Monitor: Zoe Agent");
    await clock.advance(0);
    events.emit(`callq.recipient.${me}`, "monitor", { recipient_id: me, active: true });
    await clock.advance(16);
    expect(store.getState().supervisor.monitor).toMatchObject({ target: B, phase: "listening" });
    await store.getState().monitorRecipient(A, "whisper");
    events.emit(`callq.recipient.${me}`, "monitor", { recipient_id: me, active: false });
    await clock.advance(16);
    expect(store.getState().supervisor.monitor).toMatchObject({ target: A, mode: "whisper" });
    expect(store.getState().supervisor.monitor?.phase).not.toBe("listening");
  });

  it("gives up when the phone never takes the monitor call", async () => {
    const { store, clock } = await board();
    await store.getState().monitorRecipient(B, "eavesdrop");
    await clock.advance(MONITOR_ANSWER_WINDOW_MS);
    expect(store.getState().supervisor.monitor).toBeNull();
    expect(store.getState().supervisor.monitorError).toMatch(/did not take the monitor call/);
  });
});

describe("the board's day figures", () => {
  it("shows each agent's day from the status, keeps it once they log out, and reads every row again at local midnight", async () => {
    const { store, callq, clock, events } = await board();
    const day = {
      day: "2026-11-21",
      callsHandled: 4,
      averageHandleTime: 150,
      offers: 6,
      missedOffers: 1,
      timeInState: { Ready: 600, "Call-Offer": 30, "On-A-Call": 480, "Wrapup-Time": 120, Away: 0 },
      awayByReason: [],
      occupancy: 49.6,
      current: { state: "Ready" as const, awayReason: null, since: clock.now() },
      asOf: clock.now(),
    };
    callq.answers.recipientStatuses = { [A]: recipientStatus({ state: "Ready", totalCalls: 9, missedCalls: 7, day }) };
    await store.getState().refreshRecipients();
    // The day's figures where the server counts days; the running totals only where it does not.
    expect(store.getState().supervisor.rows[A]).toMatchObject({ handledCalls: 4, missedCalls: 1, day: { averageHandleTime: 150, occupancy: 49.6 } });
    // Logged out: the event, then the status read it sets off.
    callq.answers.recipientStatuses = { [A]: "not_logged_in" };
    events.emit(`callq.recipient.${A}`, "logout", { recipient_id: A, availability_state: "Not-Logged-In" });
    await clock.advance(RECIPIENT_RECONCILE_MS + 100);
    expect(store.getState().supervisor.rows[A]).toMatchObject({ state: "Not-Logged-In", handledCalls: 4, day: { callsHandled: 4, current: null } });

    const reads = callq.calls("recipientStatuses").length;
    await clock.advance(untilNextDay(clock.now()) - 1);
    expect(callq.calls("recipientStatuses"), "no read before the day ends").toHaveLength(reads);
    await clock.advance(5_000);
    expect(callq.calls("recipientStatuses").length).toBeGreaterThan(reads);
  });
});

describe("the board's staffing estimates", () => {
  it("reads them again a second after a caller's time in a queue or an agent's call ends, once for a burst, not only at the 15 s refresh", async () => {
    const c = await callqConsole({ profile: { canMonitor: true } });
    c.callq.answers.queues = [{ id: SALES, name: "Sales" }];
    await c.store.getState().loadQueueDirectory();
    const stop = c.store.getState().watchBoard();
    await c.clock.advance(0);
    const reads = () => c.callq.calls("queueStaffing").length;
    const first = reads();
    expect(first).toBeGreaterThan(0);
    expect(c.store.getState().supervisor.staffing[SALES]?.agentsNeeded).toBeNull();

    // The first call ends: its handle time gives an estimate, on the board within a second or so.
    c.callq.answers.queueStaffing = { [SALES]: { agentsNeeded: 2, agentsNeededWithAbandonment: null, callsPerHour: 12, handleTime: 95, windowMinutes: 60, targetPercent: 80, answeredWithinS: 20, loggedIn: 1, ready: 1 } };
    c.events.emit(`callq.recipient.${A}`, "wrapup", { recipient_id: A, availability_state: "Wrapup-Time" });
    for (let i = 0; i < 50; i++) c.events.emit(`callq.session.s${i}`, "end", { queue_id: SALES });
    await c.clock.advance(999);
    expect(reads(), "not before the second").toBe(first);
    await c.clock.advance(1);
    expect(reads(), "one read for the burst").toBe(first + 1);
    expect(c.store.getState().supervisor.staffing[SALES]?.agentsNeeded).toBe(2);

    // Other events (an offer, a state change) move no figure behind the estimate; the refresh still comes.
    c.events.emit(`callq.recipient.${A}`, "ready", { recipient_id: A, availability_state: "Ready" });
    await c.clock.advance(14_000);
    expect(reads()).toBe(first + 1);
    await c.clock.advance(1_000);
    expect(reads()).toBe(first + 2);

    // A read that fails (a busy server) keeps the last estimate on the board, and the What-if panel with it.
    c.callq.answers.queueStaffing = { [SALES]: new Error("timed out") };
    await c.clock.advance(15_000);
    expect(reads()).toBe(first + 3);
    expect(c.store.getState().supervisor.staffing[SALES]?.agentsNeeded).toBe(2);
    c.callq.answers.queueStaffing = { [SALES]: { agentsNeeded: 3, agentsNeededWithAbandonment: null, callsPerHour: 20, handleTime: 95, windowMinutes: 60, targetPercent: 80, answeredWithinS: 20, loggedIn: 1, ready: 1 } };
    await c.clock.advance(15_000);
    expect(c.store.getState().supervisor.staffing[SALES]?.agentsNeeded).toBe(3);

    // Not watched: no read at all.
    stop();
    c.events.emit(`callq.session.s99`, "end", { queue_id: SALES });
    await c.clock.advance(60_000);
    expect(reads()).toBe(first + 4);
  });

  it("keeps the newer read's estimates when the board is closed and opened again while a read is on its way and the older read answers last", async () => {
    const c = await callqConsole({ profile: { canMonitor: true } });
    c.callq.answers.queues = [{ id: SALES, name: "Sales" }];
    await c.store.getState().loadQueueDirectory();
    const estimate = (agentsNeeded: number) => ({ agentsNeeded, agentsNeededWithAbandonment: null, callsPerHour: 12 * agentsNeeded, handleTime: 95, windowMinutes: 60, targetPercent: 80, answeredWithinS: 20, loggedIn: 1, ready: 1 });
    c.callq.hold("queueStaffing");
    // The board opens (the first read held), closes and opens again (a second read, also held).
    c.store.getState().watchBoard()();
    const stop = c.store.getState().watchBoard();
    await c.clock.advance(0);
    expect(c.callq.calls("queueStaffing")).toHaveLength(2);
    // The newer read answers first, the older one last.
    await c.callq.release("queueStaffing", estimate(3), { newest: true });
    expect(c.store.getState().supervisor.staffing[SALES]?.agentsNeeded).toBe(3);
    await c.callq.release("queueStaffing", estimate(2));
    expect(c.store.getState().supervisor.staffing[SALES]?.agentsNeeded, "the older read's estimate does not come back").toBe(3);
    // One chain of reads from there on, not two: the next read comes at the refresh, once.
    await c.clock.advance(15_000);
    expect(c.callq.calls("queueStaffing")).toHaveLength(3);
    await c.callq.release("queueStaffing", estimate(4));
    expect(c.store.getState().supervisor.staffing[SALES]?.agentsNeeded).toBe(4);
    stop();
  });

  it("lands no staffing read asked before a sign-out", async () => {
    const c = await callqConsole({ profile: { canMonitor: true } });
    c.callq.answers.queues = [{ id: SALES, name: "Sales" }];
    await c.store.getState().loadQueueDirectory();
    c.callq.hold("queueStaffing");
    const stop = c.store.getState().watchBoard();
    await c.clock.advance(0);
    c.store.getState().signOut();
    await c.signIn("agent1");
    await c.callq.release("queueStaffing", { agentsNeeded: 7, agentsNeededWithAbandonment: null, callsPerHour: 60, handleTime: 95, windowMinutes: 60, targetPercent: 80, answeredWithinS: 20, loggedIn: 1, ready: 1 });
    expect(c.store.getState().supervisor.staffing).toEqual({});
    stop();
  });
});
