// Channel commands acting on real calls (fake signalling, real media legs): blind transfers both
// ways, attended transfers completed, taken back and refused, break, callflow and intercept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelCommandError, type Channel } from "../../server/calls/index.js";
import { levelDbfs, toneShare } from "../../server/media/index.js";
import { startTestEngine, type TestEngine } from "../helpers/call-engine.js";
import { connected, type PhoneCall } from "../helpers/fake-signalling.js";

let t: TestEngine;
beforeAll(async () => {
  t = await startTestEngine();
  // Registered before any call, as phones are before anyone dials them.
  for (const username of ["admin", "agent1", "agent2", "agent3"]) await t.phone(username);
});
afterAll(async () => {
  await t?.close();
});

function channel(call: PhoneCall): Channel {
  const found = t.engine.channels.get(call.callId);
  if (!found) throw new Error(`no live channel ${call.callId}`);
  return found;
}

/** admin (1001) calls agent1 (1002), who answers; each says a tone of its own. */
async function call(): Promise<{ caller: PhoneCall; agent: PhoneCall }> {
  const caller = await (await t.phone("admin")).dial("1002");
  const agent = await (await t.phone("agent1")).incoming();
  await agent.answer();
  await caller.reaches("talking");
  await connected(caller, agent);
  await caller.say("tone_stream://440");
  await agent.say("tone_stream://1000");
  return { caller, agent };
}

async function talking(a: PhoneCall, aSays: number, b: PhoneCall, bSays: number): Promise<void> {
  const [atA, atB] = await Promise.all([a.hears([bSays]), b.hears([aSays])]);
  expect(atA[bSays]).toBeGreaterThan(0.9);
  expect(atB[aSays]).toBeGreaterThan(0.9);
}

describe("blind transfer", () => {
  it("leg self: the channel's party goes to the target while the channel hangs up", async () => {
    const { caller, agent } = await call();
    await t.engine.commands.transfer(channel(agent), { target: "1003", type: "blind", leg: "self" });
    await agent.reaches("ended");
    expect(agent.endedBy).toBe("remote-bye");
    const second = await (await t.phone("agent2")).incoming();
    expect(second.from).toEqual({ user: "1001", display: "Ada Admin" });
    // The caller, already answered, hears ringback (440 + 480 Hz) while agent2 rings.
    const ringback = await caller.record(400);
    expect(toneShare(ringback, 480)).toBeGreaterThan(0.2);
    await second.answer();
    await connected(second);
    await second.say("tone_stream://2000");
    await talking(caller, 440, second, 2000);
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${agent.callId}`)?.data).toMatchObject({ hangup_cause: "BLIND_TRANSFER" });
    expect(t.callEvents(caller.callId)).toEqual(["CHANNEL_CREATE", "CHANNEL_ANSWER", "CHANNEL_BRIDGE", "CHANNEL_UNBRIDGE", "CHANNEL_BRIDGE"]);
    second.hangup();
    await caller.reaches("ended");
    await t.idle();
  });

  it("leg bleg: the channel itself goes to the target and its party hangs up", async () => {
    const { caller, agent } = await call();
    await t.engine.commands.transfer(channel(agent), { target: "1003", type: "blind", leg: "bleg" });
    await caller.reaches("ended");
    expect(caller.endedBy).toBe("remote-bye");
    const second = await (await t.phone("agent2")).incoming();
    // agent1's leg now calls agent2, so agent2 sees agent1.
    expect(second.from).toEqual({ user: "1002", display: "Alex Agent" });
    await second.answer();
    await connected(second);
    await second.say("tone_stream://2000");
    await talking(agent, 1000, second, 2000);
    agent.hangup();
    await second.reaches("ended");
    await t.idle();
  });

  it("refuses a channel that is not bridged, and a target no callflow matches", async () => {
    const caller = await (await t.phone("admin")).dial("1003");
    const offered = await (await t.phone("agent2")).incoming();
    await expect(t.engine.commands.transfer(channel(caller), { target: "1002", type: "blind", leg: "self" })).rejects.toThrow(/not bridged/);
    await offered.answer();
    await caller.reaches("talking");
    await expect(t.engine.commands.transfer(channel(caller), { target: "777", type: "blind", leg: "self" })).rejects.toBeInstanceOf(ChannelCommandError);
    caller.hangup();
    await t.idle();
  });
});

describe("attended transfer", () => {
  it("holds the party with music while the transferor talks to the target; the transferor hanging up joins them", async () => {
    const { caller, agent } = await call();
    await t.engine.commands.transfer(channel(agent), { target: "1003", type: "attended", leg: "self" });
    const second = await (await t.phone("agent2")).incoming();
    expect(second.from).toEqual({ user: "1002", display: "Alex Agent" });
    const onHold = await caller.record(400);
    expect(levelDbfs(onHold)).toBeGreaterThan(-40);
    expect(toneShare(onHold, 1000)).toBeLessThan(0.05);
    await second.answer();
    await connected(second);
    await second.say("tone_stream://2000");
    await talking(agent, 1000, second, 2000);
    // The party still hears music, not the consultation.
    expect(toneShare(await caller.record(400), 2000)).toBeLessThan(0.05);
    agent.hangup();
    await talking(caller, 440, second, 2000);
    expect(channel(caller).otherLeg).toBe(second.callId);
    caller.hangup();
    await second.reaches("ended");
    await t.idle();
  });

  it("takeback digits end the consultation and bring the transferor back to the party", async () => {
    const { caller, agent } = await call();
    await t.engine.commands.transfer(channel(agent), { target: "1003", type: "attended", leg: "self", takebackDtmf: "*1" });
    const second = await (await t.phone("agent2")).incoming();
    await second.answer();
    await connected(second);
    await agent.leg.sendDtmf("*1");
    await second.reaches("ended");
    await talking(caller, 440, agent, 1000);
    caller.hangup();
    await agent.reaches("ended");
    await t.idle();
  });

  it("a target that refuses brings the transferor back to the party", async () => {
    const { caller, agent } = await call();
    await t.engine.commands.transfer(channel(agent), { target: "1003", type: "attended", leg: "self" });
    const second = await (await t.phone("agent2")).incoming();
    second.reject(486);
    await talking(caller, 440, agent, 1000);
    agent.hangup();
    await caller.reaches("ended");
    await t.idle();
  });

});

describe("break, callflow and intercept", () => {
  it("break leaves the ringing step for the next child; a bridged call has no step to leave", async () => {
    const agent2 = await t.user("agent2");
    await t.addCallflow({
      numbers: ["3201"],
      flow: { module: "user", data: { id: agent2.id, timeout: 30 }, children: { _: { module: "play", data: { id: "tone_stream://700" }, children: {} } } },
    });
    const caller = await (await t.phone("admin")).dial("3201");
    const offered = await (await t.phone("agent2")).incoming();
    offered.ring();
    await caller.reaches("ringing");
    t.engine.commands.break(channel(caller));
    await offered.reaches("ended");
    expect(offered.endedBy).toBe("cancelled");
    await caller.reaches("talking");
    await connected(caller);
    expect((await caller.hears([700]))[700]).toBeGreaterThan(0.9);
    // Playing: break again leaves the play step, and with no child the call ends.
    t.engine.commands.break(channel(caller));
    await caller.reaches("ended");

    const { caller: other } = await call();
    expect(() => t.engine.commands.break(channel(other))).toThrow(/bridged/);
    other.hangup();
    await t.idle();
  });

  it("callflow runs another callflow on the channel; its bridged party is hung up", async () => {
    const flow = await t.addCallflow({ numbers: ["3301"], flow: { module: "play", data: { id: "tone_stream://1500" }, children: {} } });
    const { caller, agent } = await call();
    await t.engine.commands.callflow(channel(caller), flow.id);
    await agent.reaches("ended");
    expect((await caller.hears([1500]))[1500]).toBeGreaterThan(0.9);
    await expect(t.engine.commands.callflow(channel(caller), "0".repeat(32))).rejects.toThrow(/no callflow/);
    caller.hangup();
    await t.idle();
  });

  it("intercept: another device takes a ringing call, the ringing phone is cancelled", async () => {
    const caller = await (await t.phone("admin")).dial("1002");
    const ringing = await (await t.phone("agent1")).incoming();
    ringing.ring();
    await caller.reaches("ringing");
    const agent3Phone = await t.softphone("agent3");
    // On the leg that rings agent1: the call it rings for is taken.
    await t.engine.commands.intercept(channel(ringing), { targetType: "device", targetId: agent3Phone.id, unbridgedOnly: true });
    await ringing.reaches("ended");
    const taker = await (await t.phone("agent3")).incoming();
    expect(taker.from).toEqual({ user: "1001", display: "Ada Admin" });
    await taker.answer();
    await caller.reaches("talking");
    await connected(caller, taker);
    await caller.say("tone_stream://440");
    await taker.say("tone_stream://2000");
    await talking(caller, 440, taker, 2000);
    expect(t.events.some((e) => e.routing_key === `notification.missed_call.${caller.callId}`)).toBe(false);
    caller.hangup();
    await t.idle();
  });

  it("intercept of a bridged call needs unbridged_only false; then the party is taken and the other leg hung up", async () => {
    const { caller, agent } = await call();
    const agent3 = await t.user("agent3");
    await expect(t.engine.commands.intercept(channel(caller), { targetType: "user", targetId: agent3.id, unbridgedOnly: true })).rejects.toThrow(/bridged/);
    await t.engine.commands.intercept(channel(caller), { targetType: "user", targetId: agent3.id, unbridgedOnly: false });
    await agent.reaches("ended");
    const taker = await (await t.phone("agent3")).incoming();
    await taker.answer();
    await connected(taker);
    await taker.say("tone_stream://2000");
    await talking(caller, 440, taker, 2000);
    taker.hangup();
    await caller.reaches("ended");
    await t.idle();
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${agent.callId}`)?.data).toMatchObject({ hangup_cause: "PICKED_OFF" });
  });
});
