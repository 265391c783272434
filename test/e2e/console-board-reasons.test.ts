// Why an agent gets no queue calls, on the supervisor's board, in Chromium against serve mode: an
// agent Ready whose console (their phone) closes shows "No phone registered" beside their state
// once the device grace is over (a short one, --device-grace), and loses it as soon as their
// phone registers again, still Ready; an agent whose offer rings out in a queue that allows one
// missed offer shows "Away · 1 missed offer in a row" until they choose Ready. The board follows the
// events without a reload, and agrees with the recipient status from the API at every step.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { SCREENSHOTS } from "../helpers/console-page.js";
import { expectState, Floor, useFloor, openView, panelOf, type Agent } from "../helpers/shift.js";

/** Seconds without a registered phone before the server withholds offers (10 by default). */
const GRACE_S = 1;
/** Sales rings an offer this long, and sets the agent Away after this many misses in a row. */
const RING_S = 3;
const MAX_MISSED = 1;

const setup = useFloor(["--device-grace", String(GRACE_S)]);
const signedIn = setup.signedIn;

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

/** The agent's row on the board once it shows `state`; its reason is `reason` (null: none shown). */
async function boardShows(board: Page, f: Floor, username: string, state: string, reason: string | null): Promise<void> {
  const row = board.locator(`tr[data-recipient-id="${f.userId(username)}"][data-state="${state}"]`);
  const shown = row.getByTestId("agent-reason");
  if (reason === null) {
    await row.waitFor({ timeout: 20_000 });
    await shown.waitFor({ state: "detached" });
  } else {
    await shown.filter({ hasText: reason }).waitFor({ timeout: 20_000 });
  }
}

describe("the board says why an agent gets no calls", () => {
  it("no phone registered for the grace period, then registered again; Away after a missed offer, then Ready", async () => {
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    expect((await f.v2("PATCH", sales, { ring_timeout: RING_S, max_missed_offers: MAX_MISSED })).status).toBe(200);

    const board = await signedIn("supervisor");
    await openView(board, "Supervisor");
    await board.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();

    // agent1 Ready with their phone registered: no reason.
    let agent: Agent = { page: await signedIn("agent1"), username: "agent1", name: "Alex Agent" };
    await openView(agent.page, "Agent");
    await panelOf(agent.page).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent, "Away");
    await panelOf(agent.page).getByRole("button", { name: "Ready" }).click();
    expect((await expectState(f, agent, "Ready")).available).toBe(true);
    await boardShows(board, f, "agent1", "Ready", null);

    // The console closes, and with it the phone: once the grace is over, the reason shows.
    await agent.page.close();
    await boardShows(board, f, "agent1", "Ready", "No phone registered");
    expect(await f.status("agent1")).toMatchObject({ availability_state: "Ready", available: false, unavailable_reason: "no_device" });

    // The phone registers again: the reason goes at once, and the agent is Ready as before.
    agent = { ...agent, page: await signedIn("agent1") };
    await boardShows(board, f, "agent1", "Ready", null);
    const back = await f.status("agent1");
    expect(back).toMatchObject({ availability_state: "Ready", available: true });
    expect(back).not.toHaveProperty("unavailable_reason");

    // An offer rings out unanswered: one missed offer is the queue's limit, so Away, and why.
    // (Whether the console showed the short ring before it ended depends on the machine's load;
    // the server's status says the offer was made and missed.)
    const caller = await f.simCall("5001", { caller_id_name: "Noel Noanswer", caller_id_number: "+14155550102" });
    await boardShows(board, f, "agent1", "Away", "1 missed offer in a row");
    expect(await f.status("agent1")).toMatchObject({ availability_state: "Away", away_reason: "missed_offers", missed_offers: 1 });
    await openView(agent.page, "Agent");
    await agent.page.getByTestId("agent-state-reason").filter({ hasText: "Set Away after 1 missed offer in a row" }).waitFor();
    await board.screenshot({ path: join(SCREENSHOTS, "board-reasons.png") });
    await f.hangupSim(caller);

    // Ready again by the agent's own choice: the reason goes.
    await panelOf(agent.page).getByRole("button", { name: "Ready" }).click();
    expect(await expectState(f, agent, "Ready")).not.toHaveProperty("away_reason");
    await boardShows(board, f, "agent1", "Ready", null);
  });
});
