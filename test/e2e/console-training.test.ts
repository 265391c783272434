// The trainer's view in Chromium against the real server serving the built console: an admin
// creates a scenario through the form while the document view follows (and the form follows the
// document), a bad value comes back from the server next to its field with nothing stored, the
// scenario is saved, previewed (the figures shown are the API's preview of it, and a second
// preview shows the same), exported as a file, imported back as a copy and deleted after a
// confirmation; an agent has no Training link and is refused on a direct visit; a user marked as a
// trainer (training.trainer) has the link and the list.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, downloadText, openConsole, SCREENSHOTS, seriousAxeViolations, signIn, type ConsolePage } from "../helpers/console-page.js";

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let admin: ConsolePage;

const base = () => `/v2/accounts/${accountId}/training_scenarios`;

interface Row {
  id: string;
  name: string;
}

async function scenarios(): Promise<Row[]> {
  const res = await api.call<Row[]>("GET", base(), { token, query: { paginate: "false" } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The value cell of a figure's row in the preview. */
async function figureOf(table: Locator, name: string): Promise<string> {
  return (await table.getByRole("row", { name: new RegExp(`^${name} [0-9—]`) }).locator("td").first().textContent()) ?? "";
}

const shown = (value: number | null, unit = "") => (value === null ? "—" : `${value}${unit}`);

interface Summary {
  callers: number;
  offered: number;
  answered: number;
  abandoned: number;
  abandoned_percent: number | null;
  timed_out: number;
  queues: { queue: string; offered: number; answered: number; abandoned: number; timed_out: number; service_level_percent: number | null; average_speed_of_answer_s: number | null }[];
  service_level: { percent: number | null; target_percent: number; answered_within_s: number };
  average_speed_of_answer_s: number | null;
  average_handle_time_s: number | null;
  agents: { name: string; answered: number; talk_s: number; wrapup_s: number; average_handle_time_s: number | null; occupancy_percent: number }[];
}

/** What the page's preview shows, read back into numbers' words. */
async function previewShown(page: Page): Promise<Record<string, string>> {
  const figures = page.getByRole("group", { name: "Preview figures" });
  const out: Record<string, string> = {};
  for (const name of ["Callers", "Offered", "Answered", "Abandoned", "Abandoned share", "Timed out", "Service level", "Average speed of answer", "Average handle time"]) out[name] = await figureOf(figures, name);
  for (const [table, key] of [["Each queue's figures", "queue"], ["Each simulated agent's figures", "agent"]] as const) {
    const rows = page.getByRole("group", { name: table }).locator("tbody tr");
    for (let i = 0; i < (await rows.count()); i++) out[`${key} ${i}`] = (await rows.nth(i).innerText()).replace(/\s+/g, " ").trim();
  }
  return out;
}

function expectedShown(summary: Summary): Record<string, string> {
  const out: Record<string, string> = {
    Callers: String(summary.callers),
    Offered: String(summary.offered),
    Answered: String(summary.answered),
    Abandoned: String(summary.abandoned),
    "Abandoned share": shown(summary.abandoned_percent, " %"),
    "Timed out": String(summary.timed_out),
    "Service level": shown(summary.service_level.percent, " %"),
    "Average speed of answer": shown(summary.average_speed_of_answer_s, " s"),
    "Average handle time": shown(summary.average_handle_time_s, " s"),
  };
  summary.queues.forEach((q, i) => {
    out[`queue ${i}`] = [q.queue, q.offered, q.answered, q.abandoned, q.timed_out, shown(q.service_level_percent), shown(q.average_speed_of_answer_s)].join(" ");
  });
  summary.agents.forEach((a, i) => {
    out[`agent ${i}`] = [a.name, a.answered, a.talk_s, a.wrapup_s, shown(a.average_handle_time_s), a.occupancy_percent].join(" ");
  });
  return out;
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();
  admin = await openConsole(browser.browser, api.url);
  await signIn(admin.page, "admin");
  await admin.page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Training" }).click();
  await admin.page.getByRole("heading", { name: "Training", level: 1 }).waitFor();
});

afterEach(() => {
  expect(admin?.errors ?? [], "uncaught errors in the console").toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe("training: the trainer's view", () => {
  it("creates a scenario through the form with the document view following, refuses a bad value at its field, saves, previews, exports, imports a copy and deletes", async () => {
    const { page } = admin;
    expect(await scenarios()).toEqual([]);
    await page.getByRole("button", { name: "New scenario" }).click();
    const form = page.getByRole("form", { name: "New scenario" });
    const documentView = form.getByLabel("Scenario document (JSON)");
    const documentNow = async () => JSON.parse(await documentView.inputValue()) as Record<string, unknown> & { queues: Record<string, unknown>[]; agents: Record<string, unknown> };

    await form.getByLabel("Name", { exact: true }).fill("Evening shift");
    await form.getByLabel("Seed").fill("42");
    await form.getByLabel("Callers per hour").fill("180");
    await form.getByLabel("Simulated agents", { exact: true }).fill("3");
    const typed = await documentNow();
    expect(typed).toMatchObject({ name: "Evening shift", seed: 42, duration_s: 1800, agents: { count: 3 } });
    expect(typed.queues[0]).toMatchObject({ number: "+14155550100", rate_per_hour: 180 });

    // The form follows the document view too.
    await documentView.fill(JSON.stringify({ ...typed, seed: 43 }, null, 2));
    expect(await form.getByLabel("Seed").inputValue()).toBe("43");
    await form.getByLabel("Seed").fill("42");

    // Ten seconds is below the server's minimum: its words stand next to the field, nothing is stored.
    await form.getByLabel("Duration (seconds)").fill("10");
    await form.getByRole("button", { name: "Save scenario" }).click();
    const duration = form.getByLabel("Duration (seconds)");
    await form.locator('input[aria-invalid="true"]').waitFor();
    expect(await duration.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await duration.getAttribute("aria-describedby")) ?? "";
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toBe("Value is below the minimum of 60");
    await form.getByRole("alert").filter({ hasText: "The scenario was not saved" }).waitFor();
    expect(await scenarios()).toEqual([]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-training-editor.png"), fullPage: true });

    await duration.fill("900");
    await form.getByRole("button", { name: "Save scenario" }).click();
    await page.getByRole("status").filter({ hasText: "Scenario “Evening shift” saved." }).waitFor();
    const row = page.getByRole("row", { name: /^Evening shift/ });
    await row.waitFor();
    const id = (await row.getAttribute("data-scenario-id")) ?? "";
    const stored = await api.call<Record<string, unknown>>("GET", `${base()}/${id}`, { token });
    expect(stored.body.data).toMatchObject({ name: "Evening shift", seed: 42, duration_s: 900, agents: { count: 3 }, queues: [{ number: "+14155550100", rate_per_hour: 180 }] });

    // Preview: the figures shown are the API's headless run of the same scenario, twice over.
    await row.getByRole("button", { name: "Preview Evening shift" }).click();
    await page.getByRole("heading", { name: "Preview of Evening shift" }).waitFor();
    await page.getByRole("group", { name: "Preview figures" }).waitFor();
    const first = await previewShown(page);
    const answer = await api.call<Summary>("POST", `${base()}/${id}/preview`, { token, data: {} });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.data.offered).toBeGreaterThan(0);
    expect(answer.body.data.agents).toHaveLength(3);
    expect(Object.keys(first)).toContain("queue 0");
    expect(first).toEqual(expectedShown(answer.body.data));
    const [again] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/${id}/preview`) && r.request().method() === "POST"),
      row.getByRole("button", { name: "Preview Evening shift" }).click(),
    ]);
    expect(again.status()).toBe(200);
    await page.getByRole("group", { name: "Preview figures" }).waitFor();
    expect(await previewShown(page)).toEqual(first);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-training-preview.png"), fullPage: true });

    // Export downloads the file; importing it back makes a copy.
    const [download] = await Promise.all([page.waitForEvent("download"), row.getByRole("link", { name: "Export Evening shift" }).click()]);
    expect(download.suggestedFilename()).toBe("Evening-shift.scenario.json");
    const file = await downloadText(download);
    expect(JSON.parse(file)).toMatchObject({ format: "switchboard.training_scenario.v1", name: "Evening shift", seed: 42, duration_s: 900 });
    await page.getByLabel("Import a scenario file").setInputFiles({ name: "Evening-shift.scenario.json", mimeType: "application/json", buffer: Buffer.from(file) });
    await page.getByRole("status").filter({ hasText: "Scenario “Evening shift” imported." }).waitFor();
    await page.getByRole("form", { name: "Edit Evening shift (imported)" }).waitFor();
    await page.getByRole("row", { name: /^Evening shift/ }).nth(1).waitFor();
    const both = await scenarios();
    expect(both.map((r) => r.name)).toEqual(["Evening shift", "Evening shift"]);
    const copyId = both.find((r) => r.id !== id)?.id ?? "";
    const copy = await api.call<Record<string, unknown>>("GET", `${base()}/${copyId}`, { token });
    expect({ ...copy.body.data, id }).toEqual(stored.body.data);
    await page.getByRole("form", { name: "Edit Evening shift (imported)" }).getByRole("button", { name: "Cancel" }).click();

    // Delete asks first; Cancel keeps it, the confirmation deletes it.
    const copyRow = page.locator(`tr[data-scenario-id="${copyId}"]`);
    await copyRow.getByRole("button", { name: "Delete Evening shift" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this scenario?" });
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(await scenarios()).toHaveLength(2);
    await copyRow.getByRole("button", { name: "Delete Evening shift" }).click();
    await dialog.getByRole("button", { name: "Delete scenario" }).click();
    await page.getByRole("status").filter({ hasText: "Scenario deleted." }).waitFor();
    await copyRow.waitFor({ state: "detached" });
    expect((await scenarios()).map((r) => r.id)).toEqual([id]);
  });
});

describe("training: for trainers only", () => {
  it("is not in an agent's navigation, and says so when opened by address", async () => {
    const agent = await openConsole(browser.browser, api.url);
    await signIn(agent.page, "agent1");
    const nav = agent.page.getByRole("navigation", { name: "Console views" });
    await nav.getByRole("link", { name: "Agent" }).waitFor();
    await agent.page.goto(`${api.url}/#/training`);
    // Said once the profile is read: the navigation is then drawn from it too.
    await agent.page.getByText("The training view is for trainers", { exact: false }).waitFor();
    expect(await nav.getByRole("link", { name: "Training" }).count()).toBe(0);
    expect(await nav.getByRole("link", { name: "Recordings" }).count()).toBe(1);
    expect(await agent.page.getByRole("button", { name: "New scenario" }).count()).toBe(0);
    expect(agent.errors).toEqual([]);
    await agent.page.close();
  });

  it("is in the navigation of a user marked as a trainer, who works the list", async () => {
    const agent2 = await api.login("agent2");
    const marked = await api.call("PATCH", `/v2/accounts/${accountId}/users/${agent2.ownerId}`, { token, data: { training: { trainer: true } } });
    expect(marked.status, marked.text).toBe(200);
    const trainer = await openConsole(browser.browser, api.url);
    await signIn(trainer.page, "agent2");
    await trainer.page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Training" }).click();
    await trainer.page.getByRole("row", { name: /^Evening shift/ }).waitFor();
    expect(await trainer.page.getByRole("button", { name: "New scenario" }).count()).toBe(1);
    expect(trainer.errors).toEqual([]);
    await trainer.page.close();
  });
});
