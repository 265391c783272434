// The scheduled-callbacks slice through the whole store, with a fake callbacks API: the list read
// on connect, a callback scheduled and a refusal in words, a reminder event for this agent shown
// (another agent's ignored) and taken down by "Call now" or Dismiss, a cancel, and a new session
// starting empty.
import { describe, expect, it, vi } from "vitest";
import type { CallbacksApi, ScheduledCallback } from "../../renderer/api/callbacks.js";
import type { EventStreamOptions, PlatformEvent } from "../../renderer/api/events.js";
import type { DeviceSummary, PlatformApi } from "../../renderer/api/platform.js";
import type { CallInfo, PhoneLine, RegistrationState } from "../../renderer/phone/phone-line.js";
import { toGregorianSeconds } from "../../renderer/api/gregorian.js";
import { consoleStore, deferred, OWNER_ID } from "../helpers/console-store.js";

const platform: PlatformApi = {
  user: async (id) => ({ id, username: "agent1", firstName: "Alex", lastName: "Agent", isAdmin: false, canMonitor: false, isTrainer: false, presenceId: "1002" }),
  devicesOf: async () => [],
  sipCredentials: async () => ({ username: "u", password: "p", realm: "r" }),
  directory: async () => [],
  recentCalls: async () => [],
  liveCallIds: async () => [],
  transfer: async () => undefined,
  merge: async () => undefined,
};

const AT = Date.UTC(2026, 10, 27, 9, 0, 0);

/** A phone line that registers at once and places every call it is asked to (or refuses, when told). */
function fakeLine(dialled: string[], refuse: () => string | null): PhoneLine {
  const registration = new Set<(state: RegistrationState) => void>();
  const line: PhoneLine & { registration: RegistrationState } = {
    registration: "unregistered",
    retryAt: null,
    lastError: null,
    onRegistration: (listener) => {
      registration.add(listener);
      return () => registration.delete(listener);
    },
    onCall: (_listener: (call: CallInfo) => void) => () => undefined,
    register: async () => {
      line.registration = "registered";
      for (const listener of registration) listener("registered");
    },
    retryNow: () => undefined,
    stop: async () => undefined,
    call: async (target) => {
      const refusal = refuse();
      if (refusal !== null) throw new Error(refusal);
      dialled.push(target);
      return `out-${dialled.length}`;
    },
    answer: async () => undefined,
    reject: async () => undefined,
    hangup: async () => undefined,
    hold: async () => undefined,
    setMuted: () => undefined,
    sendDtmf: () => true,
    setSpeaker: async () => undefined,
  };
  return line;
}

const SOFTPHONE: DeviceSummary = { id: "soft", name: "agent1 softphone", deviceType: "softphone", enabled: true };

function fixture(options: { phone?: boolean } = {}) {
  const dialled: string[] = [];
  let refusal: string | null = null;
  let list: ScheduledCallback[] = [{ id: "cb1", number: "+14155550123", remindAt: AT, note: "Quote", userId: OWNER_ID, state: "scheduled" }];
  const scheduled: { number: string; remindAt: number; note: string }[] = [];
  const cancelled: string[] = [];
  let refuse = false;
  const streams: EventStreamOptions[] = [];
  /** When set, the next list read waits for it (its answer is the list as it was when read). */
  let holdList: Promise<void> | null = null;
  const api: CallbacksApi = {
    list: async () => {
      const read = list;
      const held = holdList;
      holdList = null;
      if (held !== null) await held;
      return read;
    },
    schedule: async (input) => {
      if (refuse) throw new Error("400 remind_at: a callback is scheduled for now or later");
      scheduled.push(input);
      const made: ScheduledCallback = { id: `cb${list.length + 1}`, ...input, userId: OWNER_ID, state: "scheduled" };
      list = [...list, made];
      return made;
    },
    cancel: async (id) => {
      cancelled.push(id);
      list = list.filter((c) => c.id !== id);
    },
  };
  const { store, signIn } = consoleStore({
    platform: () => (options.phone === true ? { ...platform, devicesOf: async () => [SOFTPHONE] } : platform),
    ...(options.phone === true ? { phone: () => fakeLine(dialled, () => refusal) } : {}),
    callbacksApi: () => api,
    eventStream: (options) => {
      streams.push(options);
      return { lastSeq: null, start: () => undefined, stop: () => undefined, reconnectNow: () => undefined };
    },
  });
  const event = (e: PlatformEvent) => streams.at(-1)?.onEvent(e);
  return {
    store,
    scheduled,
    cancelled,
    event,
    refuse: () => (refuse = true),
    /** A callback made on the server by someone else (the list read so far does not have it). */
    madeElsewhere: (row: ScheduledCallback) => (list = [...list, row].sort((a, b) => a.remindAt - b.remindAt)),
    dialled,
    refuseCalls: (words: string | null) => (refusal = words),
    /** The next list read is answered (with the list as it is now) only once the returned release is called. */
    holdNextList() {
      const gate = deferred<void>();
      holdList = gate.promise;
      return () => gate.resolve();
    },
    async connect(username = "agent1") {
      await signIn(username);
      await store.getState().connect();
    },
  };
}

const reminder = (id: string, userId: string): PlatformEvent => ({
  name: "reminder",
  routingKey: `callq.callback.${id}`,
  accountId: "a".repeat(32),
  seq: 7,
  data: { callback_id: id, id, number: "+14155550123", remind_at: toGregorianSeconds(AT), note: "Quote", user_id: userId, state: "reminded" },
});

describe("scheduled callbacks slice", () => {
  it("reads the list on connect and schedules one; a refusal comes back in words", async () => {
    const f = fixture();
    await f.connect();
    expect(f.store.getState().callbacks.list.map((c) => c.number)).toEqual(["+14155550123"]);
    expect(await f.store.getState().scheduleCallback("+14155550199", AT + 3600_000, "After lunch")).toBeNull();
    expect(f.scheduled).toEqual([{ number: "+14155550199", remindAt: AT + 3600_000, note: "After lunch" }]);
    expect(f.store.getState().callbacks.list.map((c) => c.number)).toEqual(["+14155550123", "+14155550199"]);
    f.refuse();
    expect(await f.store.getState().scheduleCallback("+14155550199", AT - 3600_000, "")).toContain("now or later");
    expect(f.store.getState().callbacks.list).toHaveLength(2);
  });

  it("shows this agent's reminder once, not another's; Call now and Dismiss take it down; Cancel removes a callback", async () => {
    const f = fixture();
    await f.connect();
    f.event(reminder("cb1", "someone-else"));
    expect(f.store.getState().callbacks.reminders).toEqual([]);
    f.event(reminder("cb1", OWNER_ID));
    f.event(reminder("cb1", OWNER_ID));
    expect(f.store.getState().callbacks.reminders.map((r) => [r.id, r.number, r.note])).toEqual([["cb1", "+14155550123", "Quote"]]);
    expect(f.store.getState().callbacks.list[0]?.state).toBe("reminded");
    f.event(reminder("cb1", OWNER_ID));
    f.store.getState().dismissReminder("cb1");
    expect(f.store.getState().callbacks.reminders).toEqual([]);
    await f.store.getState().cancelCallback("cb1");
    expect(f.cancelled).toEqual(["cb1"]);
    expect(f.store.getState().callbacks.list).toEqual([]);
  });

  it("Call now places the call and takes the reminder down once the phone line has taken it", async () => {
    const f = fixture({ phone: true });
    await f.connect();
    await vi.waitFor(() => expect(f.store.getState().phone.status).toBe("registered"));
    f.event(reminder("cb1", OWNER_ID));
    expect(await f.store.getState().callBackNow("cb1")).toBe(true);
    expect(f.dialled).toEqual(["+14155550123"]);
    expect(f.store.getState().callbacks.reminders).toEqual([]);
  });

  it("Call now with no phone line places nothing, keeps the reminder and says why; a refused call too", async () => {
    // No phone line (as before the line has started, on a slow link).
    const f = fixture();
    await f.connect();
    f.event(reminder("cb1", OWNER_ID));
    expect(await f.store.getState().callBackNow("cb1")).toBe(false);
    expect(f.store.getState().callbacks.reminders.map((r) => r.id)).toEqual(["cb1"]);
    expect(f.store.getState().callbacks.reminderErrors["cb1"]).toBe("Cannot call +14155550123: there is no phone line. This console has no phone available.");
    f.store.getState().dismissReminder("cb1");
    expect(f.store.getState().callbacks.reminderErrors).toEqual({});

    const g = fixture({ phone: true });
    await g.connect();
    await vi.waitFor(() => expect(g.store.getState().phone.status).toBe("registered"));
    g.event(reminder("cb1", OWNER_ID));
    g.refuseCalls("486 Busy Here");
    expect(await g.store.getState().callBackNow("cb1")).toBe(false);
    expect(g.store.getState().callbacks.reminders.map((r) => r.id)).toEqual(["cb1"]);
    expect(g.store.getState().callbacks.reminderErrors["cb1"]).toMatch(/^Cannot call \+14155550123: .*486 Busy Here/);
    g.refuseCalls(null);
    expect(await g.store.getState().callBackNow("cb1")).toBe(true);
    expect(g.store.getState().callbacks.reminders).toEqual([]);
    expect(g.store.getState().callbacks.reminderErrors).toEqual({});
  });

  it("a reminder's row change stands on the answer of a list read asked before it", async () => {
    const f = fixture();
    await f.connect();
    // A read asked (the list as it is now: cb1 scheduled), its answer held; the reminder comes meanwhile.
    const release = f.holdNextList();
    const read = f.store.getState().loadCallbacks();
    f.event(reminder("cb1", OWNER_ID));
    expect(f.store.getState().callbacks.list[0]?.state).toBe("reminded");
    release();
    await read;
    expect(f.store.getState().callbacks.list.map((c) => [c.id, c.state])).toEqual([["cb1", "reminded"]]);
    // A read asked after the reminder lands as it is.
    await f.store.getState().loadCallbacks();
    expect(f.store.getState().callbacks.list.map((c) => [c.id, c.state])).toEqual([["cb1", "scheduled"]]);
  });

  it("a reminder for a callback made after the list was read puts it in the list, in its place, even with an older read on its way", async () => {
    const f = fixture();
    await f.connect();
    // A supervisor scheduled cb0 for this agent, due before cb1, after the list was read.
    const early: ScheduledCallback = { id: "cb0", number: "+14155550100", remindAt: AT - 60_000, note: "Early", userId: OWNER_ID, state: "reminded" };
    const release = f.holdNextList();
    const older = f.store.getState().loadCallbacks();
    f.madeElsewhere(early);
    f.event({ ...reminder("cb0", OWNER_ID), data: { callback_id: "cb0", id: "cb0", number: early.number, remind_at: toGregorianSeconds(early.remindAt), note: "Early", user_id: OWNER_ID, state: "reminded" } });
    expect(f.store.getState().callbacks.list.map((c) => c.id)).toEqual(["cb0", "cb1"]);
    release();
    await older;
    await vi.waitFor(() => expect(f.store.getState().callbacks.list.map((c) => [c.id, c.state])).toEqual([["cb0", "reminded"], ["cb1", "scheduled"]]));
    expect(f.store.getState().callbacks.reminders.map((r) => r.id)).toEqual(["cb0"]);
  });

  it("starts empty for a new session", async () => {
    const f = fixture();
    await f.connect();
    f.event(reminder("cb1", OWNER_ID));
    await f.store.getState().signOut();
    await f.store.getState().signIn({ accountName: "demo", username: "agent2", password: "pw" }, { remember: false });
    await f.store.getState().cancelCallback("nothing");
    expect(f.store.getState().callbacks.reminders).toEqual([]);
  });
});
