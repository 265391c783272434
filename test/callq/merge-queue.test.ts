// A queue call merged with a direct call (real call and queue engines, werift phones): the agent
// stays On-A-Call through the merge, since the queue's call goes on in the conference, and wraps
// up once their leg leaves it; the caller and the other party then keep talking.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Channel } from "../../server/calls/index.js";
import { connected, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { startQueueLab, type QueueLab } from "./harness.js";

let t: QueueLab;
let sales: string;

beforeAll(async () => {
  t = await startQueueLab();
  for (const username of ["admin", "agent1", "agent2"]) await t.phone(username);
  sales = await t.queueId("Sales");
  await t.patchQueue(sales, { ring_timeout: 5, agent_wrapup_time: 1, tick_time: 500 });
});
afterEach(async () => {
  await t.callq.recipientAction(t.accountId, await t.userId("agent1"), "logout");
  for (const leg of t.engine.channels.all()) leg.hangup("NORMAL_CLEARING");
  await t.idle();
  expect(t.warnings.filter((w) => w.startsWith("error"))).toEqual([]);
});
afterAll(async () => {
  await t?.close();
});

function channel(call: PhoneCall): Channel {
  const found = t.engine.channels.get(call.callId);
  if (!found) throw new Error(`no live channel ${call.callId}`);
  return found;
}

describe("a merged queue call", () => {
  it("keeps the agent On-A-Call through the merge and wraps up when the agent leaves the conference", async () => {
    const agent1 = await t.userId("agent1");
    await t.callq.recipientAction(t.accountId, agent1, "login_ready");
    const agentPhone = await t.phone("agent1");
    const caller = await (await t.phone("admin")).dial("5001");
    await caller.reaches("talking");
    const queueLine = await agentPhone.incoming();
    await queueLine.answer();
    await connected(caller, queueLine);
    await t.recipientIs("agent1", "On-A-Call");
    await queueLine.hold();

    const colleague = await (await t.phone("agent2")).dial("1002");
    const directLine = await agentPhone.incoming();
    await directLine.answer();
    await colleague.reaches("talking");
    await connected(colleague, directLine);

    t.engine.commands.merge(channel(queueLine), channel(directLine));
    await directLine.reaches("ended");
    await queueLine.unhold();
    // Longer than the wrap-up (on the server's clock): the queue still counts the call as going on.
    await t.clock.advance(1500);
    expect((await t.callq.recipientStatus(t.accountId, agent1)).availability_state).toBe("On-A-Call");

    queueLine.hangup();
    await t.recipientIs("agent1", "Wrapup-Time");
    await caller.say("tone_stream://500");
    await colleague.say("tone_stream://2000");
    const [callerHears, colleagueHears] = await Promise.all([caller.hears([2000]), colleague.hears([500])]);
    expect(callerHears[2000]).toBeGreaterThan(0.8);
    expect(colleagueHears[500]).toBeGreaterThan(0.8);
    await t.clock.advance(1000);
    await t.recipientIs("agent1", "Ready");
    caller.hangup();
    await until(() => colleague.state === "ended", "the colleague's call to end");
  });
});
