// The queue engine on its ports alone: no store, no SIP, no media. Its accounts come from a
// directory of plain data, recipient states go to an in-memory ledger, time moves by hand, and
// callers are test doubles of the QueuedCall port that calls/ implements in the server.
import { afterEach, describe, expect, it } from "vitest";
import { CallqEngine } from "../../server/callq/engine.js";
import type { CallqAccount, CallqUser, OfferOutcome, OfferRequest, QueuedCall, RecipientLedger, Scheduler } from "../../server/callq/ports.js";
import { queueConfigOf, type QueueConfig } from "../../server/callq/queue-config.js";
import { Recipient, type SavedRecipient } from "../../server/callq/recipient.js";
import { Session } from "../../server/callq/session.js";
import { recipientStatus, sessionRow } from "../../server/callq/views.js";
import { toGregorianSeconds } from "../../server/clock.js";

const ACCOUNT = "c".repeat(32);

/** Time that moves only when the test says; due timers run in order. */
class HandClock implements Scheduler {
  #now = Date.UTC(2026, 10, 26, 9, 0, 0);
  #timers: { at: number; fn: () => void; live: boolean }[] = [];
  now = (): number => this.#now;
  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, ms), fn, live: true };
    this.#timers.push(timer);
    return () => void (timer.live = false);
  }
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (let due = this.#next(until); due; due = this.#next(until)) {
      this.#now = due.at;
      due.live = false;
      due.fn();
      await settle();
    }
    this.#now = until;
    await settle();
  }
  #next(until: number): { at: number; fn: () => void; live: boolean } | undefined {
    return this.#timers.filter((t) => t.live && t.at <= until).sort((a, b) => a.at - b.at)[0];
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

class MemoryLedger implements RecipientLedger {
  readonly states = new Map<string, SavedRecipient>();
  failing = false;
  async load(accountId: string): Promise<ReadonlyMap<string, SavedRecipient>> {
    return new Map([...this.states].filter(([key]) => key.startsWith(`${accountId}/`)).map(([key, state]) => [key.slice(accountId.length + 1), structuredClone(state)]));
  }
  async save(accountId: string, recipientId: string, state: SavedRecipient): Promise<void> {
    if (this.failing) throw new Error("disk full");
    this.states.set(`${accountId}/${recipientId}`, structuredClone(state));
  }
  state(recipientId: string): SavedRecipient | undefined {
    return this.states.get(`${ACCOUNT}/${recipientId}`);
  }
}

/** A caller whose every offer the test answers or lets go. */
class Caller implements QueuedCall {
  readonly caller: { name: string; number: string };
  readonly offers: { request: OfferRequest; resolve(outcome: OfferOutcome): void }[] = [];
  constructor(readonly callId: string) {
    this.caller = { name: `Caller ${callId}`, number: "+15550123" };
  }
  offer(request: OfferRequest, signal: AbortSignal): Promise<OfferOutcome> {
    return new Promise((resolve) => {
      signal.addEventListener("abort", () => resolve({ kind: "cancelled" }), { once: true });
      this.offers.push({ request, resolve });
    });
  }
  onGone(): void {}
}

interface Rig {
  engine: CallqEngine;
  clock: HandClock;
  ledger: MemoryLedger;
  account: CallqAccount;
  events: { routing_key: string; name: string; data: Record<string, unknown> }[];
  warnings: string[];
}

const agent = (id: string, name = id): CallqUser => ({ id, recipient: true, name });
const queue = (id: string, data: Record<string, unknown>): QueueConfig => queueConfigOf(id, data);

let engines: CallqEngine[] = [];
afterEach(async () => {
  for (const engine of engines) await engine.close();
  engines = [];
});

function rig(account: CallqAccount, ledger = new MemoryLedger(), clock = new HandClock()): Rig {
  const events: Rig["events"] = [];
  const warnings: string[] = [];
  const engine = new CallqEngine({
    directory: { load: async () => structuredClone(account) },
    ledger,
    bus: { publish: (e) => events.push(e) },
    scheduler: clock,
    logger: { info: () => undefined, warn: (_obj, msg) => warnings.push(msg), error: (_obj, msg) => warnings.push(msg) },
    node: "test@node",
  });
  engines.push(engine);
  return { engine, clock, ledger, account, events, warnings };
}

describe("the queue engine from plain data", () => {
  it("routes a caller to the member who is Ready and shows it in its status views", async () => {
    const { engine, clock } = rig({ queues: [queue("q1", { name: "Sales", members: { ann: "", bob: "" } })], users: [agent("ann", "Ann Agent"), agent("bob")] });
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    await engine.recipientAction(ACCOUNT, "bob", "login");
    const caller = new Caller("call-1");
    const done = engine.join(ACCOUNT, "q1", caller);
    await settle();
    expect(caller.offers.map((o) => o.request.recipientId)).toEqual(["ann"]);
    expect(await engine.queueSessions(ACCOUNT, "q1")).toMatchObject([{ call_id: "call-1", state: "offering", recipient_id: "ann" }]);
    expect(await engine.queueStatus(ACCOUNT, "q1")).toMatchObject({ active_recipient_count: 2, available_recipient_count: 0, node: "test@node", stats: { active_session_count: 1, recipient_count: 2 } });

    await clock.advance(4000);
    let hangUp: () => void = () => undefined;
    caller.offers[0]?.resolve({ kind: "answered", ended: new Promise<void>((resolve) => (hangUp = resolve)) });
    await settle();
    expect(await engine.recipientStatus(ACCOUNT, "ann")).toMatchObject({ availability_state: "On-A-Call", handling_call: { call_id: "call-1", queue_name: "Sales" } });
    expect((await engine.queueStatus(ACCOUNT, "q1")).stats).toMatchObject({ average_wait: 4, answered_sessions: 1, active_session_count: 0 });
    hangUp();
    expect(await done).toEqual({ kind: "handled" });
  });

  it("refuses a user the directory says is no recipient, and a queue it does not hold", async () => {
    const { engine } = rig({ queues: [], users: [{ id: "sam", recipient: false, name: "Sam" }] });
    await expect(engine.recipientAction(ACCOUNT, "sam", "login")).rejects.toMatchObject({ code: "no_recipient", id: "sam" });
    await expect(engine.recipientStatus(ACCOUNT, "nobody")).rejects.toMatchObject({ code: "no_recipient" });
    await expect(engine.queueStatus(ACCOUNT, "q9")).rejects.toMatchObject({ code: "no_queue", id: "q9" });
    expect(await engine.join(ACCOUNT, "q9", new Caller("c"))).toEqual({ kind: "no_queue" });
  });

  it("names a listening supervisor by the directory's name in the target's status", async () => {
    const { engine } = rig({ queues: [], users: [agent("ann"), { id: "sue", recipient: false, name: "Sue Super" }] });
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    engine.setWiretap(ACCOUNT, "sue", { target: "ann", mode: "whisper", callId: "leg-1" });
    await settle();
    expect((await engine.recipientStatus(ACCOUNT, "ann")).wiretapped_by).toEqual([{ recipient_id: "sue", name: "Sue Super", mode: "whisper", call_id: "leg-1" }]);
  });
});

describe("changes the host passes on", () => {
  it("a queue applied later takes callers; a removed one sends its waiting callers away with no_queue", async () => {
    const { engine, events } = rig({ queues: [], users: [agent("ann")] });
    await engine.ensureStarted(ACCOUNT);
    engine.applyQueue(ACCOUNT, queue("q1", { name: "Late", members: {} }));
    const caller = new Caller("c1");
    const done = engine.join(ACCOUNT, "q1", caller);
    await settle();
    expect(await engine.queueSessions(ACCOUNT, "q1")).toHaveLength(1);
    // New members: the waiting caller is offered at once.
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    engine.applyQueue(ACCOUNT, queue("q1", { name: "Late", members: { ann: "" } }));
    await settle();
    expect(caller.offers).toHaveLength(1);
    engine.removeQueue(ACCOUNT, "q1");
    expect(await done).toEqual({ kind: "no_queue" });
    expect(await engine.recipientStatus(ACCOUNT, "ann")).toMatchObject({ availability_state: "Ready" });
    expect(events.filter((e) => e.routing_key.startsWith("callq.session.")).map((e) => e.name)).toEqual(["create", "offer", "removed", "end"]);
  });

  it("a user no longer a recipient is logged out; a removed one is forgotten", async () => {
    const { engine } = rig({ queues: [], users: [agent("ann"), agent("bob")] });
    await engine.recipientAction(ACCOUNT, "ann", "login_ready");
    await engine.recipientAction(ACCOUNT, "bob", "login_ready");
    engine.applyUser(ACCOUNT, { id: "ann", recipient: false, name: "ann" });
    expect(engine.isLoggedIn(ACCOUNT, "ann")).toBe(false);
    await expect(engine.recipientStatus(ACCOUNT, "ann")).rejects.toMatchObject({ code: "no_recipient" });
    engine.removeUser(ACCOUNT, "bob");
    expect(engine.isLoggedIn(ACCOUNT, "bob")).toBe(false);
    expect(await engine.loggedInRecipients(ACCOUNT)).toEqual([]);
  });

  it("a change made while the account loads is applied once it has loaded", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ledger = new MemoryLedger();
    const engine = new CallqEngine({
      directory: {
        load: async () => {
          await gate;
          return { queues: [], users: [agent("ann")] };
        },
      },
      ledger,
      bus: { publish: () => undefined },
      scheduler: new HandClock(),
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    engines.push(engine);
    const started = engine.ensureStarted(ACCOUNT);
    engine.applyQueue(ACCOUNT, queue("q1", { name: "During", members: {} }));
    release();
    expect(await started).toEqual(["q1"]);
  });
});

describe("the ledger", () => {
  it("keeps each recipient's state; a new engine on it resumes them, a busy one Ready, a non-recipient not at all", async () => {
    const account: CallqAccount = { queues: [queue("q1", { name: "Q", members: { ann: "" } })], users: [agent("ann"), agent("bob"), agent("cy")] };
    const first = rig(account);
    await first.engine.recipientAction(ACCOUNT, "ann", "login_ready");
    await first.engine.recipientAction(ACCOUNT, "bob", "login_ready");
    await first.engine.recipientAction(ACCOUNT, "bob", "away");
    await first.engine.recipientAction(ACCOUNT, "cy", "login_ready");
    void first.engine.join(ACCOUNT, "q1", new Caller("c1"));
    await settle();
    expect((await first.engine.recipientStatus(ACCOUNT, "ann")).availability_state).toBe("Call-Offer");
    await first.engine.close();
    expect(first.ledger.state("bob")).toMatchObject({ state: "Away" });
    expect(first.ledger.state("ann")?.stats.offers).toBe(1);

    const users = [agent("ann"), agent("bob"), { id: "cy", recipient: false, name: "cy" }];
    const second = rig({ queues: account.queues, users }, first.ledger);
    expect(await second.engine.recipientStatus(ACCOUNT, "ann")).toMatchObject({ availability_state: "Ready", available: true });
    expect(await second.engine.recipientStatus(ACCOUNT, "bob")).toMatchObject({ availability_state: "Away" });
    expect(await second.engine.loggedInRecipients(ACCOUNT)).toEqual(["ann", "bob"]);
  });

  it("a ledger that fails is logged and the engine goes on", async () => {
    const { engine, ledger, warnings } = rig({ queues: [], users: [agent("ann")] });
    ledger.failing = true;
    expect((await engine.recipientAction(ACCOUNT, "ann", "login_ready")).availability_state).toBe("Ready");
    await engine.close();
    expect(warnings).toContain("callq: saving a recipient's state failed");
    expect(ledger.states.size).toBe(0);
  });
});

describe("status views", () => {
  it("are pure functions of the engine's objects: a session's row and a recipient's status", () => {
    const session = new Session("s1", ACCOUNT, "q1", new Caller("c1"), Date.UTC(2026, 0, 1));
    expect(sessionRow(session)).toEqual({ session_id: "s1", call_id: "c1", queue_id: "q1", caller_id_name: "Caller c1", caller_id_number: "+15550123", queue_enter_time: toGregorianSeconds(Date.UTC(2026, 0, 1)), state: "waiting" });
    session.apply("offer");
    session.recipientId = "ann";
    expect(sessionRow(session)).toMatchObject({ state: "offering", recipient_id: "ann" });

    const r = new Recipient(ACCOUNT, "zed");
    r.apply("login", {}, 0);
    const wiretaps = new Map([["sup", { target: "zed", mode: "eavesdrop" as const }], ["zed", { target: "ann", mode: "barge" as const }]]);
    expect(recipientStatus(r, wiretaps, (id) => `name of ${id}`, 0, "n")).toMatchObject({
      availability_state: "Away",
      wrapup_time_seconds: 0,
      node: "n",
      wiretapping_recipient: "ann",
      wiretap_mode: "barge",
      wiretapped_by: [{ recipient_id: "sup", name: "name of sup", mode: "eavesdrop" }],
    });
  });
});
