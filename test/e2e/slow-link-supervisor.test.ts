// A supervisor's shift on a slow link (test/helpers/slow-link.ts: every answer of the APIs held
// 300-1,500 ms, drawn from a seed; the event websocket and SIP as they are), in Chromium against
// serve mode, with agent1's console on a plain link beside it. The supervisor opens the board
// before their profile and the queue list have arrived: the view says it is checking their access
// (not that the board is not for them), the queue board that it is reading the queues (not that
// there are none), and the History panel's "All queues" waits for the list and shows the day's
// callers (not an empty day); a queue chosen while its read is held says it is loading, the
// previous choice's figures dimmed under their own name, and a day that cannot be read says why
// with Try again. They watch agent1 take a call, listen, switch to Whisper and then to
// Barge while the first switch is still on its way (the server ends in Barge, as the bar says),
// change views and come back (the supervision, the agent's row and the queue's tile are as they
// were), delete a wallboard while the panel's read of the list is on its way (it stays deleted),
// see a queue's new figures although the board's read of every queue reached the page after a
// newer read of another queue, and stop. At each step what the server says and what the console shows.
import type { Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openConsole, signIn } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { demoGrant } from "../helpers/serve.js";
import { accept, expectState, openView, panelOf, useFloor, type Agent } from "../helpers/shift.js";
import { shotsAtWidths, shownWithin, slowLink, slowLinkSeed } from "../helpers/slow-link.js";

const SEED = slowLinkSeed(23);
const setup = useFloor();

interface Wiretap {
  wiretapped_by?: { mode: string }[];
}

/** YYYY-MM-DD of this machine's local day: the console's and the server's day key. */
function today(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("a supervisor's shift on a slow link", () => {
  it(`watches the board, listens and switches modes, changes views and comes back, deletes a wallboard (seed ${SEED})`, async () => {
    console.log(`slow link seed ${SEED} (SWITCHBOARD_SLOW_LINK_SEED=${SEED} replays its delays)`);
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    const supervisorId = f.userId("supervisor");

    // Before the shift: a caller who gave up (so today's history is not empty) and a wallboard.
    const early = await f.simCall("5001", { caller_id_name: "Gil Gaveup", caller_id_number: "+14155550201" });
    await poll("the early caller waiting in Sales", async () => ((await f.v2<{ session_list: unknown[] }[]>("GET", `${sales}/sessions`)).body.data[0]?.session_list.length ? true : undefined));
    await f.hangupSim(early);
    const offeredToday = await poll("today's history to count the early caller", async () => {
      const res = await f.v2<{ offered: number }[]>("GET", `${sales}/intervals?day=${today()}`);
      const offered = res.body.data.reduce((sum, row) => sum + row.offered, 0);
      return offered >= 1 ? offered : undefined;
    });
    // Made by the supervisor (a supervisor deletes only their own).
    const supervisor = await demoGrant(f.url, "supervisor");
    const made = await fetch(`${f.url}/v2/accounts/${supervisor.accountId}/wallboards`, {
      method: "PUT",
      headers: { "Content-Type": "application/json", "X-Auth-Token": supervisor.token },
      body: JSON.stringify({ data: { name: "Floor screen" } }),
    });
    expect(made.status).toBeLessThan(300);
    const boardId = ((await made.json()) as { data: { id: string } }).data.id;

    // agent1, on a plain link, logs in and goes Ready.
    const agentPage = await setup.signedIn("agent1");
    const agent1: Agent = { page: agentPage, username: "agent1", name: "Alex Agent" };
    await openView(agentPage, "Agent");
    await panelOf(agentPage).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent1, "Away");
    await panelOf(agentPage).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent1, "Ready");

    // The supervisor opens the board from its address, on a slow link: their profile and the
    // queue list are held until the test has seen what the board says without them.
    const { page, errors } = await openConsole(setup.browser().browser, `${f.url}/#/supervisor`);
    const link = await slowLink(page, SEED);
    const profileRead = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith(`/users/${supervisorId}`), "before");
    // Every read of the list (the board asks again when it opens), until the test lets them go.
    const queueList = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith("/callq_queues"), "before", { every: true });
    await signIn(page, "supervisor");
    await page.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor({ timeout: 20_000 });
    await profileRead.seen;
    // Not "the board is for admins...": the profile that says so has not come yet.
    await shownWithin(page.getByRole("status").filter({ hasText: "Checking your access…" }), "the view says it is checking the supervisor's access while the profile is on its way");
    await shotsAtWidths(page, "checking-access");
    expect.soft(await page.getByText("The board is for admins").count(), "no refusal before the profile came").toBe(0);
    profileRead.release();

    const queuesBoard = page.getByRole("region", { name: "Queues" });
    const history = page.getByRole("region", { name: "History" });
    await history.waitFor({ timeout: 20_000 });
    await queueList.seen;
    // The queue list is still on its way: the board says it is reading, not that there is none.
    await shownWithin(queuesBoard.getByText("Reading the queues…"), "the queue board says it is reading the queues while the list is on its way");
    await shotsAtWidths(page, "reading-queues");
    expect.soft(await queuesBoard.getByText("No queues.").count(), "no 'No queues.' before the list came").toBe(0);
    queueList.release();
    const tile = queuesBoard.getByRole("region", { name: "Sales" });
    await tile.waitFor({ timeout: 20_000 });
    // "All queues" for today, read once the list came: the early caller is there.
    await shownWithin(
      history.getByTestId("history-offered").filter({ hasText: new RegExp(`^${offeredToday}$`) }),
      `the History panel's All queues shows today's ${offeredToday} offered caller(s), as the intervals API does`,
      15_000,
    );

    // Sales chosen while its read is held (answered by the server, not yet by the link): the panel
    // says it is loading Sales, and the figures still shown are All queues', dimmed and named so.
    // It labelled the chart "Sales on <today>" over All queues' figures until the answer came.
    const salesOffered = (await f.v2<{ offered: number }[]>("GET", `${sales}/intervals?day=${today()}`)).body.data.reduce((sum, row) => sum + row.offered, 0);
    const isIntervalsRead = (r: Request) => r.method() === "GET" && new URL(r.url()).pathname.endsWith("/intervals");
    const salesHistory = await link.hold(isIntervalsRead, "after");
    await history.getByRole("combobox", { name: "Queue" }).selectOption({ label: "Sales" });
    await salesHistory.answered;
    await shownWithin(history.getByTestId("history-state").filter({ hasText: `Loading Sales on ${today()}…` }), "the History panel says it is loading Sales' day while its read is on its way");
    await shownWithin(history.getByTestId("history-previous").filter({ hasText: `All queues on ${today()}` }), "the figures still shown are named with the previous choice (All queues)");
    expect.soft(await history.getByRole("img", { name: new RegExp(`^Sales on ${today()}`) }).count(), "no chart named Sales before Sales' figures came").toBe(0);
    expect.soft(await history.getByLabel(`The day's totals: All queues on ${today()}`).count(), "the totals still shown are named All queues'").toBe(1);
    expect.soft(await history.locator(`[data-shown="all ${today()}"][aria-busy="true"]`).count(), "the previous figures are marked busy").toBe(1);
    await shotsAtWidths(page, "history-loading", history);
    salesHistory.release();
    await shownWithin(history.getByTestId("history-state").filter({ hasText: `Sales on ${today()}, per 15 minutes` }), "Sales' day once its read came");
    expect(await history.getByTestId("history-offered").innerText()).toBe(String(salesOffered));
    expect(await history.getByTestId("history-previous").count()).toBe(0);
    expect(await history.getByRole("img", { name: new RegExp(`^Sales on ${today()}`) }).count()).toBe(1);

    // The previous day's read fails (the server answers 500): the panel says why, with Try again,
    // and shows no figures of another day under it; Try again reads it.
    await page.route((url) => url.pathname.endsWith("/intervals"), (route) => route.fulfill({ status: 500, contentType: "application/json", body: JSON.stringify({ error: "500", message: "internal_error", status: "error", data: {} }) }), { times: 1 });
    await history.getByRole("button", { name: "Previous day" }).click();
    const failed = history.getByRole("alert");
    await shownWithin(failed.getByRole("button", { name: "Try again" }), "the History panel's failure offers Try again");
    expect(await history.getByTestId("history-offered").count(), "no figures under a choice that could not be read").toBe(0);
    await shotsAtWidths(page, "history-failed", history);
    await failed.getByRole("button", { name: "Try again" }).click();
    await history.getByTestId("history-state").filter({ hasText: "per 15 minutes" }).waitFor({ timeout: 15_000 });
    expect(await history.getByRole("alert").count()).toBe(0);

    // agent1's row: Ready, as the server says.
    const agents = page.getByRole("region", { name: "Agents" });
    const row = agents.locator(`tr[data-recipient-id="${f.userId("agent1")}"]`);
    const rowIn = (state: string) => agents.locator(`tr[data-recipient-id="${f.userId("agent1")}"][data-state="${state}"]`);
    await rowIn("Ready").waitFor({ timeout: 20_000 });

    // A caller for Sales; agent1 takes it; the board follows.
    const caller = await f.simCall("5001", { caller_id_name: "Sue Supervised", caller_id_number: "+14155550202" });
    await accept(agentPage, "Sue Supervised");
    await expectState(f, agent1, "On-A-Call");
    await rowIn("On-A-Call").waitFor({ timeout: 20_000 });
    await tile.getByTestId("board-waiting").filter({ hasText: /^0$/ }).waitFor({ timeout: 20_000 });

    // Listen.
    const bar = page.getByTestId("monitor-bar");
    const statusPath = `/callq_recipients/${f.userId("agent1")}/status`;
    const serverMode = async () => (await f.v2<Wiretap>("GET", statusPath)).body.data.wiretapped_by?.[0]?.mode;
    await row.getByRole("button", { name: "Listen: agent1" }).click();
    await bar.getByText("Listen: agent1").waitFor({ timeout: 20_000 });
    await poll("the server's wiretap in eavesdrop", async () => ((await serverMode()) === "eavesdrop" ? true : undefined));

    // Whisper, then Barge while Whisper is still on its way. Whisper is held before it reaches
    // the server until the server has taken Barge (or, when the console waits for Whisper's
    // answer before sending Barge, as it must, for a few seconds): sent side by side, the server
    // took Barge first and Whisper last, and kept whispering under a bar saying Barge.
    const isMonitor = (r: Request) => r.method() === "POST" && new URL(r.url()).pathname.endsWith(`/callq_recipients/${supervisorId}`) && (r.postData() ?? "").includes('"monitor"');
    const second = await link.hold(isMonitor, "after");
    second.release();
    const first = await link.hold(isMonitor, "before");
    await bar.getByRole("button", { name: "Whisper" }).click();
    const whisper = await first.seen;
    await bar.getByRole("button", { name: "Barge" }).click();
    await Promise.race([second.answered, sleep(4_000)]);
    first.release();
    await whisper.response();
    const barge = await second.seen;
    await barge.response();
    expect(await bar.getByRole("button", { name: "Barge" }).getAttribute("aria-pressed")).toBe("true");
    // The server's wiretap follows a mode asynchronously (the engine's setWiretap): wait for Barge.
    const barged = await poll("the server's wiretap in barge", async () => ((await serverMode()) === "barge" ? true : undefined), 10_000).then(
      () => true,
      () => false,
    );
    expect.soft(barged, `the server's mode is the last one asked (Barge), as the bar shows; it is ${await serverMode()}`).toBe(true);

    // Other views and back: the supervision, the row and the tile are as they were at once.
    // The wallboards' list is read again on the way back; its answer (with the board) is held.
    const boardsRead = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith("/wallboards"), "after");
    await openView(page, "Agent");
    await page.getByRole("heading", { name: "Agent", level: 1 }).waitFor();
    await openView(page, "Queues");
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
    await openView(page, "Supervisor");
    await page.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();
    expect(await bar.getByText("Barge: agent1").count()).toBe(1);
    expect(await row.getAttribute("data-state")).toBe("On-A-Call");
    expect(await tile.getByTestId("board-waiting").innerText()).toBe("0");
    expect(await agents.getByText("Reading the agents…").count()).toBe(0);

    // The wallboard deleted while that read is on its way stays deleted when the read lands.
    const wallboards = page.getByRole("region", { name: "Wallboards" });
    await boardsRead.answered;
    await wallboards.locator(`tr[data-wallboard="${boardId}"]`).getByRole("button", { name: "Delete" }).click();
    await wallboards.getByRole("status").filter({ hasText: "Wallboard deleted" }).waitFor({ timeout: 20_000 });
    expect((await f.v2<{ id: string }[]>("GET", "/wallboards")).body.data.map((b) => b.id)).not.toContain(boardId);
    boardsRead.release();
    const boardsRequest = await boardsRead.seen;
    await boardsRequest.response();
    await wallboards.locator('table[aria-busy="false"]').waitFor({ timeout: 20_000 });
    expect.soft(await wallboards.locator(`tr[data-wallboard="${boardId}"]`).count(), "the deleted wallboard stays off the list").toBe(0);

    // Away from the board, a caller gives up in Support. Back on it, the board's read of every
    // queue is answered first and reaches the page last, after the read of Sales alone that a new
    // caller there asked for: Support's tile shows its new figures all the same.
    const support = await f.queuePath("Support");
    const totalOf = async (path: string) => (await f.v2<{ stats: { total_sessions: number } }>("GET", `${path}/status`)).body.data.stats.total_sessions;
    const supportBefore = await totalOf(support);
    await openView(page, "Agent");
    await page.getByRole("heading", { name: "Agent", level: 1 }).waitFor();
    const gaveUp = await f.simCall("5002", { caller_id_name: "Gus Gone", caller_id_number: "+14155550203" });
    await poll("the Support caller waiting", async () => ((await f.v2<{ session_list: unknown[] }[]>("GET", `${support}/sessions`)).body.data[0]?.session_list.length ? true : undefined));
    await f.hangupSim(gaveUp);
    const supportTotal = supportBefore + 1;
    expect(await totalOf(support)).toBe(supportTotal);
    const isStatusRead = (r: Request, one: boolean) => r.method() === "POST" && new URL(r.url()).pathname.endsWith("/callq_queues/status") && (r.postData() ?? "").includes("queue_ids") === one;
    // Two reads of every queue's status: the board's alerts' and the queues' own, both held.
    const everyQueueRead = await link.hold((r) => isStatusRead(r, false), "after", { every: true });
    const salesRead = await link.hold((r) => isStatusRead(r, true), "after");
    salesRead.release();
    await openView(page, "Supervisor");
    await page.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();
    await poll("the two reads of every queue answered by the server", () => (everyQueueRead.answeredSoFar() >= 2 ? true : undefined));
    const waiting = await f.simCall("5001", { caller_id_name: "Walt Waiting", caller_id_number: "+14155550204" });
    await tile.getByTestId("board-waiting").filter({ hasText: /^1$/ }).waitFor({ timeout: 20_000 });
    await (await salesRead.seen).response();
    everyQueueRead.release();
    const supportTile = queuesBoard.getByRole("region", { name: "Support" });
    await shownWithin(
      supportTile.getByTestId("board-total").filter({ hasText: new RegExp(`^${supportTotal}$`) }),
      async () => `Support's tile shows today's ${supportTotal} caller(s), as its status does; it shows ${await supportTile.getByTestId("board-total").innerText()}`,
    );
    await f.hangupSim(waiting);
    await tile.getByTestId("board-waiting").filter({ hasText: /^0$/ }).waitFor({ timeout: 20_000 });

    // A switch the server refuses (the supervisor's call_monitor permission taken away meanwhile):
    // the bar keeps showing the mode in force (Barge), says Whisper was refused, and the server
    // still barges. It kept the refused mode pressed, under a bar saying Whisper.
    const userPath = `/users/${supervisorId}`;
    const callqOfUser = (await f.v2<{ callq: Record<string, unknown> }>("GET", userPath)).body.data.callq;
    expect((await f.v2("PATCH", userPath, { callq: { ...callqOfUser, permissions: [] } })).status).toBe(200);
    await bar.getByRole("button", { name: "Whisper" }).click();
    await shownWithin(bar.getByRole("alert").filter({ hasText: "Whisper was refused; still Barge." }), "the bar says Whisper was refused and Barge is in force", 15_000);
    expect.soft(await bar.getByRole("button", { name: "Barge" }).getAttribute("aria-pressed"), "the bar shows the mode in force (Barge) pressed").toBe("true");
    expect.soft(await bar.getByText("Barge: agent1").count(), "the bar says Barge").toBe(1);
    expect(await serverMode()).toBe("barge");
    await shotsAtWidths(page, "monitor-refused");
    expect((await f.v2("PATCH", userPath, { callq: callqOfUser })).status).toBe(200);

    // Stop: the bar goes, and the server's wiretap with it.
    await bar.getByRole("button", { name: "Stop" }).click();
    await bar.waitFor({ state: "detached", timeout: 20_000 });
    await poll("the wiretap to end on the server", async () => ((await serverMode()) === undefined ? true : undefined));
    await f.hangupSim(caller);
    await poll("agent1 off the call", async () => ((await f.status("agent1")).availability_state !== "On-A-Call" ? true : undefined));
    expect(errors).toEqual([]);
    expect(setup.errors()).toEqual([]);
    await page.close();
  }, 120_000);

  it("shows All queues' day when the board opened before the event websocket was online and only a later read of the queue list landed", async () => {
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    // A caller who gives up in Sales, so that today is not empty; the day's callers of both queues.
    const early = await f.simCall("5001", { caller_id_name: "Ida Early", caller_id_number: "+14155550205" });
    await poll("the caller waiting in Sales", async () => ((await f.v2<{ session_list: unknown[] }[]>("GET", `${sales}/sessions`)).body.data[0]?.session_list.length ? true : undefined));
    await f.hangupSim(early);
    const offered = async (path: string) => (await f.v2<{ offered: number }[]>("GET", `${path}/intervals?day=${today()}`)).body.data.reduce((sum, row) => sum + row.offered, 0);
    const expected = (await offered(sales)) + (await offered(await f.queuePath("Support")));
    expect(expected).toBeGreaterThan(0);
    const { page, errors } = await openConsole(setup.browser().browser, `${f.url}/#/supervisor`);
    // The event websocket's answers are held (in order) until the board is open: not online yet,
    // so no read of the queue list has started when the History panel asks for one.
    let online: () => void = () => undefined;
    const eventsGo = new Promise<void>((resolve) => (online = resolve));
    await page.routeWebSocket(
      (url) => url.pathname === "/events",
      (ws) => {
        const server = ws.connectToServer();
        server.onMessage((message) => void eventsGo.then(() => ws.send(message)));
        ws.onMessage((message) => server.send(message));
        server.onClose((code, reason) => void ws.close({ code, reason }).catch(() => undefined));
        ws.onClose((code, reason) => void server.close({ code, reason }).catch(() => undefined));
      },
    );
    const link = await slowLink(page, SEED);
    const queueList = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith("/callq_queues"), "before", { every: true });
    await signIn(page, "supervisor");
    const history = page.getByRole("region", { name: "History" });
    await history.waitFor({ timeout: 20_000 });
    // Three reads of the list, each newer than the one before: the panel's own (nothing was on
    // its way), the board's as it opens, and the one the websocket's coming online asks for. Only
    // the newest lands: the panel must wait for it, not give up when its own is dropped.
    await poll("the panel's and the board's reads of the queue list", () => (queueList.seenSoFar() >= 2 ? true : undefined));
    online();
    await poll("the read of the queue list once online", () => (queueList.seenSoFar() >= 3 ? true : undefined));
    queueList.release();
    await page.getByRole("region", { name: "Queues" }).getByRole("region", { name: "Sales" }).waitFor({ timeout: 20_000 });
    await history.getByTestId("history-offered").filter({ hasText: new RegExp(`^${expected}$`) }).waitFor({ timeout: 15_000 });
    expect(await history.getByRole("alert").count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
