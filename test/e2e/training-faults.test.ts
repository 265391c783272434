// Faults on cue from the trainer's live view, in Debian Chromium against serve mode: the trainer
// (the admin's console) starts a run with no callers of its own, injects a burst of two callers
// with the Faults control (the callers table and the counts show them) and a webhook failure of a
// second (the run's faults list shows it injected, then over), and a caller's STOP text to
// agent1's texting number; the page passes axe.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole, SCREENSHOTS, seriousAxeViolations, signIn, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { Floor, openView } from "../helpers/shift.js";

let floor: Floor | undefined;
let browser: LaunchedBrowser | undefined;
const consoles: ConsolePage[] = [];

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  floor = await Floor.open();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await floor?.close();
  expect(consoles.flatMap((c) => c.errors), "uncaught errors in the pages").toEqual([]);
});

describe("faults from the trainer's live view", () => {
  it("a burst adds its callers to the run (paused, their waits stop), a webhook failure comes and goes, a STOP text arrives, one-way audio and undelivered texts come, all listed", async () => {
    if (floor === undefined || browser === undefined) throw new Error("beforeAll did not start the floor");
    const f = floor;
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.slice(salesPath.lastIndexOf("/") + 1);
    const persona = { name: "Fay Fault", weight: 1, number: "+1415777####", patience: { distribution: "fixed", mean_s: 60 }, talk_time: { distribution: "fixed", mean_s: 3 } };
    const created = await f.v2<{ id: string }>("PUT", "/training_scenarios", { name: "Faults e2e", duration_s: 60, seed: 3, queues: [{ queue_id: salesId, rate_per_hour: 0 }], personas: [persona] });
    expect(created.status).toBe(201);

    const opened = await openConsole(browser.browser, f.url);
    consoles.push(opened);
    const trainer = opened.page;
    await signIn(trainer, "admin");
    await openView(trainer, "Training");
    await trainer.getByRole("button", { name: "Start run of Faults e2e" }).click();
    const live = trainer.getByRole("region", { name: "Run of Faults e2e" });
    await live.getByText(/^Running: /).waitFor();
    const faults = live.getByRole("form", { name: "Faults" });
    const count = live.locator('[aria-label="Callers so far"] [data-count="callers"]');
    expect(await count.innerText()).toBe("0");

    await faults.getByLabel("Fault").selectOption({ label: "A burst of callers" });
    await faults.getByLabel("Callers").fill("2");
    await faults.getByRole("button", { name: "Inject fault" }).click();
    await count.filter({ hasText: /^2$/ }).waitFor();
    // Nobody is Ready: the two wait. Paused, their waits stop, in the live view as in the run's
    // document; resumed, they count on.
    await live.locator('[aria-label="Callers so far"] [data-count="waiting"]').filter({ hasText: /^2$/ }).waitFor({ timeout: 30_000 });
    const table = live.getByRole("group", { name: "The run's callers" });
    const waits = async (): Promise<number[]> => (await table.locator("tbody tr td:nth-child(5)").allInnerTexts()).map(Number);
    await live.getByRole("button", { name: "Pause run" }).click();
    await live.getByText(/^Paused: /).waitFor();
    await trainer.waitForTimeout(1500);
    const held = await waits();
    expect(held).toHaveLength(2);
    await trainer.waitForTimeout(2500);
    expect(await waits(), "no wait moves while the run is paused").toEqual(held);
    const [newestRun] = (await f.v2<{ id: string }[]>("GET", "/training_runs?paginate=false")).body.data;
    const paused = await f.v2<{ callers: { wait_s?: number }[] }>("GET", `/training_runs/${newestRun?.id ?? ""}`);
    expect(paused.body.data.callers.map((c) => c.wait_s)).toEqual(held);
    await live.getByRole("button", { name: "Resume run" }).click();
    await live.getByText(/^Running: /).waitFor();
    await poll("the waits counting again", async () => ((await waits()).every((w, i) => w > (held[i] ?? Number.POSITIVE_INFINITY)) ? true : undefined), 10_000);
    const listed = live.getByRole("list", { name: "Faults so far" });
    await listed.getByText(/a burst of callers \(by the trainer\)$/).waitFor();

    await faults.getByLabel("Fault").selectOption({ label: "Webhooks fail" });
    await faults.getByLabel("For (seconds of run time)").fill("1");
    await faults.getByRole("button", { name: "Inject fault" }).click();
    await listed.getByText(/the account's webhooks failing \(by the trainer\)$/).waitFor();
    await listed.getByText(/the account's webhooks failing: over$/).waitFor();
    const settings = await f.v2<{ numbers: string[] }>("GET", `/users/${f.userId("agent1")}/texting`);
    const textingNumber = settings.body.data.numbers[0] ?? "";
    await faults.getByLabel("Fault").selectOption({ label: "A caller texts STOP" });
    await faults.getByLabel("To the texting number").fill(textingNumber);
    await faults.getByRole("button", { name: "Inject fault" }).click();
    await listed.getByText(/a STOP text from a caller \(by the trainer\)$/).waitFor();
    // One-way audio on a trainee's calls for a second: listed, then over.
    await faults.getByLabel("Fault").selectOption({ label: "One-way audio" });
    await faults.getByLabel("Trainee").selectOption({ label: "Alex Agent" });
    await faults.getByLabel("Silent").selectOption({ label: "What the trainee says" });
    await faults.getByLabel("For (seconds of run time)").fill("1");
    await faults.getByRole("button", { name: "Inject fault" }).click();
    await listed.getByText(/one-way audio on a trainee's calls \(by the trainer\)$/).waitFor();
    await listed.getByText(/one-way audio on a trainee's calls: over$/).waitFor();
    // Texts to a persona undelivered for a second, named by the persona.
    await faults.getByLabel("Fault").selectOption({ label: "Texts to a caller undelivered" });
    await faults.getByLabel("Caller (persona name or number)").fill("Fay Fault");
    await faults.getByLabel("For (seconds of run time)").fill("1");
    await faults.getByRole("button", { name: "Inject fault" }).click();
    await listed.getByText(/texts to a caller undelivered \(by the trainer\)$/).waitFor();
    // What the form sent, as the run's timeline keeps it.
    const run = await f.v2<{ timeline: { name: string; source?: string; fault?: Record<string, unknown> }[] }>("GET", `/training_runs/${newestRun?.id ?? ""}`);
    const byHand = run.body.data.timeline.filter((e) => e.name === "fault_injected" && e.source === "trainer").map((e) => e.fault);
    expect(byHand).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "one_way_audio", target: f.userId("agent1"), direction: "from_agent", duration_s: 1 }),
        expect.objectContaining({ kind: "text_undelivered", target: "Fay Fault", duration_s: 1 }),
      ]),
    );
    await trainer.screenshot({ path: join(SCREENSHOTS, "training-faults.png"), fullPage: true });
    expect(await seriousAxeViolations(trainer)).toEqual([]);

    await live.getByRole("button", { name: "Stop run" }).click();
    await live.getByText(/^Ended: /).waitFor();
    // Ended: the control goes, the list stays.
    expect(await live.getByRole("form", { name: "Faults" }).count()).toBe(0);
    await listed.getByText(/a burst of callers/).waitFor();
  }, 90_000);
});
