// The connection, phone and recent-calls slices through the whole store, with a hand-driven clock,
// a fake phone line, fake alerts, a fake /v2 API and a fake event stream: what the agent sees
// change when the console connects, a call is offered, accepted, timed, transferred, when the
// token expires and the agent signs in again, and with several lines: auto-hold, swap, merge.
import { describe, expect, it, vi } from "vitest";
import type { AuthApi } from "../../renderer/api/client.js";
import type { EventStreamOptions } from "../../renderer/api/events.js";
import type { CallRecord, PlatformApi } from "../../renderer/api/platform.js";
import type { Clock } from "../../renderer/clock.js";
import type { CallAlerts, CallInfo, PhoneLine, PhoneLineOptions, RegistrationState } from "../../renderer/phone/phone-line.js";
import { focusedCall, mergePair, swapPair, TAKEBACK_DTMF, type CallView } from "../../renderer/state/phone.js";
import { memoryStorage } from "../../renderer/state/storage.js";
import { createAppStore } from "../../renderer/state/store.js";

const ACCOUNT = "a".repeat(32);
const OWNER = "b".repeat(32);

function handClock(start = 1_000_000) {
  let now = start;
  const timers: { at: number; run: () => void; live: boolean }[] = [];
  const clock: Clock = {
    now: () => now,
    after(ms, run) {
      const timer = { at: now + ms, run, live: true };
      timers.push(timer);
      return () => void (timer.live = false);
    },
  };
  return {
    clock,
    advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const due = timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        due.live = false;
        now = due.at;
        due.run();
      }
      now = end;
    },
  };
}

class FakeLine implements PhoneLine {
  registration: RegistrationState = "unregistered";
  retryAt: number | null = null;
  lastError: string | null = null;
  readonly actions: string[] = [];
  /** Set to make hold requests fail, as a far end refusing the re-INVITE would. */
  holdRefused = false;
  #registrationListeners = new Set<(s: RegistrationState) => void>();
  #callListeners = new Set<(c: CallInfo) => void>();
  constructor(readonly options: PhoneLineOptions) {}
  onRegistration(l: (s: RegistrationState) => void) {
    this.#registrationListeners.add(l);
    return () => this.#registrationListeners.delete(l);
  }
  onCall(l: (c: CallInfo) => void) {
    this.#callListeners.add(l);
    return () => this.#callListeners.delete(l);
  }
  setRegistration(state: RegistrationState) {
    this.registration = state;
    for (const l of this.#registrationListeners) l(state);
  }
  emit(call: CallInfo) {
    for (const l of this.#callListeners) l({ ...call });
  }
  async register() {
    this.actions.push("register");
    this.setRegistration("registered");
  }
  retryNow() {
    this.actions.push("retry");
  }
  async stop() {
    this.actions.push("stop");
  }
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
  async hangup(id: string) {
    this.actions.push(`hangup ${id}`);
  }
  async hold(id: string, held: boolean) {
    if (this.holdRefused) throw new Error("hold refused: 488");
    this.actions.push(`hold ${id} ${held}`);
  }
  setMuted(id: string, muted: boolean) {
    this.actions.push(`mute ${id} ${muted}`);
  }
  sendDtmf(id: string, digits: string) {
    this.actions.push(`dtmf ${id} ${digits}`);
    return true;
  }
  async setSpeaker() {}
}

function fixture() {
  const time = handClock();
  const lines: FakeLine[] = [];
  const alerts: string[] = [];
  const transfers: { callId: string; target: string; type: string; takebackDtmf?: string }[] = [];
  const merges: string[] = [];
  /** The call legs the server has: what liveCallIds answers. */
  const live = new Set<string>();
  const streams: EventStreamOptions[] = [];
  let recentReads = 0;
  const calls: CallRecord[] = [];
  const platform: PlatformApi = {
    user: async (id) => ({ id, username: "agent1", firstName: "Alex", lastName: "Agent", isAdmin: false, canMonitor: false, isTrainer: false, presenceId: "1002" }),
    devicesOf: async () => [
      { id: "desk", name: "Desk phone", deviceType: "sip_device", enabled: true },
      { id: "soft", name: "agent1 softphone", deviceType: "softphone", enabled: true },
    ],
    sipCredentials: async (id) => ({ username: `user_${id}`, password: "pw", realm: "demo.switchboard.local" }),
    directory: async () => [{ id: "u2", name: "Blair Agent", extension: "1003" }],
    recentCalls: async () => {
      recentReads++;
      return calls;
    },
    liveCallIds: async () => [...live],
    transfer: async (callId, request) => void transfers.push({ callId, ...request }),
    merge: async (callId, targetCallId) => void merges.push(`${callId} + ${targetCallId}`),
  };
  const callAlerts: CallAlerts = {
    ring: (device) => void alerts.push(`ring ${device ?? "default"}`),
    stopRing: () => void alerts.push("stop"),
    notify: (call) => void alerts.push(`notify ${call.remoteName}`),
    dismiss: (id) => void alerts.push(`dismiss ${id}`),
    tone: () => void alerts.push("tone"),
  };
  let grants = 0;
  const auth: AuthApi = {
    signIn: async () => ({ token: `token-${++grants}`, accountId: ACCOUNT, ownerId: OWNER, accountName: "demo" }),
    signOut: async () => undefined,
  };
  const store = createAppStore({
    storage: memoryStorage(),
    pageOrigin: "http://127.0.0.1:8000",
    auth,
    clock: time.clock,
    platform: () => platform,
    eventStream: (options) => {
      streams.push(options);
      return { lastSeq: 41, start: () => undefined, stop: () => undefined, reconnectNow: () => undefined };
    },
    phone: (options) => {
      const line = new FakeLine(options);
      lines.push(line);
      return line;
    },
    alerts: callAlerts,
  });
  const signIn = () => store.getState().signIn({ accountName: "demo", username: "agent1", password: "pw" }, { remember: false });
  const line = () => {
    const l = lines.at(-1);
    if (!l) throw new Error("no line");
    return l;
  };
  return { store, time, lines, line, alerts, transfers, merges, streams, signIn, recentReads: () => recentReads, calls, live };
}

const OFFER: CallInfo = {
  id: "in-1",
  callId: "callid-1",
  direction: "inbound",
  remoteUser: "+14155550100",
  remoteName: "Casey Customer",
  state: "incoming",
  muted: false,
  offer: { queueName: "Sales", waitedS: 12 },
};

describe("connecting after sign-in", () => {
  it("reads the profile, registers the user's softphone (not the desk phone) on the SIP address and opens events", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    const state = f.store.getState();
    expect(state.profile?.presenceId).toBe("1002");
    expect(state.phone.deviceId).toBe("soft");
    expect(state.phone.status).toBe("registered");
    expect(f.line().options).toMatchObject({ server: "ws://127.0.0.1:8000/sip", username: "user_soft", realm: "demo.switchboard.local", displayName: "Alex Agent" });
    expect(f.streams[0]).toMatchObject({ url: "ws://127.0.0.1:8000/events", token: "token-1", accountId: ACCOUNT, since: null });
    expect(f.recentReads()).toBe(1);
  });

  it("remembers a chosen device for the next sign-in", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    await f.store.getState().chooseDevice("desk");
    expect(f.lines[0]?.actions).toContain("stop");
    expect(f.line().options.username).toBe("user_desk");
    f.store.getState().signOut();
    await f.signIn();
    await f.store.getState().connect();
    expect(f.store.getState().phone.deviceId).toBe("desk");
  });

  it("after the token expires, keeps the phone and resumes events with since once the same user signs in again", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.store.getState().expireSession();
    expect(f.store.getState().session).toBeNull();
    expect(f.store.getState().expiredSession?.username).toBe("agent1");
    expect(f.line().actions).not.toContain("stop");
    expect(f.store.getState().phone.status).toBe("registered");
    await f.signIn();
    await f.store.getState().connect();
    expect(f.lines).toHaveLength(1);
    expect(f.streams.at(-1)).toMatchObject({ token: "token-2", since: 41 });
  });
});

describe("a call offered, accepted and timed", () => {
  it("rings on the chosen ringer, notifies, and on accept stops ringing and times the call from the answer", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.line().emit(OFFER);
    const offered = f.store.getState().phone.calls[0];
    expect(offered).toMatchObject({ remoteName: "Casey Customer", offer: { queueName: "Sales", waitedS: 12 }, startedAt: 1_000_000, answeredAt: null });
    expect(focusedCall(f.store.getState().phone.calls, "offer")?.id).toBe("in-1");
    expect(f.alerts).toEqual(["notify Casey Customer", "ring default"]);

    f.time.advance(4000);
    await f.store.getState().acceptCall("in-1");
    expect(f.line().actions).toContain("answer in-1");
    f.line().emit({ ...OFFER, state: "active" });
    expect(f.store.getState().phone.calls[0]?.answeredAt).toBe(1_004_000);
    expect(f.alerts.slice(-2)).toEqual(["dismiss in-1", "stop"]);
    expect(focusedCall(f.store.getState().phone.calls, "current")?.id).toBe("in-1");
  });

  it("takes the call off the list when it ends and reads the recent calls again, once, shortly after", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.line().emit({ ...OFFER, state: "active" });
    f.line().emit({ ...OFFER, state: "ended" });
    f.store.getState().refreshRecentCallsSoon();
    expect(f.store.getState().phone.calls).toEqual([]);
    expect(f.recentReads()).toBe(1);
    f.time.advance(399);
    expect(f.recentReads()).toBe(1);
    f.time.advance(1);
    expect(f.recentReads()).toBe(2);
  });
});

describe("transfers", () => {
  it("attended: asks the channels API with the takeback digits, consults, and returning sends them", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.line().emit({ ...OFFER, state: "active" });
    await f.store.getState().transferCall("in-1", " 1003 ", "attended");
    expect(f.transfers).toEqual([{ callId: "callid-1", target: "1003", type: "attended", takebackDtmf: TAKEBACK_DTMF }]);
    expect(f.store.getState().phone.calls[0]?.transfer).toEqual({ type: "attended", target: "1003", stage: "consulting" });
    f.store.getState().cancelTransfer("in-1");
    expect(f.line().actions).toContain(`dtmf in-1 ${TAKEBACK_DTMF}`);
    expect(f.store.getState().phone.calls[0]?.transfer).toBeNull();
  });

  it("blind: asks without takeback digits and leaves the call to end by itself", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.line().emit({ ...OFFER, state: "active" });
    await f.store.getState().transferCall("in-1", "1003", "blind");
    expect(f.transfers[0]).toEqual({ callId: "callid-1", target: "1003", type: "blind" });
    expect(f.store.getState().phone.calls[0]?.transfer).toBeNull();
  });
});

const SECOND: CallInfo = {
  id: "in-2",
  callId: "callid-2",
  direction: "inbound",
  remoteUser: "+14155550199",
  remoteName: "Dana Douglas",
  state: "incoming",
  muted: false,
  offer: {},
};

/** Signed in with the first call connected and a second one ringing. */
async function onACallWithASecondRinging() {
  const f = fixture();
  await f.signIn();
  await f.store.getState().connect();
  f.line().emit({ ...OFFER, state: "active" });
  f.line().emit(SECOND);
  return f;
}

const callsOf = (f: ReturnType<typeof fixture>) => f.store.getState().phone.calls;

describe("several lines", () => {
  it("accepting a second call holds the one in progress first, then answers", async () => {
    const f = await onACallWithASecondRinging();
    await f.store.getState().acceptCall("in-2");
    expect(f.line().actions.filter((a) => a.startsWith("hold") || a.startsWith("answer"))).toEqual(["hold in-1 true", "answer in-2"]);
  });

  it("does not answer when the call in progress cannot be held, and says why on both", async () => {
    const f = await onACallWithASecondRinging();
    f.line().holdRefused = true;
    await f.store.getState().acceptCall("in-2");
    expect(f.line().actions).not.toContain("answer in-2");
    expect(callsOf(f).find((c) => c.id === "in-2")?.error).toBe("Answering failed: the call with Casey Customer could not be held");
    expect(callsOf(f).find((c) => c.id === "in-1")?.error).toBe("Holding failed: hold refused: 488");
    expect(callsOf(f).map((c) => c.pending)).toEqual([null, null]);
  });

  it("dialling out while on a call holds it first", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.line().emit({ ...OFFER, state: "active" });
    await f.store.getState().dial("1003");
    expect(f.line().actions.slice(-2)).toEqual(["hold in-1 true", "call 1003"]);
  });

  it("swap holds the line in progress and resumes the held one; resuming a held line does the same", async () => {
    const f = await onACallWithASecondRinging();
    f.line().emit({ ...OFFER, state: "held" });
    f.line().emit({ ...SECOND, state: "active" });
    expect(swapPair(callsOf(f))).toMatchObject({ from: { id: "in-2" }, to: { id: "in-1" } });
    await f.store.getState().swapCalls();
    expect(f.line().actions.slice(-2)).toEqual(["hold in-2 true", "hold in-1 false"]);
    f.line().emit({ ...OFFER, state: "active" });
    f.line().emit({ ...SECOND, state: "held" });
    await f.store.getState().toggleHold("in-2");
    expect(f.line().actions.slice(-2)).toEqual(["hold in-1 true", "hold in-2 false"]);
  });

  it("hanging up one line leaves the other alone", async () => {
    const f = await onACallWithASecondRinging();
    f.line().emit({ ...OFFER, state: "held" });
    f.line().emit({ ...SECOND, state: "active" });
    await f.store.getState().hangupCall("in-2");
    f.line().emit({ ...SECOND, state: "ended" });
    expect(f.line().actions.filter((a) => a.includes("in-1"))).toEqual([]);
    expect(callsOf(f).map((c) => [c.id, c.state])).toEqual([["in-1", "held"]]);
  });

  it("merge asks the channels API to join the held line's party to the line in progress, and shows one conference line", async () => {
    const f = await onACallWithASecondRinging();
    f.line().emit({ ...OFFER, state: "held" });
    f.line().emit({ ...SECOND, state: "active" });
    await f.store.getState().mergeCalls();
    expect(f.merges).toEqual(["callid-2 + callid-1"]);
    expect(callsOf(f).map((c) => c.id)).toEqual(["in-2"]);
    expect(callsOf(f)[0]?.merged).toEqual([{ name: "Casey Customer", number: "+14155550100" }]);
    // Nothing was held or resumed: the line in progress stays so.
    expect(f.line().actions.filter((a) => a.startsWith("hold"))).toEqual([]);
  });

  it("merging a new call into a held conference keeps the conference's line and resumes it", async () => {
    const conference: CallView = { ...OFFER, state: "held", startedAt: 0, answeredAt: 0, digits: "", pending: null, error: null, transfer: null, merged: [{ name: "Eve", number: "1004" }], autoAnswerAt: null, startedAtQueueTime: 0 };
    const single: CallView = { ...conference, ...SECOND, state: "active", merged: [] };
    expect(mergePair([conference, single])).toMatchObject({ line: { id: "in-1" }, other: { id: "in-2" } });
    expect(mergePair([conference])).toBeUndefined();
    // A queue's call is kept over a direct one, whichever is in progress.
    const queued: CallView = { ...conference, merged: [], offer: { queueId: "q1", queueName: "Sales" } };
    expect(mergePair([single, queued])).toMatchObject({ line: { id: "in-1" }, other: { id: "in-2" } });
    expect(mergePair([{ ...single, state: "held" }, { ...queued, state: "active" }])).toMatchObject({ line: { id: "in-1" } });

    const f = await onACallWithASecondRinging();
    f.line().emit({ ...OFFER, state: "active" });
    await f.store.getState().acceptCall("in-2");
    f.line().emit({ ...OFFER, state: "held" });
    f.line().emit({ ...SECOND, state: "active" });
    await f.store.getState().mergeCalls();
    // A late report about the merged-away line does not bring it back.
    f.line().emit({ ...OFFER, state: "held" });
    expect(callsOf(f).map((c) => c.id)).toEqual(["in-2"]);
    f.line().emit({ ...OFFER, state: "ended" });
    f.line().emit({ id: "in-3", callId: "callid-3", direction: "inbound", remoteUser: "1004", remoteName: "Eve", state: "active", muted: false, offer: {} });
    // in-2 is now the conference (on hold), in-3 a new line in progress.
    f.line().emit({ ...SECOND, state: "held" });
    await f.store.getState().mergeCalls();
    expect(f.merges).toEqual(["callid-2 + callid-1", "callid-2 + callid-3"]);
    expect(f.line().actions.at(-1)).toBe("hold in-2 false");
    expect(callsOf(f).map((c) => c.id)).toEqual(["in-2"]);
    expect(callsOf(f)[0]?.merged.map((p) => p.name)).toEqual(["Casey Customer", "Eve"]);
  });
});

describe("after trouble: the server's truth", () => {
  it("once registered again, ends the calls the server no longer has and keeps the rest", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.line().emit({ ...OFFER, state: "active" });
    f.line().emit({ ...OFFER, id: "in-2", callId: "callid-2", state: "held" });
    f.live.add("callid-2");
    f.line().setRegistration("reconnecting");
    expect(f.store.getState().phone.calls).toHaveLength(2);
    f.line().setRegistration("registered");
    await vi.waitFor(() => expect(f.store.getState().phone.calls.map((c) => c.id)).toEqual(["in-2"]));
    expect(f.line().actions).toContain("hangup in-1");
    expect(f.line().actions).not.toContain("hangup in-2");
  });

  it("follows a CALL_UPDATE of a call's leg: the far party after a transfer", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    f.line().emit({ ...OFFER, remoteName: "Alex Agent", remoteUser: "1002", state: "active" });
    const event = (data: Record<string, unknown>) => ({ name: "CALL_UPDATE", routingKey: `call.CALL_UPDATE.${String(data.call_id)}`, accountId: ACCOUNT, seq: 50, data });
    // Another leg's update changes nothing.
    f.streams[0]?.onEvent(event({ call_id: "other", call_direction: "outbound", caller_id_name: "Nobody", caller_id_number: "1" }));
    expect(f.store.getState().phone.calls[0]).toMatchObject({ remoteName: "Alex Agent", remoteUser: "1002" });
    f.streams[0]?.onEvent(event({ call_id: "callid-1", call_direction: "outbound", caller_id_name: "Casey Customer", caller_id_number: "+14155550100" }));
    expect(f.store.getState().phone.calls[0]).toMatchObject({ remoteName: "Casey Customer", remoteUser: "+14155550100" });
  });

  it("a refused outgoing call leaves a notice in words, dismissible, gone by itself after a while; a cancelled one none", async () => {
    const f = fixture();
    await f.signIn();
    await f.store.getState().connect();
    const out: CallInfo = { ...OFFER, id: "out-1", callId: "o1", direction: "outbound", remoteName: "1099", remoteUser: "1099", state: "dialing", offer: {} };
    f.line().emit(out);
    f.line().emit({ ...out, state: "ended", failure: { code: 404, reason: "Not Found" } });
    expect(f.store.getState().callFailures).toEqual([{ id: "out-1", target: "1099", reason: "No such number", code: 404 }]);
    f.store.getState().dismissCallFailure("out-1");
    expect(f.store.getState().callFailures).toEqual([]);

    for (const [id, code, reason, words] of [
      ["b", 486, "Busy Here", "Busy"],
      ["u", 480, "Temporarily Unavailable", "Unavailable"],
      ["n", 480, "No Answer", "No answer"],
      ["d", 603, "Decline", "Declined"],
    ] as const) {
      f.line().emit({ ...out, id, state: "ended", failure: { code, reason } });
      expect(f.store.getState().callFailures.at(-1)?.reason).toBe(words);
    }
    f.line().emit({ ...out, id: "c", state: "ended", failure: { code: 487, reason: "Request Terminated" } });
    expect(f.store.getState().callFailures).toHaveLength(4);
    f.time.advance(8000);
    expect(f.store.getState().callFailures).toEqual([]);
  });
});
