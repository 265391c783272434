// The queue engine on a real store with time run by hand: offers, answers, misses, wrap-up,
// timeouts and the races the issue names, checked through statuses and the events published.
import { afterEach, describe, expect, it } from "vitest";
import { CallqError } from "../../server/callq/engine.js";
import { toGregorianSeconds } from "../../server/clock.js";
import { ACCOUNT, callqRig, members, settle, TestCall, type CallqRig } from "../helpers/callq.js";

let rig: CallqRig;
afterEach(async () => {
  await rig.close();
});

async function readyAgents(...names: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) {
    const id = await rig.user(name);
    await rig.engine.recipientAction(ACCOUNT, id, "login_ready");
    ids.push(id);
  }
  return ids;
}

function status(id: string) {
  return rig.engine.recipientStatus(ACCOUNT, id);
}

describe("a caller meets an agent", () => {
  it("offers, answers, wraps up and is Ready again, with one event per step", async () => {
    rig = await callqRig();
    const [agent] = await readyAgents("agent1");
    const queue = await rig.queue({ name: "Sales", agent_wrapup_time: 5, members: members(agent ?? "") });
    const call = new TestCall("call-1", "Ann", "+15550001");
    const done = rig.engine.join(ACCOUNT, queue, call);
    await settle();
    expect(call.offers).toHaveLength(1);
    expect(call.last().request).toMatchObject({ recipientId: agent, queueName: "Sales", timeoutMs: 20_000 });
    expect(await status(agent ?? "")).toMatchObject({ availability_state: "Call-Offer", offered_call: { queue_id: queue, caller_id_name: "Ann" } });
    expect(await rig.engine.queueSessions(ACCOUNT, queue)).toMatchObject([{ state: "offering", recipient_id: agent, caller_id_number: "+15550001" }]);

    await rig.scheduler.advance(3000);
    const hangup = call.last().answer();
    await settle();
    expect(await status(agent ?? "")).toMatchObject({ availability_state: "On-A-Call", handling_call: { session_id: expect.any(String) } });
    expect((await rig.engine.queueStatus(ACCOUNT, queue)).stats).toMatchObject({ average_wait: 3, active_session_count: 0, total_sessions: 1, answered_sessions: 1 });
    const delivered = rig.events.find((e) => e.routing_key === `callq.recipient.${agent}` && e.name === "delivered");
    expect(delivered?.data.last_action_time).toBe(toGregorianSeconds(rig.scheduler.now()));

    await rig.scheduler.advance(60_000);
    hangup();
    await settle();
    expect(await done).toEqual({ kind: "handled" });
    expect(await status(agent ?? "")).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 5, stats: { total_calls: 1, avg_call_time: 60 } });
    await rig.scheduler.advance(5000);
    expect(await status(agent ?? "")).toMatchObject({ availability_state: "Ready", wrapup_time_seconds: 0 });

    expect(rig.names("recipient", agent)).toEqual(["login", "ready", "offer", "delivered", "wrapup", "ready"]);
    expect(rig.names("session")).toEqual(["create", "offer", "answered", "handled", "end"]);
    expect(rig.names("queue", queue)).toEqual(["join", "offer", "answered", "leave"]);
  });

  it("offers at once when a recipient becomes Ready, not on the next tick", async () => {
    rig = await callqRig();
    const agent = await rig.user("late");
    const queue = await rig.queue({ name: "Q", tick_time: 60_000, members: members(agent) });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    expect(call.offers).toHaveLength(0);
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    await settle();
    expect(call.offers).toHaveLength(1);
  });
});

describe("misses", () => {
  it("a ring timeout counts a missed call and moves on to the next recipient", async () => {
    rig = await callqRig();
    const [a, b] = await readyAgents("a", "b");
    const queue = await rig.queue({ name: "Q", ring_timeout: 5, members: members(a ?? "", b ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    const first = call.last().request.recipientId;
    call.last().resolve({ kind: "timeout" });
    await settle();
    expect(call.offers).toHaveLength(2);
    expect(call.last().request.recipientId).not.toBe(first);
    expect((await status(first)).stats.missed_calls).toBe(1);
    expect((await status(first)).availability_state).toBe("Ready");
  });

  it("a reject with force_away_on_reject makes the recipient Away", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", force_away_on_reject: true, members: members(a ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().resolve({ kind: "rejected" });
    await settle();
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Away", stats: { missed_calls: 1 } });
    expect(rig.names("recipient", a)).toContain("reject");
  });

  it("the same recipient is not rung again for a session before the next tick", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", tick_time: 2000, members: members(a ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().resolve({ kind: "timeout" });
    await settle();
    expect(call.offers).toHaveLength(1);
    await rig.scheduler.advance(2000);
    expect(call.offers).toHaveLength(2);
  });
});

describe("missed offers like an ACD", () => {
  it("a recipient who missed is not rung again while an untried colleague rings for another caller; the caller goes to that colleague", async () => {
    rig = await callqRig();
    const [a, b] = await readyAgents("a", "b");
    const queue = await rig.queue({ name: "Q", tick_time: 1000, ring_timeout: 20, members: members(a ?? "", b ?? "") });
    const first = new TestCall("c1");
    const second = new TestCall("c2");
    void rig.engine.join(ACCOUNT, queue, first);
    await rig.scheduler.advance(100);
    void rig.engine.join(ACCOUNT, queue, second);
    await settle();
    expect(first.last().request.recipientId).toBe(a);
    expect(second.last().request.recipientId).toBe(b);
    first.last().resolve({ kind: "rejected" });
    await settle();
    // b still rings for the second caller: the first waits for b rather than ringing a again.
    await rig.scheduler.advance(3000);
    expect(first.offers).toHaveLength(1);
    second.last().resolve({ kind: "timeout" });
    await settle();
    expect(first.offers.map((o) => o.request.recipientId)).toEqual([a, b]);
    expect(second.offers.map((o) => o.request.recipientId)).toEqual([b, a]);
  });

  it("a recipient alone in the queue is rung again at the tick, and set Away with the reason after max_missed_offers in a row", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", tick_time: 1000, max_missed_offers: 3, members: members(a ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().resolve({ kind: "rejected" });
    await settle();
    await rig.scheduler.advance(1000);
    expect(call.offers).toHaveLength(2);
    call.last().resolve({ kind: "timeout" });
    await settle();
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready", available: true });
    expect((await status(a ?? "")).away_reason).toBeUndefined();
    await rig.scheduler.advance(1000);
    call.last().resolve({ kind: "rejected" });
    await settle();
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Away", available: false, away_reason: "missed_offers", missed_offers: 3, stats: { missed_calls: 3 } });
    const rejects = rig.events.filter((e) => e.routing_key === `callq.recipient.${a}` && e.name === "reject");
    expect(rejects.map((e) => e.data.availability_state)).toEqual(["Ready", "Ready", "Away"]);
    expect(rejects[2]?.data).toMatchObject({ away_reason: "missed_offers", missed_offers: 3 });
    await rig.scheduler.advance(5000);
    expect(call.offers).toHaveLength(3);

    // Ready again: the reason goes, the count starts again, the caller is offered.
    await rig.engine.recipientAction(ACCOUNT, a ?? "", "ready");
    await settle();
    expect((await status(a ?? "")).away_reason).toBeUndefined();
    expect(call.offers).toHaveLength(4);
    call.last().resolve({ kind: "rejected" });
    await settle();
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready" });
  });

  it("an answered offer resets the count of missed offers in a row; max_missed_offers 0 never sets Away", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", tick_time: 1000, max_missed_offers: 2, members: members(a ?? "") });
    const one = new TestCall("c1");
    void rig.engine.join(ACCOUNT, queue, one);
    await settle();
    one.last().resolve({ kind: "timeout" });
    await settle();
    await rig.scheduler.advance(1000);
    one.last().answer()();
    await settle();
    const two = new TestCall("c2");
    void rig.engine.join(ACCOUNT, queue, two);
    await settle();
    two.last().resolve({ kind: "rejected" });
    await settle();
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready" });

    const queues = await rig.store.account(ACCOUNT, "callq_queues");
    const doc = queues.get(queue);
    await queues.update(queue, { ...doc?.data, max_missed_offers: 0 });
    await settle();
    for (let i = 0; i < 4; i += 1) {
      await rig.scheduler.advance(1000);
      two.last().resolve({ kind: "rejected" });
      await settle();
    }
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready" });
    expect(two.offers).toHaveLength(5);
  });

  it("the reason survives a restart", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", max_missed_offers: 1, members: members(a ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().resolve({ kind: "timeout" });
    await settle();
    rig = await rig.restart();
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Away", away_reason: "missed_offers", missed_offers: 1 });
  });
});

describe("device presence", () => {
  it("no device for the grace period: no offer and unavailable_reason no_device; a device back: offered, with the state it had", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", tick_time: 1000, members: members(a ?? "") });
    await rig.engine.devicePresence(ACCOUNT, a ?? "", false);
    // Inside the grace (a phone re-registering after a restart) nothing changes.
    await rig.scheduler.advance(9000);
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready", available: true });
    await rig.scheduler.advance(1000);
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready", available: false, unavailable_reason: "no_device" });
    expect((await rig.engine.queueStatus(ACCOUNT, queue)).available_recipient_count).toBe(0);
    const unavailable = rig.events.find((e) => e.routing_key === `callq.recipient.${a}` && e.name === "unavailable");
    expect(unavailable?.data).toMatchObject({ available: false, availability_state: "Ready", unavailable_reason: "no_device" });

    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await rig.scheduler.advance(5000);
    expect(call.offers).toHaveLength(0);

    await rig.engine.devicePresence(ACCOUNT, a ?? "", true);
    await settle();
    expect(call.offers).toHaveLength(1);
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Call-Offer" });
    expect((await status(a ?? "")).unavailable_reason).toBeUndefined();
    expect(rig.names("recipient", a)).toEqual(["login", "ready", "unavailable", "available", "offer"]);
  });

  it("a device back inside the grace cancels it; an Away recipient stays Away throughout", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    await rig.engine.devicePresence(ACCOUNT, a ?? "", false);
    await rig.scheduler.advance(5000);
    await rig.engine.devicePresence(ACCOUNT, a ?? "", true);
    await rig.scheduler.advance(20_000);
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready", available: true });
    await rig.engine.recipientAction(ACCOUNT, a ?? "", "away");
    await rig.engine.devicePresence(ACCOUNT, a ?? "", false);
    await rig.scheduler.advance(10_000);
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Away", unavailable_reason: "no_device" });
    await rig.engine.devicePresence(ACCOUNT, a ?? "", true);
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Away" });
    expect(rig.names("recipient", a)).toEqual(["login", "ready", "away", "unavailable", "available"]);
  });
});

describe("races", () => {
  it("a recipient going Away while ringing: the offer is withdrawn and the caller offered to another", async () => {
    rig = await callqRig();
    const [a, b] = await readyAgents("a", "b");
    const queue = await rig.queue({ name: "Q", members: members(a ?? "", b ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    const offered = call.last();
    await rig.engine.recipientAction(ACCOUNT, offered.request.recipientId, "away");
    await settle();
    expect(offered.signal.aborted).toBe(true);
    expect((await status(offered.request.recipientId)).availability_state).toBe("Away");
    expect(call.offers).toHaveLength(2);
    expect(call.last().request.recipientId).not.toBe(offered.request.recipientId);
  });

  it("the caller hanging up during an offer: ringing stops, the recipient is Ready, the session abandoned", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", members: members(a ?? "") });
    const call = new TestCall("c");
    const done = rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.hangup();
    await settle();
    expect(await done).toEqual({ kind: "abandoned" });
    expect(call.last().signal.aborted).toBe(true);
    expect(await status(a ?? "")).toMatchObject({ availability_state: "Ready", stats: { missed_calls: 0 } });
    expect((await rig.engine.queueStatus(ACCOUNT, queue)).stats).toMatchObject({ abandoned_sessions: 1, active_session_count: 0 });
    expect(rig.names("session")).toEqual(["create", "offer", "abandoned", "end"]);
  });

  it("two queues offering to one recipient at the same tick: only one offer is made", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    await rig.engine.recipientAction(ACCOUNT, a ?? "", "away");
    const q1 = await rig.queue({ name: "Q1", members: members(a ?? "") });
    const q2 = await rig.queue({ name: "Q2", members: members(a ?? "") });
    const c1 = new TestCall("c1");
    const c2 = new TestCall("c2");
    void rig.engine.join(ACCOUNT, q1, c1);
    void rig.engine.join(ACCOUNT, q2, c2);
    await settle();
    await rig.scheduler.advance(1000);
    await rig.engine.recipientAction(ACCOUNT, a ?? "", "ready");
    await settle();
    expect(c1.offers.length + c2.offers.length).toBe(1);
    // The older caller goes first.
    expect(c1.offers).toHaveLength(1);
  });

  it("logout during wrap-up ends the wrap-up; a later login does not resume it", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", agent_wrapup_time: 30, members: members(a ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().answer()();
    await settle();
    expect((await status(a ?? "")).availability_state).toBe("Wrapup-Time");
    await rig.engine.recipientAction(ACCOUNT, a ?? "", "logout");
    await rig.scheduler.advance(30_000);
    expect((await status(a ?? "")).availability_state).toBe("Not-Logged-In");
    await rig.engine.recipientAction(ACCOUNT, a ?? "", "login");
    await rig.scheduler.advance(30_000);
    expect((await status(a ?? "")).availability_state).toBe("Away");
  });

  it("every offer ends: a session timing out while ringing frees the recipient", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", timeout: 10, ring_timeout: 60, members: members(a ?? "") });
    const call = new TestCall("c");
    const done = rig.engine.join(ACCOUNT, queue, call);
    await settle();
    await rig.scheduler.advance(10_000);
    expect(await done).toEqual({ kind: "timeout" });
    expect(call.last().signal.aborted).toBe(true);
    expect((await status(a ?? "")).availability_state).toBe("Ready");
    expect((await rig.engine.queueStatus(ACCOUNT, queue)).stats.missed_sessions).toBe(1);
  });
});

describe("timeouts", () => {
  it("timeout_redirect names the queue to go to", async () => {
    rig = await callqRig();
    const other = await rig.queue({ name: "Overflow" });
    const queue = await rig.queue({ name: "Q", timeout: 10, timeout_redirect: other });
    const done = rig.engine.join(ACCOUNT, queue, new TestCall("c"));
    await settle();
    await rig.scheduler.advance(10_000);
    expect(await done).toEqual({ kind: "timeout", redirect: other });
  });

  it("timeout_immediately_if_empty with nobody logged in", async () => {
    rig = await callqRig();
    const a = await rig.user("a");
    const queue = await rig.queue({ name: "Q", timeout_immediately_if_empty: true, members: members(a) });
    expect(await rig.engine.join(ACCOUNT, queue, new TestCall("c"))).toEqual({ kind: "timeout" });
  });

  it("timeout_if_size_exceeds times out a caller who enters above that size", async () => {
    rig = await callqRig();
    const queue = await rig.queue({ name: "Q", timeout_if_size_exceeds: 2 });
    void rig.engine.join(ACCOUNT, queue, new TestCall("1"));
    void rig.engine.join(ACCOUNT, queue, new TestCall("2"));
    await settle();
    expect(await rig.engine.join(ACCOUNT, queue, new TestCall("3"))).toEqual({ kind: "timeout" });
    expect((await rig.engine.queueStatus(ACCOUNT, queue)).stats.active_session_count).toBe(2);
  });

  it("a session can be removed while waiting", async () => {
    rig = await callqRig();
    const queue = await rig.queue({ name: "Q" });
    const done = rig.engine.join(ACCOUNT, queue, new TestCall("1"));
    await settle();
    const [row] = await rig.engine.queueSessions(ACCOUNT, queue);
    await rig.engine.removeSession(ACCOUNT, queue, row?.session_id ?? "");
    expect(await done).toEqual({ kind: "removed" });
    await expect(rig.engine.removeSession(ACCOUNT, queue, "nope")).rejects.toBeInstanceOf(CallqError);
  });
});

describe("routers in the engine", () => {
  it("route_least_calls offers the recipient with the fewest handled calls", async () => {
    rig = await callqRig();
    const [a, b] = await readyAgents("a", "b");
    const queue = await rig.queue({ name: "Q", queue_router: "route_least_calls", members: members(a ?? "", b ?? "") });
    const first = new TestCall("1");
    void rig.engine.join(ACCOUNT, queue, first);
    await settle();
    const busy = first.last().request.recipientId;
    first.last().answer()();
    await settle();
    const second = new TestCall("2");
    void rig.engine.join(ACCOUNT, queue, second);
    await settle();
    expect(second.last().request.recipientId).not.toBe(busy);
  });
});

describe("recipient actions", () => {
  it("per-queue availability keeps a recipient out of one queue only", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const q1 = await rig.queue({ name: "Q1", members: members(a ?? "") });
    const q2 = await rig.queue({ name: "Q2", members: members(a ?? "") });
    const st = await rig.engine.recipientAction(ACCOUNT, a ?? "", "away", { queueId: q1 });
    expect(st.queue_availability).toEqual({ [q1]: false });
    const c1 = new TestCall("1");
    void rig.engine.join(ACCOUNT, q1, c1);
    await settle();
    expect(c1.offers).toHaveLength(0);
    const c2 = new TestCall("2");
    void rig.engine.join(ACCOUNT, q2, c2);
    await settle();
    expect(c2.offers).toHaveLength(1);
  });

  it("state_toggle logs in Ready and out again; wrap-up actions need wrap-up", async () => {
    rig = await callqRig();
    const a = await rig.user("a");
    expect((await rig.engine.recipientAction(ACCOUNT, a, "state_toggle")).availability_state).toBe("Ready");
    expect((await rig.engine.recipientAction(ACCOUNT, a, "state_toggle")).availability_state).toBe("Not-Logged-In");
    await expect(rig.engine.recipientAction(ACCOUNT, a, "ready")).rejects.toMatchObject({ code: "illegal" });
    await rig.engine.recipientAction(ACCOUNT, a, "login");
    await expect(rig.engine.recipientAction(ACCOUNT, a, "wrapup_extend")).rejects.toMatchObject({ code: "illegal" });
  });

  it("a user who is not a recipient is refused", async () => {
    rig = await callqRig();
    const u = await rig.user("plain", { callq: { enabled: false } });
    await expect(rig.engine.recipientAction(ACCOUNT, u, "login")).rejects.toMatchObject({ code: "no_recipient" });
  });

  it("wrapup_extend adds the queue's wrap-up time", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", agent_wrapup_time: 10, members: members(a ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().answer()();
    await settle();
    await rig.scheduler.advance(4000);
    const st = await rig.engine.recipientAction(ACCOUNT, a ?? "", "wrapup_extend");
    expect(st.wrapup_time_seconds).toBe(16);
    await rig.scheduler.advance(15_000);
    expect((await status(a ?? "")).availability_state).toBe("Wrapup-Time");
    await rig.scheduler.advance(1000);
    expect((await status(a ?? "")).availability_state).toBe("Ready");
  });

  it("Away during a call is applied after it", async () => {
    rig = await callqRig();
    const [a] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", members: members(a ?? "") });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    const end = call.last().answer();
    await settle();
    expect((await rig.engine.recipientAction(ACCOUNT, a ?? "", "away")).availability_state).toBe("On-A-Call");
    end();
    await settle();
    expect((await status(a ?? "")).availability_state).toBe("Away");
  });
});

describe("restart", () => {
  it("logged-in recipients come back as they were; a busy one comes back Ready", async () => {
    rig = await callqRig();
    const [a, b] = await readyAgents("a", "b");
    await rig.engine.recipientAction(ACCOUNT, b ?? "", "away");
    const queue = await rig.queue({ name: "Q", members: members(a ?? "") });
    void rig.engine.join(ACCOUNT, queue, new TestCall("c"));
    await settle();
    expect((await status(a ?? "")).availability_state).toBe("Call-Offer");
    const dir = rig.dir;
    const again = await rig.restart();
    rig = again;
    expect((await status(a ?? "")).availability_state).toBe("Ready");
    expect((await status(b ?? "")).availability_state).toBe("Away");
    expect((await status(a ?? "")).stats.login_time).toBeGreaterThan(0);
    expect(dir).toBe(again.dir);
  });
});
