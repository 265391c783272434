// Supervision on a queue call with the real call engine and werift phones: the supervisor's phone
// rings with the agent's name, and once answered eavesdrops (hears both, heard by nobody),
// whispers (heard by the agent only) and barges (heard by both), switching on the live call;
// the wiretap status follows; the supervisor hanging up, or the call ending, ends it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MonitorError, monitorOf, startMonitor, type Monitor } from "../../server/callq-host/monitor.js";
import type { MonitorMode } from "../../server/monitor-mode.js";
import { connected, sleep, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { startQueueLab, type QueueLab } from "./harness.js";

const CALLER = 500;
const AGENT = 1000;
const SUPERVISOR = 1500;
const TONES = [CALLER, AGENT, SUPERVISOR];

let t: QueueLab;
let agent1: string;
let supervisor: string;

beforeAll(async () => {
  t = await startQueueLab();
  for (const username of ["admin", "agent1", "supervisor"]) await t.phone(username);
  agent1 = await t.userId("agent1");
  supervisor = await t.userId("supervisor");
});
afterEach(async () => {
  await t.callq.recipientAction(t.accountId, agent1, "logout");
  await t.idle();
  expect(t.warnings.filter((w) => w.startsWith("error"))).toEqual([]);
});
afterAll(async () => {
  await t?.close();
});

/** A queue call from admin answered by agent1, each side playing its tone. */
async function queueCall(): Promise<{ caller: PhoneCall; agent: PhoneCall }> {
  await t.callq.recipientAction(t.accountId, agent1, "login_ready");
  const caller = await (await t.phone("admin")).dial("5001");
  const agent = await (await t.phone("agent1")).incoming();
  await agent.answer();
  await connected(caller, agent);
  await t.recipientIs("agent1", "On-A-Call");
  await caller.say(`tone_stream://${CALLER}`);
  await agent.say(`tone_stream://${AGENT}`);
  return { caller, agent };
}

function monitor(mode: MonitorMode): Promise<Monitor> {
  return startMonitor({ calls: t.engine, callq: t.callq, accountId: t.accountId, supervisorId: supervisor, target: agent1, mode });
}

/** The supervisor's phone answers the monitor call and plays its tone. */
async function answerMonitor(supervision: Monitor): Promise<PhoneCall> {
  const call = await (await t.phone("supervisor")).incoming();
  expect(call.from).toEqual({ user: "1002", display: "Monitor: Alex Agent" });
  await call.answer();
  await connected(call);
  expect(await supervision.connected).toBe(true);
  await call.say(`tone_stream://${SUPERVISOR}`);
  return call;
}

async function wiretap(): Promise<{ target?: string; mode?: string }> {
  // setWiretap applies on the engine's next turn.
  await sleep(20);
  const status = await t.callq.recipientStatus(t.accountId, supervisor);
  return { target: status.wiretapping_recipient, mode: status.wiretap_mode };
}

describe("a supervisor on an agent's queue call", () => {
  it("eavesdrops, whispers and barges, switching on the live call, heard as each mode allows", async () => {
    const { caller, agent } = await queueCall();
    const supervision = await monitor("eavesdrop");
    expect(supervision.state).toBe("ringing");
    const sup = await answerMonitor(supervision);
    expect(supervision.state).toBe("monitoring");
    expect(await wiretap()).toEqual({ target: agent1, mode: "eavesdrop" });

    const hear = () => Promise.all([caller.hears(TONES), agent.hears(TONES), sup.hears(TONES)]);
    let [callerHears, agentHears, supHears] = await hear();
    expect(supHears[CALLER], "eavesdrop: the supervisor hears the caller").toBeGreaterThan(0.3);
    expect(supHears[AGENT], "eavesdrop: the supervisor hears the agent").toBeGreaterThan(0.3);
    expect(agentHears[CALLER]).toBeGreaterThan(0.9);
    expect(agentHears[SUPERVISOR], "eavesdrop: the agent does not hear the supervisor").toBeLessThan(0.01);
    expect(callerHears[SUPERVISOR], "eavesdrop: the caller does not hear the supervisor").toBeLessThan(0.01);

    // Asking again with another mode changes the live supervision.
    expect(await monitor("whisper")).toBe(supervision);
    expect(await wiretap()).toEqual({ target: agent1, mode: "whisper" });
    [callerHears, agentHears, supHears] = await hear();
    expect(agentHears[SUPERVISOR], "whisper: the agent hears the supervisor").toBeGreaterThan(0.3);
    expect(agentHears[CALLER]).toBeGreaterThan(0.3);
    expect(callerHears[SUPERVISOR], "whisper: the caller does not").toBeLessThan(0.01);
    expect(callerHears[AGENT]).toBeGreaterThan(0.9);
    expect(supHears[CALLER] + supHears[AGENT]).toBeGreaterThan(0.8);

    await monitor("barge");
    expect(await wiretap()).toEqual({ target: agent1, mode: "barge" });
    [callerHears, agentHears] = await hear();
    expect(callerHears[SUPERVISOR], "barge: the caller hears the supervisor").toBeGreaterThan(0.3);
    expect(agentHears[SUPERVISOR], "barge: the agent hears the supervisor").toBeGreaterThan(0.3);

    // One event per change on each side, naming nobody (any user of the account may receive them);
    // the agent's status says who listens, how, and on which leg.
    const monitorEvents = t.events.filter((e) => e.routing_key === `callq.recipient.${supervisor}` && e.name === "monitor").map((e) => e.data);
    expect(monitorEvents).toEqual([1, 2, 3].map(() => ({ account_id: t.accountId, recipient_id: supervisor, active: true })));
    const agentEvents = t.events.filter((e) => e.routing_key === `callq.recipient.${agent1}` && e.name === "wiretap").map((e) => e.data);
    expect(agentEvents).toEqual([1, 2, 3].map(() => ({ account_id: t.accountId, recipient_id: agent1 })));
    const tapped = await t.callq.recipientStatus(t.accountId, agent1);
    expect(tapped.wiretapped_by).toEqual([{ recipient_id: supervisor, name: expect.any(String), mode: "barge", call_id: agent.callId }]);

    // The supervisor leaves; the call goes on without them.
    sup.hangup();
    await supervision.ended;
    expect(await wiretap()).toEqual({ target: undefined, mode: undefined });
    expect((await t.callq.recipientStatus(t.accountId, agent1)).wiretapped_by).toBeUndefined();
    expect(monitorOf(t.engine, t.accountId, supervisor)).toBeUndefined();
    [callerHears, agentHears] = await hear();
    expect(agentHears[SUPERVISOR]).toBeLessThan(0.01);
    expect(callerHears[SUPERVISOR]).toBeLessThan(0.01);
    expect(callerHears[AGENT]).toBeGreaterThan(0.9);
    caller.hangup();
    await agent.reaches("ended");
  });

  it("hangs the supervisor up when the call ends, and clears the wiretap", async () => {
    const { caller } = await queueCall();
    const supervision = await monitor("barge");
    const sup = await answerMonitor(supervision);
    expect(await wiretap()).toEqual({ target: agent1, mode: "barge" });
    caller.hangup();
    await sup.reaches("ended");
    expect(sup.endedBy).toBe("remote-bye");
    await supervision.ended;
    expect(await wiretap()).toEqual({ target: undefined, mode: undefined });
  });

  it("stops ringing the supervisor when the call ends first", async () => {
    const { caller } = await queueCall();
    const supervision = await monitor("eavesdrop");
    const ringing = await (await t.phone("supervisor")).incoming();
    caller.hangup();
    await ringing.reaches("ended");
    expect(ringing.endedBy).toBe("cancelled");
    expect(await supervision.connected).toBe(false);
  });

  it("refuses an agent on no call, oneself, and a supervisor whose phones are not registered", async () => {
    const refusal = (p: Promise<unknown>) => p.then(() => "started", (err: unknown) => (err instanceof MonitorError ? err.code : String(err)));
    expect(await refusal(monitor("eavesdrop"))).toBe("no_call");
    expect(await refusal(startMonitor({ calls: t.engine, callq: t.callq, accountId: t.accountId, supervisorId: agent1, target: agent1, mode: "barge" }))).toBe("self");
    const { caller } = await queueCall();
    const phone = await t.phone("supervisor");
    phone.registered = false;
    try {
      expect(await refusal(monitor("eavesdrop"))).toBe("no_device");
    } finally {
      phone.registered = true;
    }
    await until(() => monitorOf(t.engine, t.accountId, supervisor) === undefined, "the failed supervision to be gone");
    caller.hangup();
  });
});
