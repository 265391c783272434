// The trainer's screens docked narrow (400 px wide), in Chromium against serve mode: the scenario
// list, the scenario editor, the headless preview, the live view of a run going on (its callers,
// people and the fault form), the ended run's scorecard and replay, the printable report and the
// Scorecards view (empty, the trainer's, and a trainee's with the run in it). On each nothing sticks out past the right edge and the page does not scroll
// sideways, except inside the wrappers that scroll on purpose (test/helpers/narrow.ts), and no
// table cell is so narrow that a word of it breaks across lines ("Cal / lers").
// Screenshots go to test-results/screenshots/training-narrow-*.png.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { SCREENSHOTS } from "../helpers/console-page.js";
import { overflowOf } from "../helpers/narrow.js";
import { openView, useFloor } from "../helpers/shift.js";
import { trainingRuns } from "../helpers/training.js";

const setup = useFloor();

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

const WIDE = { width: 1280, height: 900 };
const NARROW = { width: 400, height: 800 };
/** Long on purpose: a name as a trainer might write it must wrap, not widen the page. */
const SCENARIO = "Narrow screens: the Monday morning rush at the Sales queue";

/**
 * Table cells narrower than a word of theirs (the word then breaks inside itself, cut over two
 * lines): each word measured in the cell's own font. Page-side code as text (no DOM types here).
 */
const BROKEN_WORDS_IN_PAGE = `(() => {
  const ctx = document.createElement("canvas").getContext("2d");
  const found = [];
  for (const cell of document.querySelectorAll("main th, main td")) {
    if (cell.closest(".visually-hidden")) continue;
    const style = getComputedStyle(cell);
    const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (room <= 0) continue;
    // Each text of the cell in its own element's font; a hyphen is a break a word may take.
    const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let text = texts.nextNode(); text !== null; text = texts.nextNode()) {
      ctx.font = getComputedStyle(text.parentElement).font;
      for (const word of (text.textContent || "").split(/[\\s-]+/)) {
        const width = ctx.measureText(word).width;
        if (word !== "" && width > room + 2) found.push("a cell breaks \\"" + word + "\\" (" + Math.round(width) + " px in " + Math.round(room) + ")");
      }
    }
  }
  return found;
})()`;

/** What sticks out or breaks at 400 px, with the view's name; a screenshot of each. */
async function narrowFaults(page: Page, name: string): Promise<string[]> {
  await page.setViewportSize(NARROW);
  await page.evaluate("window.scrollTo(0, 0)");
  const broken: unknown = await page.evaluate(BROKEN_WORDS_IN_PAGE);
  const found = [...(await overflowOf(page)), ...(Array.isArray(broken) ? broken.map(String) : ["the cells measured nothing"])];
  await page.screenshot({ path: join(SCREENSHOTS, `training-narrow-${name}.png`), fullPage: true });
  await page.setViewportSize(WIDE);
  return found.slice(0, 8).map((fault) => `${name}: ${fault}`);
}

describe("the training screens docked narrow", () => {
  it("at 400 px the scenario list and editor, the preview, a live run, its scorecard, replay and report, and the Scorecards view fit the width", async () => {
    const f = setup.floor();
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.slice(salesPath.lastIndexOf("/") + 1);
    const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => f.v2<T>(method, path, data));
    await runs.scenario({
      name: SCENARIO,
      duration_s: 60,
      seed: 4,
      queues: [{ queue_id: salesId, rate_per_hour: 0, bursts: [{ at_s: 1, count: 3, within_s: 1 }] }],
      personas: [{ name: "Pat Patient With A Rather Long Name", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 60 }, talk_time: { distribution: "fixed", mean_s: 2 } }],
      agents: { count: 1, ring_delay_s: 0.5, handle_time: { distribution: "fixed", mean_s: 2 }, wrapup_s: 1 },
      faults: [{ at_s: 20, kind: "webhook_failure", duration_s: 5 }],
    });
    const trainer = await setup.signedIn("admin", false);
    await trainer.setViewportSize(WIDE);
    const faults: string[] = [];

    await openView(trainer, "Training");
    const row = trainer.getByRole("button", { name: `Start run of ${SCENARIO}` });
    await row.waitFor();
    faults.push(...(await narrowFaults(trainer, "list")));

    await trainer.getByRole("button", { name: `Edit ${SCENARIO}` }).click();
    await trainer.getByRole("button", { name: "Save scenario" }).waitFor();
    faults.push(...(await narrowFaults(trainer, "editor")));
    await trainer.getByRole("button", { name: "Cancel" }).click();

    await trainer.getByRole("button", { name: `Preview ${SCENARIO}` }).click();
    await trainer.getByRole("heading", { name: `Preview of ${SCENARIO}` }).waitFor();
    await trainer.getByText("Offered load").waitFor();
    faults.push(...(await narrowFaults(trainer, "preview")));

    await row.click();
    const live = trainer.getByRole("region", { name: `Run of ${SCENARIO}` });
    await live.getByText(/^Running: /).waitFor();
    await live.getByRole("button", { name: "Inject fault" }).waitFor();
    const runId = (await f.v2<{ id: string }[]>("GET", "/training_runs")).body.data[0]?.id ?? "";
    // A trainee goes Ready while the run goes on, with no phone registered: the queue offers them a
    // caller, which rings nowhere (a missed offer), so the run gives them a scorecard.
    for (const status of ["login", "ready"]) expect((await f.v2("POST", `/callq_recipients/${f.userId("agent1")}/status`, { status })).status).toBe(200);
    await runs.awaitCallers(runId, { what: "the run's callers waiting or talking", done: (run) => run.callers.some((c) => c.state !== "planned"), timeoutMs: 30_000 });
    faults.push(...(await narrowFaults(trainer, "live")));

    await runs.awaitCallers(runId, { timeoutMs: 60_000 });
    await live.getByRole("button", { name: "Stop run" }).click();
    await live.getByText(/^Ended: /).waitFor();
    await live.getByRole("heading", { name: "Scorecard", exact: true }).waitFor();
    faults.push(...(await narrowFaults(trainer, "scorecard")));

    await live.getByRole("button", { name: "Replay the run" }).click();
    await trainer.locator("[data-replay-at]").first().waitFor();
    faults.push(...(await narrowFaults(trainer, "replay")));

    await live.getByRole("link", { name: "Printable report" }).click();
    await trainer.locator('table[data-table="people"]').waitFor();
    faults.push(...(await narrowFaults(trainer, "report")));

    await openView(trainer, "Scorecards");
    await trainer.getByRole("heading", { name: "My training scorecards", level: 1 }).waitFor();
    faults.push(...(await narrowFaults(trainer, "scorecards")));

    // The trainee's own Scorecards view with the run's row in it.
    expect((await f.v2("POST", `/callq_recipients/${f.userId("agent1")}/status`, { status: "logout" })).status).toBe(200);
    const trainee = await setup.signedIn("agent1", false);
    await trainee.setViewportSize(WIDE);
    await openView(trainee, "Scorecards");
    await trainee.locator(`tr[data-run-id="${runId}"]`).waitFor();
    faults.push(...(await narrowFaults(trainee, "scorecards-trainee")));

    expect(faults).toEqual([]);
  }, 180_000);
});
