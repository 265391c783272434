// A clock for the renderer's slices (renderer/clock.ts) that moves only when the test says:
// `advance(ms)` runs every timer that falls due, in order, and lets their promises settle.
import type { Clock } from "../../renderer/clock.js";

export interface ManualClock extends Clock {
  advance(ms: number): Promise<void>;
  /** Timers still waiting. */
  pending(): number;
}

export function manualClock(start = Date.UTC(2025, 4, 14, 12, 0, 0)): ManualClock {
  let now = start;
  let nextId = 0;
  const timers = new Map<number, { at: number; run: () => void }>();
  const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

  return {
    now: () => now,
    after(ms, run) {
      const id = nextId++;
      timers.set(id, { at: now + ms, run });
      return () => timers.delete(id);
    },
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (due === undefined) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].run();
        await settle();
      }
      now = end;
      await settle();
    },
    pending: () => timers.size,
  };
}
