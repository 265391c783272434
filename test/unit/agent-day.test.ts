// The console's reading of a recipient's day (status.day) and how it counts on between reads:
// the state in progress grows from the moment the server counted, Away by its reason, and
// occupancy follows the server's rule outside Away and stands as read while Away.
import { describe, expect, it } from "vitest";
import { recipientDayOf, recipientStatusOf } from "../../renderer/api/callq.js";
import { liveDay, untilNextDay } from "../../renderer/state/agent-day.js";
import { toGregorianSeconds } from "../../server/clock.js";
import { callqConsole, recipientStatus } from "../helpers/fake-callq.js";

const AS_OF = Date.UTC(2026, 10, 21, 12, 0, 0);

function served(current: Record<string, unknown> | null, extra: Record<string, unknown> = {}) {
  return {
    recipient_id: "r",
    day: "2026-11-21",
    calls_handled: 1,
    handle_time: 110,
    average_handle_time: 110,
    offers: 2,
    missed_offers: 1,
    time_in_state: { Ready: 160, "Call-Offer": 8, "On-A-Call": 90, "Wrapup-Time": 20, Away: 420 },
    away_by_reason: [
      { reason: "lunch", seconds: 300 },
      { reason: null, seconds: 60 },
      { reason: "break", seconds: 60 },
    ],
    signed_in_time: 698,
    occupancy: 39.6,
    current,
    as_of: toGregorianSeconds(AS_OF),
    ...extra,
  };
}

describe("a recipient's day in the console", () => {
  it("reads the server's figures, and a status without them as none", () => {
    const day = recipientDayOf(served({ state: "Away", away_reason: "break", since: toGregorianSeconds(AS_OF - 60_000), seconds: 60 }));
    expect(day).toEqual({
      day: "2026-11-21",
      callsHandled: 1,
      averageHandleTime: 110,
      offers: 2,
      missedOffers: 1,
      timeInState: { Ready: 160, "Call-Offer": 8, "On-A-Call": 90, "Wrapup-Time": 20, Away: 420 },
      awayByReason: [
        { reason: "lunch", seconds: 300 },
        { reason: null, seconds: 60 },
        { reason: "break", seconds: 60 },
      ],
      occupancy: 39.6,
      current: { state: "Away", awayReason: "break", since: AS_OF - 60_000 },
      asOf: AS_OF,
    });
    expect(recipientStatusOf({ availability_state: "Ready" }).day).toBeNull();
    expect(recipientStatusOf({ availability_state: "Ready", day: served(null) }).day?.callsHandled).toBe(1);
  });

  it("counts the Away in progress on under its reason, occupancy standing as read", () => {
    const day = recipientDayOf(served({ state: "Away", away_reason: "break", since: toGregorianSeconds(AS_OF - 60_000) }));
    const live = liveDay(day, AS_OF + 30_000);
    expect(live.timeInState).toMatchObject({ Away: 450, Ready: 160 });
    expect(live.awayByReason).toContainEqual({ reason: "break", seconds: 90 });
    expect(live.awayByReason).toContainEqual({ reason: "lunch", seconds: 300 });
    expect(live.occupancy).toBe(39.6);
    expect(live.currentSeconds).toBe(90);
  });

  it("counts a call in progress into occupancy; logged out, nothing moves", () => {
    const onCall = recipientDayOf(served({ state: "On-A-Call", since: toGregorianSeconds(AS_OF) }));
    const live = liveDay(onCall, AS_OF + 100_000);
    expect(live.timeInState["On-A-Call"]).toBe(190);
    // 210 s of 378 s signed in and not Away.
    expect(live.occupancy).toBe(55.6);
    const out = liveDay(recipientDayOf(served(null)), AS_OF + 100_000);
    expect(out.timeInState["On-A-Call"]).toBe(90);
    expect(out.occupancy).toBe(39.6);
    expect(out.currentSeconds).toBeNull();
  });
});

describe("the agent's day across midnight", () => {
  it("reads the status again just after local midnight, when the server's new day starts", async () => {
    const { store, callq, clock } = await callqConsole();
    const day = recipientDayOf(served({ state: "Ready", since: toGregorianSeconds(clock.now()) }));
    callq.answers.recipientStatus = recipientStatus({ state: "Ready", day });
    await store.getState().loadAgentStatus();
    const reads = callq.calls("recipientStatus").length;
    await clock.advance(untilNextDay(clock.now()) - 1);
    expect(callq.calls("recipientStatus"), "no read before the day ends").toHaveLength(reads);
    await clock.advance(5_000);
    expect(callq.calls("recipientStatus")).toHaveLength(reads + 1);
  });
});
