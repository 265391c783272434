// Away reasons in the queue engine, on a real store with the server's time run by hand: the
// reason and its time in the status and the events, a new reason while Away, Away asked during a
// call, the engine's own missed_offers, and all of it across a restart.
import { afterEach, describe, expect, it } from "vitest";
import { toGregorianSeconds } from "../../server/clock.js";
import { ACCOUNT, callqRig, members, settle, TestCall, type CallqRig } from "../helpers/callq.js";

let rig: CallqRig;
afterEach(async () => {
  await rig.close();
});

function status(id: string) {
  return rig.engine.recipientStatus(ACCOUNT, id);
}

function recipientEvents(id: string) {
  return rig.events.filter((e) => e.routing_key === `callq.recipient.${id}`);
}

describe("away reasons", () => {
  it("Away with a reason shows it and since when; a new reason restarts the time; Ready clears both", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    const wentAt = rig.scheduler.now();
    const away = await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "break" });
    expect(away).toMatchObject({ availability_state: "Away", away_reason: "break", away_since: toGregorianSeconds(wentAt) });
    expect(recipientEvents(agent).at(-1)).toMatchObject({ name: "away", data: { away_reason: "break", away_since: toGregorianSeconds(wentAt), previous_state: "Ready" } });

    await rig.scheduler.advance(900_000);
    const lunchAt = rig.scheduler.now();
    expect(await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "lunch" })).toMatchObject({ away_reason: "lunch", away_since: toGregorianSeconds(lunchAt) });
    expect(recipientEvents(agent).at(-1)).toMatchObject({ name: "away", data: { away_reason: "lunch", previous_state: "Away" } });
    const events = recipientEvents(agent).length;
    await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "lunch" });
    expect(recipientEvents(agent), "the same reason again is no change").toHaveLength(events);
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "away")).away_reason, "nor is Away without a reason").toBe("lunch");
    expect(recipientEvents(agent)).toHaveLength(events);

    const ready = await rig.engine.recipientAction(ACCOUNT, agent, "ready");
    expect(ready.away_reason).toBeUndefined();
    expect(ready.away_since).toBeUndefined();
    const plain = await rig.engine.recipientAction(ACCOUNT, agent, "away");
    expect(plain.away_reason, "Away without a reason has none").toBeUndefined();
    expect(plain.away_since).toBe(toGregorianSeconds(rig.scheduler.now()));
  });

  it("Away with a reason asked during a call is applied after it, with the reason", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    const queue = await rig.queue({ name: "Q", members: members(agent) });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    const hangup = call.last().answer();
    await settle();
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "training" })).availability_state).toBe("On-A-Call");
    hangup();
    await settle();
    expect(await status(agent)).toMatchObject({ availability_state: "Away", away_reason: "training" });
    expect(recipientEvents(agent).at(-1)).toMatchObject({ name: "away", data: { away_reason: "training" } });
  });

  it("the engine's missed_offers stays as it was: set with the count, replaced by a chosen reason", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    const queue = await rig.queue({ name: "Q", max_missed_offers: 1, members: members(agent) });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().resolve({ kind: "rejected" });
    await settle();
    expect(await status(agent)).toMatchObject({ availability_state: "Away", away_reason: "missed_offers", missed_offers: 1, away_since: toGregorianSeconds(rig.scheduler.now()) });
    expect(recipientEvents(agent).at(-1)).toMatchObject({ name: "reject", data: { away_reason: "missed_offers", missed_offers: 1 } });
    const chosen = await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "break" });
    expect(chosen.away_reason).toBe("break");
    expect(chosen.missed_offers).toBeUndefined();
  });

  it("the reason and its time survive a restart, as does a reason asked for during a call", async () => {
    rig = await callqRig();
    const [a, b] = [await rig.user("a"), await rig.user("b")];
    await rig.engine.recipientAction(ACCOUNT, a, "login_ready");
    await rig.engine.recipientAction(ACCOUNT, b, "login_ready");
    await rig.engine.recipientAction(ACCOUNT, a, "away", { reason: "meeting" });
    const since = toGregorianSeconds(rig.scheduler.now());
    const queue = await rig.queue({ name: "Q", members: members(b) });
    void rig.engine.join(ACCOUNT, queue, new TestCall("c"));
    await settle();
    const call = (await rig.engine.queueSessions(ACCOUNT, queue))[0];
    expect(call?.recipient_id).toBe(b);
    rig = await rig.restart();
    expect(await status(a)).toMatchObject({ availability_state: "Away", away_reason: "meeting", away_since: since });
    // b was ringing: back Ready, as any busy recipient.
    expect((await status(b)).availability_state).toBe("Ready");
  });

  it("Away asked during a call with a reason comes back Away with it after a restart", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent1");
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    const queue = await rig.queue({ name: "Q", members: members(agent) });
    const call = new TestCall("c");
    void rig.engine.join(ACCOUNT, queue, call);
    await settle();
    call.last().answer();
    await settle();
    await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "lunch" });
    rig = await rig.restart();
    expect(await status(agent)).toMatchObject({ availability_state: "Away", away_reason: "lunch" });
  });
});
