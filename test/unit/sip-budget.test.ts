// The per-connection SIP message budget: a token bucket with bursts, malformed messages costing
// more, and a connection that keeps sending over budget told to close.
import { describe, expect, it } from "vitest";
import { MessageBudget, type BudgetOptions } from "../../server/sip/budget.js";

function budget(o: Partial<BudgetOptions> = {}): { b: MessageBudget; clock: { t: number } } {
  const clock = { t: 1000 };
  const b = new MessageBudget({ ratePerS: 10, burst: 5, malformedCost: 2, closeAfterDrops: 3, abuseWindowMs: 1000, now: () => clock.t, ...o });
  return { b, clock };
}

describe("MessageBudget", () => {
  it("takes a burst at once, then drops until time refills it at the rate", () => {
    const { b, clock } = budget({ closeAfterDrops: 100 });
    for (let i = 0; i < 5; i++) expect(b.admit()).toBe("take");
    expect(b.admit()).toBe("drop");
    clock.t += 100;
    expect(b.admit()).toBe("take");
    expect(b.admit()).toBe("drop");
    // A long quiet spell refills to the burst, never beyond.
    clock.t += 60_000;
    for (let i = 0; i < 5; i++) expect(b.admit()).toBe("take");
    expect(b.admit()).toBe("drop");
  });

  it("starts a connection with `initial` tokens when told, filling to the burst at the rate", () => {
    const { b, clock } = budget({ initial: 2, closeAfterDrops: 100 });
    expect(b.admit()).toBe("take");
    expect(b.admit()).toBe("take");
    expect(b.admit()).toBe("drop");
    clock.t += 60_000;
    for (let i = 0; i < 5; i++) expect(b.admit()).toBe("take");
    expect(b.admit()).toBe("drop");
  });

  it("charges a malformed message extra, into debt that only waiting repays", () => {
    const { b, clock } = budget({ closeAfterDrops: 100 });
    for (let i = 0; i < 2; i++) {
      expect(b.admit()).toBe("take");
      b.malformed();
    }
    // 5 - 2 × 3 = -1: two tenths of a second to get back to one token.
    expect(b.admit()).toBe("drop");
    clock.t += 100;
    expect(b.admit()).toBe("drop");
    clock.t += 100;
    expect(b.admit()).toBe("take");
  });

  it("says close once more messages than allowed were dropped within one window, and forgives an old window", () => {
    const { b, clock } = budget();
    for (let i = 0; i < 5; i++) b.admit();
    for (let i = 0; i < 3; i++) expect(b.admit()).toBe("drop");
    clock.t += 1000;
    // The window ended: the count starts again (the refill is taken first).
    for (let i = 0; i < 5; i++) expect(b.admit()).toBe("take");
    for (let i = 0; i < 3; i++) expect(b.admit()).toBe("drop");
    expect(b.admit()).toBe("close");
  });
});
