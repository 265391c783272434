// The console reads the spec's lists (availability states, monitor modes) from its own module,
// renderer/api/callq.ts, since the renderer never imports server code; the server keeps the one
// rulebook (callq/recipient-state.ts, monitor-mode.ts). These tests hold the console's copies
// equal to it, so a state or mode added on one side fails here, not on a live floor.
import { describe, expect, it } from "vitest";
import * as consoleRules from "../../renderer/api/callq.js";
import { AVAILABILITY_STATES } from "../../server/callq/recipient-state.js";
import { MONITOR_MODES } from "../../server/monitor-mode.js";

const sorted = (list: readonly string[]): string[] => [...list].sort();

describe("the console's copies of the spec's lists", () => {
  it("knows every availability state the server can report, and no other", () => {
    expect(sorted(consoleRules.AVAILABILITY_STATES)).toEqual(sorted(AVAILABILITY_STATES));
  });

  it("offers exactly the monitor modes the API accepts", () => {
    expect(sorted(consoleRules.MONITOR_MODES)).toEqual(sorted(MONITOR_MODES));
  });

  it("reads an unknown state from a hosted service as Not-Logged-In, not as a known one", () => {
    const status = consoleRules.recipientStatusOf({ availability_state: "On-Break" });
    expect(status.state).toBe("Not-Logged-In");
  });
});
