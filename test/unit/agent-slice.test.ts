// The agent slice through the whole store, with a fake call-queue API, a fake event websocket and a
// manual clock: the state shown is the server's (read at connect and after each of the user's
// events, never changed before the server answers), the timer runs from last_action_time, wrap-up
// counts down and is extended or cancelled, per-queue availability, and refusals in words.
import { describe, expect, it } from "vitest";
import { ApiRequestError } from "../../renderer/api/client.js";
import { callqConsole, recipientStatus, toGregorian } from "../helpers/fake-callq.js";

const SALES = "q".repeat(32);

describe("agent slice", () => {
  it("reads the user's status when the events come online, with the time of the last change", async () => {
    const { store, callq, clock, me } = await callqConsole();
    expect(callq.calls("recipientStatus")).toEqual([{ method: "recipientStatus", args: [me] }]);
    // First answer: the default fake status (Away, never changed); now one with a time.
    const since = clock.now() - 65_000;
    callq.answers.recipientStatus = recipientStatus({ state: "Ready", lastActionAt: wholeSeconds(since) });
    await store.getState().loadAgentStatus();
    const agent = store.getState().agent;
    expect(agent.isRecipient).toBe(true);
    expect(agent.status?.state).toBe("Ready");
    // last_action_time is whole Gregorian seconds: the timer starts at that second.
    expect(agent.since).toBe(Math.floor(since / 1000) * 1000);
    expect(agent.error).toBeNull();
  });

  it("changes nothing on a button press until the server answers, then shows the answer", async () => {
    const { store, callq, me } = await callqConsole();
    callq.hold("setRecipientStatus");
    const pressed = store.getState().setAgentStatus("ready");
    expect(store.getState().agent.pending).toBe("ready");
    expect(store.getState().agent.status?.state).toBe("Away");
    // A second press while the first is on its way does not send again.
    expect(await store.getState().setAgentStatus("ready")).toBe(false);
    expect(callq.calls("setRecipientStatus")).toEqual([{ method: "setRecipientStatus", args: [me, "ready"] }]);

    await callq.release("setRecipientStatus", recipientStatus({ state: "Ready", lastActionAt: 1_700_000_000_000 }));
    expect(await pressed).toBe(true);
    expect(store.getState().agent.status?.state).toBe("Ready");
    expect(store.getState().agent.since).toBe(1_700_000_000_000);
    expect(store.getState().agent.pending).toBeNull();
  });

  it("sends a state asked while another is on its way once that one is answered, the newest only", async () => {
    const { store, callq, me } = await callqConsole();
    callq.hold("setRecipientStatus");
    const away = store.getState().setAgentStatus("away");
    // Alt+Y before the Away is answered: not lost, not sent alongside.
    const ready = store.getState().setAgentStatus("ready");
    expect(callq.calls("setRecipientStatus")).toEqual([{ method: "setRecipientStatus", args: [me, "away"] }]);
    await callq.release("setRecipientStatus", recipientStatus({ state: "Away", lastActionAt: 1_700_000_000_000 }));
    expect(await away).toBe(true);
    expect(callq.calls("setRecipientStatus")).toEqual([
      { method: "setRecipientStatus", args: [me, "away"] },
      { method: "setRecipientStatus", args: [me, "ready"] },
    ]);
    expect(store.getState().agent.pending).toBe("ready");
    await callq.release("setRecipientStatus", recipientStatus({ state: "Ready", lastActionAt: 1_700_000_001_000 }));
    expect(await ready).toBe(true);
    expect(store.getState().agent.status?.state).toBe("Ready");
    expect(store.getState().agent.pending).toBeNull();

    // Away, then Ready, then Away again before the first is answered: the Ready is dropped, the
    // second Away is the one on its way; nothing more is sent.
    const first = store.getState().setAgentStatus("away");
    const dropped = store.getState().setAgentStatus("ready");
    expect(await store.getState().setAgentStatus("away")).toBe(false);
    expect(await dropped).toBe(false);
    await callq.release("setRecipientStatus", recipientStatus({ state: "Away", lastActionAt: 1_700_000_002_000 }));
    expect(await first).toBe(true);
    expect(callq.calls("setRecipientStatus").map((c) => c.args[1])).toEqual(["away", "ready", "away"]);
    expect(store.getState().agent.status?.state).toBe("Away");

    // Wrap-up requests are not queued: a second one while the first is on its way is refused.
    callq.hold("wrapup");
    const extending = store.getState().extendWrapup();
    expect(await store.getState().cancelWrapup()).toBe(false);
    await callq.release("wrapup", recipientStatus({ state: "Wrapup-Time", lastActionAt: 1_700_000_003_000 }));
    expect(await extending).toBe(true);
    expect(callq.calls("wrapup").map((c) => c.args[1])).toEqual(["wrapup_extend"]);
  });

  it("follows the user's recipient events at once and reads the full status after each", async () => {
    const { store, callq, events, clock, me } = await callqConsole();
    const readsBefore = callq.calls("recipientStatus").length;
    await clock.advance(5_000);
    callq.hold("recipientStatus");
    events.emit(`callq.recipient.${me}`, "offer", {
      recipient_id: me,
      availability_state: "Call-Offer",
      previous_state: "Ready",
      queue_id: SALES,
      queue_name: "Sales",
      session_id: "s1",
      call_id: "c1",
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      queue_enter_time: toGregorian(clock.now() - 12_000),
    });
    const agent = store.getState().agent;
    expect(agent.status?.state).toBe("Call-Offer");
    expect(agent.status?.offeredCall).toMatchObject({ queueId: SALES, queueName: "Sales", callerName: "Casey Customer", callerNumber: "+14155550100" });
    expect(agent.since).toBe(clock.now());
    expect(callq.calls("recipientStatus").length).toBe(readsBefore + 1);

    // Another user's events are not this agent's.
    events.emit("callq.recipient.someone-else", "away", { recipient_id: "someone-else", availability_state: "Away" });
    expect(store.getState().agent.status?.state).toBe("Call-Offer");

    await callq.release("recipientStatus", recipientStatus({ state: "Call-Offer", lastActionAt: wholeSeconds(clock.now()) }));
    expect(store.getState().agent.status?.state).toBe("Call-Offer");
  });

  it("drops a status read that an event overtook and reads again", async () => {
    const { store, callq, events, me } = await callqConsole();
    callq.hold("recipientStatus");
    const read = store.getState().loadAgentStatus();
    events.emit(`callq.recipient.${me}`, "ready", { recipient_id: me, availability_state: "Ready", previous_state: "Away" });
    expect(store.getState().agent.status?.state).toBe("Ready");
    // The read sent before the event answers with the old state: it must not undo the event.
    await callq.release("recipientStatus", recipientStatus({ state: "Away" }));
    expect(store.getState().agent.status?.state).toBe("Ready");
    // It read again; that answer stands.
    await callq.release("recipientStatus", recipientStatus({ state: "Ready", lastActionAt: 1_700_000_000_000 }));
    await read;
    expect(store.getState().agent.status?.state).toBe("Ready");
    expect(store.getState().agent.since).toBe(1_700_000_000_000);
  });

  it("takes the reasons the server gives from events at once: set Away after missed offers, no phone registered", async () => {
    const { store, callq, events, me } = await callqConsole();
    callq.hold("recipientStatus");
    events.emit(`callq.recipient.${me}`, "reject", { recipient_id: me, availability_state: "Away", previous_state: "Call-Offer", away_reason: "missed_offers", missed_offers: 3 });
    expect(store.getState().agent.status).toMatchObject({ state: "Away", awayReason: "missed_offers", missedOffers: 3, unavailableReason: null });
    events.emit(`callq.recipient.${me}`, "ready", { recipient_id: me, availability_state: "Ready", previous_state: "Away" });
    expect(store.getState().agent.status).toMatchObject({ state: "Ready", awayReason: null });
    events.emit(`callq.recipient.${me}`, "unavailable", { recipient_id: me, availability_state: "Ready", available: false, unavailable_reason: "no_device" });
    expect(store.getState().agent.status).toMatchObject({ state: "Ready", unavailableReason: "no_device" });
    // A monitor event says nothing about them.
    events.emit(`callq.recipient.${me}`, "monitor", { recipient_id: me, active: true, target: "t", mode: "barge" });
    expect(store.getState().agent.status?.unavailableReason).toBe("no_device");
  });

  it("leaves the queues before signing out and shows the server's answer", async () => {
    const { store, callq, me } = await callqConsole();
    callq.answers.setRecipientStatus = recipientStatus({ state: "Not-Logged-In" });
    expect(await store.getState().leaveQueues("logout")).toBe(true);
    expect(callq.calls("setRecipientStatus").map((c) => c.args)).toEqual([[me, "logout"]]);
    expect(store.getState().agent.status?.state).toBe("Not-Logged-In");
  });

  it("counts the wrap-up down from the server's seconds; extend and cancel ask the server", async () => {
    const { store, callq, events, clock, me } = await callqConsole();
    events.emit(`callq.recipient.${me}`, "wrapup", { recipient_id: me, availability_state: "Wrapup-Time", previous_state: "On-A-Call", wrapup_time_seconds: 10 });
    const endsAt = clock.now() + 10_000;
    expect(store.getState().agent.wrapupEndsAt).toBe(endsAt);

    callq.answers.wrapup = recipientStatus({ state: "Wrapup-Time", wrapupSeconds: 37 });
    await clock.advance(3_000);
    expect(await store.getState().extendWrapup()).toBe(true);
    expect(callq.calls("wrapup").at(-1)?.args).toEqual([me, "wrapup_extend"]);
    expect(store.getState().agent.wrapupEndsAt).toBe(clock.now() + 37_000);

    callq.answers.wrapup = recipientStatus({ state: "Ready" });
    expect(await store.getState().cancelWrapup()).toBe(true);
    expect(callq.calls("wrapup").at(-1)?.args).toEqual([me, "wrapup_cancel"]);
    expect(store.getState().agent.status?.state).toBe("Ready");
    expect(store.getState().agent.wrapupEndsAt).toBeNull();
  });

  it("sets one queue's availability with the queue id", async () => {
    const { store, callq, me } = await callqConsole();
    callq.answers.setRecipientStatus = recipientStatus({ state: "Ready", queueAvailability: { [SALES]: false } });
    expect(await store.getState().setQueueAvailability(SALES, false)).toBe(true);
    expect(callq.calls("setRecipientStatus").at(-1)?.args).toEqual([me, "away", SALES]);
    expect(store.getState().agent.status?.queueAvailability).toEqual({ [SALES]: false });
  });

  it("says why the server refused, in its words, and shows the server's state again", async () => {
    const { store, callq } = await callqConsole();
    callq.answers.setRecipientStatus = new ApiRequestError("http", 400, "invalid_data", { action: { illegal: { message: "recipient x is not logged in" } } }, null, "400");
    const reads = callq.calls("recipientStatus").length;
    expect(await store.getState().setAgentStatus("ready")).toBe(false);
    expect(store.getState().agent.error).toBe("Could not make you Ready: recipient x is not logged in.");
    expect(callq.calls("recipientStatus").length).toBe(reads + 1);

    callq.answers.setRecipientStatus = new ApiRequestError("network", 0, "", null, null, "down");
    await store.getState().setAgentStatus("logout");
    expect(store.getState().agent.error).toBe("Could not log you out: the server cannot be reached.");
  });

  it("tells a user who is no recipient so", async () => {
    const { store, callq } = await callqConsole();
    callq.answers.recipientStatus = new ApiRequestError("http", 404, "bad_identifier", null, null, "404");
    await store.getState().loadAgentStatus();
    expect(store.getState().agent.isRecipient).toBe(false);
    expect(store.getState().agent.status).toBeNull();
  });

  it("reads the status again when the event websocket comes back, and forgets it on sign-out", async () => {
    const { store, callq, events } = await callqConsole();
    const reads = callq.calls("recipientStatus").length;
    events.reconnect();
    expect(callq.calls("recipientStatus").length).toBe(reads + 1);
    store.getState().signOut();
    expect(store.getState().agent.status).toBeNull();
  });
});

function wholeSeconds(ms: number): number {
  // The API keeps last_action_time in whole (Gregorian) seconds; the client hands the slice epoch ms of that second.
  return Math.floor(ms / 1000) * 1000;
}
