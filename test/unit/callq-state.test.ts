// The queue engine's pure parts: the recipient and session state tables and the four routers.
import { describe, expect, it } from "vitest";
import { AVAILABILITY_STATES, IllegalRecipientTransition, step, type AvailabilityState, type RecipientTrigger } from "../../server/callq/recipient-state.js";
import { IllegalSessionTransition, listedState, SESSION_STATES, sessionStep, type SessionTrigger } from "../../server/callq/session-state.js";
import { pickRecipient, RoundMemory, type Candidate } from "../../server/callq/queue-router.js";
import { queueConfigOf, withoutAliases } from "../../server/callq/queue-config.js";

const calm = { pendingAway: false };

describe("recipient state machine", () => {
  const legal: [AvailabilityState, RecipientTrigger, AvailabilityState, string][] = [
    ["Not-Logged-In", "login", "Away", "login"],
    ["Away", "ready", "Ready", "ready"],
    ["Ready", "away", "Away", "away"],
    ["Ready", "offer", "Call-Offer", "offer"],
    ["Call-Offer", "answered", "On-A-Call", "delivered"],
    ["Call-Offer", "missed", "Ready", "reject"],
    ["Call-Offer", "withdrawn", "Ready", "ready"],
    ["Call-Offer", "away", "Away", "away"],
    ["Wrapup-Time", "wrapup_done", "Ready", "ready"],
    ["Wrapup-Time", "wrapup_extend", "Wrapup-Time", "wrapup"],
    ["Wrapup-Time", "wrapup_cancel", "Ready", "ready"],
    ["Wrapup-Time", "logout", "Not-Logged-In", "logout"],
    ["On-A-Call", "logout", "Not-Logged-In", "logout"],
  ];
  it.each(legal)("%s --%s--> %s emits %s", (from, trigger, to, event) => {
    const taken = step(from, trigger, calm);
    expect(taken).toMatchObject({ from, to, event });
  });

  it("a handled call goes to wrap-up when the queue has one, else straight to Ready", () => {
    expect(step("On-A-Call", "call_ended", { ...calm, wrapupSeconds: 10 })).toMatchObject({ to: "Wrapup-Time", event: "wrapup" });
    expect(step("On-A-Call", "call_ended", { ...calm, wrapupSeconds: 0 })).toMatchObject({ to: "Ready", event: "ready" });
  });

  it("Away asked for during a call is applied when the call or its wrap-up ends", () => {
    expect(step("On-A-Call", "call_ended", { pendingAway: true, wrapupSeconds: 0 })).toMatchObject({ to: "Away", clearsPendingAway: true });
    expect(step("Wrapup-Time", "wrapup_done", { pendingAway: true })).toMatchObject({ to: "Away" });
    expect(step("Call-Offer", "missed", { pendingAway: true })).toMatchObject({ to: "Away" });
  });

  it("force_away_on_reject sends a missed offer to Away", () => {
    expect(step("Call-Offer", "missed", { ...calm, forceAway: true })).toMatchObject({ to: "Away", event: "reject" });
  });

  const illegal: [AvailabilityState, RecipientTrigger][] = [
    ["Not-Logged-In", "ready"],
    ["Not-Logged-In", "away"],
    ["Not-Logged-In", "logout"],
    ["Away", "offer"],
    ["Call-Offer", "offer"],
    ["On-A-Call", "offer"],
    ["Ready", "answered"],
    ["Ready", "wrapup_extend"],
    ["Ready", "login"],
    ["On-A-Call", "ready"],
  ];
  it.each(illegal)("%s refuses %s", (from, trigger) => {
    expect(() => step(from, trigger, calm)).toThrow(IllegalRecipientTransition);
  });

  it("takes exactly these transitions from the six states, and refuses every other", () => {
    const triggers: RecipientTrigger[] = ["login", "logout", "ready", "away", "offer", "answered", "missed", "withdrawn", "call_ended", "wrapup_done", "wrapup_extend", "wrapup_cancel"];
    const table: Record<AvailabilityState, Partial<Record<RecipientTrigger, AvailabilityState>>> = {
      "Not-Logged-In": { login: "Away" },
      Ready: { logout: "Not-Logged-In", away: "Away", offer: "Call-Offer" },
      Away: { logout: "Not-Logged-In", ready: "Ready" },
      "Call-Offer": { logout: "Not-Logged-In", away: "Away", answered: "On-A-Call", missed: "Ready", withdrawn: "Ready" },
      "On-A-Call": { logout: "Not-Logged-In", call_ended: "Ready" },
      "Wrapup-Time": { logout: "Not-Logged-In", ready: "Ready", away: "Away", wrapup_done: "Ready", wrapup_extend: "Wrapup-Time", wrapup_cancel: "Ready" },
    };
    expect([...AVAILABILITY_STATES].sort()).toEqual(Object.keys(table).sort());
    for (const from of AVAILABILITY_STATES) {
      const taken: Partial<Record<RecipientTrigger, AvailabilityState>> = {};
      for (const trigger of triggers) {
        try {
          taken[trigger] = step(from, trigger, calm).to;
        } catch (err) {
          expect(err).toBeInstanceOf(IllegalRecipientTransition);
        }
      }
      expect({ from, taken }).toEqual({ from, taken: table[from] });
    }
  });
});

describe("session state machine", () => {
  it("walks waiting -> offering -> waiting -> offering -> answered -> handled -> ended", () => {
    let state = sessionStep("waiting", "offer").to;
    state = sessionStep(state, "missed").to;
    expect(state).toBe("waiting");
    state = sessionStep(state, "offer").to;
    state = sessionStep(state, "answered").to;
    expect(listedState(state)).toBe("handled");
    state = sessionStep(state, "handled").to;
    expect(sessionStep(state, "end").to).toBe("ended");
  });

  it("takes exactly these transitions from the ten states, and refuses every other", () => {
    const triggers: SessionTrigger[] = [
      "offer",
      "missed",
      "answered",
      "handled",
      "abandoned",
      "timeout",
      "removed",
      "end",
      "callback_requested",
      "callback_offered",
      "callback_dialing",
      "callback_connected",
      "callback_failed",
      "callback_retry",
    ];
    const left = { abandoned: "abandoned", timeout: "timeout", removed: "removed", callback_requested: "waiting" } as const;
    const table: Record<(typeof SESSION_STATES)[number], Partial<Record<SessionTrigger, string>>> = {
      waiting: { offer: "offering", callback_offered: "offering", ...left },
      offering: { missed: "waiting", answered: "answered", callback_dialing: "dialing", ...left },
      dialing: { callback_connected: "answered", callback_failed: "failed" },
      answered: { handled: "handled" },
      handled: { end: "ended" },
      abandoned: { end: "ended" },
      timeout: { end: "ended" },
      removed: { end: "ended" },
      failed: { callback_retry: "waiting", end: "ended" },
      ended: {},
    };
    expect([...SESSION_STATES].sort()).toEqual(Object.keys(table).sort());
    for (const from of SESSION_STATES) {
      const taken: Partial<Record<SessionTrigger, string>> = {};
      for (const trigger of triggers) {
        try {
          taken[trigger] = sessionStep(from, trigger).to;
        } catch (err) {
          expect(err).toBeInstanceOf(IllegalSessionTransition);
        }
      }
      expect({ from, taken }).toEqual({ from, taken: table[from] });
    }
  });

  it("refuses an answer that was never offered and a second end", () => {
    expect(() => sessionStep("waiting", "answered")).toThrow(IllegalSessionTransition);
    expect(() => sessionStep("ended", "end")).toThrow(IllegalSessionTransition);
    expect(() => sessionStep("answered", "abandoned")).toThrow(IllegalSessionTransition);
  });
});

describe("routers", () => {
  const c = (id: string, totalCalls: number, offers: number, idleSince: number): Candidate => ({ id, totalCalls, offers, idleSince });
  const three = [c("a", 5, 9, 300), c("b", 1, 3, 200), c("c", 3, 1, 100)];

  it("round robin offers each member once per round, whatever happened, then starts again", () => {
    const round = new RoundMemory();
    const picks = Array.from({ length: 7 }, () => pickRecipient("route_round_robin", three, round));
    expect(picks).toEqual(["a", "b", "c", "a", "b", "c", "a"]);
  });

  it("round robin skips members who are not candidates now and keeps their turn", () => {
    const round = new RoundMemory();
    expect(pickRecipient("route_round_robin", three, round)).toBe("a");
    expect(pickRecipient("route_round_robin", [three[0], three[2]] as Candidate[], round)).toBe("c");
    expect(pickRecipient("route_round_robin", three, round)).toBe("b");
  });

  it("least calls, least offers and most idle pick by their measure", () => {
    const round = new RoundMemory();
    expect(pickRecipient("route_least_calls", three, round)).toBe("b");
    expect(pickRecipient("route_least_offers", three, round)).toBe("c");
    expect(pickRecipient("route_most_idle", three, round)).toBe("c");
  });

  it("ties go to the longest idle", () => {
    const round = new RoundMemory();
    expect(pickRecipient("route_least_calls", [c("x", 2, 0, 500), c("y", 2, 0, 50)], round)).toBe("y");
  });

  it("nobody to pick is undefined", () => {
    expect(pickRecipient("route_most_idle", [], new RoundMemory())).toBeUndefined();
  });
});

describe("queue settings", () => {
  it("reads defaults, bounds and the old names", () => {
    const config = queueConfigOf("q1", withoutAliases({ queue_name: "Old", agent_connect_timeout: 7, queue_timeout: 99, tick_time: 10 }));
    expect(config).toMatchObject({ name: "Old", ringTimeoutS: 7, timeoutS: 99, tickMs: 1000, router: "route_round_robin", wrapupS: 0 });
    expect(withoutAliases({ name: "New", queue_name: "Old" })).toEqual({ name: "New" });
  });
});
