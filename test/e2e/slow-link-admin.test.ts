// An admin's day on a slow link (test/helpers/slow-link.ts: every answer of the APIs held
// 300-1,500 ms, drawn from a seed; the event websocket and SIP as they are), in Chromium against
// serve mode. The admin opens the admin pages from their address before their profile has come
// (the view says it is checking their access, not that the pages are not for them), looks at the
// devices, moves between tabs while each tab's read is on its way, makes two blocklists, opens one
// to edit and then the other before the first one's document came (the form is the second's),
// edits it, puts one in force, deletes one while the list's read is on its way (it stays deleted),
// makes a webhook, disables it and deletes it, and unticks a queue membership box while the
// membership read is on its way (the box stays unticked, as the server says), then signs out. At each
// step what the server says and what the console shows.
// Then the trainer's day (the admin, who may train): the runs' table does not say "No runs yet."
// while its read is on its way, one scenario opened for editing after another opens the second,
// and a run is started, paused, resumed and stopped (as the server says each time), listed as
// ended, replayed, and its report opened.
// Last, an Edit whose document is on its way (a blocklist's, a scenario's): the form's place says
// "Loading…" under the form's heading until it comes, and a read that failed says why, with Try again.
import type { Locator, Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openConsole, signIn } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { useFloor } from "../helpers/shift.js";
import { shotsAtWidths, shownWithin, slowLink, slowLinkSeed, type SlowLink } from "../helpers/slow-link.js";

const SEED = slowLinkSeed(23);
const setup = useFloor();

const pathOf = (r: Request) => new URL(r.url()).pathname;
const isGet = (r: Request, ending: string) => r.method() === "GET" && pathOf(r).endsWith(ending);

/** The open tab's table once its read has landed (aria-busy false). */
const settled = (page: Page) => page.getByRole("tabpanel").locator('table.data-table[aria-busy="false"]').first();

/** Two frames of the page: an answer that has reached it has been handled and shown. */
// Page-side code as text: the node project has no DOM types.
const frames = (page: Page) => page.evaluate("new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))");

/**
 * Edit `name` (its button in `scope`) with its document's answer held on its way back: the form's
 * place says "Loading…" under the form's heading (soft-checked, shot at both widths as `shot`);
 * released, the form takes that place. The form.
 */
async function openWhileHeld(page: Page, link: SlowLink, scope: Locator, documentPath: string, name: string, shot: string): Promise<Locator> {
  const read = await link.hold((r) => isGet(r, documentPath), "after");
  await scope.getByRole("button", { name: `Edit ${name}` }).click();
  await read.answered;
  const opening = page.getByRole("region", { name: `Edit ${name}` });
  await shownWithin(opening.getByRole("status").filter({ hasText: "Loading…" }), `the form's place says ${name} is being read`);
  await shotsAtWidths(page, shot);
  read.release();
  const form = page.getByRole("form", { name: `Edit ${name}` });
  await form.waitFor();
  expect(await opening.count(), "the form took the place of its loading line").toBe(0);
  return form;
}

describe("the admin's and the trainer's days on a slow link", () => {
  it(`checks devices, edits blocklists and webhooks, changes a queue's members, between tabs while reads are on their way (seed ${SEED})`, async () => {
    console.log(`slow link seed ${SEED} (SWITCHBOARD_SLOW_LINK_SEED=${SEED} replays its delays)`);
    const f = setup.floor();
    const adminId = f.userId("admin");

    const { page, errors } = await openConsole(setup.browser().browser, `${f.url}/#/admin`);
    // A step that never comes fails where it waits, with its locator, not at the test's timeout.
    page.setDefaultTimeout(20_000);
    const link = await slowLink(page, SEED);
    const profileRead = await link.hold((r) => isGet(r, `/users/${adminId}`), "before");
    await signIn(page, "admin");
    await page.getByRole("heading", { name: "Admin", level: 1 }).waitFor({ timeout: 20_000 });
    await profileRead.seen;
    // The profile that says whether they are an admin has not come: checking, not refused.
    await shownWithin(page.getByRole("status").filter({ hasText: "Checking your access…" }), "the Admin view says it is checking the admin's access while the profile is on its way");
    expect.soft(await page.getByText("The admin pages are for the account's admins").count(), "no refusal before the profile came").toBe(0);
    profileRead.release();

    // Devices: while read, no "No devices."; once read, the server's devices, each by name.
    const tabs = page.getByRole("tablist", { name: "Admin pages" });
    await tabs.waitFor({ timeout: 20_000 });
    const panel = page.getByRole("tabpanel");
    const serverDevices = (await f.v2<{ id: string; name?: string }[]>("GET", "/devices")).body.data;
    expect(serverDevices.length).toBeGreaterThan(0);
    expect.soft(await panel.getByText("No devices.").count(), "no 'No devices.' while the devices are read").toBe(0);
    await settled(page).waitFor({ timeout: 20_000 });
    expect(await panel.locator("tr[data-device-id]").count()).toBe(serverDevices.length);

    // Between tabs while each tab's read is on its way: Blocklists, Webhooks, Queue membership,
    // Blocklists again. Each shows its own rows in the end, and no tab says it has none meanwhile.
    for (const tab of ["Blocklists", "Webhooks", "Queue membership"]) {
      await tabs.getByRole("tab", { name: tab }).click();
      await panel.getByRole("heading", { name: tab, level: 2 }).waitFor();
    }
    await tabs.getByRole("tab", { name: "Blocklists" }).click();
    expect.soft(await panel.getByText("No blocklists yet.").count(), "no 'No blocklists yet.' while the list is read").toBe(0);
    await settled(page).waitFor({ timeout: 20_000 });
    const serverLists = async () => (await f.v2<{ id: string; name: string }[]>("GET", "/blacklists")).body.data;
    expect(await panel.locator("tr[data-blocklist-id]").count()).toBe((await serverLists()).length);

    // Two blocklists made.
    const status = panel.getByRole("status").first();
    const make = async (name: string, numbers: string) => {
      await panel.getByRole("button", { name: "New blocklist" }).click();
      await panel.getByLabel("Blocklist name").fill(name);
      await panel.getByLabel("Blocked numbers").fill(numbers);
      await panel.getByRole("button", { name: "Save blocklist" }).click();
      await status.filter({ hasText: `Blocklist “${name}” saved.` }).waitFor({ timeout: 20_000 });
      await panel.getByRole("row", { name: new RegExp(`^${name}`) }).waitFor({ timeout: 20_000 });
      const made = (await serverLists()).find((list) => list.name === name);
      expect(made, `the server has the blocklist ${name}`).toBeDefined();
      return made?.id ?? "";
    };
    const spamId = await make("Spam callers", "+14155550901\n+14155550902");
    const roboId = await make("Robocalls", "+14155550903");

    // Edit Spam callers, then Robocalls before Spam callers' document has come: the form is
    // Robocalls' when both have come, not the one whose answer reached the page last.
    const spamRead = await link.hold((r) => isGet(r, `/blacklists/${spamId}`), "after");
    await panel.getByRole("button", { name: "Edit Spam callers" }).click();
    await spamRead.answered;
    const roboRead = await link.hold((r) => isGet(r, `/blacklists/${roboId}`), "after");
    await panel.getByRole("button", { name: "Edit Robocalls" }).click();
    const robo1 = await roboRead.answered;
    roboRead.release();
    await robo1.response();
    const form = panel.getByRole("form", { name: /^Edit / });
    await form.waitFor({ timeout: 20_000 });
    spamRead.release();
    await (await spamRead.seen).response();
    // The held answer has reached the page; give React its turn before looking.
    await frames(page);
    expect.soft(await form.getByRole("heading").innerText(), "the form opened last (Robocalls) stays open").toBe("Edit Robocalls");
    expect.soft(await form.getByLabel("Blocklist name").inputValue(), "its name is Robocalls'").toBe("Robocalls");
    await form.getByRole("button", { name: "Cancel" }).click();
    await form.waitFor({ state: "detached" });

    // Edit Robocalls: another number; the server keeps it.
    await panel.getByRole("button", { name: "Edit Robocalls" }).click();
    await panel.getByRole("form", { name: "Edit Robocalls" }).waitFor({ timeout: 20_000 });
    await panel.getByLabel("Blocked numbers").fill("+14155550903\n+14155550904");
    await panel.getByRole("button", { name: "Save blocklist" }).click();
    // The notice says the same as after its making: the form closing says the save was taken.
    await panel.getByRole("form").waitFor({ state: "detached", timeout: 20_000 });
    await status.filter({ hasText: "Blocklist “Robocalls” saved." }).waitFor({ timeout: 20_000 });
    const robo = (await f.v2<{ numbers: Record<string, unknown> }>("GET", `/blacklists/${roboId}`)).body.data;
    expect(Object.keys(robo.numbers).sort()).toEqual(["+14155550903", "+14155550904"]);

    // Robocalls in force; the account document lists it.
    await panel.getByRole("checkbox", { name: "Robocalls in force" }).check();
    await status.filter({ hasText: "Blocklist now in force." }).waitFor({ timeout: 20_000 });
    const account = async () => (await f.v2<{ blacklists?: string[] }>("GET", "")).body.data;
    expect((await account()).blacklists).toContain(roboId);

    // Spam callers deleted while a read of the list is on its way (asked as the tab is opened
    // again, answered by the server before the delete): it stays deleted.
    await tabs.getByRole("tab", { name: "Devices" }).click();
    await settled(page).waitFor({ timeout: 20_000 });
    const listRead = await link.hold((r) => isGet(r, "/blacklists"), "after");
    await tabs.getByRole("tab", { name: "Blocklists" }).click();
    await listRead.answered;
    await panel.getByRole("button", { name: "Delete Spam callers" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete blocklist" }).click();
    await status.filter({ hasText: "Blocklist deleted." }).waitFor({ timeout: 20_000 });
    expect((await serverLists()).map((list) => list.id)).not.toContain(spamId);
    listRead.release();
    await (await listRead.seen).response();
    await settled(page).waitFor({ timeout: 20_000 });
    expect.soft(await panel.locator(`tr[data-blocklist-id="${spamId}"]`).count(), "the deleted blocklist stays off the list").toBe(0);
    expect(await panel.getByRole("checkbox", { name: "Robocalls in force" }).isChecked()).toBe(true);

    // A webhook made, disabled, deleted.
    await tabs.getByRole("tab", { name: "Webhooks" }).click();
    await settled(page).waitFor({ timeout: 20_000 });
    const serverHooks = async () => (await f.v2<{ id: string; name: string; enabled?: boolean }[]>("GET", "/webhooks")).body.data;
    await panel.getByRole("button", { name: "New webhook" }).click();
    await panel.getByLabel("Webhook name").fill("CRM feed");
    await panel.getByLabel("Address to call").fill("http://127.0.0.1:9/crm");
    await panel.getByRole("button", { name: "Save webhook" }).click();
    const hookRow = panel.getByRole("row", { name: /^CRM feed/ });
    await hookRow.waitFor({ timeout: 20_000 });
    const hookId = (await serverHooks()).find((hook) => hook.name === "CRM feed")?.id ?? "";
    expect(hookId).not.toBe("");
    await panel.getByRole("button", { name: "Edit CRM feed" }).click();
    const hookForm = panel.getByRole("form", { name: "Edit CRM feed" });
    await hookForm.waitFor({ timeout: 20_000 });
    await hookForm.getByLabel("Enabled").uncheck();
    await hookForm.getByRole("button", { name: "Save webhook" }).click();
    await hookForm.waitFor({ state: "detached", timeout: 20_000 });
    await hookRow.getByText("Disabled", { exact: true }).waitFor({ timeout: 20_000 });
    expect((await serverHooks()).find((hook) => hook.id === hookId)?.enabled).toBe(false);
    await panel.getByRole("button", { name: "Delete CRM feed" }).click();
    await page.getByRole("dialog").getByRole("button", { name: /^Delete/ }).click();
    await hookRow.waitFor({ state: "detached", timeout: 20_000 });
    expect((await serverHooks()).map((hook) => hook.id)).not.toContain(hookId);

    // Queue membership (every recipient of the demo is in every queue): a box unticked while the
    // membership read is on its way (answered by the server before the change) stays unticked,
    // as the server has it.
    const entries = (await f.v2<{ queue_id: string; members: string[] }[]>("GET", "/callq_queues/recipients")).body.data;
    const queues = (await f.v2<{ id: string; name: string }[]>("GET", "/callq_queues")).body.data;
    const recipients = (await f.v2<{ id: string; name?: string }[]>("GET", "/callq_recipients")).body.data;
    const pair = queues.flatMap((queue) => recipients.map((recipient) => ({ queue, recipient }))).find(({ queue, recipient }) => (entries.find((e) => e.queue_id === queue.id)?.members ?? []).includes(recipient.id));
    if (pair === undefined) throw new Error("no recipient in any queue");
    const membersOf = async (queueId: string) => (await f.v2<{ queue_id: string; members: string[] }[]>("GET", "/callq_queues/recipients")).body.data.find((e) => e.queue_id === queueId)?.members ?? [];
    // The admin page's read (the queues slice reads the same with ?paginate=false).
    const membershipRead = await link.hold((r) => isGet(r, "/callq_queues/recipients") && new URL(r.url()).search === "", "after");
    // The read's other two parts (the queues and the recipients), as the page receives them.
    const others = ["/callq_queues", "/callq_recipients"].map((ending) => page.waitForResponse((response) => isGet(response.request(), ending), { timeout: 20_000 }));
    await tabs.getByRole("tab", { name: "Queue membership" }).click();
    const box = panel.getByRole("checkbox", { name: `${pair.recipient.name ?? pair.recipient.id} in ${pair.queue.name}` });
    // The table of an earlier visit is shown while the tab reads again.
    await box.waitFor({ timeout: 20_000 });
    await membershipRead.answered;
    const change = await link.hold((r) => r.method() === "POST" && pathOf(r).endsWith(`/callq_queues/${pair.queue.id}/recipients`), "after");
    await box.uncheck();
    await change.answered;
    expect(await membersOf(pair.queue.id)).not.toContain(pair.recipient.id);
    membershipRead.release();
    await (await membershipRead.seen).response();
    await Promise.all(others);
    await frames(page);
    // The read's older answer has reached the page before the change's: the box is as asked.
    expect.soft(await box.isChecked(), "the box stays unticked when the older read's answer comes").toBe(false);
    change.release();
    await (await change.seen).response();
    await settled(page).waitFor({ timeout: 20_000 });
    await box.and(page.locator('[aria-busy="false"]')).waitFor({ timeout: 20_000 });
    expect.soft(await box.isChecked(), "the box stays unticked, as the server has the recipient out of the queue").toBe(false);
    // And back: ticked, the server agrees.
    await box.check();
    await poll("the recipient in the queue again on the server", async () => ((await membersOf(pair.queue.id)).includes(pair.recipient.id) ? true : undefined));
    await box.and(page.locator('[aria-busy="false"]')).waitFor({ timeout: 20_000 });
    expect(await box.isChecked()).toBe(true);

    // Devices again, and Sign out while its read is on its way.
    await tabs.getByRole("tab", { name: "Devices" }).click();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor({ timeout: 20_000 });
    expect(errors).toEqual([]);
    await shotsAtWidths(page, "admin-signed-out");
    await page.close();
  }, 120_000);

  it(`a trainer's day: the scenarios and the runs read, one scenario opened after another, a run started, paused, resumed, stopped, its report (seed ${SEED})`, async () => {
    const f = setup.floor();
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.slice(salesPath.lastIndexOf("/") + 1);
    const persona = { name: "Tess Trainee", weight: 1, number: "+1415888####", patience: { distribution: "fixed", mean_s: 60 }, talk_time: { distribution: "fixed", mean_s: 3 } };
    const scenario = async (name: string) => {
      const created = await f.v2<{ id: string }>("PUT", "/training_scenarios", { name, duration_s: 60, seed: 5, queues: [{ queue_id: salesId, rate_per_hour: 0 }], personas: [persona] });
      expect(created.status).toBe(201);
      return created.body.data.id;
    };
    const rushId = await scenario("Morning rush");
    await scenario("Quiet hour");

    const { page, errors } = await openConsole(setup.browser().browser, `${f.url}/#/training`);
    page.setDefaultTimeout(20_000);
    const link = await slowLink(page, SEED);
    // The runs' list, held after the server answered: the table does not say there are none.
    const runsRead = await link.hold((r) => isGet(r, "/training_runs"), "after");
    await signIn(page, "admin");
    await page.getByRole("heading", { name: "Training", level: 1 }).waitFor();
    const runs = page.getByRole("group", { name: "Training runs" });
    await runsRead.answered;
    await runs.waitFor();
    expect.soft(await runs.getByText("No runs yet.").count(), "no 'No runs yet.' while the runs' list is read").toBe(0);
    await shotsAtWidths(page, "training-runs-reading");
    runsRead.release();
    await runs.getByText("No runs yet.").waitFor();

    // Edit Morning rush, then Quiet hour before Morning rush's document has come: the form is
    // Quiet hour's when both have come.
    const scenarios = page.getByRole("group", { name: "Training scenarios" });
    await scenarios.getByRole("row", { name: /^Quiet hour/ }).waitFor();
    const rushRead = await link.hold((r) => isGet(r, `/training_scenarios/${rushId}`), "after");
    await scenarios.getByRole("button", { name: "Edit Morning rush" }).click();
    await rushRead.answered;
    await scenarios.getByRole("button", { name: "Edit Quiet hour" }).click();
    const form = page.getByRole("form", { name: /^Edit / });
    await form.getByRole("heading", { name: "Edit Quiet hour" }).waitFor();
    rushRead.release();
    await (await rushRead.seen).response();
    await frames(page);
    expect.soft(await form.getByRole("heading").first().innerText(), "the scenario opened last (Quiet hour) stays open").toBe("Edit Quiet hour");
    await form.getByRole("button", { name: "Cancel" }).click();
    await form.waitFor({ state: "detached" });

    // A run of Quiet hour: started, paused, resumed, stopped; the server says the same each time.
    const runState = async () => {
      const list = (await f.v2<{ id: string; status: string; scenario_name: string }[]>("GET", "/training_runs")).body.data;
      return list.find((run) => run.scenario_name === "Quiet hour");
    };
    await scenarios.getByRole("button", { name: "Start run of Quiet hour" }).click();
    const status = (state: string) => page.locator(`p[role="status"][data-run-status="${state}"]`);
    await status("running").waitFor();
    const runId = (await runState())?.id ?? "";
    expect(runId).not.toBe("");
    await runs.locator(`tr[data-run-id="${runId}"]`).waitFor();
    for (const [button, state] of [
      ["Pause run", "paused"],
      ["Resume run", "running"],
      ["Stop run", "ended"],
    ] as const) {
      await page.getByRole("button", { name: button }).click();
      await status(state).waitFor();
      await poll(`the run ${state} on the server`, async () => ((await runState())?.status === state ? true : undefined));
    }
    // The list says it ended too, and the ended run's replay and report are there.
    await runs.locator(`tr[data-run-id="${runId}"]`).getByText("Ended").waitFor();
    await page.getByRole("button", { name: "Replay the run" }).click();
    await page.getByRole("link", { name: "Printable report" }).click();
    await page.getByRole("heading", { name: "Run report: Quiet hour", level: 1 }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it(`an Edit says its document is being read, and why it could not be read with a retry, on the admin pages and the training view (seed ${SEED})`, async () => {
    const f = setup.floor();
    const made = await f.v2<{ id: string }>("PUT", "/blacklists", { name: "Late callers", numbers: { "+14155550911": {} } });
    expect(made.status).toBe(201);
    const listId = made.body.data.id;
    const salesPath = await f.queuePath("Sales");
    const scenario = await f.v2<{ id: string }>("PUT", "/training_scenarios", {
      name: "Late shift",
      duration_s: 60,
      seed: 7,
      queues: [{ queue_id: salesPath.slice(salesPath.lastIndexOf("/") + 1), rate_per_hour: 0 }],
      personas: [{ name: "Lee Late", weight: 1, number: "+1415888####", patience: { distribution: "fixed", mean_s: 60 }, talk_time: { distribution: "fixed", mean_s: 3 } }],
    });
    expect(scenario.status).toBe(201);
    const scenarioId = scenario.body.data.id;

    const { page, errors } = await openConsole(setup.browser().browser, `${f.url}/#/admin`);
    page.setDefaultTimeout(20_000);
    const link = await slowLink(page, SEED);
    await signIn(page, "admin");
    const tabs = page.getByRole("tablist", { name: "Admin pages" });
    await tabs.getByRole("tab", { name: "Blocklists" }).click();
    const panel = page.getByRole("tabpanel");
    await panel.getByRole("row", { name: /^Late callers/ }).waitFor();

    // The document's answer held on its way back: the form's place says it is being read.
    const form = await openWhileHeld(page, link, panel, `/blacklists/${listId}`, "Late callers", "admin-edit-loading");
    expect(await form.getByLabel("Blocked numbers").inputValue()).toBe("+14155550911");
    await form.getByRole("button", { name: "Cancel" }).click();
    await form.waitFor({ state: "detached" });

    // The read fails once (the server's 500): the place says why; Try again opens the form.
    let failures = 0;
    await page.route(
      (url) => url.pathname.endsWith(`/blacklists/${listId}`),
      async (route) => {
        if (failures > 0 || route.request().method() !== "GET") return route.fallback();
        failures += 1;
        await route.fulfill({ status: 500, contentType: "application/json", body: JSON.stringify({ status: "error", error: "500", message: "internal_error", data: {} }) });
      },
    );
    await panel.getByRole("button", { name: "Edit Late callers" }).click();
    const opening = panel.getByRole("region", { name: "Edit Late callers" });
    await shownWithin(opening.getByRole("alert"), "the form's place says why the blocklist could not be read");
    await shotsAtWidths(page, "admin-edit-failed");
    await opening.getByRole("button", { name: "Try again" }).click();
    await form.waitFor();
    expect(await form.getByLabel("Blocklist name").inputValue()).toBe("Late callers");
    await form.getByRole("button", { name: "Cancel" }).click();

    // The training view: a scenario's read held the same way.
    await page.evaluate('window.location.hash = "#/training"');
    const scenarios = page.getByRole("group", { name: "Training scenarios" });
    await scenarios.getByRole("row", { name: /^Late shift/ }).waitFor();
    const editor = await openWhileHeld(page, link, scenarios, `/training_scenarios/${scenarioId}`, "Late shift", "training-edit-loading");
    expect(await editor.getByLabel("Name", { exact: true }).inputValue()).toBe("Late shift");
    await editor.getByRole("button", { name: "Cancel" }).click();
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
