// Blind and attended transfers to every kind of target a dialled number reaches, on real calls
// (fake signalling, real werift legs, the queue engine wired in): a number matched by a callflow
// pattern (E.164), a user or a device by id, an announcement (play), and a call queue (callq).
// Attended: the consultation over a loopback, completion (the loopback bowing out where the
// target's module only bridges, staying where the queue tracks its bridge), completion while the
// target still rings, the consultation ended by the target side, by hanging up the consult leg or
// by the takeback digits; then the same requests over HTTP as the console sends them.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChannelCommandError, type Channel } from "../../server/calls/index.js";
import { levelDbfs, toneShare } from "../../server/media/index.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { connected, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { startQueueLab, type QueueLab } from "../callq/harness.js";

// Each party says its own tone, all above the hold music (its notes stay under 1.1 kHz) and none a
// harmonic of another.
const PARTY = 1300;
const TRANSFEROR = 1700;
const TARGET = 2300;
const OTHER = 2900;
const ANNOUNCEMENT = 3300;

let t: QueueLab;

beforeAll(async () => {
  t = await startQueueLab();
  // Registered before any call, as phones are before anyone dials them.
  for (const username of ["admin", "agent1", "agent2", "agent3"]) await t.phone(username);
  const agent2 = await t.user("agent2");
  await t.addCallflow({ patterns: ["^\\+1415555\\d{4}$"], flow: { module: "user", data: { id: agent2.id }, children: {} } });
  await t.addCallflow({ numbers: ["4100"], flow: { module: "play", data: { id: `tone_stream://%(1500,0,${ANNOUNCEMENT})` }, children: {} } });
  // The demo queue Sales (5001): agent2 alone takes its calls.
  await t.patchQueue(await t.queueId("Sales"), { ring_timeout: 10, agent_wrapup_time: 1, tick_time: 200 });
  await t.callq.recipientAction(t.accountId, agent2.id, "login_ready");
});
afterEach(() => {
  expect(t.warnings.filter((w) => w.startsWith("error"))).toEqual([]);
});
afterAll(async () => {
  await t?.close();
});

/** The live channel of a phone's call, or of a call id (a channel's `otherLeg`). */
function channel(of: PhoneCall | string | undefined): Channel {
  const id = typeof of === "object" ? of.callId : of;
  const found = id === undefined ? undefined : t.engine.channels.get(id);
  if (!found) throw new Error(`no live channel ${String(id)}`);
  return found;
}

/** The queue call of `username` is over: wrap-up, the queue's 1 s on the server's clock, then Ready. */
async function wrapsUp(username: string): Promise<void> {
  await t.recipientIs(username, "Wrapup-Time");
  await t.clock.advance(1000);
  await t.recipientIs(username, "Ready");
}

/** admin (1001) calls agent1 (1002), who answers; each says its tone. */
async function call(): Promise<{ party: PhoneCall; transferor: PhoneCall }> {
  const party = await (await t.phone("admin")).dial("1002");
  const transferor = await (await t.phone("agent1")).incoming();
  await transferor.answer();
  await party.reaches("talking");
  await connected(party, transferor);
  await party.say(`tone_stream://${PARTY}`);
  await transferor.say(`tone_stream://${TRANSFEROR}`);
  return { party, transferor };
}

/** `username`'s phone is offered the call; it answers and says `tone`. */
async function answers(username: string, tone: number): Promise<PhoneCall> {
  const offered = await (await t.phone(username)).incoming();
  await offered.answer();
  await connected(offered);
  await offered.say(`tone_stream://${tone}`);
  return offered;
}

async function talking(a: PhoneCall, aSays: number, b: PhoneCall, bSays: number): Promise<void> {
  const [atA, atB] = await Promise.all([a.hears([bSays]), b.hears([aSays])]);
  expect(atA[bSays], `the one saying ${aSays} Hz hears ${bSays} Hz`).toBeGreaterThan(0.9);
  expect(atB[aSays], `the one saying ${bSays} Hz hears ${aSays} Hz`).toBeGreaterThan(0.9);
}

/** The party waits with music: loud enough, and none of the consultation's voices in it. */
async function onHold(party: PhoneCall, ...notHeard: number[]): Promise<void> {
  const heard = await party.record(400);
  expect(levelDbfs(heard), "the party hears music").toBeGreaterThan(-40);
  for (const f of notHeard) expect(toneShare(heard, f), `the party does not hear ${f} Hz`).toBeLessThan(0.05);
}

function destroyed(callId: string): Record<string, unknown> | undefined {
  return t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${callId}`)?.data;
}

describe("blind transfer", () => {
  it("to an E.164 number a callflow pattern matches: the party rings the pattern's user", async () => {
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target: "+14155550123", type: "blind", leg: "self" });
    await transferor.reaches("ended");
    const target = await answers("agent2", TARGET);
    expect(target.from).toEqual({ user: "1001", display: "Ada Admin" });
    await talking(party, PARTY, target, TARGET);
    party.hangup();
    await target.reaches("ended");
    await t.idle();
  });

  it("to a user by id and to a device by id", async () => {
    const agent2 = await t.user("agent2");
    const first = await call();
    await t.engine.commands.transfer(channel(first.transferor), { target: agent2.id, type: "blind", leg: "self" });
    const user = await answers("agent2", TARGET);
    await talking(first.party, PARTY, user, TARGET);
    user.hangup();
    await first.party.reaches("ended");

    const device = await t.softphone("agent3");
    const second = await call();
    await t.engine.commands.transfer(channel(second.transferor), { target: device.id, type: "blind", leg: "self" });
    const phone = await answers("agent3", OTHER);
    await talking(second.party, PARTY, phone, OTHER);
    second.party.hangup();
    await phone.reaches("ended");
    await t.idle();
  });

  it("to an announcement: the party hears it, then the flow ends the call", async () => {
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target: "4100", type: "blind", leg: "self" });
    expect((await party.hears([ANNOUNCEMENT]))[ANNOUNCEMENT]).toBeGreaterThan(0.9);
    await party.reaches("ended");
    await t.idle();
  });

  it("to a call queue: the party waits with the queue's music, then the queue's agent takes it", async () => {
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target: "5001", type: "blind", leg: "self" });
    await transferor.reaches("ended");
    await onHold(party, TRANSFEROR);
    const agent = await answers("agent2", TARGET);
    expect(agent.from).toEqual({ user: "1001", display: "Sales: Ada Admin" });
    await talking(party, PARTY, agent, TARGET);
    await t.recipientIs("agent2", "On-A-Call");
    agent.hangup();
    await party.reaches("ended");
    await t.idle();
    await wrapsUp("agent2");
  });
});

describe("attended transfer", () => {
  it("to a number a pattern matches: consultation over a loopback, then completion bows the loopback out", async () => {
    const { party, transferor } = await call();
    const agent1 = await t.softphone("agent1");
    await t.engine.commands.transfer(channel(transferor), { target: "+14155550123", type: "attended", leg: "self" });
    // The transferor is bridged at once to the consult leg, whose twin runs the callflow.
    const consult = channel(channel(transferor).otherLeg);
    expect(consult.direction).toBe("outbound");
    const target = await answers("agent2", TARGET);
    // The target sees the transferor calling.
    expect(target.from).toEqual({ user: "1002", display: "Alex Agent" });
    const twin = channel(channel(target).otherLeg);
    expect(twin.direction).toBe("inbound");
    expect(twin.identity).toMatchObject({ deviceId: agent1.id, destination: "+14155550123", caller: { number: "1002" } });
    // The loopback legs are the server's, not the user's calls: no owner, so not in the user's lists.
    expect(twin.identity.ownerId).toBeUndefined();
    expect(t.engine.channels.ofUser(t.accountId, String(agent1.data.owner_id)).map((c) => c.id)).toEqual([transferor.callId]);
    expect(t.engine.channels.size).toBe(5);
    await talking(transferor, TRANSFEROR, target, TARGET);
    await onHold(party, TRANSFEROR, TARGET);

    transferor.hangup();
    await talking(party, PARTY, target, TARGET);
    // Bowed out: the party and the target's leg are bridged to each other, the loopback is gone.
    expect(channel(party).otherLeg).toBe(target.callId);
    expect(channel(target).otherLeg).toBe(party.callId);
    expect(t.engine.channels.size).toBe(2);
    expect(destroyed(consult.id)).toMatchObject({ hangup_cause: "NORMAL_CLEARING" });
    expect(destroyed(twin.id)).toMatchObject({ hangup_cause: "NORMAL_CLEARING" });
    expect(channel(party).identity.callee).toEqual({ name: "Blair Agent", number: "1003" });
    target.hangup();
    await party.reaches("ended");
    await t.idle();
  });

  it("completed while the target still rings: the party hears ringback, then the target, directly once it answers", async () => {
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target: "1003", type: "attended", leg: "self" });
    const offered = await (await t.phone("agent2")).incoming();
    offered.ring();
    transferor.hangup();
    // Ringback (440 + 480 Hz, 2 s on, 4 s off) reaches the party through the consult leg.
    const deadline = Date.now() + 7000;
    let ringback = 0;
    while (ringback < 0.2 && Date.now() < deadline) ringback = toneShare(await party.record(300), 480);
    expect(ringback, "the party hears ringback").toBeGreaterThan(0.2);
    await offered.answer();
    await connected(offered);
    await offered.say(`tone_stream://${TARGET}`);
    await talking(party, PARTY, offered, TARGET);
    await until(() => channel(party).otherLeg === offered.callId, "the loopback to bow out");
    expect(t.engine.channels.size).toBe(2);
    party.hangup();
    await offered.reaches("ended");
    await t.idle();
  });

  it("to an announcement: the transferor hears it while the party waits; when it ends the two talk again", async () => {
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target: "4100", type: "attended", leg: "self" });
    expect((await transferor.hears([ANNOUNCEMENT], 400))[ANNOUNCEMENT]).toBeGreaterThan(0.9);
    await onHold(party, TRANSFEROR, ANNOUNCEMENT);
    // The announcement plays 1.5 s; then its callflow ends the consult call.
    await until(() => channel(transferor).otherLeg === party.callId, "the transferor back with the party", 5000);
    await talking(party, PARTY, transferor, TRANSFEROR);
    expect(t.engine.channels.size).toBe(2);
    party.hangup();
    await transferor.reaches("ended");
    await t.idle();
  });

  it("to a call queue: after completion the party talks with the queue's agent through the loopback, which stays until the call ends", async () => {
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target: "5001", type: "attended", leg: "self" });
    // The queue's music reaches the transferor; the party has its own.
    const queueMusic = await transferor.record(400);
    expect(levelDbfs(queueMusic)).toBeGreaterThan(-40);
    expect(toneShare(queueMusic, PARTY)).toBeLessThan(0.05);
    await onHold(party, TRANSFEROR);
    const agent = await answers("agent2", TARGET);
    // The queue offers the consult call as the transferor's.
    expect(agent.from).toEqual({ user: "1002", display: "Sales: Alex Agent" });
    await talking(transferor, TRANSFEROR, agent, TARGET);
    const twin = channel(channel(agent).otherLeg);
    await t.recipientIs("agent2", "On-A-Call");

    transferor.hangup();
    await talking(party, PARTY, agent, TARGET);
    // The queue's bridge is left alone: the loopback stays, and for the queue the call goes on.
    expect(channel(agent).otherLeg).toBe(twin.id);
    expect(t.engine.channels.size).toBe(4);
    await t.recipientIs("agent2", "On-A-Call");
    // DTMF crosses the loopback both ways.
    await party.leg.sendDtmf("5");
    await until(() => agent.dtmfIn.some((d) => d.digit === "5"), "the party's digit at the agent");
    await agent.leg.sendDtmf("9");
    await until(() => party.dtmfIn.some((d) => d.digit === "9"), "the agent's digit at the party");

    agent.hangup();
    await party.reaches("ended");
    await t.idle();
    // Only now is the queue's call over: wrap-up, then Ready.
    await wrapsUp("agent2");
    expect(t.eventNames(`callq.recipient.${(await t.user("agent2")).id}`)).toContain("wrapup");
  });

  it("to a user by id, cancelled by hanging up the consult leg: the target is hung up, the transferor is back", async () => {
    const agent2 = await t.user("agent2");
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target: agent2.id, type: "attended", leg: "self" });
    const target = await answers("agent2", TARGET);
    await talking(transferor, TRANSFEROR, target, TARGET);
    t.engine.commands.hangup(channel(channel(transferor).otherLeg));
    await target.reaches("ended");
    await talking(party, PARTY, transferor, TRANSFEROR);
    expect(channel(party).otherLeg).toBe(transferor.callId);
    expect(t.engine.channels.size).toBe(2);
    transferor.hangup();
    await party.reaches("ended");
    await t.idle();
  });

  it("refuses a target that names nothing, and any transfer of the call while one is consulted", async () => {
    const { party, transferor } = await call();
    await expect(t.engine.commands.transfer(channel(transferor), { target: "0".repeat(32), type: "attended", leg: "self" })).rejects.toThrow(/nothing answers/);
    await expect(t.engine.commands.transfer(channel(transferor), { target: "5999", type: "blind", leg: "self" })).rejects.toBeInstanceOf(ChannelCommandError);
    expect(channel(transferor).otherLeg).toBe(party.callId);

    await t.engine.commands.transfer(channel(transferor), { target: "1003", type: "attended", leg: "self", takebackDtmf: "*0" });
    const consult = channel(channel(transferor).otherLeg);
    for (const leg of [channel(transferor), channel(party), consult]) {
      await expect(t.engine.commands.transfer(leg, { target: "1004", type: "blind", leg: "self" })).rejects.toThrow(/in progress/);
    }
    // The takeback digits end it while the target still rings; the call can then move again.
    const offered = await (await t.phone("agent2")).incoming();
    await transferor.leg.sendDtmf("*0");
    await offered.reaches("ended");
    expect(offered.endedBy).toBe("cancelled");
    await talking(party, PARTY, transferor, TRANSFEROR);
    await t.engine.commands.transfer(channel(transferor), { target: "1004", type: "blind", leg: "self" });
    const agent3 = await answers("agent3", OTHER);
    await talking(party, PARTY, agent3, OTHER);
    party.hangup();
    await agent3.reaches("ended");
    await t.idle();
  });
});

/** The stored CDR of a call leg, once written. */
async function cdrOf(callId: string): Promise<Record<string, unknown>> {
  const cdrs = await t.store.account(t.accountId, "cdrs");
  let found: Record<string, unknown> | undefined;
  await until(() => {
    found = cdrs.all().find((doc) => doc.data.call_id === callId)?.data;
    return found !== undefined;
  }, `the CDR of ${callId}`);
  return found ?? {};
}

function callUpdates(callId: string): Record<string, unknown>[] {
  return t.events.filter((e) => e.routing_key === `call.CALL_UPDATE.${callId}`).map((e) => e.data);
}

describe("attended transfer: after completion the target's leg names the party, not the transferor", () => {
  const ADA = { caller_id_name: "Ada Admin", caller_id_number: "1001" };

  /** Consults `target`, which `username` answers; the transferor completes; the two talk. */
  async function completed(target: string, username: string, offeredAs: string): Promise<{ party: PhoneCall; answered: PhoneCall }> {
    const { party, transferor } = await call();
    await t.engine.commands.transfer(channel(transferor), { target, type: "attended", leg: "self" });
    const answered = await answers(username, TARGET);
    // During the consultation the target talks with the transferor, and is shown so.
    expect(answered.from).toEqual({ user: "1002", display: offeredAs });
    expect(callUpdates(answered.callId)).toEqual([]);
    transferor.hangup();
    await talking(party, PARTY, answered, TARGET);
    return { party, answered };
  }

  async function namesParty(party: PhoneCall, answered: PhoneCall): Promise<void> {
    await until(() => callUpdates(answered.callId).length > 0, "the target's CALL_UPDATE");
    expect(callUpdates(answered.callId)).toEqual([expect.objectContaining({ call_id: answered.callId, ...ADA })]);
    expect(channel(answered).identity.caller).toEqual({ name: "Ada Admin", number: "1001" });
    party.hangup();
    await answered.reaches("ended");
    await t.idle();
    expect(await cdrOf(answered.callId)).toMatchObject({ ...ADA, owner_id: expect.any(String) });
  }

  it("to a user (extension 1003): the bridge after the bow-out and the CDR name the party", async () => {
    const { party, answered } = await completed("1003", "agent2", "Alex Agent");
    await until(() => channel(party).otherLeg === answered.callId, "the loopback to bow out");
    // The bridge event of the bow-out already carries the party.
    const bridged = t.events.filter((e) => e.routing_key === `call.CHANNEL_BRIDGE.${answered.callId}`).map((e) => e.data);
    expect(bridged.at(-1)).toMatchObject({ other_leg_call_id: party.callId, ...ADA });
    await namesParty(party, answered);
  });

  it("to a device by id", async () => {
    const device = await t.softphone("agent3");
    const { party, answered } = await completed(device.id, "agent3", "Alex Agent");
    await namesParty(party, answered);
  });

  it("to a call queue: the agent's leg stays bridged to the loopback and is told who it talks with now", async () => {
    const { party, answered } = await completed("5001", "agent2", "Sales: Alex Agent");
    expect(channel(answered).otherLeg).not.toBe(party.callId);
    await namesParty(party, answered);
    await wrapsUp("agent2");
  });
});

describe("over HTTP, as the console sends it", () => {
  let c: CallApi;
  beforeAll(async () => {
    c = await startCallApi();
  });
  afterAll(async () => {
    await c?.close();
  });

  interface Detail {
    uuid: string;
    other_leg?: string;
    destination: string;
    direction: string;
    answered: boolean;
    callee_id_number: string;
  }

  it("starts an attended transfer, cancels it on the consult leg, starts it again and completes it by hanging up the transferor", async () => {
    const { api, token, base } = c;
    const party = await c.phone("admin").dial("1002");
    const transferor = await c.phone("agent1").incoming();
    await transferor.answer();
    await party.reaches("talking");
    await connected(party, transferor);
    const detail = async (uuid: string) => (await api.call<Detail>("GET", `${base}/channels/${encodeURIComponent(uuid)}`, { token })).body.data;
    const command = (uuid: string, data: Record<string, unknown>) => api.call<unknown>("POST", `${base}/channels/${encodeURIComponent(uuid)}`, { token, data });

    const nowhere = await command(transferor.callId, { action: "transfer", "transfer-type": "attended", target: "5999" });
    expect(nowhere.status).toBe(400);
    expect(nowhere.body).toMatchObject({ message: "invalid data", data: { target: { transfer: { message: expect.stringMatching(/nothing answers 5999/) } } } });
    const started = await command(transferor.callId, { action: "transfer", "transfer-type": "attended", target: "1003", takeback_dtmf: "*1" });
    expect(started.status, started.text).toBe(202);
    expect(started.body.data).toBe("transfer initiated");
    // The consult leg is the transferor's other_leg as soon as the 202 is in.
    const consultId = (await detail(transferor.callId)).other_leg ?? "";
    const consult = await detail(consultId);
    expect(consult).toMatchObject({ uuid: consultId, direction: "outbound", destination: "1003", answered: true, other_leg: transferor.callId });
    const again = await command(party.callId, { action: "transfer", target: "1004" });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ message: "invalid data", data: { action: { transfer: { message: expect.stringMatching(/in progress/) } } } });
    const target = await c.phone("agent2").incoming();
    await target.answer();
    await connected(target);

    // Cancel: hang up the consult leg.
    expect((await command(consultId, { action: "hangup" })).status).toBe(202);
    await target.reaches("ended");
    await until(() => api.server.calls.channels.get(transferor.callId)?.otherLeg === party.callId, "the transferor back with the party");
    expect((await detail(party.callId)).other_leg).toBe(transferor.callId);

    // Again, and complete: hang up the transferor (its own BYE would do the same).
    expect((await command(transferor.callId, { action: "transfer", "transfer-type": "attended", target: "1003" })).status).toBe(202);
    const second = await c.phone("agent2").incoming();
    await second.answer();
    await connected(second);
    expect((await command(transferor.callId, { action: "hangup" })).status).toBe(202);
    await transferor.reaches("ended");
    await until(() => api.server.calls.channels.get(party.callId)?.otherLeg === second.callId, "the party bridged to the target");
    expect(await detail(party.callId)).toMatchObject({ other_leg: second.callId, callee_id_number: "1003" });
    await party.say(`tone_stream://${PARTY}`);
    expect((await second.hears([PARTY]))[PARTY]).toBeGreaterThan(0.9);
    party.hangup();
    await second.reaches("ended");
    await until(() => api.server.calls.channels.size === 0, "every channel to hang up");
  });
});
