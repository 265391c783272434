// The texting pane in Chromium against the built server: an agent starts a conversation and
// texts a contact (Enter sends, delivery status shown), a reply injected through the simulated
// carrier appears in the open thread without counting as unread, a text to another conversation
// shows an unread count and raises a desktop notification until it is opened, a picture is
// attached and sent, and an opt-out is shown clearly with the compose box closed. Unread
// conversations are counted on the Texting navigation entry and in the window title, from any
// view, after a reload too, until read. On a slow link, a conversation started before the pane's
// first load has answered opens all the same, and stays listed once that load lands; a change of
// view neither closes it nor reads the settings and the list again.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentials, DEMO_PASSWORD } from "../helpers/credentials.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { RECORD_NOTIFICATIONS, recordedNotifications } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { REPO_ROOT, serve, type Served } from "../helpers/serve.js";
import { TINY_PNG } from "../texting/texting-client.js";

const SCREENSHOTS = join(REPO_ROOT, "test-results/screenshots");
const PAT = "+14155556000";
const LEE = "+14155556001";
const SAM = "+14155556002";
const KIM = "+14155556003";
const ROBIN = "+14155556004";

let server: Served;
let launched: LaunchedBrowser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
let admin: { token: string; accountId: string };
let agentNumber = "";


async function platform<T>(method: string, path: string, token: string, data?: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "X-Auth-Token": token, "Content-Type": "application/json" },
    body: data === undefined ? undefined : JSON.stringify({ data }),
  });
  const body = (await res.json()) as { data: T };
  return { status: res.status, data: body.data };
}

async function login(username: string): Promise<{ token: string; accountId: string; ownerId: string }> {
  const res = await fetch(`${server.url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials(username, DEMO_PASSWORD), account_name: "demo" } }),
  });
  const body = (await res.json()) as { auth_token: string; data: { account_id: string; owner_id: string } };
  return { token: body.auth_token, accountId: body.data.account_id, ownerId: body.data.owner_id };
}

/** A text from a contact to agent1's number, through the simulated carrier. */
async function textFrom(from: string, body: string): Promise<void> {
  const res = await platform("POST", `/v2/accounts/${admin.accountId}/sim/messages`, admin.token, { from, to: agentNumber, body });
  expect(res.status).toBe(201);
}

async function notifications(): Promise<{ title: string; body: string }[]> {
  return (await recordedNotifications(page)).map(({ title, body }) => ({ title, body }));
}

function conversation(name: string) {
  return page.locator(".conversation-item", { hasText: name });
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await serve();
  launched = await launchBrowser();
  admin = await login("admin");
  const agent = await login("agent1");
  const settings = await platform<{ numbers: string[] }>("GET", `/v2/accounts/${agent.accountId}/users/${agent.ownerId}/texting`, agent.token);
  agentNumber = settings.data.numbers[0] ?? "";
  context = await launched.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["notifications"], { origin: server.url });
  await context.addInitScript(RECORD_NOTIFICATIONS);
  page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
});

afterAll(async () => {
  await context?.close();
  await launched?.close();
  await server?.stop();
});

async function signInAgent(target: Page): Promise<void> {
  await target.getByLabel("Account name", { exact: true }).fill("demo");
  await target.getByLabel("Username", { exact: true }).fill("agent1");
  await target.getByLabel("Password", { exact: true }).fill("switchboard");
  await target.getByRole("button", { name: "Sign in" }).click();
}

describe("texting pane", () => {
  it("texts a contact, shows the reply live, counts and notifies unread texts, sends a picture, shows an opt-out", async () => {
    await page.goto(server.url);
    await page.getByLabel("Account name", { exact: true }).fill("demo");
    await page.getByLabel("Username", { exact: true }).fill("agent1");
    await page.getByLabel("Password", { exact: true }).fill("switchboard");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Texting" }).click();
    await page.getByRole("heading", { name: "Texting", level: 1 }).waitFor();

    // A new conversation, from the contact form.
    await page.getByRole("button", { name: "New conversation" }).click();
    await page.getByLabel("Phone number").fill(PAT);
    await page.getByLabel("Name").fill("Pat Customer");
    await page.getByRole("button", { name: "Start conversation" }).click();
    await page.getByRole("heading", { name: "Pat Customer", level: 2 }).waitFor();

    // Enter sends; the delivery status follows the carrier to Delivered.
    const draft = page.getByLabel("Message", { exact: true });
    await draft.fill("Hello Pat, your order is ready");
    await draft.press("Enter");
    const sent = page.locator(".bubble-out", { hasText: "Hello Pat, your order is ready" });
    await sent.locator(".delivery-status", { hasText: "Delivered" }).waitFor({ timeout: 10_000 });
    expect(await draft.inputValue()).toBe("");
    expect(await conversation("Pat Customer").locator(".conversation-snippet").innerText()).toContain("Hello Pat, your order is ready");

    // The reply lands in the open thread: read at once, no unread count, no notification.
    await textFrom(PAT, "Great, I'll pick it up at 5");
    await page.locator(".bubble-in", { hasText: "Great, I'll pick it up at 5" }).waitFor();
    expect(await conversation("Pat Customer").locator(".unread-badge").count()).toBe(0);

    // A text to another conversation: counted as unread and notified.
    await textFrom(LEE, "Hi, a question about my bill");
    await conversation(LEE).locator(".unread-badge", { hasText: "1 unread" }).waitFor();
    const raised = await poll("a notification for the text", async () => {
      const list = await notifications();
      return list.length > 0 ? list : undefined;
    });
    expect(raised).toEqual([{ title: `Text from ${LEE}`, body: "Hi, a question about my bill" }]);
    await textFrom(LEE, "Are you there?");
    await conversation(LEE).locator(".unread-badge", { hasText: "2 unread" }).waitFor();
    expect(await conversation("Pat Customer").locator(".unread-badge").count()).toBe(0);

    // Opening it reads it: the count goes, on the server too.
    await conversation(LEE).click();
    await page.locator(".bubble-in", { hasText: "Are you there?" }).waitFor();
    await poll("the unread count to clear", async () => ((await conversation(LEE).locator(".unread-badge").count()) === 0 ? true : undefined), 5_000);

    // A picture: attached, sent without text, shown in the thread from the local server.
    await page.locator('input[type="file"]').setInputFiles({ name: "receipt.png", mimeType: "image/png", buffer: TINY_PNG });
    await page.getByRole("button", { name: "Remove image" }).waitFor();
    await page.getByRole("button", { name: "Send" }).click();
    const picture = page.locator(".bubble-out img[alt='Picture you sent']");
    await picture.waitFor();
    expect(await picture.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
    expect(await picture.getAttribute("src")).toMatch(new RegExp(`^${server.url}/texting/media/`));

    // Search narrows the list.
    await page.getByLabel("Search conversations").fill("pat");
    await expect.poll(() => page.locator(".conversation-item").count()).toBe(1);
    await page.getByLabel("Search conversations").fill("");

    // Pat opts out: shown in the list and in the thread, and the compose box closes.
    await textFrom(PAT, "STOP");
    await conversation("Pat Customer").locator(".opt-out-badge").waitFor();
    await conversation("Pat Customer").click();
    await page.getByText("Opted out. Pat Customer texted STOP: you cannot text them until they text START.").waitFor();
    expect(await draft.isDisabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Send" }).isDisabled()).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, "texting.png") });

    // START opens it again.
    await textFrom(PAT, "START");
    await poll("the compose box to open", async () => ((await draft.isDisabled()) ? undefined : true), 5_000);
    expect(await conversation("Pat Customer").locator(".opt-out-badge").count()).toBe(0);

    // Texts to a conversation not open notified (Pat's STOP came while Lee's was open); those to the open one did not.
    expect((await notifications()).map((n) => n.body)).toEqual(["Hi, a question about my bill", "Are you there?", "STOP"]);
    expect(pageErrors).toEqual([]);
  });

  it("counts unread conversations on the Texting entry and in the window title, after a reload too, until they are read", async () => {
    const other = await context.newPage();
    other.on("pageerror", (error) => pageErrors.push(error.message));
    await other.goto(server.url);
    await signInAgent(other);
    const nav = other.getByRole("navigation", { name: "Console views" });
    const textingEntry = nav.getByRole("link", { name: /^Texting/ });
    await other.getByRole("heading", { name: "Agent", level: 1 }).waitFor();
    await textingEntry.waitFor();
    expect(await other.title()).toBe("Switchboard");
    expect(await textingEntry.locator(".nav-count").count()).toBe(0);

    // Two texts from Sam and one from Kim, while the agent is on another view: two conversations.
    await textFrom(SAM, "Hello?");
    await textFrom(SAM, "Is the shop open on Sunday?");
    await textFrom(KIM, "Please call me back");
    await textingEntry.locator(".nav-count", { hasText: "2" }).waitFor();
    expect(await textingEntry.locator(".nav-count").innerText()).toMatch(/^2\b/);
    await nav.getByRole("link", { name: /^Texting\s*2 unread conversations$/ }).waitFor();
    await expect.poll(() => other.title()).toBe("(2) Switchboard");

    // The server keeps the count: a reload and a new sign-in show it again.
    await other.reload();
    await signInAgent(other);
    await textingEntry.locator(".nav-count", { hasText: "2" }).waitFor();
    await expect.poll(() => other.title()).toBe("(2) Switchboard");

    // Reading Sam's thread clears one, in both places; Kim's stays.
    await textingEntry.click();
    await other.locator(".conversation-item", { hasText: SAM }).click();
    await other.locator(".bubble-in", { hasText: "Is the shop open on Sunday?" }).waitFor();
    await textingEntry.locator(".nav-count", { hasText: "1" }).waitFor();
    await expect.poll(() => other.title()).toBe("(1) Switchboard");
    await other.locator(".conversation-item", { hasText: KIM }).click();
    await other.locator(".bubble-in", { hasText: "Please call me back" }).waitFor();
    await expect.poll(() => textingEntry.locator(".nav-count").count()).toBe(0);
    await expect.poll(() => other.title()).toBe("Switchboard");

    // A text while the thread is open is read at once; one to another conversation counts.
    await textFrom(KIM, "Thanks!");
    await other.locator(".bubble-in", { hasText: "Thanks!" }).waitFor();
    await textFrom(SAM, "Sunday then?");
    await expect.poll(() => other.title()).toBe("(1) Switchboard");

    // Signed out, the title carries no count.
    await other.getByRole("button", { name: "Sign out" }).click();
    await other.getByRole("button", { name: "Sign in" }).waitFor();
    expect(await other.title()).toBe("Switchboard");
    await other.close();
    expect(pageErrors).toEqual([]);
  });

  it("starts a conversation on a slow link before the pane's first load has answered, keeps it listed when that load lands, and open across a change of view", async () => {
    const slow = await context.newPage();
    slow.on("pageerror", (error) => pageErrors.push(error.message));
    // The settings take 1.5 s, and the first read of the contact list is answered late, when the
    // test lets it: the agent fills the form and starts the conversation while both are on their way.
    const SETTINGS = /\/v2\/accounts\/[0-9a-f]+\/users\/[0-9a-f]+\/texting$/;
    let listReads = 0;
    let settingsReads = 0;
    await slow.route(SETTINGS, async (route) => {
      settingsReads++;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await route.continue();
    });
    let firstReadAnswered: () => void = () => undefined;
    const firstRead = new Promise<void>((resolve) => (firstReadAnswered = resolve));
    // The first read's answer reaches the page only when the test lets it (not after a fixed time).
    let deliverFirstRead: () => void = () => undefined;
    const firstReadDelivered = new Promise<void>((resolve) => (deliverFirstRead = resolve));
    await slow.route(/\/contacts$/, async (route) => {
      // The contact is created only after the server has answered the first read...
      if (route.request().method() === "POST") await firstRead;
      if (route.request().method() !== "GET" || ++listReads > 1) return route.continue();
      // ...whose answer (without the contact) reaches the page late.
      const response = await route.fetch();
      firstReadAnswered();
      await firstReadDelivered;
      await route.fulfill({ response });
    });
    await slow.goto(server.url);
    await signInAgent(slow);
    await slow.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: /^Texting/ }).click();
    await slow.getByRole("heading", { name: "Texting", level: 1 }).waitFor();
    await slow.getByRole("button", { name: "New conversation" }).click();
    await slow.getByLabel("Phone number").fill(ROBIN);
    await slow.getByLabel("Name").fill("Robin Slowlink");
    await slow.getByRole("button", { name: "Start conversation" }).click();
    const heading = slow.getByRole("heading", { name: "Robin Slowlink", level: 2 });
    await heading.waitFor();
    const robin = slow.locator(".conversation-item", { hasText: "Robin Slowlink" });
    await robin.waitFor();
    // The slow first read (started before the contact existed) lands after: it must not hide it.
    // The list is busy until that first read is shown.
    expect(listReads).toBeGreaterThanOrEqual(2);
    const list = slow.locator("section.conversation-list");
    expect(await list.getAttribute("aria-busy")).toBe("true");
    deliverFirstRead();
    await slow.locator('section.conversation-list[aria-busy="false"]').waitFor();
    expect(await robin.count()).toBe(1);
    expect(await heading.isVisible()).toBe(true);
    expect(await slow.getByRole("alert").count()).toBe(0);
    const draft = slow.getByLabel("Message", { exact: true });
    await draft.fill("Hello Robin");
    await draft.press("Enter");
    await slow.locator(".bubble-out", { hasText: "Hello Robin" }).locator(".delivery-status", { hasText: "Delivered" }).waitFor({ timeout: 10_000 });

    // Away to the agent view and back: the same conversation is open, nothing was read again.
    const nav = slow.getByRole("navigation", { name: "Console views" });
    await nav.getByRole("link", { name: "Agent" }).click();
    await slow.getByRole("heading", { name: "Agent", level: 1 }).waitFor();
    await nav.getByRole("link", { name: /^Texting/ }).click();
    await heading.waitFor();
    expect(await slow.locator(".bubble-out", { hasText: "Hello Robin" }).count()).toBe(1);
    expect(settingsReads).toBe(1);
    expect(listReads).toBe(2);
    await slow.close();
    expect(pageErrors).toEqual([]);
  });
});
