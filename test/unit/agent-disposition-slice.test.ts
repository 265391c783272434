// The agent slice's Away reasons and dispositions through the whole store, with a fake call-queue
// API: the account's reasons read at connect, Away sent with a reason, the disposition sent for
// the last call's session and the answer shown, and a refusal in the server's words.
import { describe, expect, it } from "vitest";
import { ApiRequestError } from "../../renderer/api/client.js";
import type { LastQueueCall } from "../../renderer/api/callq.js";
import { callqConsole, recipientStatus } from "../helpers/fake-callq.js";

const CALL: LastQueueCall = {
  queueId: "q1",
  queueName: "Sales",
  sessionId: "s1",
  callId: "c1",
  callerName: "Casey",
  callerNumber: "+15550001",
  enteredAt: 0,
  dispositions: [{ code: "sale", label: "Sale" }],
  dispositionRequired: true,
  wrapupPolicy: "required",
  disposition: null,
};

describe("agent slice: away reasons and dispositions", () => {
  it("reads the account's Away reasons at connect and sends Away with the one chosen", async () => {
    const { store, callq, me } = await callqConsole();
    expect(callq.calls("awayReasons")).toHaveLength(1);
    callq.answers.awayReasons = { reasons: [{ code: "lunch", label: "Lunch" }], engineReasons: [] };
    callq.answers.setRecipientStatus = recipientStatus({ state: "Away", awayReason: "lunch", awaySince: 1_700_000_000_000 });
    expect(await store.getState().setAgentStatus("away", "lunch")).toBe(true);
    expect(callq.calls("setRecipientStatus").at(-1)).toEqual({ method: "setRecipientStatus", args: [me, "away", undefined, "lunch"] });
    expect(store.getState().agent.status).toMatchObject({ state: "Away", awayReason: "lunch" });
  });

  it("sends the disposition for the last call's session and shows the status the server answers", async () => {
    const { store, callq, me } = await callqConsole();
    callq.answers.recipientStatus = recipientStatus({ state: "Wrapup-Time", dispositionPending: true, lastCall: CALL });
    await store.getState().loadAgentStatus();
    callq.answers.disposition = recipientStatus({ state: "Wrapup-Time", lastCall: { ...CALL, disposition: { code: "sale", label: "Sale", note: "two seats" } } });
    expect(await store.getState().setDisposition("sale", "two seats")).toBe(true);
    expect(callq.calls("setDisposition")).toEqual([{ method: "setDisposition", args: [me, { code: "sale", note: "two seats", sessionId: "s1" }] }]);
    expect(store.getState().agent.status).toMatchObject({ dispositionPending: false, lastCall: { disposition: { code: "sale" } } });
    expect(store.getState().agent.dispositionError).toBeNull();
  });

  it("a refused disposition is said in the server's words; nothing is sent without a last call", async () => {
    const { store, callq } = await callqConsole();
    expect(await store.getState().setDisposition("sale", "")).toBe(false);
    expect(callq.calls("setDisposition")).toHaveLength(0);
    callq.answers.recipientStatus = recipientStatus({ state: "Wrapup-Time", lastCall: CALL });
    await store.getState().loadAgentStatus();
    callq.answers.disposition = new ApiRequestError("http", 400, "invalid_data", { code: { enum: { message: "refund is not a disposition of queue Sales (sale)" } } }, null, "400");
    expect(await store.getState().setDisposition("refund", "")).toBe(false);
    expect(store.getState().agent.dispositionError).toBe("Could not save the disposition: refund is not a disposition of queue Sales (sale).");
  });
});
