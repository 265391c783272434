// Kazoo stamps every document and event in Gregorian seconds (Erlang's
// calendar:datetime_to_gregorian_seconds, counted from 0000-01-01 UTC); server/clock.ts holds the
// one offset and its two conversions that the whole server and its tests use; the console's one
// copy (renderer/api/gregorian.ts) is held equal to it here.
import { describe, expect, it } from "vitest";
import * as consoleRule from "../../renderer/api/gregorian.js";
import { fromGregorianSeconds, GREGORIAN_OFFSET_S, toGregorianSeconds } from "../../server/clock.js";

/** Days from 0000-01-01 to 1970-01-01 by the proleptic Gregorian leap-year rule, counted out. */
function daysBeforeUnixEpoch(): number {
  let days = 0;
  for (let year = 0; year < 1970; year++) {
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    days += leap ? 366 : 365;
  }
  return days;
}

describe("Gregorian seconds", () => {
  it("offsets the Unix epoch by the days from year 0 to 1970", () => {
    expect(GREGORIAN_OFFSET_S).toBe(daysBeforeUnixEpoch() * 86_400);
    expect(toGregorianSeconds(0)).toBe(GREGORIAN_OFFSET_S);
  });

  it("drops the milliseconds of a time and gives back whole seconds", () => {
    const at = Date.UTC(2026, 10, 21, 12, 0, 0);
    expect(toGregorianSeconds(at + 999)).toBe(at / 1000 + GREGORIAN_OFFSET_S);
    expect(fromGregorianSeconds(toGregorianSeconds(at + 999))).toBe(at);
  });

  it("reads the same in the console (renderer/api/gregorian.ts, its one copy)", () => {
    const at = Date.UTC(2026, 10, 21, 12, 0, 0) + 999;
    expect(consoleRule.GREGORIAN_OFFSET_S).toBe(GREGORIAN_OFFSET_S);
    expect(consoleRule.toGregorianSeconds(at)).toBe(toGregorianSeconds(at));
    expect(consoleRule.fromGregorianSeconds(toGregorianSeconds(at))).toBe(fromGregorianSeconds(toGregorianSeconds(at)));
    // The API's "never" (0) stays 0 in the console's times.
    expect(consoleRule.gregorianToMs(0)).toBe(0);
    expect(consoleRule.gregorianToMs(toGregorianSeconds(at))).toBe(at - 999);
  });
});
