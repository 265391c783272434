// An admin's day in Chromium against serve mode, with an agent, another agent, a supervisor and
// the admin each in their own console. The admin switches recording on for the agents' calls from
// outside; a customer calls agent1 straight while another comes to agent2 through the Sales queue;
// each agent sees "Recording" on the call card while the call is recorded, and no longer once it
// ends.
// Then the recordings view differs as the permissions say: each agent lists their own call only,
// the supervisor (a Sales member with call_monitor) the Sales call, the admin both. The admin
// pages opened by address are refused to the agent; the agent's console cannot play the other
// agent's recording by its URL (403), the admin's can.
import { createHash } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole, signIn, waitRegistered, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { serve, type Served } from "../helpers/serve.js";

interface Envelope<T> {
  status: string;
  data: T;
  auth_token?: string;
}

interface RecordingRow {
  id: string;
  caller_id_number?: string;
  queue_id?: string;
  interaction_id?: string;
  _read_only?: { content_types?: string[] };
}

const DIRECT_CALLER = "+14155550201";
const QUEUE_CALLER = "+14155550202";
const TALK_MS = 5_000;

let served: Served;
let browser: LaunchedBrowser;
let token = "";
let accountId = "";
const consoles: ConsolePage[] = [];

async function rest<T>(method: string, path: string, body?: unknown, as = token): Promise<{ status: number; body: Envelope<T> }> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (as !== "") headers["X-Auth-Token"] = as;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(served.url + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify({ data: body }) }) });
  return { status: res.status, body: (await res.json()) as Envelope<T> };
}

async function console_(username: string): Promise<ConsolePage> {
  const opened = await openConsole(browser.browser, served.url);
  consoles.push(opened);
  await signIn(opened.page, username);
  await opened.page.getByRole("button", { name: "Sign out" }).waitFor();
  return opened;
}

/** A simulated customer calls `to`; `agent` accepts in the console, sees the cue, talks, hangs up. */
async function recordedCall(agent: Page, to: string, name: string, number: string): Promise<void> {
  const started = await rest<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, { to, caller_id_name: name, caller_id_number: number, audio: "tone_stream://440" });
  expect(started.status, JSON.stringify(started.body)).toBe(201);
  const offer = agent.getByRole("region", { name: "Incoming call" });
  await offer.getByRole("button", { name: "Accept" }).click({ timeout: 20_000 });
  // A queue's caller is shown with the queue's name first ("Sales: Blake Customer").
  const card = agent.getByRole("region", { name: new RegExp(`^Call with (\\w+: )?${name}$`) });
  await card.getByText("Connected").waitFor();
  // The server recorded the call from the bridge on, and said so on the agent's leg.
  await card.getByRole("status", { name: "This call is being recorded" }).filter({ hasText: /^Recording$/ }).waitFor({ timeout: 10_000 });
  // They talk for a while: nothing but a hang-up ends the call (a drop soon after connecting was
  // once suspected under load), so the card and the server's channel are both still there.
  const callId = (await card.getAttribute("data-call-id")) ?? "";
  await agent.waitForTimeout(TALK_MS);
  expect(await card.getByText("Connected").count()).toBe(1);
  const live = await rest<{ uuid: string }[]>("GET", `/v2/accounts/${accountId}/channels`);
  expect(live.body.data.map((c) => c.uuid)).toContain(callId);
  await card.getByRole("button", { name: "Hang up" }).click();
  await card.waitFor({ state: "detached", timeout: 15_000 });
  expect(await agent.getByRole("status", { name: "This call is being recorded" }).count()).toBe(0);
}

/** The recordings the console's view lists, once it lists `count` of them. */
async function listed(page: Page, count: number): Promise<string[]> {
  await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Recordings" }).click();
  await page.getByRole("heading", { name: "Recordings", level: 1 }).waitFor();
  const rows = page.locator("tr[data-recording-id]");
  await poll(`${count} recordings listed`, async () => ((await rows.count()) === count ? true : undefined), 15_000);
  return (await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-recording-id") ?? ""))).sort();
}

/**
 * Fetches `url` from inside the page, as an address typed into it would; past the browser's cache,
 * which may hold the player's partial (206) answer for the same URL.
 */
async function fetchIn(page: Page, url: string): Promise<{ status: number; type: string }> {
  const script = `fetch(${JSON.stringify(url)}, { cache: "no-store" }).then((r) => ({ status: r.status, type: r.headers.get("content-type") ?? "" }))`;
  return (await page.evaluate(script)) as { status: number; type: string };
}

/** The console's own URL of a recording's audio: its player's source, after Play in its row. */
async function playerSource(page: Page, recordingId: string): Promise<string> {
  await page.locator(`tr[data-recording-id="${recordingId}"]`).getByRole("button", { name: /^Play recording/ }).click();
  const audio = page.locator(`audio[data-recording-id="${recordingId}"]`);
  await audio.waitFor({ state: "attached" });
  return (await audio.getAttribute("src")) ?? "";
}

beforeAll(async () => {
  served = await serve();
  browser = await launchBrowser();
  const credentials = createHash("md5").update("admin:switchboard").digest("hex");
  const login = await rest<{ account_id: string }>("PUT", "/v2/user_auth", { credentials, account_name: "demo" }, "");
  expect(login.status).toBe(201);
  token = login.body.auth_token ?? "";
  accountId = login.body.data.account_id;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await served?.stop();
});

describe("an admin's shift", () => {
  it("records the agents' calls with the cue on their cards, and each console sees and plays only what its user may", async () => {
    const users = await rest<{ id: string; username: string }[]>("GET", `/v2/accounts/${accountId}/users`);
    const idOf = (username: string) => users.body.data.find((u) => u.username === username)?.id ?? "";
    for (const agent of ["agent1", "agent2"]) {
      const patched = await rest("PATCH", `/v2/accounts/${accountId}/users/${idOf(agent)}`, { call_recording: { inbound: { offnet: { enabled: true } } } });
      expect(patched.status).toBe(200);
    }

    const agent1 = await console_("agent1");
    const agent2 = await console_("agent2");
    await waitRegistered(agent1.page);
    await waitRegistered(agent2.page);

    // A customer calls agent1's extension, and meanwhile another calls Sales, where agent2 alone
    // is Ready: the two calls talk at the same time (each its own call, bridge and recording).
    expect((await rest("POST", `/v2/accounts/${accountId}/callq_recipients/${idOf("agent2")}`, { action: "login_ready" })).status).toBe(200);
    await Promise.all([recordedCall(agent1.page, "1002", "Avery Customer", DIRECT_CALLER), recordedCall(agent2.page, "5001", "Blake Customer", QUEUE_CALLER)]);
    expect((await rest("POST", `/v2/accounts/${accountId}/callq_recipients/${idOf("agent2")}`, { action: "logout" })).status).toBe(200);

    const stored = await poll(
      "both recordings stored with their audio",
      async () => {
        const list = await rest<RecordingRow[]>("GET", `/v2/accounts/${accountId}/recordings`);
        const rows = list.body.data.filter((r) => r._read_only?.content_types?.includes("audio/wav"));
        return rows.length === 2 ? rows : undefined;
      },
      30_000,
    );
    const direct = stored.find((r) => r.caller_id_number === DIRECT_CALLER)?.id ?? "";
    const queued = stored.find((r) => r.caller_id_number === QUEUE_CALLER)?.id ?? "";
    expect(direct).not.toBe("");
    expect(stored.find((r) => r.id === queued)?.queue_id).toBeDefined();
    // Two customers, two interactions.
    const interactions = stored.map((r) => r.interaction_id);
    for (const id of interactions) expect(id).toMatch(/^\d{11}-[0-9a-f]{8}$/);
    expect(interactions[0]).not.toBe(interactions[1]);

    const supervisor = await console_("supervisor");
    const admin = await console_("admin");
    expect(await listed(agent1.page, 1)).toEqual([direct]);
    expect(await listed(agent2.page, 1)).toEqual([queued]);
    expect(await listed(supervisor.page, 1)).toEqual([queued]);
    expect(await listed(admin.page, 2)).toEqual([direct, queued].sort());
    // Only the admin's view offers Delete.
    expect(await agent1.page.getByRole("button", { name: /^Delete recording/ }).count()).toBe(0);
    expect(await admin.page.getByRole("button", { name: /^Delete recording/ }).count()).toBe(2);

    // agent1 plays their own call; the same URL with the other call's id is refused.
    const own = await playerSource(agent1.page, direct);
    expect(await fetchIn(agent1.page, own)).toEqual({ status: 200, type: "audio/wav" });
    const theirs = own.replace(direct, queued);
    expect(theirs).not.toBe(own);
    expect((await fetchIn(agent1.page, theirs)).status).toBe(403);
    // The admin's console plays either.
    const byAdmin = await playerSource(admin.page, queued);
    expect(await fetchIn(admin.page, byAdmin)).toEqual({ status: 200, type: "audio/wav" });

    // The admin pages, opened by address, are refused to the agent.
    await agent1.page.goto(`${served.url}/#/admin`);
    await agent1.page.getByText("The admin pages are for the account's admins.", { exact: false }).waitFor();
    expect(await agent1.page.getByRole("tablist").count()).toBe(0);

    for (const opened of consoles) expect(opened.errors, "uncaught errors in a console").toEqual([]);
  }, 240_000);
});
