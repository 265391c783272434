// The console docked narrow, in Chromium against serve mode, signed in as the admin so every view
// shows: at 360 and 400 px wide no view (login, every entry of the navigation, each admin page, a
// texting thread and its contact form, the agent view with a call up) scrolls sideways or puts an
// element past the right edge, except inside the few wrappers that scroll on purpose: `.scroll-x`
// around each data table (recordings, devices, webhooks and their attempts) and the supervisor's
// agents board section, wide with its Supervise buttons. The navigation folds behind a Menu button that works from the keyboard (Enter
// opens it on the current view, Escape closes it and gives focus back); Sign out stays on screen;
// a ringing call stays in view however far the page is scrolled, in the dock of another view and
// on the agent view itself. Screenshots go to
// test-results/screenshots/narrow-*.png.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { credentials, DEMO_PASSWORD } from "../helpers/credentials.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { SCREENSHOTS, seriousAxeViolations, signIn, waitRegistered } from "../helpers/console-page.js";
import { overflowOf } from "../helpers/narrow.js";
import { poll } from "../helpers/poll.js";
import { serve, type Served } from "../helpers/serve.js";

const WIDTHS = [360, 400];
const HEIGHT = 740;
const CUSTOMER = "+14155556100";

let server: Served;
let launched: LaunchedBrowser;
let page: Page;
const pageErrors: string[] = [];
/** What checkView found, asserted empty at the end of each test, so one run lists every view's faults. */
const problems: string[] = [];
let admin: { token: string; accountId: string; ownerId: string };

async function platform<T>(method: string, path: string, data?: unknown): Promise<{ status: number; data: T }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "X-Auth-Token": admin.token, "Content-Type": "application/json" },
    body: data === undefined ? undefined : JSON.stringify({ data }),
  });
  const body = (await res.json()) as { data: T };
  return { status: res.status, data: body.data };
}

async function authenticate(username: string): Promise<{ token: string; accountId: string; ownerId: string }> {
  const res = await fetch(`${server.url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials(username, DEMO_PASSWORD), account_name: "demo" } }),
  });
  const body = (await res.json()) as { auth_token: string; data: { account_id: string; owner_id: string } };
  return { token: body.auth_token, accountId: body.data.account_id, ownerId: body.data.owner_id };
}

async function overflow(): Promise<string[]> {
  return overflowOf(page);
}

/**
 * What is wrong with the focused element, if anything: it must show a focus outline (the console's
 * :focus-visible ring) and be on screen, scrolled into view if need be, not past the right edge.
 */
const FOCUS_IN_PAGE = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return { done: true, fault: "" };
  const name = el.tagName.toLowerCase() + " \\"" + (el.getAttribute("aria-label") || el.textContent || el.getAttribute("name") || el.id || "").trim().slice(0, 40) + "\\"";
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  const faults = [];
  // A date field's parts take focus inside the browser's own control, which draws their focus.
  const ownFocus = el.matches("input[type=date]");
  if (!ownFocus && (!el.matches(":focus-visible") || style.outlineStyle === "none" || parseFloat(style.outlineWidth) === 0)) faults.push("no visible focus");
  if (box.width === 0 || box.height === 0) faults.push("not rendered");
  if (box.right > document.documentElement.clientWidth + 0.5 || box.left < -0.5 || box.bottom < 0 || box.top > window.innerHeight) faults.push("off screen at " + [box.left, box.top, box.right, box.bottom].map(Math.round).join(","));
  return { done: false, name, fault: faults.length ? name + ": " + faults.join(", ") : "" };
})()`;

/**
 * Tabs through the whole page from the top: every stop shows its focus and is on screen. Answers
 * how many stops there were, so a view that traps or skips focus shows as too few.
 */
async function walkByKeyboard(name: string): Promise<number> {
  await page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)");
  let stops = 0;
  for (let i = 0; i < 200; i++) {
    await page.keyboard.press("Tab");
    const at = (await page.evaluate(FOCUS_IN_PAGE)) as { done: boolean; name?: string; fault: string };
    if (at.done) break;
    if (at.fault !== "") problems.push(`${name}, Tab stop ${i + 1}: ${at.fault}`);
    stops++;
  }
  return stops;
}

async function inViewport(selector: string): Promise<boolean> {
  const box = await page.locator(selector).first().boundingBox();
  const viewport = page.viewportSize();
  if (box === null || viewport === null) return false;
  return box.y >= 0 && box.x >= 0 && box.y + box.height <= viewport.height && box.x + box.width <= viewport.width;
}

/** Checks the view as it is now at each width, and keeps a screenshot of each. */
async function checkView(name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: HEIGHT });
    await page.evaluate("window.scrollTo(0, 0)");
    const found = await overflow();
    if (found.length > 0) problems.push(`${name} at ${width} px: ${found.slice(0, 8).join("; ")}`);
    await page.screenshot({ path: join(SCREENSHOTS, `narrow-${width}-${name}.png`), fullPage: true });
  }
  // From the keyboard at the narrowest: every control reached, its focus shown, on screen.
  expect(await walkByKeyboard(name), `Tab stops on ${name}`).toBeGreaterThan(0);
  for (const violation of await seriousAxeViolations(page)) problems.push(`${name}: axe: ${violation}`);
  await page.setViewportSize({ width: WIDTHS[0] ?? 360, height: HEIGHT });
}

const menuButton = () => page.locator("header").getByRole("button", { name: /^Menu/ });
const nav = () => page.getByRole("navigation", { name: "Console views" });

/** Opens a view through the folded menu, by keyboard: focus the button, Enter, the link, Enter. */
async function openView(label: string): Promise<void> {
  await menuButton().focus();
  await page.keyboard.press("Enter");
  await nav().getByRole("link", { name: label }).waitFor();
  await nav().getByRole("link", { name: label }).focus();
  await page.keyboard.press("Enter");
  await nav().waitFor({ state: "hidden" });
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await serve();
  launched = await launchBrowser();
  admin = await authenticate("admin");
  // The admin records calls from outside, so the recordings view has a row to lay out.
  const patched = await platform("PATCH", `/v2/accounts/${admin.accountId}/users/${admin.ownerId}`, { call_recording: { inbound: { offnet: { enabled: true } } } });
  expect(patched.status).toBe(200);
  page = await launched.browser.newPage({ viewport: { width: WIDTHS[0] ?? 360, height: HEIGHT } });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(server.url);
});

afterEach(() => {
  expect(problems.splice(0)).toEqual([]);
});

afterAll(async () => {
  await launched?.close();
  await server?.stop();
});

describe("the console docked narrow", () => {
  it("lays out the sign-in page without sideways scrolling", async () => {
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    await checkView("login");
  });

  it("folds the navigation behind a Menu button that works from the keyboard, and keeps Sign out on screen", async () => {
    await signIn(page, "admin");
    await waitRegistered(page);
    await menuButton().waitFor();
    expect(await inViewport("header button:has-text('Sign out')")).toBe(true);
    expect(await nav().isVisible()).toBe(false);
    expect(await menuButton().getAttribute("aria-expanded")).toBe("false");
    expect(await menuButton().getAttribute("aria-controls")).toBe("console-nav");
    expect(await page.locator("#console-nav").getAttribute("aria-label")).toBe("Console views");

    // Tab reaches the button (after the skip link); Enter opens the list on the current view.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await menuButton().evaluate((b) => b === (b as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);
    await page.keyboard.press("Enter");
    expect(await menuButton().getAttribute("aria-expanded")).toBe("true");
    expect(await nav().isVisible()).toBe(true);
    const current = nav().getByRole("link", { name: "Agent" });
    expect(await current.getAttribute("aria-current")).toBe("page");
    expect(await current.evaluate((a) => a === (a as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);
    expect(await seriousAxeViolations(page)).toEqual([]);

    // Escape closes it and gives focus back to the button.
    await page.keyboard.press("Escape");
    expect(await nav().isVisible()).toBe(false);
    expect(await menuButton().getAttribute("aria-expanded")).toBe("false");
    expect(await menuButton().evaluate((b) => b === (b as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement)).toBe(true);

    // Open, it fits too; tabbing out of it (the keyboard walk) folds it away.
    await page.keyboard.press("Enter");
    await nav().waitFor();
    await checkView("menu");
    expect(await nav().isVisible()).toBe(false);

    // Choosing a view by keyboard goes there and folds the list away.
    await openView("Queues");
    await page.waitForURL(/#\/queues$/);
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
    expect(await menuButton().getAttribute("aria-expanded")).toBe("false");

    // Wide, the navigation is the sidebar it always was, with no Menu button.
    await page.setViewportSize({ width: 1280, height: HEIGHT });
    expect(await nav().isVisible()).toBe(true);
    expect(await menuButton().isVisible()).toBe(false);
    await page.setViewportSize({ width: WIDTHS[0] ?? 360, height: HEIGHT });
  });

  it("keeps a ringing call in view however far the page is scrolled, and answers it from there", { timeout: 120_000 }, async () => {
    await openView("Supervisor");
    await page.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();
    await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
    const started = await platform<{ id: string }>("POST", `/v2/accounts/${admin.accountId}/sim/calls`, {
      to: "1001",
      caller_id_name: "Nora Narrow",
      caller_id_number: CUSTOMER,
      audio: "tone_stream://%(1000,0,1200)",
    });
    expect(started.status).toBe(201);
    const accept = page.locator(".call-dock").getByRole("button", { name: "Accept" });
    await accept.waitFor();
    expect(await inViewport(".call-dock")).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, "narrow-360-call-dock.png") });
    await accept.focus();
    await page.keyboard.press("Enter");
    await poll("the caller to be answered", async () => {
      const sim = await platform<{ state: string }>("GET", `/v2/accounts/${admin.accountId}/sim/calls/${started.data.id}`);
      return sim.data.state === "answered" ? true : undefined;
    });

    // The agent view with the call up.
    await openView("Agent");
    await page.getByRole("button", { name: "Hang up" }).waitFor();
    await checkView("agent-call");
    await page.keyboard.press("Alt+KeyE");
    await page.getByText("No calls right now.").waitFor();

    // On the agent view, scrolled down to the shortcuts, the next call's offer shows at the top.
    await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
    expect(await inViewport(".idle-card")).toBe(false);
    const next = await platform<{ id: string }>("POST", `/v2/accounts/${admin.accountId}/sim/calls`, {
      to: "1001",
      caller_id_name: "Otto Offscreen",
      caller_id_number: "+14155556101",
      audio: "tone_stream://%(1000,0,1200)",
    });
    expect(next.status).toBe(201);
    const offer = page.getByRole("region", { name: "Incoming call" });
    await offer.getByRole("button", { name: "Reject" }).waitFor();
    expect(await inViewport(".agent-view .call-offer")).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, "narrow-360-agent-offer.png") });
    await page.keyboard.press("Alt+KeyR");
    await offer.waitFor({ state: "detached" });
    await poll("the recording to be listed", async () => {
      const list = await platform<unknown[]>("GET", `/v2/accounts/${admin.accountId}/recordings`);
      return list.data.length > 0 ? true : undefined;
    });
  });

  // Long: every view twice, a walk with Tab and axe on each.
  it("lays out every view, admin page and texting pane without sideways scrolling at 360 and 400 px", { timeout: 300_000 }, async () => {
    // A caller waiting in Sales (agent1 logged in but Away), so the board has figures and a row.
    const agent1 = await authenticate("agent1");
    for (const status of ["login", "away"]) {
      const res = await fetch(`${server.url}/v2/accounts/${agent1.accountId}/callq_recipients/${agent1.ownerId}/status`, {
        method: "POST",
        headers: { "X-Auth-Token": agent1.token, "Content-Type": "application/json" },
        body: JSON.stringify({ data: { status } }),
      });
      expect(res.status).toBeLessThan(300);
    }
    const waiting = await platform<{ id: string }>("POST", `/v2/accounts/${admin.accountId}/sim/calls`, {
      to: "5001",
      caller_id_name: "Wendy Waiting-For-A-Long-Time",
      caller_id_number: "+14155556102",
      audio: "tone_stream://%(1000,0,1200)",
    });
    expect(waiting.status).toBe(201);
    // The label alone: a view's count (missed calls, unread texts) follows it in the link. The
    // Training link shows once the profile says the user is a trainer (an admin is).
    await page.locator("#console-nav a", { hasText: "Training" }).waitFor({ state: "attached" });
    const labels = await page.locator("#console-nav a").evaluateAll((links) => links.map((a) => (a as unknown as { firstChild: { textContent: string } }).firstChild.textContent));
    expect(labels).toEqual(["Agent", "Queues", "Supervisor", "Texting", "Directory", "Recordings", "Admin", "Training", "Scorecards", "Audio", "Settings"]);
    for (const label of labels) {
      await openView(label);
      await page.locator("main h1").first().waitFor();
      if (label === "Supervisor") await page.locator('tr[data-state="Away"]').waitFor();
      await checkView(label.toLowerCase());
    }

    // Each admin page (the tabs are one tab stop; arrows move between them).
    await openView("Admin");
    const tabs = page.getByRole("tablist", { name: "Admin pages" }).getByRole("tab");
    const tabCount = await tabs.count();
    for (let i = 0; i < tabCount; i++) {
      await tabs.nth(i).click();
      await page.getByRole("tabpanel").waitFor();
      await checkView(`admin-${i + 1}`);
    }

    // A texting thread with a text in it, and the contact form.
    const settings = await platform<{ numbers: string[] }>("GET", `/v2/accounts/${admin.accountId}/users/${admin.ownerId}/texting`);
    const sent = await platform("POST", `/v2/accounts/${admin.accountId}/sim/messages`, {
      from: CUSTOMER,
      to: settings.data.numbers[0],
      body: "Hello, is anyone there? This is a longer text, to see that it wraps in the bubble.",
    });
    expect(sent.status).toBe(201);
    // Folded, the navigation's unread count shows on the Menu button.
    await page.locator("header").getByRole("button", { name: /^Menu\s*1 unread conversation$/ }).waitFor();
    await openView("Texting");
    await page.locator(".conversation-item", { hasText: CUSTOMER }).click();
    await page.locator(".bubble-in").first().waitFor();
    await checkView("texting-thread");
    await page.getByRole("button", { name: "New conversation" }).click();
    await page.getByRole("button", { name: "Start conversation" }).waitFor();
    await checkView("texting-contact");
    await platform("POST", `/v2/accounts/${admin.accountId}/sim/calls/${waiting.data.id}`, { action: "hangup" });
    expect(pageErrors).toEqual([]);
  });
});
