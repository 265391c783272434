// The B2BUA end to end with fake signalling and real werift legs for the phones: ringing every
// device of a user, the first answer bridged with audio both ways, every way a call ends, the
// blocklists, play, DTMF both ways, hold with music, the bus events in order and the CDRs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { levelDbfs, toneShare } from "../../server/media/index.js";
import type { StoredDoc } from "../../server/store/index.js";
import { ManualClock } from "../../server/clock-control.js";
import { startTestEngine, type TestEngine } from "../helpers/call-engine.js";
import { connected, sleep, until, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";

let t: TestEngine;
/** The server's time, moved on by the tests (durations, no-answer timeouts); audio stays real. */
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  t = await startTestEngine({ clock });
  // Registered before any call, as phones are before anyone dials them.
  for (const username of ["admin", "agent1", "agent2", "agent3"]) await t.phone(username);
});
afterAll(async () => {
  await t?.close();
});

/** The inbound channel of a phone's call, and the leg the engine rang for it. */
function legsOf(call: PhoneCall) {
  const inbound = t.engine.channels.get(call.callId);
  if (!inbound) throw new Error(`no channel for ${call.callId}`);
  return inbound;
}

/** A call from admin (1001) to agent1 (1002), answered; returns both phones' calls. */
async function answeredCall(): Promise<{ caller: PhoneCall; callee: PhoneCall; callerPhone: FakePhone; calleePhone: FakePhone }> {
  const callerPhone = await t.phone("admin");
  const calleePhone = await t.phone("agent1");
  const caller = await callerPhone.dial("1002");
  const callee = await calleePhone.incoming();
  await callee.answer();
  await caller.reaches("talking");
  await connected(caller, callee);
  return { caller, callee, callerPhone, calleePhone };
}

describe("a call by extension", () => {
  let desk: StoredDoc;
  beforeAll(async () => {
    const agent = await t.user("agent1");
    desk = await t.addDevice({ name: "agent1 desk phone", owner_id: agent.id, sip: { username: "agent1desk" } });
  });

  it("rings every registered device of the user with the caller's id and bridges the first answer, audio both ways", async () => {
    const callerPhone = await t.phone("admin");
    const softphone = await t.phone("agent1");
    const deskPhone = t.phoneFor(desk);
    const caller = await callerPhone.dial("1002");
    const [atSoftphone, atDesk] = await Promise.all([softphone.incoming(), deskPhone.incoming()]);
    expect(atDesk.from).toEqual({ user: "1001", display: "Ada Admin" });
    expect(atSoftphone.from).toEqual({ user: "1001", display: "Ada Admin" });
    atSoftphone.ring();
    await caller.reaches("ringing");
    await atDesk.answer();
    await caller.reaches("talking");
    await atSoftphone.reaches("ended");
    expect(atSoftphone.endedBy).toBe("cancelled");
    await connected(caller, atDesk);

    await caller.say("tone_stream://440");
    await atDesk.say("tone_stream://1000");
    const [callerHears, deskHears] = await Promise.all([caller.hears([440, 1000]), atDesk.hears([440, 1000])]);
    expect(callerHears[1000]).toBeGreaterThan(0.9);
    expect(callerHears[440]).toBeLessThan(0.01);
    expect(deskHears[440]).toBeGreaterThan(0.9);
    expect(deskHears[1000]).toBeLessThan(0.01);

    const inbound = legsOf(caller);
    expect(inbound.state).toBe("bridged");
    expect(inbound.otherLeg).toBe(atDesk.callId);
    expect(inbound.identity.callee).toEqual({ name: "Alex Agent", number: "1002" });
    expect(t.engine.channels.get(atDesk.callId)?.identity).toMatchObject({ deviceId: desk.id, caller: { name: "Ada Admin", number: "1001" } });

    atDesk.hangup();
    await caller.reaches("ended");
    expect(caller.endedBy).toBe("remote-bye");
    await t.idle();

    expect(t.callEvents(caller.callId)).toEqual(["CHANNEL_CREATE", "CHANNEL_PROGRESS", "CHANNEL_ANSWER", "CHANNEL_BRIDGE", "CHANNEL_DESTROY"]);
    expect(t.callEvents(atDesk.callId)).toEqual(["CHANNEL_CREATE", "CHANNEL_ANSWER", "CHANNEL_BRIDGE", "CHANNEL_DESTROY"]);
    expect(t.callEvents(atSoftphone.callId)).toEqual(["CHANNEL_CREATE", "CHANNEL_PROGRESS", "CHANNEL_DESTROY"]);
    const destroy = t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${atSoftphone.callId}`);
    expect(destroy?.data).toMatchObject({ hangup_cause: "LOSE_RACE", call_direction: "outbound", authorizing_id: (await t.softphone("agent1")).id });
  });

  it("publishes the call's events with the webhook fields, in order across both legs", async () => {
    const { caller, callee } = await answeredCall();
    caller.hangup();
    await callee.reaches("ended");
    expect(callee.endedBy).toBe("remote-bye");
    await t.idle();
    const ids = new Set([caller.callId, callee.callId]);
    const order = t.events.filter((e) => e.routing_key.startsWith("call.") && ids.has(String(e.data.call_id))).map((e) => `${e.name}:${e.data.call_id === caller.callId ? "a" : "b"}`);
    expect(order).toEqual([
      "CHANNEL_CREATE:a",
      "CHANNEL_CREATE:b",
      "CHANNEL_ANSWER:b",
      "CHANNEL_ANSWER:a",
      "CHANNEL_BRIDGE:a",
      "CHANNEL_BRIDGE:b",
      "CHANNEL_DESTROY:a",
      "CHANNEL_DESTROY:b",
    ]);
    const admin = await t.user("admin");
    const agent = await t.user("agent1");
    const destroyA = t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`);
    expect(destroyA?.data).toMatchObject({
      call_id: caller.callId,
      other_leg_call_id: callee.callId,
      call_direction: "inbound",
      caller_id_name: "Ada Admin",
      caller_id_number: "1001",
      callee_id_name: "Alex Agent",
      callee_id_number: "1002",
      request: "1002@demo.switchboard.local",
      to: "1002@demo.switchboard.local",
      from: "admin@demo.switchboard.local",
      account_id: t.accountId,
      owner_id: admin.id,
      authorizing_id: (await t.softphone("admin")).id,
      authorizing_type: "device",
      hangup_cause: "NORMAL_CLEARING",
      hangup_code: "sip:200",
    });
    for (const key of ["duration_seconds", "billing_seconds", "ringing_seconds"]) expect(destroyA?.data[key]).toEqual(expect.any(Number));
    const destroyB = t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${callee.callId}`);
    expect(destroyB?.data).toMatchObject({ call_direction: "outbound", owner_id: agent.id, other_leg_call_id: caller.callId });
    // Answered and bridged: no missed call.
    expect(t.events.some((e) => e.routing_key === `notification.missed_call.${caller.callId}`)).toBe(false);
  });

  it("writes one CDR per leg with a MODB id, durations and the hangup cause", async () => {
    const { caller, callee } = await answeredCall();
    await clock.advance(1100);
    callee.hangup();
    await caller.reaches("ended");
    await t.idle();
    const cdrs = await t.store.account(t.accountId, "cdrs");
    const mineOf = () => cdrs.all().filter((d) => d.data.call_id === caller.callId || d.data.call_id === callee.callId);
    await until(() => mineOf().length === 2, "both CDRs");
    const mine = mineOf();
    for (const doc of mine) expect(doc.id).toMatch(/^\d{6}-[0-9a-f]{32}$/);
    const a = mine.find((d) => d.data.call_id === caller.callId);
    expect(a?.data).toMatchObject({
      other_leg_call_id: callee.callId,
      direction: "inbound",
      call_direction: "inbound",
      caller_id_number: "1001",
      callee_id_number: "1002",
      hangup_cause: "NORMAL_CLEARING",
      hangup_code: "sip:200",
    });
    expect(Number(a?.data.billing_seconds)).toBeGreaterThanOrEqual(1);
    expect(Number(a?.data.duration_seconds)).toBeGreaterThanOrEqual(1);
    expect(Number(a?.data.timestamp)).toBeGreaterThan(63_000_000_000);
  });
});

describe("calls that do not connect", () => {
  it("cancel: the caller gives up while it rings; the devices are cancelled and a missed call is told", async () => {
    const callerPhone = await t.phone("admin");
    const calleePhone = await t.phone("agent1");
    const caller = await callerPhone.dial("1002");
    const offered = await calleePhone.incoming();
    offered.ring();
    await caller.reaches("ringing");
    caller.cancel();
    await offered.reaches("ended");
    expect(offered.endedBy).toBe("cancelled");
    await t.idle();
    const destroy = t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`);
    expect(destroy?.data).toMatchObject({ hangup_cause: "ORIGINATOR_CANCEL", hangup_code: "sip:487", billing_seconds: 0 });
    const keys = t.events.map((e) => e.routing_key);
    const missed = keys.indexOf(`notification.missed_call.${caller.callId}`);
    expect(missed).toBeGreaterThan(keys.indexOf(`call.CHANNEL_DESTROY.${caller.callId}`));
    const agent = await t.user("agent1");
    expect(t.events[missed]?.data).toMatchObject({
      type: "missed_call",
      account_id: t.accountId,
      call_id: caller.callId,
      caller_id_number: "1001",
      callee_id_name: "Alex Agent",
      callee_id_number: "1002",
      owner_id: agent.id,
      call_bridged: false,
    });
  });

  it("reject: a device answering 486 gives the caller 486", async () => {
    const callerPhone = await t.phone("admin");
    const calleePhone = await t.phone("agent2");
    const caller = await callerPhone.dial("1003");
    const offered = await calleePhone.incoming();
    offered.reject(486);
    await caller.reaches("ended");
    expect(caller.endedBy).toBe("rejected");
    expect(caller.finalCode).toBe(486);
    await t.idle();
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`)?.data).toMatchObject({
      hangup_cause: "USER_BUSY",
      hangup_code: "sip:486",
    });
  });

  it("no answer: the caller gets 480 once the module's timeout is over", async () => {
    const agent = await t.user("agent3");
    await t.addCallflow({ numbers: ["2004"], flow: { module: "user", data: { id: agent.id, timeout: 1 }, children: {} } });
    const callerPhone = await t.phone("admin");
    const calleePhone = await t.phone("agent3");
    const caller = await callerPhone.dial("2004");
    const offered = await calleePhone.incoming();
    offered.ring();
    await clock.advance(999);
    expect(caller.state).not.toBe("ended");
    await clock.advance(1);
    await caller.reaches("ended");
    expect(caller.finalCode).toBe(480);
    // The phrase tells a phone that nobody answered, not that there was nothing to ring.
    expect(caller.finalReason).toBe("No Answer");
    expect(offered.endedBy).toBe("cancelled");
    await t.idle();
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`)?.data).toMatchObject({ hangup_cause: "NO_ANSWER", hangup_code: "sip:480" });
    expect(t.events.some((e) => e.routing_key === `notification.missed_call.${caller.callId}`)).toBe(true);
  });

  it("no answer goes on to the next child when the flow has one", async () => {
    const agent = await t.user("agent3");
    await t.addCallflow({
      numbers: ["2005"],
      flow: { module: "user", data: { id: agent.id, timeout: 0.5 }, children: { _: { module: "play", data: { id: "tone_stream://%(400,0,700)" }, children: {} } } },
    });
    const caller = await (await t.phone("admin")).dial("2005");
    await (await t.phone("agent3")).incoming();
    await clock.advance(500);
    await caller.reaches("talking");
    await connected(caller);
    expect((await caller.hears([700], 200))[700]).toBeGreaterThan(0.5);
    await caller.reaches("ended", 5000);
    expect(caller.endedBy).toBe("remote-bye");
  });

  it("a user with no registered device: 480 at once", async () => {
    const caller = await (await t.phone("admin")).dial("1005");
    await caller.reaches("ended", 3000);
    expect(caller.finalCode).toBe(480);
    expect(caller.finalReason).toBeUndefined();
    await t.idle();
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`)?.data).toMatchObject({ hangup_cause: "SUBSCRIBER_ABSENT" });
  });

  it("an unknown number: 404", async () => {
    const caller = await (await t.phone("admin")).dial("9999");
    await caller.reaches("ended");
    expect(caller.finalCode).toBe(404);
    await t.idle();
    expect(t.callEvents(caller.callId)).toEqual(["CHANNEL_CREATE", "CHANNEL_DESTROY"]);
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`)?.data).toMatchObject({ hangup_cause: "UNALLOCATED_NUMBER", hangup_code: "sip:404" });
  });

  it("a module the engine does not run yet ends the call 501, with a log", async () => {
    const caller = await (await t.phone("admin")).dial("5001");
    await caller.reaches("ended");
    expect(caller.finalCode).toBe(501);
    expect(t.warnings.some((w) => w.includes("callflow module not available") && w.includes("callq"))).toBe(true);
  });
});

describe("blocklists", () => {
  let lineDevice: StoredDoc;
  beforeAll(async () => {
    // A line with no caller id of its own: the caller id is what its From says.
    lineDevice = await t.addDevice({ name: "outside line", sip: { username: "outsideline" } });
    const lists = await t.store.account(t.accountId, "blacklists");
    const blocked = await lists.create({ name: "Nuisance", numbers: { "+14155550123": {} }, should_block_anonymous: false });
    const anonymous = await lists.create({ name: "No hidden numbers", numbers: {}, should_block_anonymous: true });
    const accounts = await t.store.global("accounts");
    const account = accounts.get(t.accountId);
    if (!account) throw new Error("no demo account");
    await accounts.update(account.id, { ...account.data, blacklists: [blocked.id, anonymous.id] });
  });

  it("refuses a listed number with 603, in any spelling of it", async () => {
    const phone = t.phoneFor(lineDevice);
    for (const number of ["+14155550123", "4155550123"]) {
      const caller = await phone.dial("1002", { from: { user: number } });
      await caller.reaches("ended");
      expect(caller.finalCode).toBe(603);
    }
  });

  it("refuses an anonymous caller with 433 when a list blocks anonymous callers", async () => {
    const phone = t.phoneFor(lineDevice);
    const hidden = await phone.dial("1002", { from: { user: "anonymous", display: "Anonymous" } });
    await hidden.reaches("ended");
    expect(hidden.finalCode).toBe(433);
    const privacy = await phone.dial("1002", { from: { user: "+14155550199" }, headers: { Privacy: ["id"] } });
    await privacy.reaches("ended");
    expect(privacy.finalCode).toBe(433);
  });

  it("lets other callers through", async () => {
    const phone = t.phoneFor(lineDevice);
    const calleePhone = await t.phone("agent2");
    const caller = await phone.dial("1003", { from: { user: "+14155550100" } });
    const offered = await calleePhone.incoming();
    expect(offered.from?.user).toBe("+14155550100");
    offered.reject(603);
    await caller.reaches("ended");
    expect(caller.finalCode).toBe(603);
    await t.idle();
  });
});

describe("media in the call", () => {
  it("play: answers and plays a tone_stream to the caller, then the flow ends and the call is hung up", async () => {
    await t.addCallflow({ numbers: ["3001"], flow: { module: "play", data: { id: "tone_stream://%(1500,0,1000)" }, children: {} } });
    const caller = await (await t.phone("admin")).dial("3001");
    await caller.reaches("talking");
    await connected(caller);
    const heard = await caller.hears([1000, 440], 400);
    expect(heard[1000]).toBeGreaterThan(0.9);
    await caller.reaches("ended", 5000);
    expect(caller.endedBy).toBe("remote-bye");
    await t.idle();
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`)?.data).toMatchObject({ hangup_cause: "NORMAL_CLEARING" });
  });

  it("play of a media id plays the stored WAV", async () => {
    const media = await t.store.account(t.accountId, "media");
    const holdMusic = media.all().find((m) => m.data.name === "Hold music");
    await t.addCallflow({ numbers: ["3002"], flow: { module: "play", data: { id: holdMusic?.id }, children: {} } });
    const caller = await (await t.phone("admin")).dial("3002");
    await caller.reaches("talking");
    await connected(caller);
    expect(levelDbfs(await caller.record(400))).toBeGreaterThan(-40);
    caller.hangup();
    await t.idle();
  });

  it("DTMF: RFC 4733 and SIP INFO both reach the channel and cross the bridge", async () => {
    const { caller, callee } = await answeredCall();
    const inbound = legsOf(caller);
    const seen: string[] = [];
    inbound.on("dtmf", (d) => seen.push(`${d.digit}:${d.via}`));
    await caller.leg.sendDtmf("5");
    caller.info("7");
    await until(() => seen.length === 2 && callee.dtmfIn.length === 2, "both digits");
    expect(seen.sort()).toEqual(["5:rfc4733", "7:info"]);
    expect(callee.dtmfIn.map((d) => d.digit).sort()).toEqual(["5", "7"]);
    caller.hangup();
    await t.idle();
  });

  it("hold and unhold by re-INVITE: the held party hears music, then the other party again", async () => {
    const { caller, callee } = await answeredCall();
    await caller.say("tone_stream://440");
    await callee.say("tone_stream://1000");
    expect((await caller.hears([1000]))[1000]).toBeGreaterThan(0.9);

    await callee.hold();
    const agentLeg = t.engine.channels.get(callee.callId);
    expect(agentLeg?.state).toBe("held");
    await sleep(200);
    const onHold = await caller.record(600);
    expect(toneShare(onHold, 1000)).toBeLessThan(0.05);
    expect(levelDbfs(onHold)).toBeGreaterThan(-40);
    expect(t.callEvents(callee.callId)).toContain("CHANNEL_HOLD");

    await callee.unhold();
    expect(agentLeg?.state).toBe("bridged");
    expect((await caller.hears([1000]))[1000]).toBeGreaterThan(0.9);
    expect(t.callEvents(callee.callId).slice(-2)).toEqual(["CHANNEL_HOLD", "CHANNEL_UNHOLD"]);
    caller.hangup();
    await t.idle();
  });
});
