// A queue callback in Chromium against serve mode (issue 19 item 4): a simulated caller waits in
// Sales, presses 5 and is hung up on; the callback waits in its place, on the supervisor's board
// and the agent's Queues view; the agent goes Ready and is offered "Callback to <number>",
// accepts, the server dials the caller's phone (the simulator's carrier), which answers and plays
// its tone: the agent's page hears it. The queue's figures and both legs' CDRs say it was a callback.
// During that call the agent schedules another callback from the caller's history, due at once:
// the reminder shows, and "Call now" calls the number out through the same carrier.
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { heardLevel, SCREENSHOTS, seriousAxeViolations } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { card, expectState, hangUp, openView, panelOf, useFloor, type Agent } from "../helpers/shift.js";

const setup = useFloor();
const signedIn = setup.signedIn;

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

const NUMBER = "+14155550123";
/** What the caller's phone plays once it answers the callback; ringback is 440 and 480 Hz. */
const PHONE_TONE = 700;
/** A frequency nobody plays: the line's floor. */
const FLOOR = 2900;

/**
 * How far the phone's tone stands over the floor in what the page hears, once its media flows: a
 * leg just bridged may take a moment to carry audio on a loaded machine, so up to five looks.
 */
async function toneOverFloor(page: Page): Promise<number> {
  let best = Number.NEGATIVE_INFINITY;
  for (let look = 0; look < 5 && best <= 20; look += 1) best = Math.max(best, (await heardLevel(page, PHONE_TONE)) - (await heardLevel(page, FLOOR)));
  return best;
}

describe("a callback in the console", () => {
  it("a caller's digit turns into a callback the agent accepts; the server dials the caller, who answers and is heard", async () => {
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    expect((await f.v2("PATCH", sales, { callback: { enabled: true, digit: "5" } })).status).toBe(200);

    const supervisor = await signedIn("supervisor");
    await openView(supervisor, "Supervisor");
    const tile = supervisor.getByRole("region", { name: "Queues" }).getByRole("region", { name: "Sales" });
    await tile.getByTestId("board-callbacks").filter({ hasText: "0" }).waitFor({ timeout: 20_000 });

    const agent: Agent = { page: await signedIn("agent1"), username: "agent1", name: "Alex Agent" };
    const p = agent.page;
    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent, "Away");

    const sim = await f.v2<{ id: string }>("POST", "/sim/calls", {
      to: "5001",
      caller_id_name: "Casey Customer",
      caller_id_number: NUMBER,
      script: { steps: [{ digits: "5", after_s: 1 }, { wait_s: 30 }] },
      phone: { answer: "answer", audio: `tone_stream://${PHONE_TONE}` },
    });
    expect(sim.status).toBe(201);
    // The caller heard it agreed and the line ended; the callback keeps their place.
    await poll("the caller's line to end", async () => ((await f.v2("GET", `/sim/calls/${sim.body.data.id}`)).status === 404 ? true : undefined), 20_000, 500);
    const sessions = await f.v2<{ session_list: { callback?: { number: string } }[] }[]>("GET", `${sales}/sessions`);
    expect(sessions.body.data[0]?.session_list.map((s) => s.callback?.number)).toEqual([NUMBER]);
    await tile.getByTestId("board-callbacks").filter({ hasText: "1" }).waitFor({ timeout: 20_000 });
    expect(await tile.getByTestId("board-waiting").innerText()).toBe("0");
    await supervisor.screenshot({ path: join(SCREENSHOTS, "board-callback-waiting.png") });

    await openView(p, "Queues");
    const queueCard = p.getByRole("region", { name: "Sales" });
    await queueCard.getByTestId("queue-callbacks").filter({ hasText: "1" }).waitFor({ timeout: 20_000 });

    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    const offer = p.getByRole("region", { name: `Callback to ${NUMBER}` });
    await offer.getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    expect(await offer.innerText()).toContain("Casey Customer");
    expect(await seriousAxeViolations(p)).toEqual([]);
    await p.screenshot({ path: join(SCREENSHOTS, "offer-callback.png") });
    await offer.getByRole("button", { name: "Accept" }).click();

    const call = card(p, "Casey Customer");
    await call.getByText("Connected").waitFor({ timeout: 20_000 });
    expect(await call.innerText()).toContain("Callback");
    // The caller's phone answers after a second of ringing: then the queue counts it connected.
    await poll("the callback connected", async () => {
      const status = await f.v2<{ stats: { callbacks_connected?: number; callbacks_waiting?: number } }>("GET", `${sales}/status`);
      return status.body.data.stats.callbacks_connected === 1 ? status.body.data.stats : undefined;
    }, 20_000);
    expect(await toneOverFloor(p), `the agent hears the caller's phone at ${PHONE_TONE} Hz`).toBeGreaterThan(20);
    await tile.getByTestId("board-callbacks").filter({ hasText: "0" }).waitFor({ timeout: 20_000 });

    // From the call's caller history the agent schedules another callback, due this very minute.
    await call.getByRole("button", { name: "Schedule a callback" }).click();
    const form = call.getByRole("form", { name: `Schedule a callback to ${NUMBER}` });
    const thisMinute = await p.evaluate(() => {
      const d = new Date();
      d.setSeconds(0, 0);
      return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    });
    await form.getByLabel("When").fill(thisMinute);
    await form.getByLabel("Note").fill("Send the quote");
    await form.getByRole("button", { name: "Schedule" }).click();
    await call.getByRole("status").filter({ hasText: "Callback scheduled" }).waitFor();
    const reminders = p.getByRole("region", { name: "Callback reminders" });
    await reminders.getByText("Send the quote").waitFor({ timeout: 20_000 });
    expect(await reminders.innerText()).toContain(NUMBER);

    await hangUp(p, "Casey Customer");
    const legs = await poll("both callback legs' CDRs", async () => {
      const cdrs = await f.v2<{ callq_callback_number?: string; call_direction?: string; callee_id_number?: string }[]>("GET", "/cdrs?paginate=false");
      const mine = cdrs.body.data.filter((c) => c.callq_callback_number === NUMBER);
      return mine.length === 2 ? mine : undefined;
    }, 20_000);
    expect(legs.some((c) => c.call_direction === "outbound" && c.callee_id_number === NUMBER)).toBe(true);
    await f.noChannels("agent1");

    // "Call now": the agent's call to the number goes out through the carrier to the caller's phone.
    expect(await seriousAxeViolations(p)).toEqual([]);
    await p.screenshot({ path: join(SCREENSHOTS, "callback-reminder.png") });
    await reminders.getByRole("button", { name: "Call now" }).click();
    await reminders.waitFor({ state: "detached" });
    const again = card(p, NUMBER.replace("+", "\\+"));
    await again.getByText("Connected").waitFor({ timeout: 20_000 });
    expect(await toneOverFloor(p), "the agent hears the caller's phone on the call they placed").toBeGreaterThan(20);
    const scheduled = await f.v2<{ number: string; note: string; state: string }[]>("GET", "/callq_callbacks");
    expect(scheduled.body.data).toMatchObject([{ number: NUMBER, note: "Send the quote", state: "reminded" }]);
    await again.getByRole("button", { name: "Hang up" }).click();
    await f.noChannels("agent1");
  }, 120_000);
});
