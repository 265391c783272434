// A supervisor's shift in Chromium against the built server: the supervisor and two agents signed
// in to their consoles, simulated callers answered, rejected, let ring out, abandoned and timed
// out, and after each step the board's figures checked against the queue status, the recipients'
// statuses and the CDRs. Then the supervisor listens, whispers and barges on an agent's call, and
// the agent's call card says so at each mode (listening in only once the account announces it),
// and the cue goes when the supervisor stops. Who may read who listens in is checked on the way.
// At the end of the shift each agent's row shows their day as the server counts it, and the
// History panel the day's callers as the board counted them.
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole as openConsolePage, signIn, waitRegistered } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { demoGrant, serve, type DemoGrant, type Served } from "../helpers/serve.js";
import { formatDuration } from "../helpers/shift.js";

/** Sales' ring timeout in this shift (s). */
const RING_S = 20;

let server: Served | undefined;
let launched: LaunchedBrowser | undefined;
const pageErrors: string[] = [];

type Grant = DemoGrant;

function served(): Served {
  if (server === undefined) throw new Error("beforeAll did not start the server");
  return server;
}

async function rest<T>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; data: T }> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (token !== "") headers["X-Auth-Token"] = token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(served().url + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify({ data: body }) }) });
  const envelope = (await res.json()) as { data: T; auth_token?: string };
  return { status: res.status, data: method === "PUT" ? ({ ...envelope.data, token: envelope.auth_token } as T) : envelope.data };
}

function grant(username: string): Promise<Grant> {
  return demoGrant(served().url, username);
}

async function openConsole(username: string): Promise<Page> {
  if (launched === undefined) throw new Error("beforeAll did not launch the browser");
  const { page } = await openConsolePage(launched.browser, served().url);
  page.on("pageerror", (error) => pageErrors.push(`${username}: ${error.message}`));
  await signIn(page, username);
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  await waitRegistered(page);
  return page;
}

beforeAll(async () => {
  // On a clock the test moves: the rung-out offer and the timed-out caller cost no wait.
  server = await serve({ clock: true });
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
  await server?.stop();
  expect(pageErrors, "uncaught errors in the pages").toEqual([]);
});

interface RecipientStatusBody {
  availability_state: string;
  stats: { total_calls: number; missed_calls: number };
  wiretapped_by?: { recipient_id: string; name: string; mode: string; call_id?: string }[];
}

interface QueueStatusBody {
  stats: { total_sessions: number; missed_sessions: number; abandoned_sessions: number; answered_sessions: number; missed_offers: number; active_session_count: number };
}

interface Cdr {
  call_direction?: string;
  caller_id_name?: string;
  caller_id_number?: string;
  owner_id?: string;
  answered_timestamp?: number;
  other_leg_call_id?: string;
}

describe("a supervisor's shift", () => {
  it("keeps the board's figures with the CDRs and statuses through a shift, and the agent sees each supervision", async () => {
    const admin = await grant("admin");
    const account = `/v2/accounts/${admin.accountId}`;
    const queues = await rest<{ id: string; name: string }[]>("GET", `${account}/callq_queues?paginate=false`, admin.token);
    const salesId = queues.data.find((q) => q.name === "Sales")?.id ?? "";
    // No wrap-up keeps the shift brisk; the figures do not depend on it. An offer rings out when
    // the test moves the server's clock past the ring timeout (long enough for a loaded machine).
    expect((await rest("PATCH", `${account}/callq_queues/${salesId}`, admin.token, { ring_timeout: RING_S, agent_wrapup_time: 0 })).status).toBe(200);

    const supervisorPage = await openConsole("supervisor");
    const pages = { agent1: await openConsole("agent1"), agent2: await openConsole("agent2") };
    const grants = { agent1: await grant("agent1"), agent2: await grant("agent2") };
    const supervisor = await grant("supervisor");
    const agentIds = [grants.agent1.ownerId, grants.agent2.ownerId];
    type Agent = keyof typeof pages;
    const statusPath = (who: Agent) => `${account}/callq_recipients/${grants[who].ownerId}/status`;
    const stateOf = async (who: Agent) => (await rest<RecipientStatusBody>("GET", statusPath(who), grants[who].token)).data.availability_state;
    const stateIs = (who: Agent, state: string) => poll(`${who} ${state}`, async () => ((await stateOf(who)) === state ? true : undefined));

    // The agents log in and go Ready from their consoles.
    for (const who of ["agent1", "agent2"] as const) {
      const group = pages[who].getByRole("group", { name: "Change your queue state" });
      await group.getByRole("button", { name: "Login" }).click();
      await group.getByRole("button", { name: "Ready" }).click();
      await stateIs(who, "Ready");
    }

    await supervisorPage.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Supervisor" }).click();
    const board = supervisorPage.getByRole("region", { name: "Queues" }).getByRole("region", { name: "Sales" });
    const agentsBoard = supervisorPage.getByRole("region", { name: "Agents" });

    let callNumber = 0;
    const numbers: string[] = [];
    async function call(name: string): Promise<string> {
      callNumber += 1;
      const number = `+1415555010${callNumber}`;
      numbers.push(number);
      const started = await rest<{ id: string }>("POST", `${account}/sim/calls`, admin.token, { to: "5001", caller_id_name: name, caller_id_number: number, audio: "tone_stream://440" });
      expect(started.status).toBe(201);
      return started.data.id;
    }
    const hangup = async (id: string) => expect((await rest("POST", `${account}/sim/calls/${id}`, admin.token, { action: "hangup" })).status).toBeLessThan(300);
    /** The page an offer rings on now (waits for one). */
    const offered = (): Promise<Agent> =>
      poll("an offer on an agent's console", async () => {
        for (const who of ["agent1", "agent2"] as const) if ((await pages[who].locator(".call-offer").count()) > 0) return who;
        return undefined;
      });
    const other = (who: Agent): Agent => (who === "agent1" ? "agent2" : "agent1");
    async function accept(who: Agent): Promise<void> {
      await pages[who].locator(".call-offer").getByRole("button", { name: "Accept" }).click();
      await stateIs(who, "On-A-Call");
    }

    /** The board's figure, once it reads `expected` (it follows events within a read). */
    async function figure(key: string, expected: number): Promise<void> {
      const cell = board.getByTestId(`board-${key}`);
      try {
        await cell.filter({ hasText: new RegExp(`^${expected}$`) }).waitFor({ timeout: 10_000 });
      } catch {
        expect(await cell.innerText(), `board ${key}`).toBe(String(expected));
      }
    }
    async function agentCell(who: Agent, key: "handled" | "missed", expected: number): Promise<Locator> {
      const cell = agentsBoard.locator(`tr[data-recipient-id="${grants[who].ownerId}"]`).getByTestId(`agent-${key}`);
      await poll(`${who} ${key} ${expected} on the board`, async () => ((await cell.innerText()) === String(expected) ? true : undefined), 10_000);
      return cell;
    }

    /** Board = queue status = recipients' statuses = CDRs, with the counts this shift expects. */
    async function figuresAgree(expected: { total: number; answered: number; missed: number; abandoned: number; timedOut: number }): Promise<void> {
      await figure("total", expected.total);
      await figure("answered", expected.answered);
      await figure("missed", expected.missed);
      await figure("abandoned", expected.abandoned);
      await figure("timed-out", expected.timedOut);
      const status = (await rest<QueueStatusBody>("GET", `${account}/callq_queues/${salesId}/status`, supervisor.token)).data.stats;
      expect(status).toMatchObject({
        total_sessions: expected.total,
        answered_sessions: expected.answered,
        missed_offers: expected.missed,
        abandoned_sessions: expected.abandoned,
        missed_sessions: expected.timedOut,
      });
      // Each missed offer is one agent's missed call, each answered one a call they handled.
      const statuses = await Promise.all((["agent1", "agent2"] as const).map(async (who) => [who, (await rest<RecipientStatusBody>("GET", statusPath(who), supervisor.token)).data] as const));
      expect(statuses.reduce((sum, [, s]) => sum + s.stats.missed_calls, 0)).toBe(expected.missed);
      expect(statuses.reduce((sum, [, s]) => sum + s.stats.total_calls, 0)).toBe(expected.answered);
      for (const [who, s] of statuses) {
        await agentCell(who, "missed", s.stats.missed_calls);
        await agentCell(who, "handled", s.stats.total_calls);
      }
      // The CDRs: one leg per offer to an agent's phone (answered or not), one per caller.
      const cdrs = await poll("the CDRs of every leg so far", async () => {
        const rows = (await rest<Cdr[]>("GET", `${account}/cdrs?paginate=false`, admin.token)).data;
        const callers = rows.filter((r) => r.call_direction === "inbound" && numbers.includes(r.caller_id_number ?? ""));
        return callers.length === expected.total ? rows : undefined;
      });
      const offers = cdrs.filter((r) => agentIds.includes(r.owner_id ?? "") && (r.caller_id_name ?? "").startsWith("Sales: "));
      expect(offers.filter((r) => r.answered_timestamp !== undefined).length, "answered offer legs").toBe(expected.answered);
      expect(offers.filter((r) => r.answered_timestamp === undefined).length, "unanswered offer legs").toBe(expected.missed);
      const callers = cdrs.filter((r) => r.call_direction === "inbound" && numbers.includes(r.caller_id_number ?? ""));
      expect(callers.filter((r) => r.other_leg_call_id === undefined).length, "callers never bridged").toBe(expected.abandoned + expected.timedOut);
    }

    await figuresAgree({ total: 0, answered: 0, missed: 0, abandoned: 0, timedOut: 0 });

    // 1. Answered.
    const first = await call("Ann Answered");
    await accept(await offered());
    await hangup(first);
    for (const who of ["agent1", "agent2"] as const) await stateIs(who, "Ready");
    await figuresAgree({ total: 1, answered: 1, missed: 0, abandoned: 0, timedOut: 0 });

    // 2. Rejected by one agent, so offered to the other, who answers.
    const second = await call("Rex Rejected");
    const rejecter = await offered();
    await pages[rejecter].locator(".call-offer").getByRole("button", { name: "Reject" }).click();
    await poll("the offer on the other console", async () => ((await pages[other(rejecter)].locator(".call-offer").count()) > 0 ? true : undefined));
    await accept(other(rejecter));
    await hangup(second);
    await stateIs(other(rejecter), "Ready");
    await figuresAgree({ total: 2, answered: 2, missed: 1, abandoned: 0, timedOut: 0 });

    // 3. Rung out on one agent (nobody touches it), answered by the other.
    for (const who of ["agent1", "agent2"] as const) if ((await stateOf(who)) !== "Ready") await pages[who].getByRole("group", { name: "Change your queue state" }).getByRole("button", { name: "Ready" }).click();
    for (const who of ["agent1", "agent2"] as const) await stateIs(who, "Ready");
    const third = await call("Nina Noanswer");
    const silent = await offered();
    await served().clock.advance(RING_S * 1000);
    await poll("the offer on the other console", async () => ((await pages[other(silent)].locator(".call-offer").count()) > 0 ? true : undefined), 15_000);
    await accept(other(silent));
    await hangup(third);
    await stateIs(other(silent), "Ready");
    await figuresAgree({ total: 3, answered: 3, missed: 2, abandoned: 0, timedOut: 0 });

    // 4. Abandoned: both agents Away, the caller waits and hangs up.
    for (const who of ["agent1", "agent2"] as const) {
      await pages[who].getByRole("group", { name: "Change your queue state" }).getByRole("button", { name: "Away" }).click();
      await stateIs(who, "Away");
    }
    const fourth = await call("Abe Abandoned");
    await figure("waiting", 1);
    await hangup(fourth);
    await figure("waiting", 0);
    await figuresAgree({ total: 4, answered: 3, missed: 2, abandoned: 1, timedOut: 0 });

    // 5. Timed out: nobody there for the queue's (shortened) timeout.
    expect((await rest("PATCH", `${account}/callq_queues/${salesId}`, admin.token, { timeout: 10 })).status).toBe(200);
    await call("Tim Timedout");
    await figure("waiting", 1);
    await served().clock.advance(10_000);
    await poll("the caller to time out", async () => ((await rest<QueueStatusBody>("GET", `${account}/callq_queues/${salesId}/status`, admin.token)).data.stats.missed_sessions === 1 ? true : undefined), 20_000);
    await figuresAgree({ total: 5, answered: 3, missed: 2, abandoned: 1, timedOut: 1 });
    expect((await rest("PATCH", `${account}/callq_queues/${salesId}`, admin.token, { timeout: 3600 })).status).toBe(200);

    // 6. Supervision of agent1's call: listen (not announced), whisper, barge, listen (announced), stop.
    await pages.agent1.getByRole("group", { name: "Change your queue state" }).getByRole("button", { name: "Ready" }).click();
    await stateIs("agent1", "Ready");
    const sixth = await call("Sue Supervised");
    expect(await offered()).toBe("agent1");
    await accept("agent1");
    const row = agentsBoard.locator(`tr[data-recipient-id="${grants.agent1.ownerId}"][data-state="On-A-Call"]`);
    await row.waitFor();
    const bar = supervisorPage.getByTestId("monitor-bar");
    const cue = pages.agent1.getByTestId("monitor-cue");
    const readAs = async (reader: Grant) => (await rest<RecipientStatusBody>("GET", statusPath("agent1"), reader.token)).data.wiretapped_by;
    const modeIs = (mode: string) => poll(`the wiretap to be ${mode}`, async () => ((await readAs(supervisor))?.[0]?.mode === mode ? true : undefined));

    await row.getByRole("button", { name: "Listen: agent1" }).click();
    await bar.getByText("Listen: agent1").waitFor({ timeout: 20_000 });
    await modeIs("eavesdrop");
    // The supervisor and an admin see who listens; the agent does not (not announced); agent2 never.
    expect(await readAs(supervisor)).toMatchObject([{ recipient_id: supervisor.ownerId, name: "Sam Supervisor", mode: "eavesdrop" }]);
    expect(await readAs(admin)).toMatchObject([{ mode: "eavesdrop" }]);
    expect(await readAs(grants.agent1)).toBeUndefined();
    expect(await readAs(grants.agent2)).toBeUndefined();
    expect(await cue.count()).toBe(0);
    // Nor can an agent learn it from the supervisor's side: their status and events name nobody.
    const supervisorStatus = `${account}/callq_recipients/${supervisor.ownerId}/status`;
    const tapping = (reader: Grant) => rest<{ wiretapping_recipient?: string; wiretap_mode?: string }>("GET", supervisorStatus, reader.token);
    expect((await tapping(supervisor)).data).toMatchObject({ wiretapping_recipient: grants.agent1.ownerId, wiretap_mode: "eavesdrop" });
    expect((await tapping(grants.agent1)).data.wiretapping_recipient).toBeUndefined();
    expect((await tapping(grants.agent2)).data.wiretap_mode).toBeUndefined();

    await bar.getByRole("button", { name: "Whisper" }).click();
    await modeIs("whisper");
    await cue.getByText("Supervisor Sam Supervisor is whispering to you").waitFor();
    expect(await readAs(grants.agent1)).toMatchObject([{ name: "Sam Supervisor", mode: "whisper" }]);
    expect(await readAs(grants.agent2)).toBeUndefined();

    await bar.getByRole("button", { name: "Barge" }).click();
    await modeIs("barge");
    await cue.getByText("Supervisor Sam Supervisor is talking on the call").waitFor();

    // The account announces eavesdropping: back to Listen, the agent is told.
    expect((await rest("PATCH", account, admin.token, { announce_eavesdrop: true })).status).toBe(200);
    await bar.getByRole("button", { name: "Listen" }).click();
    await modeIs("eavesdrop");
    await cue.getByText("Supervisor Sam Supervisor is listening in").waitFor();
    expect(await readAs(grants.agent2)).toBeUndefined();

    await bar.getByRole("button", { name: "Stop" }).click();
    await bar.waitFor({ state: "detached" });
    await cue.waitFor({ state: "detached" });
    expect(await readAs(grants.agent1)).toBeUndefined();
    expect(await readAs(supervisor)).toBeUndefined();
    await hangup(sixth);
    await stateIs("agent1", "Ready");
    await figuresAgree({ total: 6, answered: 4, missed: 2, abandoned: 1, timedOut: 1 });
    // The day chart saw every caller since the board opened (at 0), the first five minutes included.
    const chart = board.getByRole("img", { name: /^Sales today: / });
    await poll("the chart to count the day's callers", async () => ((await chart.getAttribute("aria-label"))?.includes("6 new callers") === true ? true : undefined), 5000);

    // Each agent's row carries their day as the server counts it: calls handled, missed offers and
    // the average handle time (fixed while they wait Ready).
    for (const who of ["agent1", "agent2"] as const) {
      const day = (await rest<{ calls_handled: number; missed_offers: number; average_handle_time: number }>("GET", `${account}/callq_recipients/${grants[who].ownerId}/day`, supervisor.token)).data;
      const row = agentsBoard.locator(`tr[data-recipient-id="${grants[who].ownerId}"]`);
      await agentCell(who, "handled", day.calls_handled);
      await agentCell(who, "missed", day.missed_offers);
      const aht = day.calls_handled === 0 ? "–" : formatDuration(day.average_handle_time * 1000);
      await row.getByTestId("agent-aht").filter({ hasText: new RegExp(`^${aht}$`) }).waitFor({ timeout: 10_000 });
    }

    // The History panel, Sales today: the six callers, four answered, one abandoned (the timed-out
    // one is counted apart), as the board said through the day.
    const history = supervisorPage.getByRole("region", { name: "History" });
    await history.getByRole("combobox", { name: "Queue" }).selectOption(salesId);
    await history.getByTestId("history-state").filter({ hasText: "per 15 minutes" }).waitFor({ timeout: 15_000 });
    await history.getByTestId("history-offered").filter({ hasText: /^6$/ }).waitFor({ timeout: 15_000 });
    expect(await history.getByTestId("history-answered").innerText()).toBe("4");
    expect(await history.getByTestId("history-abandoned").innerText()).toBe("1");

    for (const page of [supervisorPage, pages.agent1, pages.agent2]) await page.close();
    // A shift: six callers, one rung out and one timed out on purpose, three consoles.
  }, 240_000);
});
