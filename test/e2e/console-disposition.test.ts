// Dispositions and Away reasons in Chromium against serve mode: Sales requires a disposition and
// a wrap-up the agent ends themself; agent1 takes a simulated caller, hangs up, is refused Ready
// until they choose a disposition and write a note, then goes Ready; then Away for lunch from the
// reasons menu (by keyboard). The supervisor's board (a second page) shows beside the state
// that a disposition is needed, then the reason "Lunch". The CDRs read through the API carry
// the code and the note on both legs of the call.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SCREENSHOTS, seriousAxeViolations } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { accept, expectState, useFloor, hangUp, openView, panelOf, type Agent } from "../helpers/shift.js";

const setup = useFloor();
const signedIn = setup.signedIn;

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

interface Cdr {
  call_id: string;
  disposition?: { code: string; label: string; note: string };
}

describe("a required disposition and an Away reason", () => {
  it("refuses Ready until the disposition is given, then Away for lunch shows on the board; the CDRs carry the code and note", async () => {
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    const dispositions = [
      { code: "sale", label: "Sale" },
      { code: "wrong_number", label: "Wrong number" },
    ];
    expect((await f.v2("PATCH", sales, { dispositions, disposition_required: true, wrapup_policy: "required" })).status).toBe(200);

    const board = await signedIn("supervisor");
    await openView(board, "Supervisor");
    await board.getByRole("heading", { name: "Supervisor", level: 1 }).waitFor();

    const agent: Agent = { page: await signedIn("agent1"), username: "agent1", name: "Alex Agent" };
    const p = agent.page;
    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent, "Away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent, "Ready");

    const caller = await f.simCall("5001", { caller_id_name: "Casey Customer", caller_id_number: "+14155550123" });
    await accept(p, "Casey Customer");
    await expectState(f, agent, "On-A-Call");
    await hangUp(p, "Casey Customer");
    const wrapup = await expectState(f, agent, "Wrapup-Time");
    expect(wrapup).toMatchObject({ disposition_pending: true });
    const form = p.getByTestId("disposition");
    await form.getByTestId("disposition-required").waitFor();
    await panelOf(p).getByTestId("wrapup-open").filter({ hasText: "disposition" }).waitFor();

    // Ready is refused, in the server's words, and the agent stays in wrap-up.
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await panelOf(p).getByRole("alert").filter({ hasText: "disposition" }).waitFor();
    expect((await f.status("agent1")).availability_state).toBe("Wrapup-Time");
    const waiting = board.locator(`tr[data-recipient-id="${f.userId("agent1")}"][data-state="Wrapup-Time"]`);
    await waiting.getByTestId("agent-reason").filter({ hasText: "Disposition needed" }).waitFor({ timeout: 20_000 });
    await p.screenshot({ path: join(SCREENSHOTS, "agent-disposition.png") });
    expect(await seriousAxeViolations(p)).toEqual([]);

    await form.getByLabel("How did the call end?").selectOption("wrong_number");
    await form.getByLabel("Note").fill("Asked for the bakery next door");
    await form.getByRole("button", { name: "Save disposition" }).click();
    await form.getByTestId("disposition-saved").filter({ hasText: "Wrong number" }).waitFor();
    await poll("the disposition no longer pending", async () => ("disposition_pending" in (await f.status("agent1")) ? undefined : true));

    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent, "Ready");
    expect(await p.getByTestId("disposition").count(), "the form goes with the wrap-up").toBe(0);

    // Away for lunch, from the reasons menu, by keyboard: the first reason has focus, one down is Lunch.
    await panelOf(p).getByRole("button", { name: "Reason…" }).click();
    const menu = p.getByRole("menu", { name: "Go Away for" });
    await menu.getByRole("menuitemradio", { name: "Break" }).waitFor();
    expect(await seriousAxeViolations(p)).toEqual([]);
    await p.keyboard.press("ArrowDown");
    expect(await menu.getByRole("menuitemradio", { name: "Lunch" }).evaluate((el) => el.matches(":focus"))).toBe(true);
    await p.keyboard.press("Enter");
    await menu.waitFor({ state: "detached" });
    const away = await expectState(f, agent, "Away");
    expect(away).toMatchObject({ away_reason: "lunch" });
    await p.getByTestId("agent-state-reason").filter({ hasText: "Away: Lunch" }).waitFor();
    const row = board.locator(`tr[data-recipient-id="${f.userId("agent1")}"][data-state="Away"]`);
    await row.getByTestId("agent-reason").filter({ hasText: "Lunch" }).waitFor({ timeout: 20_000 });
    await board.screenshot({ path: join(SCREENSHOTS, "board-away-lunch.png") });

    // Both legs' CDRs: the simulated caller's and the agent's.
    const legs = await poll("both legs' CDRs with the disposition", async () => {
      const cdrs = await f.v2<Cdr[]>("GET", "/cdrs?paginate=false");
      const marked = cdrs.body.data.filter((c) => c.disposition?.code === "wrong_number");
      return marked.length === 2 ? marked : undefined;
    });
    expect(legs.map((c) => c.call_id)).toContain(caller);
    for (const leg of legs) expect(leg.disposition).toMatchObject({ label: "Wrong number", note: "Asked for the bakery next door" });
    // About 35 s on a quiet machine; the margin is for a loaded one.
  }, 120_000);
});
