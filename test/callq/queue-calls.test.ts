// Callers in queues with the real call engine and werift phones: the callq module answers and
// plays the hold treatment, offers ring the recipient's queue devices with the queue's name and
// headers, an answer bridges caller and agent (the treatment stops), refusals, ring timeouts,
// excluded devices, callers who leave, timeout redirects (capped) and the flow going on after.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fromGregorianSeconds } from "../../server/clock.js";
import { MAX_REDIRECTS } from "../../server/callq-host/modules/callq.js";
import { QUEUE_HEADERS, queueHeaders } from "../../server/callq-host/queued-call.js";
import { levelDbfs } from "../../server/media/index.js";
import { connected, sleep, until, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";
import { startQueueLab, type QueueLab } from "./harness.js";

const AGENTS = ["agent1", "agent2", "agent3", "supervisor"];
const CALLER_TONE = 500;
const AGENT_TONE = 1000;

let t: QueueLab;
let sales: string;

beforeAll(async () => {
  t = await startQueueLab();
  for (const username of ["admin", ...AGENTS]) await t.phone(username);
  sales = await t.queueId("Sales");
  await t.patchQueue(sales, { ring_timeout: 3, agent_wrapup_time: 1, tick_time: 500 });
});
afterEach(async () => {
  for (const username of AGENTS) await t.callq.recipientAction(t.accountId, await t.userId(username), "logout");
  await t.idle();
  expect(t.warnings.filter((w) => w.startsWith("error"))).toEqual([]);
});
afterAll(async () => {
  await t?.close();
});

/** The next call the engine offers to any of `phones` after `seen` invites were sent. */
async function nextOffer(phones: FakePhone[], seen: number): Promise<{ phone: FakePhone; call: PhoneCall }> {
  await until(() => t.signalling.invites.slice(seen).some((i) => i.callId !== null), "an offer");
  const invite = t.signalling.invites.slice(seen).find((i) => i.callId !== null);
  const phone = phones.find((p) => p.device.deviceId === invite?.target.deviceId);
  if (!phone || !invite?.callId) throw new Error("offered to an unexpected device");
  await until(() => phone.calls.some((c) => c.callId === invite.callId), "the offer to reach the phone");
  const call = phone.calls.find((c) => c.callId === invite.callId);
  if (!call) throw new Error("no offered call");
  return { phone, call };
}

async function sessionOf(queueId: string, callId: string) {
  const rows = await t.callq.queueSessions(t.accountId, queueId);
  return rows.find((r) => r.call_id === callId);
}

describe("a caller in a queue", () => {
  it("hears the hold treatment, is offered to a Ready agent with the queue's name, is bridged on answer, then the agent wraps up", async () => {
    const agent1 = await t.userId("agent1");
    await t.callq.recipientAction(t.accountId, agent1, "login_ready");
    const agentPhone = await t.phone("agent1");
    const seen = t.signalling.invites.length;
    const caller = await (await t.phone("admin")).dial("5001");
    await caller.reaches("talking");
    const { phone, call: offered } = await nextOffer([agentPhone, await t.phone("agent2")], seen);
    expect(phone).toBe(agentPhone);
    await connected(caller);

    // Ringing: the caller still hears the hold music (the demo WAV), and the offer says who and where.
    expect(levelDbfs(await caller.record(600))).toBeGreaterThan(-40);
    expect(offered.from).toEqual({ user: "1001", display: "Sales: Ada Admin" });
    const session = await sessionOf(sales, caller.callId);
    expect(session).toMatchObject({ state: "offering", recipient_id: agent1, caller_id_name: "Ada Admin", caller_id_number: "1001" });
    const headers = new Map(t.signalling.invites.find((i) => i.callId === offered.callId)?.options.headers);
    expect(headers.get(QUEUE_HEADERS.queueName)).toBe("Sales");
    expect(headers.get(QUEUE_HEADERS.queueId)).toBe(sales);
    expect(headers.get(QUEUE_HEADERS.sessionId)).toBe(session?.session_id);
    expect(Number(headers.get(QUEUE_HEADERS.enteredAt))).toBe(Math.floor(fromGregorianSeconds(session?.queue_enter_time ?? 0) / 1000));
    expect(headers.get(QUEUE_HEADERS.waited)).toMatch(/^[0-2]$/);
    const offering = await t.callq.recipientStatus(t.accountId, agent1);
    expect(offering).toMatchObject({ availability_state: "Call-Offer", offered_call: { queue_id: sales, session_id: session?.session_id, caller_id_name: "Ada Admin" } });

    await offered.answer();
    await connected(caller, offered);
    await t.recipientIs("agent1", "On-A-Call");
    // The bridge replaced the music: a silent agent is silence to the caller.
    expect(levelDbfs(await caller.record(400))).toBeLessThan(-60);
    await caller.say(`tone_stream://${CALLER_TONE}`);
    await offered.say(`tone_stream://${AGENT_TONE}`);
    const [callerHears, agentHears] = await Promise.all([caller.hears([CALLER_TONE, AGENT_TONE]), offered.hears([CALLER_TONE, AGENT_TONE])]);
    expect(callerHears[AGENT_TONE]).toBeGreaterThan(0.9);
    expect(agentHears[CALLER_TONE]).toBeGreaterThan(0.9);
    expect(t.engine.channels.get(caller.callId)?.otherLeg).toBe(offered.callId);
    expect((await t.callq.recipientStatus(t.accountId, agent1)).handling_call).toMatchObject({ session_id: session?.session_id });

    offered.hangup();
    await caller.reaches("ended");
    expect(caller.endedBy).toBe("remote-bye");
    await t.recipientIs("agent1", "Wrapup-Time");
    // Sales' wrap-up is 1 s of the server's clock.
    await t.clock.advance(999);
    expect((await t.callq.recipientStatus(t.accountId, agent1)).availability_state).toBe("Wrapup-Time");
    await t.clock.advance(1);
    await t.recipientIs("agent1", "Ready");
    const status = await t.callq.recipientStatus(t.accountId, agent1);
    expect(status.stats).toMatchObject({ total_calls: 1, missed_calls: 0 });
    const sid = session?.session_id ?? "";
    expect(t.eventNames(`callq.session.${sid}`)).toEqual(["create", "offer", "answered", "handled", "end"]);
    const queueEvents = t.events.filter((e) => e.routing_key === `callq.queue.${sales}` && e.data.session_id === sid).map((e) => e.name);
    expect(queueEvents).toEqual(["join", "offer", "answered", "leave"]);
    expect(t.eventNames(`callq.recipient.${agent1}`).slice(-5)).toEqual(["ready", "offer", "delivered", "wrapup", "ready"]);
    expect((await t.callq.queueStatus(t.accountId, sales)).stats.active_session_count).toBe(0);
  });

  it("records a queue call the agent's user asks to record, and the recording names the queue", async () => {
    const users = await t.store.account(t.accountId, "users");
    const agent2 = await t.userId("agent2");
    const before = users.get(agent2)?.data ?? {};
    await users.update(agent2, { ...before, call_recording: { inbound: { onnet: { enabled: true } } } });
    try {
      await t.callq.recipientAction(t.accountId, agent2, "login_ready");
      const seen = t.signalling.invites.length;
      const caller = await (await t.phone("admin")).dial("5001");
      const { call: offered } = await nextOffer([await t.phone("agent2")], seen);
      await offered.answer();
      await connected(caller, offered);
      await sleep(500);
      offered.hangup();
      await caller.reaches("ended");
      const recordings = await t.store.account(t.accountId, "recordings");
      await until(() => recordings.all().some((r) => r.data.call_id === caller.callId), "the recording");
      expect(recordings.all().find((r) => r.data.call_id === caller.callId)?.data).toMatchObject({ queue_id: sales, owner_id: agent2 });
    } finally {
      await users.update(agent2, before);
    }
  });

  it("moves on from an agent who refuses or does not answer within ring_timeout, and counts the misses", async () => {
    const ids = { agent1: await t.userId("agent1"), agent2: await t.userId("agent2") };
    for (const id of Object.values(ids)) await t.callq.recipientAction(t.accountId, id, "login_ready");
    const phones = [await t.phone("agent1"), await t.phone("agent2")];
    let seen = t.signalling.invites.length;
    const caller = await (await t.phone("admin")).dial("5001");
    const first = await nextOffer(phones, seen);
    seen = t.signalling.invites.length;
    first.call.reject(486);
    const second = await nextOffer(phones, seen);
    expect(second.phone).not.toBe(first.phone);
    // Nobody picks up: after the ring timeout (3 s of the server's clock) the offer is over and the next one comes.
    seen = t.signalling.invites.length;
    await t.clock.advance(2999);
    expect(second.call.state).not.toBe("ended");
    await t.clock.advance(1);
    await second.call.reaches("ended");
    expect(second.call.endedBy).toBe("cancelled");
    const third = await nextOffer(phones, seen);
    await third.call.answer();
    await connected(caller, third.call);
    const username = (p: FakePhone) => (p === phones[0] ? "agent1" : "agent2");
    await t.recipientIs(username(third.phone), "On-A-Call");
    for (const [name, id] of Object.entries(ids)) {
      expect((await t.callq.recipientStatus(t.accountId, id)).stats.missed_calls, name).toBe(1);
    }
    const sid = (await sessionOf(sales, caller.callId))?.session_id ?? "";
    expect(t.eventNames(`callq.session.${sid}`)).toEqual(["create", "offer", "missed", "offer", "missed", "offer", "answered"]);
    const misses = t.events.filter((e) => e.routing_key === `callq.session.${sid}` && e.name === "missed").map((e) => e.data.reason);
    expect(misses).toEqual(["rejected", "timeout"]);
    caller.hangup();
    await third.call.reaches("ended");
  });

  it("makes a refusing agent Away when the queue forces it", async () => {
    await t.patchQueue(sales, { force_away_on_reject: true });
    try {
      await t.callq.recipientAction(t.accountId, await t.userId("agent1"), "login_ready");
      const seen = t.signalling.invites.length;
      const caller = await (await t.phone("admin")).dial("5001");
      const offer = await nextOffer([await t.phone("agent1")], seen);
      offer.call.reject(603);
      await t.recipientIs("agent1", "Away");
      caller.hangup();
    } finally {
      await t.patchQueue(sales, { force_away_on_reject: false });
    }
  });

  it("never rings a device excluded from queues; a caller who hangs up while waiting is abandoned", async () => {
    const devices = await t.store.account(t.accountId, "devices");
    const softphone = await t.softphone("agent3");
    await devices.update(softphone.id, { ...softphone.data, exclude_from_queues: true });
    try {
      const agent3 = await t.userId("agent3");
      await t.callq.recipientAction(t.accountId, agent3, "login_ready");
      const before = (await t.callq.queueStatus(t.accountId, sales)).stats.abandoned_sessions;
      const seen = t.signalling.invites.length;
      const caller = await (await t.phone("admin")).dial("5001");
      await caller.reaches("talking");
      const sid = await until(() => t.events.some((e) => e.routing_key.startsWith("callq.session.") && e.data.call_id === caller.callId)).then(
        () => String(t.events.find((e) => e.routing_key.startsWith("callq.session.") && e.data.call_id === caller.callId)?.data.session_id),
      );
      // The offer found nothing to ring: a miss for agent3, and the caller keeps waiting.
      await until(() => t.eventNames(`callq.session.${sid}`).includes("missed"), "the unreachable offer");
      expect(t.events.find((e) => e.routing_key === `callq.session.${sid}` && e.name === "missed")?.data.reason).toBe("unreachable");
      await sleep(300);
      expect(t.signalling.invites.slice(seen).filter((i) => i.target.deviceId === softphone.id)).toEqual([]);
      expect((await sessionOf(sales, caller.callId))?.state).toBe("waiting");
      caller.hangup();
      await until(() => t.eventNames(`callq.session.${sid}`).includes("end"), "the session to end");
      expect(t.eventNames(`callq.session.${sid}`).slice(-2)).toEqual(["abandoned", "end"]);
      expect((await t.callq.queueStatus(t.accountId, sales)).stats.abandoned_sessions).toBe(before + 1);
    } finally {
      await devices.update(softphone.id, { ...(await t.softphone("agent3")).data, exclude_from_queues: false });
    }
  });

  it("stops ringing the agent when the caller hangs up during the offer; the agent is Ready again", async () => {
    await t.callq.recipientAction(t.accountId, await t.userId("agent1"), "login_ready");
    const seen = t.signalling.invites.length;
    const caller = await (await t.phone("admin")).dial("5001");
    const offer = await nextOffer([await t.phone("agent1")], seen);
    await caller.reaches("talking");
    caller.hangup();
    await offer.call.reaches("ended");
    expect(offer.call.endedBy).toBe("cancelled");
    await t.recipientIs("agent1", "Ready");
  });
});

describe("when the wait is over", () => {
  it("follows timeout_redirect to the next queue and its treatment, then goes on with the callflow when taken out", async () => {
    const agent2 = await t.userId("agent2");
    const second = await t.addQueue({ name: "Overflow B", timeout: 600, hold_treatment: "tone_stream://900", members: { [agent2]: "" } });
    const first = await t.addQueue({ name: "Overflow A", timeout_immediately_if_empty: true, timeout_redirect: second, hold_treatment: "tone_stream://700" });
    await t.addCallflow({
      numbers: ["6001"],
      flow: { module: "callq", data: { queue_id: first }, children: { _: { module: "play", data: { id: "tone_stream://%(2000,0,1300)" }, children: {} } } },
    });
    // Logged in but Away: the second queue is not empty, so the caller waits there.
    await t.callq.recipientAction(t.accountId, agent2, "login");
    const caller = await (await t.phone("admin")).dial("6001");
    await caller.reaches("talking");
    await connected(caller);
    await until(() => t.events.some((e) => e.routing_key === `callq.queue.${second}` && e.name === "join"), "the caller in Overflow B");
    expect(t.events.find((e) => e.routing_key === `callq.queue.${first}` && e.name === "leave")?.data.reason).toBe("timeout");
    const inSecond = await caller.hears([700, 900, 1300]);
    expect(inSecond[900]).toBeGreaterThan(0.9);
    const row = await sessionOf(second, caller.callId);
    await t.callq.removeSession(t.accountId, second, row?.session_id ?? "");
    const after = await caller.hears([900, 1300]);
    expect(after[1300]).toBeGreaterThan(0.9);
    await caller.reaches("ended", 5000);
    expect(caller.endedBy).toBe("remote-bye");
  });

  it("caps redirects between queues that send callers to each other, then goes on with the callflow", async () => {
    const c = await t.addQueue({ name: "Loop C", timeout_immediately_if_empty: true });
    const d = await t.addQueue({ name: "Loop D", timeout_immediately_if_empty: true, timeout_redirect: c });
    await t.patchQueue(c, { timeout_redirect: d });
    await t.addCallflow({
      numbers: ["6002"],
      flow: { module: "callq", data: { id: c }, children: { _: { module: "play", data: { id: "tone_stream://%(3000,0,1300)" }, children: {} } } },
    });
    const caller = await (await t.phone("admin")).dial("6002");
    await caller.reaches("talking");
    await connected(caller);
    expect((await caller.hears([1300]))[1300]).toBeGreaterThan(0.9);
    const joins = t.events.filter((e) => (e.routing_key === `callq.queue.${c}` || e.routing_key === `callq.queue.${d}`) && e.name === "join" && e.data.call_id === caller.callId);
    expect(joins).toHaveLength(MAX_REDIRECTS + 1);
    caller.hangup();
  });

  it("hangs up a timed-out caller when the callflow has nothing after the queue, and refuses 404 for a missing queue", async () => {
    const e = await t.addQueue({ name: "Empty E", timeout_immediately_if_empty: true });
    await t.addCallflow({ numbers: ["6003"], flow: { module: "callq", data: { id: e }, children: {} } });
    await t.addCallflow({ numbers: ["6004"], flow: { module: "callq", data: { id: "0".repeat(32) }, children: {} } });
    const timedOut = await (await t.phone("admin")).dial("6003");
    await timedOut.reaches("ended");
    expect(timedOut.endedBy).toBe("remote-bye");
    const missing = await (await t.phone("admin")).dial("6004");
    await missing.reaches("ended");
    expect(missing.finalCode).toBe(404);
  });
});

describe("transfers of a queue call", () => {
  /** admin calls Sales, agent1 (alone Ready) answers: the caller and the agent's leg, talking. */
  async function answeredByAgent1(): Promise<{ caller: PhoneCall; agent: PhoneCall }> {
    await t.callq.recipientAction(t.accountId, await t.userId("agent1"), "login_ready");
    const agentPhone = await t.phone("agent1");
    const seen = t.signalling.invites.length;
    const caller = await (await t.phone("admin")).dial("5001");
    await caller.reaches("talking");
    const { call: agent } = await nextOffer([agentPhone], seen);
    await agent.answer();
    await connected(caller, agent);
    await t.recipientIs("agent1", "On-A-Call");
    return { caller, agent };
  }

  function channelOf(call: PhoneCall) {
    const found = t.engine.channels.get(call.callId);
    if (!found) throw new Error(`no live channel ${call.callId}`);
    return found;
  }

  it("attended: the agent stays On-A-Call through the consultation, past the wrap-up time, and wraps up once they complete", async () => {
    const { caller, agent } = await answeredByAgent1();
    const seen = t.signalling.invites.length;
    await t.engine.commands.transfer(channelOf(agent), { target: "1003", type: "attended", leg: "self" });
    const { call: second } = await nextOffer([await t.phone("agent2")], seen);
    // Longer than Sales' wrap-up (1 s): the old engine had the agent Ready by now.
    await t.clock.advance(1500);
    expect((await t.callq.recipientStatus(t.accountId, await t.userId("agent1"))).availability_state).toBe("On-A-Call");
    await second.answer();
    await connected(second);
    await t.clock.advance(1500);
    expect((await t.callq.recipientStatus(t.accountId, await t.userId("agent1"))).availability_state).toBe("On-A-Call");
    agent.hangup();
    await t.recipientIs("agent1", "Wrapup-Time");
    await t.clock.advance(1000);
    await t.recipientIs("agent1", "Ready");
    expect(channelOf(caller).otherLeg).toBe(second.callId);
    caller.hangup();
    await second.reaches("ended");
  });

  it("attended taken back: the agent is still on the call with the caller; wrap-up when they hang up", async () => {
    const { caller, agent } = await answeredByAgent1();
    const seen = t.signalling.invites.length;
    await t.engine.commands.transfer(channelOf(agent), { target: "1003", type: "attended", leg: "self", takebackDtmf: "*1" });
    const { call: second } = await nextOffer([await t.phone("agent2")], seen);
    await second.answer();
    await connected(second);
    await agent.leg.sendDtmf("*1");
    await second.reaches("ended");
    await t.clock.advance(1500);
    expect((await t.callq.recipientStatus(t.accountId, await t.userId("agent1"))).availability_state).toBe("On-A-Call");
    expect(channelOf(caller).otherLeg).toBe(agent.callId);
    caller.hangup();
    await agent.reaches("ended");
    await t.recipientIs("agent1", "Wrapup-Time");
  });

  it("blind: the agent leaves at once and wraps up", async () => {
    const { caller, agent } = await answeredByAgent1();
    const seen = t.signalling.invites.length;
    await t.engine.commands.transfer(channelOf(agent), { target: "1003", type: "blind", leg: "self" });
    await agent.reaches("ended");
    await t.recipientIs("agent1", "Wrapup-Time");
    const { call: second } = await nextOffer([await t.phone("agent2")], seen);
    await second.answer();
    await connected(caller, second);
    caller.hangup();
    await second.reaches("ended");
  });
});

describe("the offer's headers", () => {
  it("carry the queue, the session, the entry time and the wait; a name beyond printable ASCII goes percent-encoded", () => {
    const request = { accountId: "a", recipientId: "r", queueId: "q1", sessionId: "s1", timeoutMs: 1000, enteredAt: 1_700_000_000_500 };
    const plain = new Map(queueHeaders({ ...request, queueName: "Sales & Support" }, 1_700_000_042_900, 1_700_000_042_900));
    expect(Object.fromEntries(plain)).toEqual({
      [QUEUE_HEADERS.queueId]: "q1",
      [QUEUE_HEADERS.queueName]: "Sales & Support",
      [QUEUE_HEADERS.waited]: "42",
      [QUEUE_HEADERS.sessionId]: "s1",
      [QUEUE_HEADERS.enteredAt]: "1700000000",
    });
    // The queue time 30 s behind the server's (a training run paused that long): the wait is the
    // queue's, the entry time the server's less that wait.
    const behind = new Map(queueHeaders({ ...request, queueName: "Sales" }, 1_700_000_042_900, 1_700_000_072_900));
    expect([behind.get(QUEUE_HEADERS.waited), behind.get(QUEUE_HEADERS.enteredAt)]).toEqual(["42", "1700000030"]);
    expect(new Map(queueHeaders({ ...request, queueName: "Ventes été" }, 0, 0)).get(QUEUE_HEADERS.queueName)).toBe("Ventes%20%C3%A9t%C3%A9");
    expect(new Map(queueHeaders({ ...request, queueName: "100% care" }, 0, 0)).get(QUEUE_HEADERS.queueName)).toBe("100%25%20care");
    expect(new Map(queueHeaders({ ...request, queueName: "Sales" }, 0, 0)).get(QUEUE_HEADERS.waited)).toBe("0");
  });
});
