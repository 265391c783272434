// Callbacks in the queue engine (issue 19 item 4) on the server's ManualClock: a caller who asks
// to be called back keeps their place, the callback is offered like a caller with its number,
// and dialling it connects, or fails and waits again after the queue's retry delay until its
// attempts run out. The call side is a test double of the QueuedCall port.
import { afterEach, describe, expect, it } from "vitest";
import { CallqEngine } from "../../server/callq/engine.js";
import type { CallbackDial, CallqAccount, CallqUser, OfferOutcome, OfferRequest, QueuedCall, RecipientLedger } from "../../server/callq/ports.js";
import { queueConfigOf } from "../../server/callq/queue-config.js";
import type { SavedRecipient } from "../../server/callq/recipient.js";
import { ManualClock } from "../../server/clock-control.js";

const ACCOUNT = "d".repeat(32);

class MemoryLedger implements RecipientLedger {
  async load(): Promise<ReadonlyMap<string, SavedRecipient>> {
    return new Map();
  }
  async save(): Promise<void> {}
}

/** A caller (or a callback's dialler) whose every offer the test settles. */
class Line implements QueuedCall {
  readonly caller: { name: string; number: string };
  readonly offers: { request: OfferRequest; resolve(outcome: OfferOutcome): void; aborted: boolean }[] = [];
  readonly #gone: (() => void)[] = [];
  constructor(
    readonly callId: string,
    number: string,
  ) {
    this.caller = { name: `Caller ${callId}`, number };
  }
  offer(request: OfferRequest, signal: AbortSignal): Promise<OfferOutcome> {
    return new Promise((resolve) => {
      const offer = { request, resolve, aborted: false };
      signal.addEventListener(
        "abort",
        () => {
          offer.aborted = true;
          resolve({ kind: "cancelled" });
        },
        { once: true },
      );
      this.offers.push(offer);
    });
  }
  onGone(listener: () => void): void {
    this.#gone.push(listener);
  }
  hangUp(): void {
    for (const listener of this.#gone) listener();
  }
}

/** The recipient accepts the latest offer; the test then settles the dialling and the call. */
function accept(line: Line): { dial(result: CallbackDial): void; hangUp(): void } {
  let dial: (result: CallbackDial) => void = () => undefined;
  let hangUp: () => void = () => undefined;
  const dialed = new Promise<CallbackDial>((resolve) => (dial = resolve));
  const ended = new Promise<void>((resolve) => (hangUp = resolve));
  line.offers.at(-1)?.resolve({ kind: "answered", ended, dialed });
  return { dial: (result) => dial(result), hangUp: () => hangUp() };
}

const agent = (id: string): CallqUser => ({ id, recipient: true, name: id });
const CALLBACK = { enabled: true, digit: "5", max_attempts: 2, retry_delay_s: 30 };

let engines: CallqEngine[] = [];
afterEach(async () => {
  for (const engine of engines) await engine.close();
  engines = [];
});

function rig(callback: Record<string, unknown> | null = CALLBACK): { engine: CallqEngine; clock: ManualClock; events: { routing_key: string; name: string; data: Record<string, unknown> }[] } {
  const account: CallqAccount = {
    queues: [queueConfigOf("q1", { name: "Sales", timeout: 120, agent_wrapup_time: 0, members: { ann: "" }, ...(callback ? { callback } : {}) })],
    users: [agent("ann")],
  };
  const clock = new ManualClock(Date.UTC(2026, 10, 26, 9, 0, 0));
  const events: { routing_key: string; name: string; data: Record<string, unknown> }[] = [];
  const engine = new CallqEngine({
    directory: { load: async () => structuredClone(account) },
    ledger: new MemoryLedger(),
    bus: { publish: (e) => events.push(e) },
    scheduler: clock,
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  engines.push(engine);
  return { engine, clock, events };
}

const sessionEvents = (events: { routing_key: string; name: string }[], id: string): string[] => events.filter((e) => e.routing_key === `callq.session.${id}`).map((e) => e.name);

describe("callbacks in the queue engine", () => {
  it("keeps the caller's place: the callback is offered before a caller who joined after them, with its number", async () => {
    const { engine, clock, events } = rig();
    const first = new Line("call-1", "+15550001");
    const firstDone = engine.join(ACCOUNT, "q1", first);
    await clock.advance(0);
    await clock.advance(10_000);
    const second = new Line("call-2", "+15550002");
    void engine.join(ACCOUNT, "q1", second);
    await clock.advance(0);
    await clock.advance(10_000);
    const dialler = new Line("call-1", "+15550001");
    const row = await engine.requestCallback(ACCOUNT, "q1", "call-1", dialler);
    expect(row).toMatchObject({ call_id: "call-1", state: "waiting", callback: { number: "+15550001", attempts: 0 } });
    expect(await firstDone).toEqual({ kind: "callback" });
    // The caller's hang-up after asking is expected: the session stays.
    first.hangUp();
    const status = await engine.queueStatus(ACCOUNT, "q1");
    expect(status.stats).toMatchObject({ active_session_count: 1, callbacks_waiting: 1, callbacks_requested: 1, abandoned_sessions: 0, longest_wait: 10 });
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    await clock.advance(0);
    expect(dialler.offers.map((o) => o.request.callback)).toEqual([{ number: "+15550001", attempt: 1 }]);
    expect(second.offers).toEqual([]);
    expect(await engine.recipientStatus(ACCOUNT, "ann")).toMatchObject({ availability_state: "Call-Offer", offered_call: { call_id: "call-1", callback_number: "+15550001" } });
    const [session] = await engine.queueSessions(ACCOUNT, "q1");
    expect(sessionEvents(events, session?.session_id ?? "")).toEqual(["create", "callback_requested", "callback_offered"]);
  });

  it("connects: the recipient accepts, the caller answers, the call is handled and counted as a connected callback", async () => {
    const { engine, clock, events } = rig();
    void engine.join(ACCOUNT, "q1", new Line("call-1", "+15550001"));
    await clock.advance(5000);
    const dialler = new Line("call-1", "+15550001");
    const { session_id: id } = await engine.requestCallback(ACCOUNT, "q1", "call-1", dialler);
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    await clock.advance(0);
    const call = accept(dialler);
    await clock.advance(0);
    expect(await engine.recipientStatus(ACCOUNT, "ann")).toMatchObject({ availability_state: "On-A-Call" });
    expect(await engine.queueSessions(ACCOUNT, "q1")).toMatchObject([{ session_id: id, state: "offering", recipient_id: "ann" }]);
    expect((await engine.queueStatus(ACCOUNT, "q1")).stats.callbacks_waiting).toBe(1);
    call.dial({ kind: "connected" });
    await clock.advance(0);
    expect((await engine.queueStatus(ACCOUNT, "q1")).stats).toMatchObject({ callbacks_waiting: 0, callbacks_connected: 1 });
    await clock.advance(60_000);
    call.hangUp();
    await clock.advance(0);
    expect(sessionEvents(events, id)).toEqual(["create", "callback_requested", "callback_offered", "callback_dialing", "callback_connected", "handled", "end"]);
    const stats = (await engine.queueStatus(ACCOUNT, "q1")).stats;
    // Counted apart from the service level: the caller chose to leave the line.
    expect(stats).toMatchObject({ callbacks_requested: 1, callbacks_connected: 1, callbacks_failed: 0, answered_sessions: 0, abandoned_sessions: 0, active_session_count: 0, service_level: null });
    expect(await engine.queueSessions(ACCOUNT, "q1")).toEqual([]);
  });

  it("fails: waits again in its place for the retry delay, then is given up after its last attempt", async () => {
    const { engine, clock, events } = rig();
    void engine.join(ACCOUNT, "q1", new Line("call-1", "+15550001"));
    const dialler = new Line("call-1", "+15550001");
    const { session_id: id } = await engine.requestCallback(ACCOUNT, "q1", "call-1", dialler);
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    await clock.advance(0);
    let call = accept(dialler);
    await clock.advance(0);
    call.dial({ kind: "failed", reason: "no_answer" });
    call.hangUp();
    await clock.advance(0);
    expect(await engine.recipientStatus(ACCOUNT, "ann")).toMatchObject({ availability_state: "Ready" });
    const [row] = await engine.queueSessions(ACCOUNT, "q1");
    expect(row).toMatchObject({ state: "waiting", callback: { attempts: 1, retry_at: expect.any(Number) } });
    // Ann is Ready, but the retry delay (30 s) holds the callback back.
    await clock.advance(29_000);
    expect(dialler.offers).toHaveLength(1);
    await clock.advance(1000);
    expect(dialler.offers.map((o) => o.request.callback)).toEqual([
      { number: "+15550001", attempt: 1 },
      { number: "+15550001", attempt: 2 },
    ]);
    call = accept(dialler);
    await clock.advance(0);
    call.dial({ kind: "failed", reason: "busy" });
    call.hangUp();
    await clock.advance(0);
    expect(await engine.queueSessions(ACCOUNT, "q1")).toEqual([]);
    expect((await engine.queueStatus(ACCOUNT, "q1")).stats).toMatchObject({ callbacks_waiting: 0, callbacks_failed: 1, callbacks_connected: 0 });
    expect(sessionEvents(events, id)).toEqual([
      "create",
      "callback_requested",
      "callback_offered",
      "callback_dialing",
      "callback_failed",
      "callback_retry",
      "callback_offered",
      "callback_dialing",
      "callback_failed",
      "end",
    ]);
    const failures = events.filter((e) => e.routing_key === `callq.session.${id}` && e.name === "callback_failed").map((e) => [e.data.reason, e.data.retry]);
    expect(failures).toEqual([
      ["no_answer", true],
      ["busy", false],
    ]);
    const leave = events.find((e) => e.routing_key === "callq.queue.q1" && e.name === "leave");
    expect(leave?.data.reason).toBe("callback_failed");
  });

  it("a recipient who lets the callback ring out leaves it waiting in its place, no attempt counted, past the queue's timeout", async () => {
    const { engine, clock } = rig();
    void engine.join(ACCOUNT, "q1", new Line("call-1", "+15550001"));
    const dialler = new Line("call-1", "+15550001");
    await engine.requestCallback(ACCOUNT, "q1", "call-1", dialler);
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    await clock.advance(0);
    dialler.offers[0]?.resolve({ kind: "timeout" });
    await clock.advance(0);
    expect(await engine.queueSessions(ACCOUNT, "q1")).toMatchObject([{ state: "waiting", callback: { attempts: 0 } }]);
    await engine.recipientAction(ACCOUNT, "ann", "logout");
    // Past the queue's 120 s timeout: a callback holds no line, so it does not time out.
    await clock.advance(200_000);
    expect(await engine.queueSessions(ACCOUNT, "q1")).toMatchObject([{ call_id: "call-1", state: "waiting" }]);
  });

  it("asked while an offer rings for the caller: the ringing stops and the callback is offered instead", async () => {
    const { engine, clock } = rig();
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    const caller = new Line("call-1", "+15550001");
    void engine.join(ACCOUNT, "q1", caller);
    await clock.advance(0);
    expect(caller.offers).toHaveLength(1);
    const dialler = new Line("call-1", "+15550001");
    await engine.requestCallback(ACCOUNT, "q1", "call-1", dialler);
    await clock.advance(0);
    expect(caller.offers[0]?.aborted).toBe(true);
    // Ann was tried for the caller this round; the next tick offers her the callback.
    await clock.advance(1000);
    expect(dialler.offers.map((o) => o.request.callback?.number)).toEqual(["+15550001"]);
  });

  it("refuses a queue without callbacks, a call not in the queue, and a second request", async () => {
    const off = rig(null);
    void off.engine.join(ACCOUNT, "q1", new Line("call-1", "+15550001"));
    await expect(off.engine.requestCallback(ACCOUNT, "q1", "call-1", new Line("call-1", "+15550001"))).rejects.toMatchObject({ code: "callback_refused", id: "q1" });
    const offStats = (await off.engine.queueStatus(ACCOUNT, "q1")).stats;
    expect(offStats.active_session_count).toBe(1);
    // A queue without callbacks shows no callback figures: its status is the hosted one.
    expect(Object.keys(offStats).filter((k) => k.startsWith("callback"))).toEqual([]);
    const { engine } = rig();
    void engine.join(ACCOUNT, "q1", new Line("call-1", "+15550001"));
    await expect(engine.requestCallback(ACCOUNT, "q1", "call-9", new Line("call-9", "+15550009"))).rejects.toMatchObject({ code: "no_session" });
    await engine.requestCallback(ACCOUNT, "q1", "call-1", new Line("call-1", "+15550001"));
    await expect(engine.requestCallback(ACCOUNT, "q1", "call-1", new Line("call-1", "+15550001"))).rejects.toMatchObject({ code: "no_session" });
    expect((await engine.queueStatus(ACCOUNT, "q1")).stats.callbacks_requested).toBe(1);
  });
});
