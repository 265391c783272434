// An agent's shift on a slow link (test/helpers/slow-link.ts: every answer of the APIs held
// 300-1,500 ms, drawn from a seed; the event websocket and SIP as they are), in Chromium against
// serve mode: sign in, Login, Ready, a queue call taken, held and resumed, other views opened
// during it and the agent view come back to (the call card, the agent's state and the queue
// board as they were, not read afresh), the agent hangs up, wrap-up, Ready, Away, a text sent,
// and sign out, logging out of the queues. At each step what the server says and what the console
// shows. Then an agent who signs in while logged in to their queues and presses Sign out before
// their queue state has come is asked all the same (they were signed out at once, unasked, and
// left logged in).
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openConsole, signIn, waitRegistered } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { accept, card, connectedLeg, expectState, openView, panelOf, useFloor, type Agent } from "../helpers/shift.js";
import { toGregorianSeconds } from "../../renderer/api/gregorian.js";
import { shotsAtWidths, shownWithin, slowLink, slowLinkSeed } from "../helpers/slow-link.js";

const SEED = slowLinkSeed(23);
/** Sales' settings here: a wrap-up long enough to be seen on a loaded machine, ended by moving the server's clock. */
const RING_S = 20;
const WRAPUP_S = 10;
const setup = useFloor([], { clock: true });

/** The card's line is `state` on the page, and its leg's hold on the server agrees. */
async function holdIs(page: Page, name: string, state: "Connected" | "On hold"): Promise<void> {
  const shown = card(page, name);
  await shown.locator(".call-state", { hasText: state }).waitFor({ timeout: 20_000 });
  const uuid = (await shown.getAttribute("data-call-id")) ?? "";
  await poll(`${name}'s leg ${state} on the server`, async () => {
    const res = await setup.floor().v2<{ is_onhold: boolean }>("GET", `/channels/${encodeURIComponent(uuid)}`);
    return res.status === 200 && res.body.data.is_onhold === (state === "On hold") ? true : undefined;
  });
}

describe("an agent's shift on a slow link", () => {
  it(`sign in, Ready, a queue call held and resumed, other views and back, wrap-up, Away, a text, sign out (seed ${SEED})`, async () => {
    console.log(`slow link seed ${SEED} (SWITCHBOARD_SLOW_LINK_SEED=${SEED} replays its delays)`);
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    expect((await f.v2("PATCH", sales, { ring_timeout: RING_S, agent_wrapup_time: WRAPUP_S })).status).toBe(200);

    const { page, errors } = await openConsole(setup.browser().browser, f.url);
    await slowLink(page, SEED);
    const agent: Agent = { page, username: "agent1", name: "Alex Agent" };
    await signIn(page, "agent1");
    await waitRegistered(page, 30_000);
    await openView(page, "Agent");
    await panelOf(page).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent, "Away");
    await panelOf(page).getByRole("button", { name: "Ready" }).click();
    expect((await expectState(f, agent, "Ready")).available).toBe(true);

    // A queue call: offered, taken, on the agent's one bridged leg.
    await f.simCall("5001", { caller_id_name: "Cora Caller", caller_id_number: "+14155550301" });
    await accept(page, "Cora Caller");
    await connectedLeg(f, agent, "Cora Caller");
    await expectState(f, agent, "On-A-Call");
    const callId = await card(page, "Cora Caller").getAttribute("data-call-id");

    // Hold and back.
    await card(page, "Cora Caller").getByRole("button", { name: "Hold" }).click();
    await holdIs(page, "Cora Caller", "On hold");
    await card(page, "Cora Caller").getByRole("button", { name: "Resume" }).click();
    await holdIs(page, "Cora Caller", "Connected");

    // Other views during the call, and back: the queue board, the call and the state as they were.
    await openView(page, "Queues");
    const salesCard = page.getByRole("region", { name: "Sales" });
    await salesCard.getByTestId("queue-available").filter({ hasText: /^0 of 1$/ }).waitFor({ timeout: 20_000 });
    for (const view of ["Directory", "Texting", "Recordings"]) {
      await openView(page, view);
      await page.getByRole("heading", { name: view, level: 1 }).waitFor();
    }
    await openView(page, "Queues");
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
    expect(await page.getByText("Reading your queues…").count()).toBe(0);
    expect(await salesCard.count()).toBe(1);
    await openView(page, "Agent");
    const shown = card(page, "Cora Caller");
    await shown.waitFor();
    expect(await shown.getAttribute("data-call-id")).toBe(callId);
    expect(await shown.locator(".call-state").innerText()).toBe("Connected");
    expect(await page.getByTestId("agent-state-name").getAttribute("data-state")).toBe("On-A-Call");
    expect(await page.getByTestId("agent-state-badge").getAttribute("data-state")).toBe("On-A-Call");
    await expectState(f, agent, "On-A-Call");

    // The agent hangs up: wrap-up, then Ready once the server's clock has passed it.
    await shown.getByRole("button", { name: "Hang up" }).click();
    await shown.waitFor({ state: "detached", timeout: 20_000 });
    await expectState(f, agent, "Wrapup-Time");
    await f.noChannels("agent1");
    await f.clock.advance(WRAPUP_S * 1000);
    await expectState(f, agent, "Ready");

    // Away.
    await panelOf(page).getByRole("button", { name: "Away", exact: true }).click();
    await expectState(f, agent, "Away");

    // A text.
    await openView(page, "Texting");
    await page.getByRole("heading", { name: "Texting", level: 1 }).waitFor();
    await page.getByRole("button", { name: "New conversation" }).click();
    await page.getByLabel("Phone number").fill("+14155556090");
    await page.getByLabel("Name").fill("Tess Texter");
    await page.getByRole("button", { name: "Start conversation" }).click();
    await page.getByRole("heading", { name: "Tess Texter", level: 2 }).waitFor({ timeout: 20_000 });
    const draft = page.getByLabel("Message", { exact: true });
    await draft.fill("Your order is on its way");
    await draft.press("Enter");
    await page.locator(".bubble-out", { hasText: "Your order is on its way" }).locator(".delivery-status", { hasText: "Delivered" }).waitFor({ timeout: 20_000 });

    // Sign out, logging out of the queues.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("dialog", { name: "Sign out" }).getByRole("button", { name: "Sign out and log out of queues" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor({ timeout: 20_000 });
    expect((await f.status("agent1")).availability_state).toBe("Not-Logged-In");
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("asks a logged-in agent who presses Sign out before their queue state has come, and logs them out as chosen", async () => {
    const f = setup.floor();
    const me = f.userId("agent1");
    for (const status of ["login", "ready"]) expect((await f.v2("POST", `/callq_recipients/${me}/status`, { status })).status).toBeLessThan(300);
    expect((await f.status("agent1")).availability_state).toBe("Ready");
    const { page, errors } = await openConsole(setup.browser().browser, f.url);
    const link = await slowLink(page, SEED);
    const stateRead = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith(`/callq_recipients/${me}/status`), "before");
    await signIn(page, "agent1");
    await stateRead.seen;
    await page.getByRole("button", { name: "Sign out" }).click();
    // Until the state has come, the button says so.
    await shownWithin(page.getByRole("button", { name: "Signing out…" }), "the Sign out button says it is signing out while the queue state is on its way");
    await shotsAtWidths(page, "signing-out");
    stateRead.release();
    // Once the state has come (Ready), the question that a logged-in agent gets.
    const dialog = page.getByRole("dialog", { name: "Sign out" });
    await dialog.waitFor({ timeout: 15_000 });
    expect(await dialog.innerText()).toContain("Ready");
    await dialog.getByRole("button", { name: "Sign out and log out of queues" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor({ timeout: 20_000 });
    expect((await f.status("agent1")).availability_state).toBe("Not-Logged-In");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("keeps a callback's reminder when Call now is pressed before the phone line has started, saying why", async () => {
    const f = setup.floor();
    const me = f.userId("agent1");
    const { page, errors } = await openConsole(setup.browser().browser, f.url);
    const link = await slowLink(page, SEED);
    // The phone line starts from the user's devices: that read is held until the test lets it go.
    const devicesRead = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith("/devices"), "before");
    // Once the event websocket has answered its subscription, a callback comes due for agent1.
    const subscribed = new Promise<void>((resolve) => {
      page.on("websocket", (ws) => {
        if (new URL(ws.url()).pathname === "/events") ws.on("framereceived", () => resolve());
      });
    });
    // The line starts once the sign-in's read of the user's profile has answered: held too, so the
    // moment before the line starts is certain. The phone is connecting then, not missing.
    const profileRead = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith(`/users/${me}`), "before");
    await signIn(page, "agent1");
    await profileRead.seen;
    const registration = page.getByTestId("registration-state");
    await registration.waitFor();
    expect.soft(await registration.textContent(), "the phone says it is connecting before its line has started").toBe("Registration: Connecting…");
    profileRead.release();
    await devicesRead.seen;
    await subscribed;
    const due = await f.v2("PUT", "/callq_callbacks", { number: "+14155550321", remind_at: toGregorianSeconds(await f.clock.now()), note: "Renewal", user_id: me });
    expect(due.status).toBeLessThan(300);
    const reminders = page.getByRole("region", { name: "Callback reminders" });
    await reminders.getByText("Renewal").waitFor({ timeout: 20_000 });
    await reminders.getByRole("button", { name: "Call now" }).click();
    // No call placed: the reminder stays, and says why.
    await shownWithin(
      reminders.getByRole("alert").filter({ hasText: "Cannot call +14155550321: your phone is still connecting." }),
      "the reminder says why no call was placed",
    );
    expect.soft(await reminders.getByText("Renewal").count(), "the reminder stays up").toBe(1);
    await shotsAtWidths(page, "callback-not-placed");
    devicesRead.release();
    await waitRegistered(page, 30_000);
    await reminders.getByRole("button", { name: "Dismiss" }).click();
    await reminders.waitFor({ state: "detached" });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows a colleague's presence that changed while the directory's first read was on its way, not that read's older one", async () => {
    const f = setup.floor();
    const colleague = await setup.signedIn("agent2");
    const agent2 = f.userId("agent2");
    const presenceOf = async () => (await f.v2<{ id: string; presence: string }[]>("GET", "/directory")).body.data.find((c) => c.id === agent2)?.presence;
    await poll("agent2 available", async () => ((await presenceOf()) === "available" ? true : undefined));
    const { page, errors } = await openConsole(setup.browser().browser, f.url);
    const link = await slowLink(page, SEED);
    // The directory's first read is answered (agent2 available) and its answer held from the page.
    const read = await link.hold((r) => r.method() === "GET" && new URL(r.url()).pathname.endsWith("/directory"), "after");
    await signIn(page, "agent1");
    await read.answered;
    // agent2 logs in to the queues meanwhile: Away, and the event says so at once.
    expect((await f.v2("POST", `/callq_recipients/${agent2}/status`, { status: "login" })).status).toBeLessThan(300);
    expect(await presenceOf()).toBe("away");
    await openView(page, "Directory");
    const row = page.locator(`li.colleague[data-user-id="${agent2}"]`);
    await page.locator(`li.colleague[data-user-id="${agent2}"][data-presence="away"]`).waitFor({ timeout: 20_000 });
    read.release();
    await (await read.seen).response();
    await page.locator('ul.colleagues[aria-busy="false"]').waitFor({ timeout: 20_000 });
    expect(await row.getAttribute("data-presence")).toBe("away");
    expect(await row.getByTestId("presence").innerText()).toBe("Away");
    expect(await presenceOf()).toBe("away");
    expect((await f.v2("POST", `/callq_recipients/${agent2}/status`, { status: "logout" })).status).toBeLessThan(300);
    expect(errors).toEqual([]);
    expect(setup.errors()).toEqual([]);
    await page.close();
    await colleague.close();
  }, 60_000);
});
