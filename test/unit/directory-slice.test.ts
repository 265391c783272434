// The directory slice and auto-answer through the whole store on a manual clock, with fake /v2
// and directory APIs, a fake event stream and a fake phone line: colleagues kept by presence
// events, the search, the missed calls read again on a notification and marked seen, a refused
// preference put back, and auto-answer (after the delay, not for direct calls, not once rejected).
import { describe, expect, it, vi } from "vitest";
import type { DirectoryApi, MissedCall, Preferences } from "../../renderer/api/directory.js";
import type { PlatformEvent } from "../../renderer/api/events.js";
import type { EventStreamOptions } from "../../renderer/api/events.js";
import type { PlatformApi } from "../../renderer/api/platform.js";
import type { CallAlerts, CallInfo, PhoneLine, RegistrationState } from "../../renderer/phone/phone-line.js";
import { searchColleagues, unseenMissed } from "../../renderer/state/directory.js";
import { consoleStore, deferred, OWNER_ID } from "../helpers/console-store.js";

class Line implements PhoneLine {
  registration: RegistrationState = "registered";
  retryAt = null;
  lastError = null;
  readonly actions: string[] = [];
  readonly #calls = new Set<(c: CallInfo) => void>();
  onRegistration() {
    return () => undefined;
  }
  onCall(l: (c: CallInfo) => void) {
    this.#calls.add(l);
    return () => this.#calls.delete(l);
  }
  emit(call: CallInfo) {
    for (const l of this.#calls) l({ ...call });
  }
  async register() {}
  retryNow() {}
  async stop() {}
  async call(target: string) {
    this.actions.push(`call ${target}`);
    return "out-1";
  }
  async answer(id: string) {
    this.actions.push(`answer ${id}`);
  }
  async reject(id: string) {
    this.actions.push(`reject ${id}`);
  }
  async hangup() {}
  async hold() {}
  setMuted() {}
  sendDtmf() {
    return true;
  }
  async setSpeaker() {}
}

const platform: PlatformApi = {
  user: async (id) => ({ id, username: "agent1", firstName: "Alex", lastName: "Agent", isAdmin: false, canMonitor: false, isTrainer: false, presenceId: "1002" }),
  devicesOf: async () => [{ id: "soft", name: "agent1 softphone", deviceType: "softphone", enabled: true }],
  sipCredentials: async () => ({ username: "u", password: "p", realm: "r" }),
  directory: async () => [],
  recentCalls: async () => [],
  liveCallIds: async () => [],
  transfer: async () => undefined,
  merge: async () => undefined,
};

const BLAIR = { id: "u2", name: "Blair Agent", username: "agent2", extensions: ["1003"], presence: "available" as const, awayReason: "" };
const CASEY = { id: "u3", name: "Casey Agent", username: "agent3", extensions: ["1004"], presence: "offline" as const, awayReason: "" };

type Read = "missed" | "preferences";

function fixture(preferences: Preferences = { doNotDisturb: false, autoAnswer: { enabled: true, delayS: 2 } }) {
  const line = new Line();
  const alerts: string[] = [];
  const streams: EventStreamOptions[] = [];
  let missed: MissedCall[] = [{ id: "m1", callerName: "Pat", callerNumber: "1005", at: 0, seen: false }];
  const seenMarks: string[] = [];
  let refuse = false;
  /** Reads held until the test lets them go: each answers what the server had when it was asked. */
  const gates = new Map<Read, Promise<void>>();
  const asked = new Map<Read, number>();
  async function answer<T>(read: Read, value: T): Promise<T> {
    asked.set(read, (asked.get(read) ?? 0) + 1);
    const gate = gates.get(read);
    gates.delete(read);
    if (gate !== undefined) await gate;
    return value;
  }
  const directory: DirectoryApi = {
    colleagues: async () => [BLAIR, CASEY],
    quickConnects: async () => [{ id: "q1", name: "Sales desk", type: "queue", targetId: "s", number: "5001" }],
    preferences: async () => answer("preferences", preferences),
    setPreferences: async (_id, patch) => {
      if (refuse) throw new Error("403 forbidden");
      preferences = { ...preferences, ...patch };
      return preferences;
    },
    missedCalls: async () => answer("missed", missed),
    markMissedSeen: async (id) => {
      seenMarks.push(id);
      missed = missed.map((m) => ({ ...m, seen: true }));
    },
  };
  const callAlerts: CallAlerts = {
    ring: () => void alerts.push("ring"),
    stopRing: () => void alerts.push("stop"),
    notify: () => undefined,
    dismiss: () => undefined,
    tone: () => void alerts.push("tone"),
  };
  const { store, clock, signIn } = consoleStore({
    platform: () => platform,
    directoryApi: () => directory,
    eventStream: (options) => {
      streams.push(options);
      return { lastSeq: null, start: () => undefined, stop: () => undefined, reconnectNow: () => undefined };
    },
    phone: () => line,
    alerts: callAlerts,
  });
  const event = (e: PlatformEvent) => streams.at(-1)?.onEvent(e);
  return {
    store,
    clock,
    line,
    signIn: () => signIn("agent1"),
    alerts,
    seenMarks,
    event,
    setMissed: (m: MissedCall[]) => (missed = m),
    /** Holds the next read of `read` (answered with what the server has as it is asked) until the returned release. */
    hold(read: Read): () => void {
      const gate = deferred<void>();
      gates.set(read, gate.promise);
      return () => gate.resolve();
    },
    asked: (read: Read) => asked.get(read) ?? 0,
    refuse: () => (refuse = true),
    async connect() {
      await signIn("agent1");
      await store.getState().connect();
    },
  };
}

const OFFER: CallInfo = { id: "in-1", callId: "c1", direction: "inbound", remoteUser: "1001", remoteName: "Ada", state: "incoming", muted: false, offer: { queueId: "s", queueName: "Sales" } };
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the directory slice", () => {
  it("reads colleagues, quick connects, preferences and missed calls on connect, and follows presence events", async () => {
    const f = fixture();
    await f.connect();
    const d = f.store.getState().directory;
    expect(d.colleagues.map((c) => c.presence)).toEqual(["available", "offline"]);
    expect(d.quickConnects[0]?.number).toBe("5001");
    expect(unseenMissed(d)).toBe(1);
    f.event({ name: "presence", routingKey: "directory.user.u3", accountId: "a", seq: 1, data: { id: "u3", name: "Casey Agent", username: "agent3", extensions: ["1004"], presence: "away", away_reason: "lunch" } });
    // Presence lands with the next frame.
    await f.clock.advance(16);
    expect(f.store.getState().directory.colleagues.find((c) => c.id === "u3")).toMatchObject({ presence: "away", awayReason: "lunch" });
    f.store.getState().setDirectoryQuery("1003");
    expect(searchColleagues(f.store.getState().directory).map((c) => c.id)).toEqual(["u2"]);
    f.store.getState().setDirectoryQuery("CASEY");
    expect(searchColleagues(f.store.getState().directory).map((c) => c.id)).toEqual(["u3"]);
  });

  it("reads the missed calls again on a missed_call notification for this user only, and marks them seen", async () => {
    const f = fixture();
    await f.connect();
    f.setMissed([
      { id: "m2", callerName: "Lee", callerNumber: "1004", at: 1, seen: false },
      { id: "m1", callerName: "Pat", callerNumber: "1005", at: 0, seen: false },
    ]);
    f.event({ name: "missed_call", routingKey: "notification.missed_call.x", accountId: "a", seq: 2, data: { owner_id: "someone-else" } });
    await settle();
    expect(unseenMissed(f.store.getState().directory)).toBe(1);
    f.event({ name: "missed_call", routingKey: "notification.missed_call.y", accountId: "a", seq: 3, data: { owner_id: OWNER_ID } });
    await settle();
    expect(unseenMissed(f.store.getState().directory)).toBe(2);
    await f.store.getState().markMissedSeen();
    expect(unseenMissed(f.store.getState().directory)).toBe(0);
    expect(f.seenMarks).toEqual([OWNER_ID]);
  });

  it("shows a preference at once and puts it back when the server refuses", async () => {
    const f = fixture();
    await f.connect();
    f.refuse();
    const change = f.store.getState().setDoNotDisturb(true);
    expect(f.store.getState().directory.preferences?.doNotDisturb).toBe(true);
    await change;
    expect(f.store.getState().directory.preferences?.doNotDisturb).toBe(false);
    expect(f.store.getState().directory.error).toContain("Do not disturb was not changed");
  });
});

describe("the directory slice on a slow link: answers out of order", () => {
  const lee: MissedCall = { id: "m2", callerName: "Lee", callerNumber: "1004", at: 1, seen: false };
  const pat: MissedCall = { id: "m1", callerName: "Pat", callerNumber: "1005", at: 0, seen: false };

  it("keeps the newest read of the missed calls when an older one answers last", async () => {
    const f = fixture();
    await f.connect();
    // A first notification's read (one missed call) is held; a second call is missed, read and shown.
    const release = f.hold("missed");
    f.event({ name: "missed_call", routingKey: "notification.missed_call.y", accountId: "a", seq: 3, data: { owner_id: OWNER_ID } });
    await vi.waitFor(() => expect(f.asked("missed")).toBe(2));
    f.setMissed([lee, pat]);
    f.event({ name: "missed_call", routingKey: "notification.missed_call.z", accountId: "a", seq: 4, data: { owner_id: OWNER_ID } });
    await vi.waitFor(() => expect(unseenMissed(f.store.getState().directory)).toBe(2));
    release();
    await settle();
    expect(unseenMissed(f.store.getState().directory)).toBe(2);
  });

  it("keeps a notification's newer missed calls when the sign-in read's answer comes last", async () => {
    const f = fixture();
    const release = f.hold("missed");
    await f.signIn();
    void f.store.getState().connect();
    await vi.waitFor(() => expect(f.asked("missed")).toBe(1));
    f.setMissed([lee, pat]);
    f.event({ name: "missed_call", routingKey: "notification.missed_call.z", accountId: "a", seq: 4, data: { owner_id: OWNER_ID } });
    await vi.waitFor(() => expect(unseenMissed(f.store.getState().directory)).toBe(2));
    release();
    await vi.waitFor(() => expect(f.store.getState().directory.colleagues).toHaveLength(2));
    expect(unseenMissed(f.store.getState().directory)).toBe(2);
  });

  it("marking the missed calls seen is not undone by a read asked before it", async () => {
    const f = fixture();
    await f.connect();
    const release = f.hold("missed");
    f.event({ name: "missed_call", routingKey: "notification.missed_call.y", accountId: "a", seq: 3, data: { owner_id: OWNER_ID } });
    await vi.waitFor(() => expect(f.asked("missed")).toBe(2));
    await f.store.getState().markMissedSeen();
    expect(unseenMissed(f.store.getState().directory)).toBe(0);
    release();
    await settle();
    await settle();
    expect(unseenMissed(f.store.getState().directory)).toBe(0);
  });

  it("a preference changed before the sign-in read answered is not put back by that read's older answer", async () => {
    const f = fixture();
    const release = f.hold("preferences");
    await f.signIn();
    const connected = f.store.getState().connect();
    await vi.waitFor(() => expect(f.asked("preferences")).toBe(1));
    await f.store.getState().setDoNotDisturb(true);
    await f.store.getState().setAutoAnswer(false, 5);
    expect(f.store.getState().directory.preferences).toEqual({ doNotDisturb: true, autoAnswer: { enabled: false, delayS: 5 } });
    release();
    await connected;
    await vi.waitFor(() => expect(f.store.getState().directory.colleagues).toHaveLength(2));
    expect(f.store.getState().directory.preferences).toEqual({ doNotDisturb: true, autoAnswer: { enabled: false, delayS: 5 } });
  });
});

describe("auto-answer", () => {
  it("answers a queue offer after the delay with a tone, and not before", async () => {
    const f = fixture();
    await f.connect();
    f.line.emit(OFFER);
    expect(f.store.getState().phone.calls[0]?.autoAnswerAt).toBe(f.clock.now() + 2000);
    await f.clock.advance(1999);
    expect(f.line.actions).toEqual([]);
    await f.clock.advance(1);
    await settle();
    expect(f.line.actions).toEqual(["answer in-1"]);
    expect(f.alerts.slice(-2)).toEqual(["stop", "tone"]);
  });

  it("leaves a direct call to the agent, and an offer the agent rejected during the delay", async () => {
    const f = fixture();
    await f.connect();
    f.line.emit({ ...OFFER, id: "direct", offer: {} });
    expect(f.store.getState().phone.calls[0]?.autoAnswerAt).toBeNull();
    f.line.emit(OFFER);
    await f.store.getState().rejectCall("in-1");
    f.line.emit({ ...OFFER, state: "ended" });
    await f.clock.advance(5000);
    await settle();
    expect(f.line.actions).toEqual(["reject in-1"]);
  });

  it("does nothing when the agent has not turned it on", async () => {
    const f = fixture({ doNotDisturb: false, autoAnswer: { enabled: false, delayS: 2 } });
    await f.connect();
    f.line.emit(OFFER);
    await f.clock.advance(5000);
    expect(f.line.actions).toEqual([]);
  });
});
