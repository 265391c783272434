// The screen pop in Chromium against serve mode: a simulated caller reaches agent1 through Sales,
// the agent answers, hangs up and gives a disposition and a note in the wrap-up, then goes Ready;
// the same number calls again and the offer, before the agent answers, shows the caller's previous
// call with that disposition and note, and the account's CRM link for the number (opened in a new
// tab, outside the app). Answered, the call card keeps the history.
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SCREENSHOTS, seriousAxeViolations } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { accept, card, expectState, useFloor, hangUp, offerOn, openView, panelOf, type Agent } from "../helpers/shift.js";

const setup = useFloor();
const signedIn = setup.signedIn;

afterAll(() => {
  expect(setup.errors(), "uncaught errors in the pages").toEqual([]);
});

const CALLER = { caller_id_name: "Casey Customer", caller_id_number: "+14155550123" };

describe("the caller history on the offer", () => {
  it("shows the previous call's disposition and note before the agent answers, and the CRM link", async () => {
    const f = setup.floor();
    const sales = await f.queuePath("Sales");
    const dispositions = [
      { code: "sale", label: "Sale" },
      { code: "callback", label: "Call back later" },
    ];
    expect((await f.v2("PATCH", sales, { dispositions, disposition_required: true, wrapup_policy: "required" })).status).toBe(200);
    expect((await f.v2("PATCH", "", { crm_link: "https://crm.example/search?q={number}" })).status).toBe(200);

    const agent: Agent = { page: await signedIn("agent1"), username: "agent1", name: "Alex Agent" };
    const p = agent.page;
    await openView(p, "Agent");
    await panelOf(p).getByRole("button", { name: "Login" }).click();
    await expectState(f, agent, "Away");
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent, "Ready");

    // The first call: no history yet.
    await f.simCall("5001", CALLER);
    await offerOn(p).getByText("No previous calls.").waitFor({ timeout: 20_000 });
    await accept(p, "Casey Customer");
    await expectState(f, agent, "On-A-Call");
    await hangUp(p, "Casey Customer");
    await expectState(f, agent, "Wrapup-Time");
    const form = p.getByTestId("disposition");
    await form.getByLabel("How did the call end?").selectOption("callback");
    await form.getByLabel("Note").fill("Wants a quote for 40 seats");
    await form.getByRole("button", { name: "Save disposition" }).click();
    await form.getByTestId("disposition-saved").filter({ hasText: "Call back later" }).waitFor();
    await poll("both legs' CDRs with the disposition", async () => {
      const cdrs = await f.v2<{ disposition?: { code: string } }[]>("GET", "/cdrs?paginate=false");
      return cdrs.body.data.filter((c) => c.disposition?.code === "callback").length === 2 ? true : undefined;
    });
    await panelOf(p).getByRole("button", { name: "Ready" }).click();
    await expectState(f, agent, "Ready");

    // The same number again: the offer shows the last call before anyone answers.
    await f.simCall("5001", CALLER);
    const offer = offerOn(p);
    const history = offer.getByRole("region", { name: /History of|Caller history/ });
    await history.getByText("Wants a quote for 40 seats").waitFor({ timeout: 20_000 });
    expect(await history.innerText()).toContain("Call back later");
    expect(await history.innerText()).toContain("Alex Agent");
    expect((await f.status("agent1")).availability_state).toBe("Call-Offer");
    const crm = history.getByRole("link", { name: "Open in CRM" });
    expect(await crm.getAttribute("href")).toBe("https://crm.example/search?q=%2B14155550123");
    expect(await crm.getAttribute("target")).toBe("_blank");
    expect(await crm.getAttribute("rel")).toContain("noopener");
    await p.screenshot({ path: join(SCREENSHOTS, "offer-caller-history.png") });
    expect(await seriousAxeViolations(p)).toEqual([]);

    await accept(p, "Casey Customer");
    await card(p, "Casey Customer").getByText("Wants a quote for 40 seats").waitFor();
    await hangUp(p, "Casey Customer");
    // About 15 s on a quiet machine; the margin is for a loaded one.
  }, 120_000);
});
