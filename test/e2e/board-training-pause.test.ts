// The supervisor's board counts a waiting caller's wait in the account's queue time, which a
// paused training run holds (issue 18's leftovers, item 1), in Debian Chromium against serve mode:
// a run's caller waits in Support (nobody logged in there); the run is paused for six seconds of
// real time and resumed. Through the pause and after it, the board's "Longest wait" reads the
// run's own wait of that caller (to the second either way: both count whole seconds from a stamp
// cut to the second), not six seconds more.
import { afterAll, describe, expect, it } from "vitest";
import { openView, useFloor } from "../helpers/shift.js";
import { trainingRuns } from "../helpers/training.js";

const setup = useFloor();

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

interface RunDoc {
  callers: { state: string; wait_s?: number }[];
}

/** "1:05" as seconds. */
function seconds(shown: string): number {
  const [m, s] = shown.trim().split(":").map(Number);
  if (m === undefined || s === undefined || !Number.isFinite(m) || !Number.isFinite(s)) throw new Error(`not a duration: ${shown}`);
  return m * 60 + s;
}

describe("the board's waits during a training run", () => {
  it("a run paused six seconds: the board's longest wait does not grow by the pause, during it or after", async () => {
    const f = setup.floor();
    const supportPath = await f.queuePath("Support");
    const supportId = supportPath.slice(supportPath.lastIndexOf("/") + 1);
    const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => f.v2<T>(method, path, data));
    const supervisor = await setup.signedIn("admin", false);
    await openView(supervisor, "Supervisor");
    const longest = supervisor.locator(`section.queue-tile[data-queue-id="${supportId}"]`).getByTestId("board-longest");
    await longest.waitFor();

    const runId = await runs.startRun({
      name: "Board pause",
      duration_s: 60,
      seed: 2,
      queues: [{ queue_id: supportId, rate_per_hour: 0, bursts: [{ at_s: 0, count: 1, within_s: 0.1 }] }],
      personas: [{ name: "Pat Patient", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 600 } }],
    });
    try {
      await runs.awaitCallers<RunDoc>(runId, { what: "the caller waiting", done: (run) => run.callers[0]?.state === "waiting", timeoutMs: 20_000 });
      await longest.filter({ hasText: /^\d+:\d\d$/ }).waitFor();
      const runWait = async (): Promise<number> => (await runs.readRun<RunDoc>(runId)).callers[0]?.wait_s ?? Number.NaN;

      expect((await runs.act(runId, { action: "pause" })).status).toBe(200);
      await supervisor.waitForTimeout(6000);
      const paused = await runWait();
      const shownPaused = seconds(await longest.innerText());
      expect(shownPaused, `the board during the pause against the run's ${paused} s`).toBeLessThanOrEqual(paused + 1);
      expect(shownPaused).toBeGreaterThanOrEqual(Math.floor(paused) - 1);

      expect((await runs.act(runId, { action: "resume" })).status).toBe(200);
      await supervisor.waitForTimeout(2000);
      // The board first, the run after: the run's wait can only have grown in between.
      const shownAfter = seconds(await longest.innerText());
      const after = await runWait();
      expect(shownAfter, `the board after the pause against the run's ${after} s`).toBeLessThanOrEqual(after + 1);
      expect(shownAfter).toBeGreaterThanOrEqual(Math.floor(paused) + 1);
    } finally {
      await runs.act(runId, { action: "stop" });
    }
  }, 90_000);
});
