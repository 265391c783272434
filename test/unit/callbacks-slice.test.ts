// The scheduled-callbacks slice through the whole store, with a fake callbacks API: the list read
// on connect, a callback scheduled and a refusal in words, a reminder event for this agent shown
// (another agent's ignored) and taken down by "Call now" or Dismiss, a cancel, and a new session
// starting empty.
import { describe, expect, it } from "vitest";
import type { CallbacksApi, ScheduledCallback } from "../../renderer/api/callbacks.js";
import type { EventStreamOptions, PlatformEvent } from "../../renderer/api/events.js";
import type { PlatformApi } from "../../renderer/api/platform.js";
import { toGregorianSeconds } from "../../renderer/api/gregorian.js";
import { consoleStore, OWNER_ID } from "../helpers/console-store.js";

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

function fixture() {
  let list: ScheduledCallback[] = [{ id: "cb1", number: "+14155550123", remindAt: AT, note: "Quote", userId: OWNER_ID, state: "scheduled" }];
  const scheduled: { number: string; remindAt: number; note: string }[] = [];
  const cancelled: string[] = [];
  let refuse = false;
  const streams: EventStreamOptions[] = [];
  const api: CallbacksApi = {
    list: async () => list,
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
    platform: () => platform,
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
    await f.store.getState().callBackNow("cb1");
    expect(f.store.getState().callbacks.reminders).toEqual([]);
    f.event(reminder("cb1", OWNER_ID));
    f.store.getState().dismissReminder("cb1");
    expect(f.store.getState().callbacks.reminders).toEqual([]);
    await f.store.getState().cancelCallback("cb1");
    expect(f.cancelled).toEqual(["cb1"]);
    expect(f.store.getState().callbacks.list).toEqual([]);
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
