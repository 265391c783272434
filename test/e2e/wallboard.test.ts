// The wallboard on a screen across the room, in Chromium against serve mode, through a day's odd
// events: a supervisor makes a board of the Sales queue in the console and opens its address (the
// key in the fragment) on a screen; a caller waits (Waiting 1, the longest wait counting), hangs
// up (Abandoned 1); the server restarts (the board says it is not updated, then comes back by
// itself with the same key); the supervisor deletes the board in the console and the screen says
// its key no longer works. The page loads none of the console's code, and its key never travels
// in a URL the server sees.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole, SCREENSHOTS, signIn } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { Floor, openView } from "../helpers/shift.js";

let floor: Floor | undefined;
let browser: LaunchedBrowser | undefined;

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  floor = await Floor.open();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await floor?.close();
});

/** The figure `label` of the queue tile `queue` once it reads `value`. */
async function tileShows(page: Page, queue: string, label: string, value: string | RegExp): Promise<void> {
  await page.getByRole("article", { name: queue }).locator(`[data-figure="${label}"] dd`).filter({ hasText: value }).waitFor({ timeout: 20_000 });
}

describe("a wallboard through the day", () => {
  it("shows waiting and abandoned callers, rides out a restart, and stops when its board is deleted", async () => {
    if (floor === undefined || browser === undefined) throw new Error("beforeAll did not start the floor");
    const f = floor;
    // The supervisor makes the board in the console: Sales only.
    const desk = await openConsole(browser.browser, f.url);
    await signIn(desk.page, "supervisor");
    await openView(desk.page, "Supervisor");
    const panel = desk.page.getByRole("region", { name: "Wallboards" });
    await panel.getByLabel("Name").fill("Sales floor");
    await panel.getByRole("checkbox", { name: "Sales" }).check();
    await panel.getByRole("button", { name: "Make wallboard" }).click();
    const address = await panel.getByRole("textbox", { name: "Wallboard address" }).inputValue();
    const row = panel.locator("tr", { hasText: "Sales floor" });
    await row.filter({ hasText: "Sales" }).waitFor();
    const fragment = new URLSearchParams(new URL(address).hash.slice(1));
    const board = { id: fragment.get("board") ?? "", key: fragment.get("key") ?? "" };
    expect(address).toBe(`${f.url}/wallboard.html#account=${fragment.get("account")}&board=${board.id}&key=${board.key}`);

    const context = await browser.browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const requests: Request[] = [];
    page.on("request", (r) => requests.push(r));
    await page.goto(address);
    await page.getByRole("heading", { name: "Sales floor" }).waitFor();
    await tileShows(page, "Sales", "Waiting", "0");

    // What the screen loaded: the wallboard's own script (and the chunks it shares, React), none of
    // the console's views, phone or sign-in; the key only in
    // a header, never in a URL.
    const scripts = requests.filter((r) => r.resourceType() === "script").map((r) => new URL(r.url()).pathname);
    expect(scripts.some((path) => /\/assets\/wallboard-[\w-]+\.js$/.test(path))).toBe(true);
    for (const path of scripts) expect(path).not.toMatch(/\/assets\/(?:index|ConsoleRoutes|softphone|admin-http)-/);
    for (const r of requests) expect(r.url()).not.toContain(board.key);

    // A caller waits: nobody is Ready in the demo account's Sales queue, which alerts past 2 s.
    expect((await f.v2("PATCH", await f.queuePath("Sales"), { alerts: { longest_wait_s: 2 } })).status).toBe(200);
    const call = await f.simCall("5001", { caller_id_name: "Wally Waiting", caller_id_number: "+15550101" });
    await tileShows(page, "Sales", "Waiting", "1");
    const alert = page.getByRole("article", { name: "Sales" }).getByRole("alert").filter({ hasText: "A caller has waited over 0:02" });
    await alert.waitFor({ timeout: 20_000 });
    await tileShows(page, "Sales", "Longest wait", /^0:0[2-9]|^0:[1-5]\d/);
    await page.screenshot({ path: join(SCREENSHOTS, "wallboard-waiting.png") });
    await f.hangupSim(call);
    await tileShows(page, "Sales", "Waiting", "0");
    await alert.waitFor({ state: "detached", timeout: 20_000 });
    await tileShows(page, "Sales", "Abandoned", "1");
    // Nobody answered in time: 0% against the default goal, shown as under it.
    await tileShows(page, "Sales", "Service level", "0%");
    await page.locator('[data-figure="Service level"].under').waitFor();
    await tileShows(page, "Sales", "Longest wait", "0:00");

    // The server restarts: the board is kept on screen, marked stale, and comes back by itself.
    await f.restart();
    await page.getByRole("status").filter({ hasText: "Not updated" }).waitFor({ state: "detached", timeout: 20_000 });
    await tileShows(page, "Sales", "Waiting", "0");

    // The supervisor deletes the board in the console: its key stops working and the screen says so.
    await row.getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    await page.getByRole("alert").filter({ hasText: /no longer/ }).waitFor({ timeout: 20_000 });
    await poll("no board reads after the refusal", async () => {
      const before = requests.length;
      await new Promise((r) => setTimeout(r, 3000));
      return requests.length === before ? true : undefined;
    });
    expect(errors).toEqual([]);
    expect(desk.errors).toEqual([]);
    await context.close();
    await desk.page.close();
  });

  it("tells a screen opened without a key what to do, and reads nothing", async () => {
    if (floor === undefined || browser === undefined) throw new Error("beforeAll did not start the floor");
    const page = await browser.browser.newPage();
    const reads: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/v2/")) reads.push(r.url());
    });
    await page.goto(`${floor.url}/wallboard.html`);
    await page.getByRole("alert").filter({ hasText: "names no wallboard" }).waitFor();
    expect(reads).toEqual([]);
    await page.close();
  });
});
