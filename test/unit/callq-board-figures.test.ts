// The queue engine's figures behind the supervisor's board, on a real store with time run by hand:
// every missed offer (rejected, rung out, nobody to ring) counts once in the queue's missed_offers
// and in that recipient's missed_calls, and the two always agree; a caller timing out is the spec's
// missed_sessions, apart. And the monitored agent's status names who listens in, and how.
import { afterEach, describe, expect, it } from "vitest";
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

async function missedCalls(ids: readonly string[]): Promise<number> {
  let sum = 0;
  for (const id of ids) sum += (await rig.engine.recipientStatus(ACCOUNT, id)).stats.missed_calls;
  return sum;
}

describe("the board's Missed", () => {
  it("counts each offer let go, as the recipients' missed_calls do; timed-out callers apart", async () => {
    rig = await callqRig();
    const agents = await readyAgents("a", "b");
    const [a = "", b = ""] = agents;
    const queue = await rig.queue({ name: "Q", timeout: 60, tick_time: 250, members: members(a, b) });
    const call = new TestCall("c");
    const done = rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().resolve({ kind: "rejected" });
    await settle();
    call.last().resolve({ kind: "timeout" });
    await settle();
    await rig.scheduler.advance(250);
    call.last().resolve({ kind: "unreachable" });
    await settle();
    let stats = (await rig.engine.queueStatus(ACCOUNT, queue)).stats;
    expect(stats).toMatchObject({ missed_offers: 3, missed_sessions: 0, total_sessions: 1 });
    expect(await missedCalls(agents)).toBe(3);

    // Nobody answers before the queue's timeout: one timed-out session, no further missed offer.
    await rig.scheduler.advance(60_000);
    expect(await done).toEqual({ kind: "timeout" });
    stats = (await rig.engine.queueStatus(ACCOUNT, queue)).stats;
    expect(stats.missed_sessions).toBe(1);
    expect(stats.missed_offers).toBe(await missedCalls(agents));
  });

  it("a withdrawn offer (the caller hung up while it rang) is no miss", async () => {
    rig = await callqRig();
    const [a = ""] = await readyAgents("a");
    const queue = await rig.queue({ name: "Q", members: members(a) });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.hangup();
    await settle();
    expect((await rig.engine.queueStatus(ACCOUNT, queue)).stats).toMatchObject({ missed_offers: 0, abandoned_sessions: 1 });
    expect(await missedCalls([a])).toBe(0);
  });
});

describe("who listens in", () => {
  it("the agent's status lists each supervisor, their name and mode, switched live and cleared", async () => {
    rig = await callqRig();
    const [agent = ""] = await readyAgents("agent1");
    const sam = await rig.user("sam", { first_name: "Sam", last_name: "Super" });
    rig.engine.setWiretap(ACCOUNT, sam, { target: agent, mode: "whisper", callId: "leg-1" });
    await settle();
    expect((await rig.engine.recipientStatus(ACCOUNT, agent)).wiretapped_by).toEqual([{ recipient_id: sam, name: "Sam Super", mode: "whisper", call_id: "leg-1" }]);
    // The agent's own key carries a bare event, so their console reads its status again.
    expect(rig.events.filter((e) => e.routing_key === `callq.recipient.${agent}` && e.name === "wiretap").map((e) => e.data)).toEqual([{ account_id: ACCOUNT, recipient_id: agent }]);

    rig.engine.setWiretap(ACCOUNT, sam, { target: agent, mode: "barge", callId: "leg-1" });
    await settle();
    expect((await rig.engine.recipientStatus(ACCOUNT, agent)).wiretapped_by).toMatchObject([{ mode: "barge" }]);
    rig.engine.setWiretap(ACCOUNT, sam, undefined);
    await settle();
    expect((await rig.engine.recipientStatus(ACCOUNT, agent)).wiretapped_by).toBeUndefined();
    expect(rig.names("recipient", agent).filter((n) => n === "wiretap")).toHaveLength(3);
  });
});
