// The supervisor's board counts a waiting caller's wait in the account's queue time, which a
// paused training run holds (issue 18's leftovers, item 1), in Debian Chromium against serve mode:
// a run's caller waits in Support (nobody logged in there); the run is paused for six seconds and
// resumed. Through the pause and after it, the board's "Longest wait" reads the
// run's own wait of that caller (to the second either way: both count whole seconds from a stamp
// cut to the second), not six seconds more. Likewise a trainee's offer card: the caller's
// "Waited" stands still while the run is paused, its "Ringing for" (the phone's own time) goes on;
// and a wallboard's "Longest wait", which counts on between its readings, does not while paused.
// The seconds that pass are moved, not waited for: the server runs on a clock this file moves
// (serve mode's movable clock) and each page on Playwright's page clock, moved on by as much at
// once (pass()), so the server and the pages agree on the time as they do on the wall's.
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { expectState, offerOn, openView, panelOf, useFloor, type Agent, type Floor } from "../helpers/shift.js";
import { trainingRuns } from "../helpers/training.js";

const setup = useFloor([], { clock: true });

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

interface RunDoc {
  callers: { state: string; wait_s?: number }[];
}

/**
 * `ms` pass for the server and for `page` (on its movable clock): the server's timers and the
 * page's fall due in order, and the page's renders of its ticks are done when this resolves.
 */
async function pass(f: Floor, page: Page, ms: number): Promise<void> {
  await f.clock.advance(ms);
  await page.clock.fastForward(ms);
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
    const supervisor = await setup.signedIn("admin", false, { movableClock: true });
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
      await pass(f, supervisor, 6000);
      const paused = await runWait();
      const shownPaused = seconds(await longest.innerText());
      expect(shownPaused, `the board during the pause against the run's ${paused} s`).toBeLessThanOrEqual(paused + 1);
      expect(shownPaused).toBeGreaterThanOrEqual(Math.floor(paused) - 1);

      expect((await runs.act(runId, { action: "resume" })).status).toBe(200);
      await pass(f, supervisor, 2000);
      // The board first, the run after: the run's wait can only have grown in between.
      let shownAfter = Number.NaN;
      await expect
        .poll(async () => (shownAfter = seconds(await longest.innerText())), { timeout: 20_000, message: "the board's wait goes on after the resume" })
        .toBeGreaterThanOrEqual(Math.floor(paused) + 1);
      const after = await runWait();
      expect(shownAfter, `the board after the pause against the run's ${after} s`).toBeLessThanOrEqual(after + 1);
    } finally {
      await runs.act(runId, { action: "stop" });
    }
  }, 90_000);

  it("a run paused while its caller rings a trainee: the offer card's wait stands still, its ringing time goes on", async () => {
    const f = setup.floor();
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.slice(salesPath.lastIndexOf("/") + 1);
    const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => f.v2<T>(method, path, data));
    const page = await setup.signedIn("agent1", true, { movableClock: true });
    const trainee: Agent = { page, username: "agent1", name: "Alex Agent" };
    await openView(page, "Agent");
    await panelOf(page).getByRole("button", { name: "Login" }).click();
    await expectState(f, trainee, "Away");
    await panelOf(page).getByRole("button", { name: "Ready" }).click();
    await expectState(f, trainee, "Ready");

    const runId = await runs.startRun({
      name: "Offer pause",
      duration_s: 60,
      seed: 3,
      queues: [{ queue_id: salesId, rate_per_hour: 0, bursts: [{ at_s: 0, count: 1, within_s: 0.1 }] }],
      personas: [{ name: "Robin Ringing", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 600 } }],
    });
    try {
      const offer = offerOn(page);
      await offer.getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
      const fact = (name: string) => offer.locator("dl.offer-facts dt", { hasText: name }).locator("xpath=following-sibling::dd[1]");
      const shown = async (): Promise<{ waited: number; ringing: number }> => ({ waited: seconds(await fact("Waited").innerText()), ringing: seconds(await fact("Ringing for").innerText()) });
      await fact("Waited").waitFor();

      expect((await runs.act(runId, { action: "pause" })).status).toBe(200);
      // The pause's clock event reaches the page (the card's wait says its clock is paused); the
      // card reads its clocks each second, so one more second lets the shown wait settle.
      await fact("Waited").and(page.locator('[data-queue-clock="paused"]')).waitFor({ timeout: 20_000 });
      await pass(f, page, 1000);
      const atPause = await shown();
      await pass(f, page, 5000);
      const later = await shown();
      expect(await offer.isVisible(), "the offer still rings through the pause").toBe(true);
      expect(later.waited, `the card's wait during the pause (was ${atPause.waited} s)`).toBeLessThanOrEqual(atPause.waited + 1);
      expect(later.ringing, "the phone's ringing time goes on").toBeGreaterThanOrEqual(atPause.ringing + 4);

      expect((await runs.act(runId, { action: "resume" })).status).toBe(200);
      await fact("Waited").and(page.locator('[data-queue-clock="running"]')).waitFor({ timeout: 20_000 });
      await pass(f, page, 3000);
      const resumed = await shown();
      expect(resumed.waited, "the wait goes on after the resume").toBeGreaterThanOrEqual(later.waited + 2);
      await offer.getByRole("button", { name: "Reject" }).click();
    } finally {
      await runs.act(runId, { action: "stop" });
    }
  }, 90_000);

  it("a wallboard during a paused run: its longest wait stands still between readings", async () => {
    const f = setup.floor();
    const supportPath = await f.queuePath("Support");
    const supportId = supportPath.slice(supportPath.lastIndexOf("/") + 1);
    const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => f.v2<T>(method, path, data));
    const made = await f.v2<{ page: string }>("PUT", "/wallboards", { name: "Training wall", queue_ids: [supportId] });
    expect(made.status).toBe(201);
    const context = await setup.browser().browser.newContext();
    try {
      const wall = await context.newPage();
      await wall.clock.install();
      await wall.goto(`${f.url}${made.body.data.page}`);
      const longest = wall.getByRole("article", { name: "Support" }).locator('[data-figure="Longest wait"] dd');
      await longest.waitFor();

      const runId = await runs.startRun({
        name: "Wall pause",
        duration_s: 60,
        seed: 4,
        queues: [{ queue_id: supportId, rate_per_hour: 0, bursts: [{ at_s: 0, count: 1, within_s: 0.1 }] }],
        personas: [{ name: "Wren Waiting", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 600 } }],
      });
      try {
        await longest.filter({ hasText: /^0:0[2-9]|^0:[1-5]\d/ }).waitFor({ timeout: 20_000 });
        expect((await runs.act(runId, { action: "pause" })).status).toBe(200);
        // A reading of the paused board (the wall says its queue clock is paused), a second for the
        // shown figure to settle, then five seconds of samples, one after each second the wall
        // renders (its figures are drawn once a second): the server's figure stands still, and the
        // wall adds nothing to it between readings.
        await wall.locator('main[data-queue-clock="paused"]').waitFor({ timeout: 20_000 });
        await pass(f, wall, 1000);
        const seen = new Set<string>();
        for (let i = 0; i < 5; i++) {
          seen.add(await longest.innerText());
          await pass(f, wall, 1000);
        }
        seen.add(await longest.innerText());
        expect([...seen], "the wall's longest wait through the pause").toHaveLength(1);

        expect((await runs.act(runId, { action: "resume" })).status).toBe(200);
        const before = seconds([...seen][0] ?? "");
        // The wait goes on again (a busy page may skip a second between renders: at least two more).
        await pass(f, wall, 2000);
        await expect.poll(async () => seconds(await longest.innerText()), { timeout: 20_000 }).toBeGreaterThanOrEqual(before + 2);
      } finally {
        await runs.act(runId, { action: "stop" });
      }
    } finally {
      await context.close();
    }
  }, 90_000);
});
