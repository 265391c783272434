// The supervisor slice's queue alerts through the whole store, with a fake call-queue API and fake
// events on a manual clock: seeded from the queue statuses when the board opens, then kept by the
// callq.alert.<queue_id> fire and clear events, with a tone on fire only when the supervisor ticked
// "Alert sound" (a setting that is kept).
import { describe, expect, it } from "vitest";
import type { QueueStatus } from "../../renderer/api/callq.js";
import type { CallAlerts } from "../../renderer/phone/phone-line.js";
import { callqConsole } from "../helpers/fake-callq.js";

const SALES = "1".repeat(32);
const SUPPORT = "2".repeat(32);
const AGENT = "a1".padEnd(32, "0");

function status(alerts: QueueStatus["alerts"]): QueueStatus {
  return { loggedIn: 1, available: 0, stats: { estimatedWait: 0, averageWait: 0, recipientCount: 1, waiting: 1, total: 1, missed: 0, abandoned: 0 }, ...(alerts ? { alerts } : {}) };
}

async function board() {
  let tones = 0;
  const alerts: CallAlerts = { ring: () => undefined, stopRing: () => undefined, notify: () => undefined, dismiss: () => undefined, tone: () => (tones += 1) };
  const c = await callqConsole({ profile: { canMonitor: true }, deps: { alerts } });
  c.callq.answers.queueStatuses = {
    [SALES]: status([{ kind: "longest_wait", queueId: SALES, recipientId: null, state: null, value: 61, limit: 60 }]),
    [SUPPORT]: status([]),
  };
  const stop = c.store.getState().watchBoard();
  await c.clock.advance(0);
  return { ...c, stop, tones: () => tones };
}

describe("the board's queue alerts", () => {
  it("shows those the statuses list when the board opens, then follows fire and clear", async () => {
    const { store, events, clock, tones } = await board();
    expect(store.getState().supervisor.alerts[SALES]).toEqual([{ kind: "longest_wait", queueId: SALES, recipientId: null, state: null, value: 61, limit: 60 }]);
    expect(store.getState().supervisor.alerts[SUPPORT]).toEqual([]);

    events.emit(`callq.alert.${SUPPORT}`, "fire", { kind: "state_too_long", queue_id: SUPPORT, recipient_id: AGENT, availability_state: "Away", value: 601, limit: 600 });
    await clock.advance(0);
    expect(store.getState().supervisor.alerts[SUPPORT]).toEqual([{ kind: "state_too_long", queueId: SUPPORT, recipientId: AGENT, state: "Away", value: 601, limit: 600 }]);
    // No sound unless the supervisor asked for it.
    expect(tones()).toBe(0);

    events.emit(`callq.alert.${SALES}`, "clear", { kind: "longest_wait", queue_id: SALES, value: 61, limit: 60 });
    await clock.advance(0);
    expect(store.getState().supervisor.alerts[SALES]).toEqual([]);
    expect(store.getState().supervisor.alerts[SUPPORT]).toHaveLength(1);
  });

  it("plays a tone on each alert that fires once the supervisor ticked Alert sound, and keeps the setting", async () => {
    const { store, events, clock, tones, storage } = await board();
    expect(store.getState().alertSound).toBe(false);
    store.getState().setAlertSound(true);
    events.emit(`callq.alert.${SUPPORT}`, "fire", { kind: "service_level", queue_id: SUPPORT, value: 50, limit: 80 });
    await clock.advance(0);
    expect(tones()).toBe(1);
    events.emit(`callq.alert.${SUPPORT}`, "clear", { kind: "service_level", queue_id: SUPPORT, value: 50, limit: 80 });
    await clock.advance(0);
    expect(tones()).toBe(1);
    expect(storage.getItem("switchboard.alertSound")).toBe("true");
    store.getState().setAlertSound(false);
    expect(storage.getItem("switchboard.alertSound")).toBeNull();
  });

  it("keeps the alerts of a newer read of the statuses when an older read answers after it", async () => {
    const { store, callq, clock, stop } = await board();
    stop();
    // The board closed and opened again before the first opening's reads of the statuses came
    // (the queues slice's and the alerts'; both held, each opening's answered as one).
    callq.hold("queueStatuses");
    const asked = () => callq.calls("queueStatuses").length;
    const before = asked();
    const stopFirst = store.getState().watchBoard();
    await clock.advance(0);
    stopFirst();
    const first = asked() - before;
    const stopSecond = store.getState().watchBoard();
    await clock.advance(0);
    const second = asked() - before - first;
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(0);
    // Sales' long wait is over by the second opening's read.
    for (let i = 0; i < second; i++) await callq.release("queueStatuses", { [SALES]: status([]), [SUPPORT]: status([]) }, { newest: true });
    expect(store.getState().supervisor.alerts[SALES]).toEqual([]);
    for (let i = 0; i < first; i++) await callq.release("queueStatuses", { [SALES]: status([{ kind: "longest_wait", queueId: SALES, recipientId: null, state: null, value: 61, limit: 60 }]), [SUPPORT]: status([]) });
    expect(store.getState().supervisor.alerts[SALES]).toEqual([]);
    stopSecond();
  });
});
