// Dispositions and wrap-up policies in the queue engine, on a real store with the server's time
// run by hand: each of the four policies, a required disposition holding the recipient back from
// Ready, and the disposition on the status and in the events.
import { afterEach, describe, expect, it } from "vitest";
import { CallqError } from "../../server/callq/engine.js";
import { ACCOUNT, callqRig, members, settle, TestCall, type CallqRig } from "../helpers/callq.js";

let rig: CallqRig;
afterEach(async () => {
  await rig.close();
});

const CODES = [
  { code: "sale", label: "Sale" },
  { code: "complaint", label: "Complaint" },
];

function status(id: string) {
  return rig.engine.recipientStatus(ACCOUNT, id);
}

/** An agent Ready in a new queue with `settings`, who takes one call and is on it; `hangup` ends it. */
async function onACall(settings: Record<string, unknown>): Promise<{ agent: string; queue: string; hangup: () => void; sessionId: string }> {
  rig = await callqRig();
  const agent = await rig.user("agent1");
  await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
  const queue = await rig.queue({ name: "Sales", members: members(agent), ...settings });
  const call = new TestCall("call-1", "Ann", "+15550001");
  void rig.engine.join(ACCOUNT, queue, call);
  await settle();
  const hangup = call.last().answer();
  await settle();
  const sessionId = call.last().request.sessionId;
  expect((await status(agent)).availability_state).toBe("On-A-Call");
  return { agent, queue, hangup, sessionId };
}

async function refused(work: Promise<unknown>, code: string): Promise<CallqError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CallqError);
  expect((err as CallqError).code).toBe(code);
  return err as CallqError;
}

describe("the default policy (timeboxed) is the hosted service's wrap-up", () => {
  it("a disposition set during the call is on the status and in events; the wrap-up runs its time and ends Ready", async () => {
    const { agent, queue, hangup, sessionId } = await onACall({ agent_wrapup_time: 5, dispositions: CODES });
    expect((await status(agent)).last_call).toMatchObject({ session_id: sessionId, queue_id: queue, dispositions: CODES, disposition_required: false, wrapup_policy: "timeboxed" });
    const set = await rig.engine.setDisposition(ACCOUNT, agent, { code: "sale", note: "two seats" });
    expect(set.disposition).toMatchObject({ code: "sale", label: "Sale", note: "two seats" });
    const onRecipient = rig.events.find((e) => e.routing_key === `callq.recipient.${agent}` && e.name === "disposition");
    expect(onRecipient?.data).toMatchObject({ session_id: sessionId, queue_id: queue, caller_id_number: "+15550001", disposition: { code: "sale", note: "two seats" } });
    const onSession = rig.events.find((e) => e.routing_key === `callq.session.${sessionId}` && e.name === "disposition");
    expect(onSession?.data).toMatchObject({ recipient_id: agent, queue_id: queue, disposition: { code: "sale", label: "Sale" } });

    hangup();
    await settle();
    expect(await status(agent)).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 5 });
    await rig.scheduler.advance(5000);
    expect(await status(agent)).toMatchObject({ availability_state: "Ready", last_call: { disposition: { code: "sale" } } });
    expect(rig.names("recipient", agent)).toEqual(["login", "ready", "offer", "delivered", "disposition", "wrapup", "ready"]);
  });

  it("a code the queue does not have, or a session that is not the recipient's last call, is refused and changes nothing", async () => {
    const { agent } = await onACall({ dispositions: CODES });
    const bad = await refused(rig.engine.setDisposition(ACCOUNT, agent, { code: "refund", note: "" }), "bad_disposition");
    expect(bad.message).toContain("sale, complaint");
    await refused(rig.engine.setDisposition(ACCOUNT, agent, { code: "sale", note: "", sessionId: "other" }), "no_session");
    expect((await status(agent)).last_call?.disposition).toBeUndefined();
    expect(rig.names("recipient", agent)).not.toContain("disposition");
    const idle = await rig.user("agent2");
    await rig.engine.recipientAction(ACCOUNT, idle, "login");
    await refused(rig.engine.setDisposition(ACCOUNT, idle, { code: "sale", note: "" }), "illegal");
  });
});

describe("a required disposition", () => {
  it("policy required: the wrap-up has no end, Ready is refused until the disposition is set, then the recipient goes Ready", async () => {
    const { agent, hangup } = await onACall({ agent_wrapup_time: 5, dispositions: CODES, disposition_required: true, wrapup_policy: "required" });
    hangup();
    await settle();
    expect(await status(agent)).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 0, disposition_pending: true });
    await rig.scheduler.advance(600_000);
    expect((await status(agent)).availability_state).toBe("Wrapup-Time");
    const err = await refused(rig.engine.recipientAction(ACCOUNT, agent, "ready"), "disposition_required");
    expect(err.message).toContain("disposition");
    await refused(rig.engine.recipientAction(ACCOUNT, agent, "wrapup_cancel"), "disposition_required");
    await refused(rig.engine.recipientAction(ACCOUNT, agent, "wrapup_extend"), "illegal");
    expect((await status(agent)).availability_state).toBe("Wrapup-Time");

    await rig.engine.setDisposition(ACCOUNT, agent, { code: "complaint", note: "late delivery" });
    const after = await status(agent);
    expect(after.availability_state, "the recipient ends a required wrap-up themself").toBe("Wrapup-Time");
    expect(after.disposition_pending).toBeUndefined();
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "ready")).availability_state).toBe("Ready");
  });

  it("policy required without a required disposition: the recipient ends the wrap-up when they like", async () => {
    const { agent, hangup } = await onACall({ dispositions: CODES, wrapup_policy: "required" });
    hangup();
    await settle();
    await rig.scheduler.advance(3_600_000);
    expect((await status(agent)).availability_state).toBe("Wrapup-Time");
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "ready")).availability_state).toBe("Ready");
  });

  it("policy timeboxed: the time runs out, the recipient stays in wrap-up until the disposition is set, then Ready at once", async () => {
    const { agent, hangup } = await onACall({ agent_wrapup_time: 10, dispositions: CODES, disposition_required: true });
    hangup();
    await settle();
    expect(await status(agent)).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 10 });
    await rig.scheduler.advance(10_000);
    expect(await status(agent)).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 0, disposition_pending: true });
    await rig.scheduler.advance(60_000);
    expect((await status(agent)).availability_state).toBe("Wrapup-Time");
    await rig.engine.setDisposition(ACCOUNT, agent, { code: "sale", note: "" });
    expect((await status(agent)).availability_state).toBe("Ready");
    expect(rig.names("recipient", agent).slice(-4)).toEqual(["wrapup", "wrapup", "disposition", "ready"]);
  });

  it("policy timeboxed, disposition set in time: the wrap-up may be left early", async () => {
    const { agent, hangup } = await onACall({ agent_wrapup_time: 30, dispositions: CODES, disposition_required: true });
    hangup();
    await settle();
    await rig.engine.setDisposition(ACCOUNT, agent, { code: "sale", note: "" });
    expect((await status(agent)).availability_state).toBe("Wrapup-Time");
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "wrapup_cancel")).availability_state).toBe("Ready");
  });

  it("policy optional: Ready at once after the call, unless the disposition is missing: then held in wrap-up until it is set", async () => {
    const { agent, hangup } = await onACall({ agent_wrapup_time: 30, dispositions: CODES, wrapup_policy: "optional" });
    hangup();
    await settle();
    expect(await status(agent)).toMatchObject({ availability_state: "Ready", last_call: { wrapup_policy: "optional" } });
    await rig.close();

    const second = await onACall({ agent_wrapup_time: 30, dispositions: CODES, wrapup_policy: "optional", disposition_required: true });
    second.hangup();
    await settle();
    expect(await status(second.agent)).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 0, disposition_pending: true });
    await rig.engine.setDisposition(ACCOUNT, second.agent, { code: "sale", note: "" });
    expect((await status(second.agent)).availability_state).toBe("Ready");
  });

  it("Away is allowed with the disposition missing, but Ready from Away is refused until it is set", async () => {
    const { agent, hangup } = await onACall({ dispositions: CODES, disposition_required: true, wrapup_policy: "required" });
    hangup();
    await settle();
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "lunch" })).availability_state).toBe("Away");
    await refused(rig.engine.recipientAction(ACCOUNT, agent, "ready"), "disposition_required");
    expect(await status(agent)).toMatchObject({ availability_state: "Away", away_reason: "lunch", disposition_pending: true });
    // Logging out is never refused, and the requirement outlives it: login_ready logs in, Away.
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "logout")).availability_state).toBe("Not-Logged-In");
    await refused(rig.engine.recipientAction(ACCOUNT, agent, "login_ready"), "disposition_required");
    expect(await status(agent)).toMatchObject({ availability_state: "Away", disposition_pending: true });
    await rig.engine.setDisposition(ACCOUNT, agent, { code: "sale", note: "" });
    expect((await status(agent)).availability_state).toBe("Away");
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "ready")).availability_state).toBe("Ready");
  });
});

describe("policy timeboxed_no_exit", () => {
  it("Ready is refused while the time runs; Away asked meanwhile is kept and applied when it ends, with its reason", async () => {
    const { agent, hangup } = await onACall({ agent_wrapup_time: 20, wrapup_policy: "timeboxed_no_exit" });
    hangup();
    await settle();
    const err = await refused(rig.engine.recipientAction(ACCOUNT, agent, "ready"), "wrapup_locked");
    expect(err.message).toContain("early exit");
    await refused(rig.engine.recipientAction(ACCOUNT, agent, "wrapup_cancel"), "wrapup_locked");
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "away", { reason: "meeting" })).availability_state).toBe("Wrapup-Time");
    await rig.scheduler.advance(19_000);
    expect((await status(agent)).availability_state).toBe("Wrapup-Time");
    await rig.scheduler.advance(1000);
    expect(await status(agent)).toMatchObject({ availability_state: "Away", away_reason: "meeting" });
  });

  it("without a request the time running out makes the recipient Ready; wrapup_extend extends the locked time", async () => {
    const { agent, hangup } = await onACall({ agent_wrapup_time: 10, wrapup_policy: "timeboxed_no_exit" });
    hangup();
    await settle();
    expect((await rig.engine.recipientAction(ACCOUNT, agent, "wrapup_extend")).wrapup_time_seconds).toBe(20);
    await rig.scheduler.advance(15_000);
    await refused(rig.engine.recipientAction(ACCOUNT, agent, "ready"), "wrapup_locked");
    await rig.scheduler.advance(5000);
    expect((await status(agent)).availability_state).toBe("Ready");
  });
});

describe("a queue document edited by hand", () => {
  it("a required disposition with no code to give requires nothing; an unknown policy is the default", async () => {
    const { agent, hangup } = await onACall({ agent_wrapup_time: 5, disposition_required: true, dispositions: "sale", wrapup_policy: "sometimes" });
    expect((await status(agent)).last_call).toMatchObject({ dispositions: [], disposition_required: false, wrapup_policy: "timeboxed" });
    hangup();
    await settle();
    await rig.scheduler.advance(5000);
    expect((await status(agent)).availability_state).toBe("Ready");
  });
});
