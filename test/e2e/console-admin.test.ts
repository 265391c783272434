// The admin pages in Chromium against the real server serving the built console: devices show
// their registration as phones come and go (agent3's softphone registers from a page on the
// server's origin) and Sync sends it a check-sync NOTIFY; blocklists are created, edited, put in
// force and deleted after a confirmation; a webhook to a dead address is auto-disabled by the
// server, its failed attempts are listed and it is re-enabled, then pointed at a live receiver;
// queue membership changes reach the queue; an agent sees no admin pages. Each tab passes axe.
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, openConsole, SCREENSHOTS, seriousAxeViolations, signIn, type ConsolePage } from "../helpers/console-page.js";
import { phoneLabDir, startLabPhone, type LabWindow } from "../helpers/phone-page.js";
import { poll } from "../helpers/poll.js";
import { HookReceiver } from "../helpers/webhook-receiver.js";

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let admin: ConsolePage;
let receiver: HookReceiver;

const base = () => `/v2/accounts/${accountId}`;

async function openTab(page: Page, name: string): Promise<void> {
  await page.getByRole("tablist", { name: "Admin pages" }).getByRole("tab", { name }).click();
  await page.getByRole("heading", { name, level: 2 }).waitFor();
}

let touches = 0;

/** An object event for the account (a document created), which object webhooks are sent. */
async function touchAccountDocument(): Promise<void> {
  const res = await api.call("PUT", `${base()}/blacklists`, { token, data: { name: `Touch ${++touches}` } });
  expect(res.status, res.text).toBe(201);
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  // Webhook retries 50 ms apart, so the server's auto-disable (6 failures in 60 s) comes quickly.
  api = await startApi({ config: { rendererDir: CONSOLE_DIR, webhookRetryDelayMs: 50 } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();
  receiver = await HookReceiver.start();
  admin = await openConsole(browser.browser, api.url);
  await signIn(admin.page, "admin");
  await admin.page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Admin" }).click();
  await admin.page.getByRole("tablist", { name: "Admin pages" }).waitFor();
});

afterEach(() => {
  expect(admin?.errors ?? [], "uncaught errors in the console").toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await api?.close();
});

describe("admin: devices", () => {
  it("shows which devices are registered, follows a phone registering, and sends Sync to it", async () => {
    const { page } = admin;
    await openTab(page, "Devices");
    const row = (name: string) => page.getByRole("row", { name: new RegExp(`^${name}`) });
    // The admin's own console registered the admin's softphone.
    await row("admin softphone").getByText("Registered", { exact: true }).waitFor();
    expect(await row("agent3 softphone").getByText("Not registered", { exact: true }).isVisible()).toBe(true);

    // agent3's softphone registers from another page; its SIP socket shows what the server sends it.
    const lab = await browser.browser.newPage();
    const sipFrames: string[] = [];
    lab.on("websocket", (socket) => socket.on("framereceived", (frame) => sipFrames.push(String(frame.payload))));
    await lab.goto(`${api.url}/v2/`);
    await lab.addScriptTag({ content: await readFile(join(await phoneLabDir(), "phone-lab.js"), "utf8") });
    await lab.waitForFunction(() => "lab" in globalThis);
    await startLabPhone(lab, api, accountId, "agent3");
    // The register event updates the page without waiting for its periodic read.
    await row("agent3 softphone").getByText("Registered", { exact: true }).waitFor({ timeout: 5000 });
    expect(await page.getByRole("status").filter({ hasText: /2 of 5 registered/ }).count()).toBe(1);

    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/sync") && r.request().method() === "POST"),
      page.getByRole("button", { name: "Sync agent3 softphone" }).click(),
    ]);
    expect(answer.status()).toBe(202);
    await row("agent3 softphone").getByText("Sync sent").waitFor();
    const notify = await poll("the check-sync NOTIFY at agent3's phone", async () => sipFrames.find((f) => f.startsWith("NOTIFY ")));
    expect(notify).toMatch(/\r\nEvent: check-sync\r\n/i);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-admin-devices.png"), fullPage: true });

    await lab.evaluate(() => (globalThis as unknown as LabWindow).lab.phone().unregister());
    await row("agent3 softphone").getByText("Not registered", { exact: true }).waitFor({ timeout: 5000 });
    await lab.close();
  });
});

describe("admin: blocklists", () => {
  it("creates, edits, puts in force and deletes a blocklist, with the server holding each change", async () => {
    const { page } = admin;
    await openTab(page, "Blocklists");
    await page.getByRole("button", { name: "New blocklist" }).click();
    const form = page.getByRole("form", { name: "New blocklist" });
    await form.getByLabel("Blocklist name").fill("Spam callers");
    await form.getByLabel("Blocked numbers").fill("+14155550199\n(415) 555-0198");
    await form.getByLabel("Also block callers who hide their number").check();
    await form.getByRole("button", { name: "Save blocklist" }).click();
    await page.getByRole("status").filter({ hasText: "Blocklist “Spam callers” saved." }).waitFor();
    const row = page.getByRole("row", { name: /^Spam callers/ });
    await row.waitFor();
    const id = (await row.getAttribute("data-blocklist-id")) ?? "";

    const stored = await api.call<{ name: string; numbers: Record<string, unknown>; should_block_anonymous: boolean }>("GET", `${base()}/blacklists/${id}`, { token });
    expect(stored.body.data).toMatchObject({ name: "Spam callers", should_block_anonymous: true });
    // The national spelling is stored in E.164 in the account's country.
    expect(Object.keys(stored.body.data.numbers).sort()).toEqual(["+14155550198", "+14155550199"]);

    await row.getByRole("checkbox", { name: "Spam callers in force" }).check();
    await poll("the account to apply the list", async () => {
      const account = await api.call<{ blacklists?: string[] }>("GET", base(), { token });
      return account.body.data.blacklists?.includes(id) ? true : undefined;
    });

    await row.getByRole("button", { name: "Edit Spam callers" }).click();
    const edit = page.getByRole("form", { name: "Edit Spam callers" });
    expect((await edit.getByLabel("Blocked numbers").inputValue()).split("\n").sort()).toEqual(["+14155550198", "+14155550199"]);
    await edit.getByLabel("Blocklist name").fill("Known spam");
    await edit.getByLabel("Blocked numbers").fill("+14155550199\n+442079460000");
    await edit.getByRole("button", { name: "Save blocklist" }).click();
    await page.getByRole("row", { name: /^Known spam/ }).waitFor();
    const edited = await api.call<{ name: string; numbers: Record<string, unknown> }>("GET", `${base()}/blacklists/${id}`, { token });
    expect(edited.body.data.name).toBe("Known spam");
    expect(Object.keys(edited.body.data.numbers).sort()).toEqual(["+14155550199", "+442079460000"]);

    // A number the server cannot read is refused with the field named, and nothing changes.
    await page.getByRole("row", { name: /^Known spam/ }).getByRole("button", { name: "Edit Known spam" }).click();
    const bad = page.getByRole("form", { name: "Edit Known spam" });
    await bad.getByLabel("Blocked numbers").fill("12");
    await bad.getByRole("button", { name: "Save blocklist" }).click();
    expect(await bad.getByRole("alert").innerText()).toMatch(/^The blocklist was not saved: the server refused it: numbers\.12: /);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-admin-blocklists.png"), fullPage: true });
    await bad.getByRole("button", { name: "Cancel" }).click();

    await page.getByRole("row", { name: /^Known spam/ }).getByRole("button", { name: "Delete Known spam" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this blocklist?" });
    await dialog.getByRole("button", { name: "Delete blocklist" }).click();
    await page.getByRole("row", { name: /^Known spam/ }).waitFor({ state: "detached" });
    expect((await api.call("GET", `${base()}/blacklists/${id}`, { token })).status).toBe(404);
    const account = await api.call<{ blacklists?: string[] }>("GET", base(), { token });
    expect(account.body.data.blacklists ?? []).not.toContain(id);
  });
});

describe("admin: webhooks", () => {
  it("shows a hook the server disabled with its failed attempts, re-enables it, and lists its successes once pointed at a live receiver", async () => {
    const { page } = admin;
    await openTab(page, "Webhooks");
    await page.getByRole("button", { name: "New webhook" }).click();
    const form = page.getByRole("form", { name: "New webhook" });
    await form.getByLabel("Webhook name").fill("Object changes");
    await form.getByLabel("Event").selectOption("object");
    // Port 1 on loopback refuses connections: every attempt fails at once.
    await form.getByLabel("Address to call").fill("http://127.0.0.1:1/hook");
    await form.getByLabel("Retries after a failure").fill("4");
    await form.getByRole("button", { name: "Save webhook" }).click();
    const row = page.getByRole("row", { name: /^Object changes/ });
    await row.waitFor();
    const id = (await row.getAttribute("data-webhook-id")) ?? "";

    // Two events, five attempts each: more than the six failures in a minute the server allows.
    await touchAccountDocument();
    await touchAccountDocument();
    await poll("the server to disable the hook", async () => {
      const hook = await api.call<{ enabled: boolean; disable_reason?: string }>("GET", `${base()}/webhooks/${id}`, { token });
      return hook.body.data.enabled === false ? hook.body.data : undefined;
    });
    await page.getByRole("button", { name: "Refresh", exact: true }).click();
    await row.getByText("Disabled: too many failed attempts").waitFor();
    expect(await page.getByText("1 disabled after failing.").isVisible()).toBe(true);

    await row.getByRole("button", { name: "Attempts of Object changes" }).click();
    await page.getByRole("heading", { name: "Attempts of Object changes" }).waitFor();
    const attempts = page.locator('tr[data-attempt-result="failure"]');
    await poll("the failed attempts listed", async () => ((await attempts.count()) >= 6 ? true : undefined));
    expect(await attempts.first().innerText()).toContain("Object changes");
    expect(await page.locator('tr[data-attempt-result="success"]').count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-admin-webhooks.png"), fullPage: true });

    await page.getByRole("button", { name: "Re-enable disabled webhooks" }).click();
    await page.getByRole("status").filter({ hasText: "Re-enabled: Object changes." }).waitFor();
    await row.getByText("Enabled", { exact: true }).waitFor();
    const reenabled = await api.call<{ enabled: boolean; disable_reason?: string }>("GET", `${base()}/webhooks/${id}`, { token });
    expect(reenabled.body.data.enabled).toBe(true);
    expect(reenabled.body.data.disable_reason).toBeUndefined();

    // Pointed at a live receiver, the next event arrives and its attempt is a success.
    await row.getByRole("button", { name: "Edit Object changes" }).click();
    const edit = page.getByRole("form", { name: "Edit Object changes" });
    expect(await edit.getByLabel("Event").inputValue()).toBe("object");
    await edit.getByLabel("Address to call").fill(`${receiver.url}/objects`);
    await edit.getByRole("button", { name: "Save webhook" }).click();
    await page.getByRole("status").filter({ hasText: "Webhook “Object changes” saved." }).waitFor();
    await touchAccountDocument();
    await poll("the receiver to get the event", async () => (receiver.at("/objects").length > 0 ? true : undefined));
    await page.getByRole("button", { name: "Refresh attempts" }).click();
    await page.locator('tr[data-attempt-result="success"]').first().waitFor();
    expect(await page.locator('tr[data-attempt-result="success"]').first().innerText()).toContain("200");
  });

  it("checks a webhook's address before sending it", async () => {
    const { page } = admin;
    await page.getByRole("button", { name: "New webhook" }).click();
    const form = page.getByRole("form", { name: "New webhook" });
    await form.getByLabel("Webhook name").fill("Broken");
    await form.getByLabel("Address to call").fill("ftp://example.test/");
    await form.getByRole("button", { name: "Save webhook" }).click();
    expect(await form.getByRole("alert").innerText()).toBe("Enter the address to call as http://… or https://….");
    await form.getByRole("button", { name: "Cancel" }).click();
  });
});

describe("admin: queue membership", () => {
  it("removes and adds a recipient to a queue", async () => {
    const { page } = admin;
    await openTab(page, "Queue membership");
    const queues = await api.call<{ id: string; name: string }[]>("GET", `${base()}/callq_queues`, { token });
    const sales = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
    const users = await api.call<{ id: string; username: string }[]>("GET", `${base()}/users`, { token });
    const agent3 = users.body.data.find((u) => u.username === "agent3")?.id ?? "";
    const members = async () => Object.keys((await api.call<{ members: Record<string, string> }>("GET", `${base()}/callq_queues/${sales}`, { token })).body.data.members);

    const box = page.getByRole("checkbox", { name: "agent3 in Sales" });
    await box.waitFor();
    expect(await box.isChecked()).toBe(true);
    expect(await members()).toContain(agent3);
    await box.uncheck();
    await poll("agent3 out of Sales", async () => (!(await members()).includes(agent3) ? true : undefined));
    expect(await page.getByRole("checkbox", { name: "agent3 in Support" }).isChecked()).toBe(true);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-admin-queues.png"), fullPage: true });
    // The keyboard works the grid too: Space checks the focused box.
    await box.focus();
    await page.keyboard.press("Space");
    await poll("agent3 back in Sales", async () => ((await members()).includes(agent3) ? true : undefined));
    expect(await box.isChecked()).toBe(true);
  });

  it("moves between the tabs with the arrow keys", async () => {
    const { page } = admin;
    await page.getByRole("tab", { name: "Queue membership" }).focus();
    // The key's effect lands in React's next render: wait for it rather than reading at once.
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => page.getByRole("tab", { name: "Devices" }).getAttribute("aria-selected")).toBe("true");
    await expect.poll(() => page.evaluate("document.activeElement.textContent")).toBe("Devices");
    await page.keyboard.press("End");
    await expect.poll(() => page.getByRole("tab", { name: "Queue membership" }).getAttribute("aria-selected")).toBe("true");
    await expect.poll(() => new URL(page.url()).hash).toBe("#/admin?tab=queues");
  });
});

describe("admin pages for an agent", () => {
  it("are not in an agent's navigation, and say so when opened by address", async () => {
    const agent = await openConsole(browser.browser, api.url);
    await signIn(agent.page, "agent1");
    const nav = agent.page.getByRole("navigation", { name: "Console views" });
    await nav.getByRole("link", { name: "Recordings" }).waitFor();
    expect(await nav.getByRole("link", { name: "Admin" }).count()).toBe(0);
    await agent.page.goto(`${api.url}/#/admin`);
    await agent.page.getByText("The admin pages are for the account's admins.", { exact: false }).waitFor();
    expect(await agent.page.getByRole("tablist").count()).toBe(0);
    expect(agent.errors).toEqual([]);
    await agent.page.close();
  });
});
