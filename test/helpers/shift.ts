// The floor around a console under test in a shift test: serve mode on a data directory that
// survives a restart, the platform API as the admin sees it (recipient statuses, the users'
// channels, simulated callers), and the console steps a shift repeats (the agent state panel,
// offers, call cards, transfers, failed calls).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "./browser.js";
import { openConsole, SCREENSHOTS, signIn, waitRegistered, type ConsolePage, type OpenConsoleOptions } from "./console-page.js";
import { poll } from "./poll.js";
import { demoGrant, serve, type Served, type ServedClock } from "./serve.js";

interface Envelope<T> {
  data: T;
  auth_token?: string;
}

export interface RecipientStatus {
  availability_state: string;
  available: boolean;
  away_reason?: string;
  missed_offers?: number;
  unavailable_reason?: string;
  stats: { missed_calls: number; total_calls: number };
}

export interface ChannelRow {
  uuid: string;
  other_leg?: string;
  answered: boolean;
  is_onhold?: boolean;
}

export interface FloorOptions {
  /** The server runs on a clock the test moves (serve mode's --clock controllable). */
  clock?: boolean;
}

export interface Caller {
  caller_id_name: string;
  caller_id_number: string;
  audio?: string;
}

export class Floor {
  #server: Served;
  #token = "";
  #accountId = "";
  readonly #userIds = new Map<string, string>();

  private constructor(
    server: Served,
    private readonly dataDir: string,
    private readonly args: readonly string[],
    private readonly movableClock: boolean,
  ) {
    this.#server = server;
  }

  /**
   * Serve mode on its own data directory (kept across restart()), signed in as the admin; `args`
   * are more serve-mode flags; with `clock`, the server's clock is this test's to move (clock()).
   */
  static async open(args: readonly string[] = [], options: FloorOptions = {}): Promise<Floor> {
    const dataDir = await mkdtemp(join(tmpdir(), "sb-shift-"));
    const clock = options.clock ?? false;
    const floor = new Floor(await serve({ args: ["--data-dir", dataDir, ...args], clock }), dataDir, args, clock);
    await floor.signInAdmin();
    for (const user of (await floor.v2<{ id: string; username: string }[]>("GET", "/users")).body.data) floor.#userIds.set(user.username, user.id);
    return floor;
  }

  get url(): string {
    return this.#server.url;
  }

  userId(username: string): string {
    const id = this.#userIds.get(username);
    if (id === undefined) throw new Error(`no user ${username} in the demo account`);
    return id;
  }

  /**
   * The server's clock (Floor.open with `clock`): moving it ends ring timeouts, wrap-ups and the
   * like at once instead of waiting for them. Audio and the consoles keep real time.
   */
  get clock(): ServedClock {
    return this.#server.clock;
  }

  /** Stops the server and starts it again on the same port and data (and a moved clock at the time it had). */
  async restart(): Promise<void> {
    const port = new URL(this.#server.url).port;
    const clock = this.movableClock ? { startMs: await this.#server.clock.now() } : false;
    await this.#server.stop();
    this.#server = await serve({ args: ["--port", port, "--data-dir", this.dataDir, ...this.args], clock });
    await this.signInAdmin();
  }

  async close(): Promise<void> {
    await this.#server.stop();
    await rm(this.dataDir, { recursive: true, force: true });
  }

  /** A request under /v2/accounts/{the demo account} as the admin. */
  async v2<T>(method: string, path: string, data?: unknown): Promise<{ status: number; body: Envelope<T> }> {
    const headers: Record<string, string> = { Accept: "application/json", "X-Auth-Token": this.#token };
    if (data !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(`${this.url}/v2/accounts/${this.#accountId}${path}`, { method, headers, ...(data === undefined ? {} : { body: JSON.stringify({ data }) }) });
    return { status: res.status, body: (await res.json()) as Envelope<T> };
  }

  async status(username: string): Promise<RecipientStatus> {
    const res = await this.v2<RecipientStatus>("GET", `/callq_recipients/${this.userId(username)}/status`);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /** The user's live legs (their phones' channels) as the server has them. */
  async channels(username: string): Promise<ChannelRow[]> {
    const res = await this.v2<ChannelRow[]>("GET", `/users/${this.userId(username)}/channels`);
    expect(res.status).toBe(200);
    return res.body.data;
  }

  async noChannels(...usernames: string[]): Promise<void> {
    for (const username of usernames) await poll(`${username} without a live channel`, async () => ((await this.channels(username)).length === 0 ? true : undefined));
  }

  /** A simulated caller dialling `to`; answers the call's id. */
  async simCall(to: string, caller: Caller): Promise<string> {
    const res = await this.v2<{ id: string }>("POST", "/sim/calls", { to, audio: "tone_stream://440", ...caller });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  async hangupSim(id: string): Promise<void> {
    await this.v2("POST", `/sim/calls/${id}`, { action: "hangup" });
  }

  /** The path of the queue called `name`. */
  async queuePath(name: string): Promise<string> {
    const queues = await this.v2<{ id: string; name: string }[]>("GET", "/callq_queues");
    const id = queues.body.data.find((q) => q.name === name)?.id;
    if (id === undefined) throw new Error(`no queue ${name}`);
    return `/callq_queues/${id}`;
  }

  async deviceRegistered(username: string): Promise<boolean> {
    const status = await this.v2<{ device_id: string }[]>("GET", "/devices/status");
    const mine = (await this.v2<{ id: string }[]>("GET", `/users/${this.userId(username)}/devices`)).body.data.map((d) => d.id);
    return status.body.data.some((row) => mine.includes(row.device_id));
  }

  private async signInAdmin(): Promise<void> {
    const admin = await demoGrant(this.url);
    this.#token = admin.token;
    this.#accountId = admin.accountId;
  }

}

/** A floor and a Chromium for a test file, with the consoles it opened. */
export interface FloorSetup {
  /** The floor; throws before beforeAll has started it. */
  floor(): Floor;
  browser(): LaunchedBrowser;
  /**
   * A new console page signed in as `username`, its phone registered unless `registered` is false;
   * `options.movableClock`: on Playwright's page clock (openConsole).
   */
  signedIn(username: string, registered?: boolean, options?: OpenConsoleOptions): Promise<Page>;
  /** The uncaught errors of every console opened through signedIn. */
  errors(): string[];
}

/**
 * Starts a floor (serve mode with `args`) and Chromium before the file's tests and stops both
 * after them; called once at the top of a test file.
 */
export function useFloor(args: readonly string[] = [], options: FloorOptions = {}): FloorSetup {
  let floor: Floor | undefined;
  let browser: LaunchedBrowser | undefined;
  const consoles: ConsolePage[] = [];
  beforeAll(async () => {
    await mkdir(SCREENSHOTS, { recursive: true });
    floor = await Floor.open(args, options);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await floor?.close();
  });
  const setup: FloorSetup = {
    floor: () => {
      if (floor === undefined) throw new Error("beforeAll did not start the floor");
      return floor;
    },
    browser: () => {
      if (browser === undefined) throw new Error("beforeAll did not start the browser");
      return browser;
    },
    async signedIn(username, registered = true, options = {}) {
      const opened = await openConsole(setup.browser().browser, setup.floor().url, options);
      consoles.push(opened);
      await signIn(opened.page, username);
      if (registered) await waitRegistered(opened.page);
      return opened.page;
    },
    errors: () => consoles.flatMap((c) => c.errors),
  };
  return setup;
}

/** How the console writes a duration: m:ss (whole seconds, cut), h:mm:ss from an hour on. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const [h, m, sec] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  const two = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

/** An agent at their console, as a shift test drives them. */
export interface Agent {
  page: Page;
  username: string;
  /** Their name as others' consoles show it. */
  name: string;
}

export async function openView(page: Page, view: string): Promise<void> {
  await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: view }).click();
}

export function panelOf(page: Page) {
  return page.getByTestId("agent-state");
}

export function offerOn(page: Page) {
  return page.getByRole("region", { name: "Incoming call" });
}

/** Waits until the agent's console shows `state`, then checks the API says the same. */
export async function expectState(floor: Floor, agent: Agent, state: string): Promise<RecipientStatus> {
  await agent.page.locator(`[data-testid="agent-state-name"][data-state="${state}"]`).waitFor({ timeout: 20_000 });
  const now = await floor.status(agent.username);
  expect(now.availability_state).toBe(state);
  return now;
}

/**
 * A state that ends by itself (wrap-up): the console shows it, and the API says it or the state
 * after it (the wrap-up may be over by the time the API is asked).
 */
export async function expectPassing(floor: Floor, agent: Agent, state: string, after: string): Promise<void> {
  await agent.page.locator(`[data-testid="agent-state-name"][data-state="${state}"]`).waitFor({ timeout: 20_000 });
  expect([state, after]).toContain((await floor.status(agent.username)).availability_state);
}

/**
 * The card of a call with `name` (a call the agent dialled is "Call to" what they dialled; a
 * queue's call may name the queue before the caller).
 */
export function card(page: Page, name: string) {
  return page.getByRole("region", { name: new RegExp(`^Call (with|to) (.+: )?${name}$`) });
}

/** The newest row of the agent's recent calls that mentions `who`. */
export function historyRow(page: Page, who: string | RegExp) {
  return page.getByRole("region", { name: "Recent calls" }).getByRole("row", { name: who }).first();
}

/** Accepts the offer on the agent's console once it shows `shows`. */
export async function accept(page: Page, shows: string): Promise<void> {
  const offer = offerOn(page);
  await offer.getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
  expect(await offer.innerText()).toContain(shows);
  await offer.getByRole("button", { name: "Accept" }).click();
}

/** The card `name` is connected, and its leg (the card's Call-ID) is the user's one live channel, bridged. */
export async function connectedLeg(floor: Floor, agent: Agent, name: string): Promise<ChannelRow> {
  const shown = card(agent.page, name);
  await shown.getByText("Connected").waitFor();
  const callId = (await shown.getAttribute("data-call-id")) ?? "";
  const row = await poll(`${agent.username}'s leg bridged on the server`, async () => {
    const rows = await floor.channels(agent.username);
    return rows.length === 1 && rows[0]?.uuid === callId && rows[0].other_leg !== undefined ? rows[0] : undefined;
  });
  expect(row.answered).toBe(true);
  return row;
}

export async function hangUp(page: Page, name: string): Promise<void> {
  const shown = card(page, name);
  await shown.getByRole("button", { name: "Hang up" }).click();
  await shown.waitFor({ state: "detached" });
}

export async function startTransfer(page: Page, name: string, type: "Blind" | "Attended (consult first)", target: string): Promise<void> {
  const shown = card(page, name);
  await shown.locator("summary", { hasText: "Transfer" }).click();
  await shown.getByLabel("Transfer to (extension, user or number)").fill(target);
  await shown.getByRole("radio", { name: type }).check();
  await shown.getByRole("button", { name: "Transfer", exact: true }).click();
}

/** Dials `number`, which fails: the notice and the history row say `words`; the notice is dismissed. */
export async function failedCall(page: Page, number: string, words: string): Promise<void> {
  await page.getByLabel("Number or extension").fill(number);
  await page.getByRole("button", { name: "Call", exact: true }).click();
  const notice = page.getByRole("alert").filter({ hasText: `Call to ${number} failed` });
  await notice.waitFor({ timeout: 15_000 });
  expect(await notice.innerText()).toContain(words);
  const row = historyRow(page, new RegExp(`\\b${number}\\b`));
  await poll(`the history row of ${number}`, async () => ((await row.innerText().catch(() => "")).includes(words) ? true : undefined));
  await notice.getByRole("button", { name: /Dismiss/ }).click();
  await notice.waitFor({ state: "detached" });
}
