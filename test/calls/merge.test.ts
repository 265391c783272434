// The channels API's merge command on real calls (fake signalling, real media legs): agent1 has
// two calls (from admin and from agent2), holds the first, and merges them; the server mixes a
// three-way conference in which everyone hears the two others, any member may leave and the two
// others stay connected. Refusals: another user's legs (403), an unknown leg (404), a leg not
// bridged, the same leg twice, no target (400), and nothing changes when refused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { conferenceOf } from "../../server/calls/conference.js";
import type { BridgeEnd, Channel } from "../../server/calls/index.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { connected, sleep, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { measureUntilHeard } from "../helpers/tone-windows.js";

let t: CallApi;
let agentToken: string;
let otherAgentToken: string;

beforeAll(async () => {
  t = await startCallApi();
  agentToken = (await t.api.login("agent1")).token;
  otherAgentToken = (await t.api.login("agent3")).token;
});

afterEach(async () => {
  // Whatever a failed test left up, so the next starts from no call.
  for (const leg of t.api.server.calls?.channels.all() ?? []) leg.hangup("NORMAL_CLEARING");
  await idle();
});

afterAll(async () => {
  await t?.close();
});

function channel(call: PhoneCall): Channel {
  const found = t.api.server.calls?.channels.get(call.callId);
  if (!found) throw new Error(`no live channel ${call.callId}`);
  return found;
}

/** `from` calls agent1 (1002), who answers; the caller then says `tone` Hz. */
async function callAgent(from: string, tone: number): Promise<{ caller: PhoneCall; agent: PhoneCall }> {
  const caller = await t.phone(from).dial("1002");
  const agent = await t.phone("agent1").incoming();
  await agent.answer();
  await caller.reaches("talking");
  await connected(caller, agent);
  await caller.say(`tone_stream://${tone}`);
  return { caller, agent };
}

/** Two calls on agent1's phone, the first held as a console holds it before answering the second. */
async function twoLines(): Promise<{ first: { caller: PhoneCall; agent: PhoneCall }; second: { caller: PhoneCall; agent: PhoneCall } }> {
  const first = await callAgent("admin", 440);
  await first.agent.hold();
  await until(() => channel(first.agent).state === "held", "the first line held");
  const second = await callAgent("agent2", 2000);
  return { first, second };
}

function mergeCommand(uuid: string, targetCallId: string | undefined, token = agentToken) {
  return t.api.call<unknown>("POST", `${t.base}/channels/${uuid}`, {
    token,
    data: targetCallId === undefined ? { action: "merge" } : { action: "merge", target_call_id: targetCallId },
  });
}

/**
 * Each phone hears the tones of the two others (a share of each above `min`). Measured again,
 * up to three windows, when one fell short (test/helpers/tone-windows.ts): on a loaded machine a
 * starved 20 ms clock skews one window's mix, not the next.
 */
async function allHearEachOther(members: { call: PhoneCall; says: number }[], min = 0.25): Promise<void> {
  const { short } = await measureUntilHeard(
    () => Promise.all(members.map((m) => m.call.hears(members.filter((o) => o !== m).map((o) => o.says), 700))),
    (heard) => members.flatMap((m, i) => members.filter((o) => o !== m && !(heard[i][o.says] > min)).map((o) => `${m.says} Hz phone hears ${o.says} Hz at ${heard[i][o.says]}`)),
  );
  expect(short).toEqual([]);
}

/**
 * Measures until no heard share is short (up to three windows, as allHearEachOther does) and gives
 * the last measurement, for the test to assert on: one window skewed by a starved clock on a busy
 * machine is not a fault of the mix.
 */
async function heardWell<T extends Record<number, number>[]>(measure: () => Promise<T>, wanted: (heard: T) => number[]): Promise<T> {
  const { heard } = await measureUntilHeard(measure, (h) => wanted(h).filter((share) => !(share > 0.8)).map(String));
  return heard;
}

async function idle(): Promise<void> {
  await until(() => t.api.server.calls?.channels.size === 0, "every channel gone");
}

describe("merge", () => {
  it("joins the two calls in a three-way conference mixed by the server; the agent leaving leaves the two others talking", async () => {
    const { first, second } = await twoLines();
    const res = await mergeCommand(first.agent.callId, second.agent.callId);
    expect(res.status, res.text).toBe(202);
    expect(res.body.data).toBe("merge initiated");
    // The agent's second leg is hung up: the device keeps one call, the conference.
    await second.agent.reaches("ended");
    expect(second.agent.endedBy).toBe("remote-bye");
    await first.agent.unhold();
    await until(() => channel(first.agent).state === "bridged", "the agent's leg resumed");
    await first.agent.say("tone_stream://1000");

    const conference = conferenceOf(channel(first.agent));
    expect(conference?.members.map((c) => c.id).sort()).toEqual([first.agent.callId, first.caller.callId, second.caller.callId].sort());
    expect(channel(second.caller).otherLeg).toBe(first.agent.callId);
    await allHearEachOther([
      { call: first.agent, says: 1000 },
      { call: first.caller, says: 440 },
      { call: second.caller, says: 2000 },
    ]);

    first.agent.hangup();
    await first.agent.reaches("ended");
    const [atAdmin, atAgent2] = await heardWell(() => Promise.all([first.caller.hears([2000]), second.caller.hears([440])]), ([a, b]) => [a[2000], b[440]]);
    expect(atAdmin[2000]).toBeGreaterThan(0.8);
    expect(atAgent2[440]).toBeGreaterThan(0.8);
    expect(first.caller.state).toBe("talking");
    expect(second.caller.state).toBe("talking");

    // The last but one leaving ends the call for the one left alone.
    first.caller.hangup();
    await second.caller.reaches("ended");
    await idle();
  });

  it("the kept call's bridge (what a queue offer waits on) ends only when its agent leg or party leaves the conference", async () => {
    const { first, second } = await twoLines();
    const agentLeg = channel(first.agent);
    const callerLeg = channel(first.caller);
    const lineBridge = t.api.server.calls?.context.bridgeOf(agentLeg);
    expect(lineBridge).toBeDefined();
    let lineEnd: BridgeEnd | undefined;
    void lineBridge?.ended.then((end) => (lineEnd = end));
    expect((await mergeCommand(first.agent.callId, second.agent.callId)).status).toBe(202);
    await second.agent.reaches("ended");
    // The other party leaving is not the end of the kept call either.
    second.caller.hangup();
    await second.caller.reaches("ended");
    await sleep(100);
    expect(lineEnd).toBeUndefined();
    first.agent.hangup();
    await until(() => lineEnd !== undefined, "the kept call's end");
    expect(lineEnd).toEqual({ reason: "hangup", gone: agentLeg, survivor: callerLeg });
    await first.caller.reaches("ended");
    await idle();
  });

  it("a party leaving leaves the agent and the other party talking", async () => {
    const { first, second } = await twoLines();
    expect((await mergeCommand(first.agent.callId, second.agent.callId)).status).toBe(202);
    await second.agent.reaches("ended");
    await first.agent.unhold();
    await first.agent.say("tone_stream://1000");

    second.caller.hangup();
    await second.caller.reaches("ended");
    const [atAgent, atAdmin] = await heardWell(() => Promise.all([first.agent.hears([440]), first.caller.hears([1000])]), ([a, b]) => [a[440], b[1000]]);
    expect(atAgent[440]).toBeGreaterThan(0.8);
    expect(atAdmin[1000]).toBeGreaterThan(0.8);
    first.agent.hangup();
    await first.caller.reaches("ended");
    await idle();
  });

  it("while the agent holds the conference, the two parties still hear each other and not the agent", async () => {
    const { first, second } = await twoLines();
    expect((await mergeCommand(first.agent.callId, second.agent.callId)).status).toBe(202);
    await second.agent.reaches("ended");
    await first.agent.say("tone_stream://1000");
    // Still held from before the merge.
    expect(channel(first.agent).state).toBe("held");
    const [atAdmin, atAgent2] = await heardWell(() => Promise.all([first.caller.hears([2000, 1000]), second.caller.hears([440, 1000])]), ([a, b]) => [a[2000], b[440]]);
    expect(atAdmin[2000]).toBeGreaterThan(0.8);
    expect(atAgent2[440]).toBeGreaterThan(0.8);
    expect(atAdmin[1000]).toBeLessThan(0.05);
    first.agent.hangup();
    first.caller.hangup();
    await second.caller.reaches("ended");
    await idle();
  });

  it("refuses another user's legs (403), an unknown leg (404), the same leg, a missing target and a leg not bridged (400), changing nothing", async () => {
    const { first, second } = await twoLines();
    const before = [first.agent, first.caller, second.agent, second.caller].map((c) => channel(c).state);

    const notMine = await mergeCommand(first.agent.callId, second.agent.callId, otherAgentToken);
    expect(notMine.status, notMine.text).toBe(403);
    const unknown = await mergeCommand(first.agent.callId, "no-such-call");
    expect(unknown.status, unknown.text).toBe(404);
    const itself = await mergeCommand(first.agent.callId, first.agent.callId);
    expect(itself.status, itself.text).toBe(400);
    expect(JSON.stringify(itself.body)).toContain("target_call_id");
    const missing = await mergeCommand(first.agent.callId, undefined);
    expect(missing.status, missing.text).toBe(400);
    // The caller's leg is admin's, not agent1's: not theirs to merge.
    const theirParty = await mergeCommand(first.agent.callId, first.caller.callId);
    expect(theirParty.status, theirParty.text).toBe(403);

    // A third call still ringing agent1: a leg not bridged.
    const ringing = await t.phone("agent3").dial("1002");
    const offered = await t.phone("agent1").incoming();
    const notBridged = await mergeCommand(first.agent.callId, offered.callId);
    expect(notBridged.status, notBridged.text).toBe(400);
    expect(JSON.stringify(notBridged.body)).toContain("not bridged");
    ringing.cancel();
    await offered.reaches("ended");

    expect([first.agent, first.caller, second.agent, second.caller].map((c) => channel(c).state)).toEqual(before);
    expect(conferenceOf(channel(first.agent))).toBeUndefined();
    for (const c of [first.caller, second.caller]) c.hangup();
    await first.agent.reaches("ended");
    await second.agent.reaches("ended");
    await idle();
  });

  it("an admin may merge a user's two calls", async () => {
    const { first, second } = await twoLines();
    const res = await mergeCommand(first.agent.callId, second.agent.callId, t.token);
    expect(res.status, res.text).toBe(202);
    await second.agent.reaches("ended");
    expect(conferenceOf(channel(first.caller))).toBeDefined();
    first.agent.hangup();
    first.caller.hangup();
    await second.caller.reaches("ended");
    await idle();
  });
});
