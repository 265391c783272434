// The supervisor's History panel in Chromium against the built server: after simulated callers to
// Sales (two answered at agent1's console, one abandoned), the panel's day for Sales shows the
// counts the CDRs and the intervals API give; after a server restart it still does; its CSV link
// downloads the same figures; a supervisor who lost call_monitor is told why the history is refused.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { downloadText, openConsole as openConsolePage, signIn, waitRegistered } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";
import { Floor, offerOn, openView } from "../helpers/shift.js";

let floor: Floor | undefined;
let launched: LaunchedBrowser | undefined;
const pageErrors: string[] = [];

function floorOf(): Floor {
  if (floor === undefined) throw new Error("beforeAll did not start the server");
  return floor;
}

async function openConsole(username: string, registered: boolean): Promise<Page> {
  if (launched === undefined) throw new Error("beforeAll did not launch the browser");
  const { page } = await openConsolePage(launched.browser, floorOf().url);
  page.on("pageerror", (error) => pageErrors.push(`${username}: ${error.message}`));
  await signIn(page, username);
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  if (registered) await waitRegistered(page);
  return page;
}

beforeAll(async () => {
  floor = await Floor.open();
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
  await floor?.close();
  expect(pageErrors, "uncaught errors in the pages").toEqual([]);
});

interface Cdr {
  call_direction?: string;
  caller_id_number?: string;
  other_leg_call_id?: string;
}

interface Counts {
  offered: number;
  answered: number;
  abandoned: number;
}

/** The History panel set to Sales, today: its totals once it has read them. */
async function panelCounts(page: Page, salesId: string): Promise<Counts> {
  await openView(page, "Supervisor");
  const panel = page.getByRole("region", { name: "History" });
  await panel.getByRole("combobox", { name: "Queue" }).selectOption(salesId);
  await panel.getByTestId("history-state").filter({ hasText: "per 15 minutes" }).waitFor({ timeout: 15_000 });
  const figure = async (name: string) => Number(await panel.getByTestId(`history-${name}`).innerText());
  return { offered: await figure("offered"), answered: await figure("answered"), abandoned: await figure("abandoned") };
}

describe("the supervisor's queue history", () => {
  it("shows the day's counts equal to the CDRs and the API, keeps them across a restart, and downloads them as CSV", async () => {
    const f = floorOf();
    const salesPath = await f.queuePath("Sales");
    const salesId = salesPath.split("/").pop() ?? "";
    // A long ring: on a loaded machine an offer must not ring out before the console answers it.
    expect((await f.v2("PATCH", salesPath, { ring_timeout: 60, agent_wrapup_time: 0 })).status).toBe(200);

    const agentPage = await openConsole("agent1", true);
    const states = agentPage.getByRole("group", { name: "Change your queue state" });
    const stateIs = (state: string, timeoutMs = 30_000) => poll(`agent1 ${state}`, async () => ((await f.status("agent1")).availability_state === state ? true : undefined), timeoutMs);
    await states.getByRole("button", { name: "Login" }).click();
    await states.getByRole("button", { name: "Ready" }).click();
    await stateIs("Ready");

    const numbers: string[] = [];
    const call = (name: string) => {
      const number = `+1415555030${numbers.length + 1}`;
      numbers.push(number);
      return f.simCall("5001", { caller_id_name: name, caller_id_number: number });
    };
    const offer = offerOn(agentPage);
    // The offer card's button gets its click straight away: on a loaded machine the card
    // re-renders (its ringing timer) faster than a pointer click finds it stable.
    async function answered(name: string): Promise<void> {
      const id = await call(name);
      const accept = offer.getByRole("button", { name: "Accept" });
      await accept.waitFor({ timeout: 30_000 });
      await accept.dispatchEvent("click");
      await stateIs("On-A-Call");
      await f.hangupSim(id);
      await stateIs("Ready");
    }
    await answered("Ann Answered");
    await answered("Bo Answered");
    // Abandoned: the agent is Away, the caller hangs up while waiting.
    await states.getByRole("button", { name: "Away" }).click();
    await stateIs("Away");
    const third = await call("Abe Abandoned");
    await poll("the caller waiting", async () => ((await f.v2<{ stats: { waiting?: number; total_sessions: number } }>("GET", `${salesPath}/status`)).body.data.stats.total_sessions === 3 ? true : undefined));
    await f.hangupSim(third);

    // What the CDRs say: one inbound caller leg per call; abandoned callers were bridged to nobody.
    const callers = await poll("every caller's CDR", async () => {
      const rows = (await f.v2<Cdr[]>("GET", "/cdrs?paginate=false")).body.data.filter((r) => r.call_direction === "inbound" && numbers.includes(r.caller_id_number ?? ""));
      return rows.length === numbers.length ? rows : undefined;
    });
    const fromCdrs: Counts = {
      offered: callers.length,
      answered: callers.filter((r) => r.other_leg_call_id !== undefined).length,
      abandoned: callers.filter((r) => r.other_leg_call_id === undefined).length,
    };
    expect(fromCdrs).toEqual({ offered: 3, answered: 2, abandoned: 1 });
    const fromApi = async (): Promise<Counts> => {
      const rows = (await f.v2<Record<string, number>[]>("GET", `${salesPath}/intervals`)).body.data;
      const sum = (name: string) => rows.reduce((total, row) => total + (row[name] ?? 0), 0);
      return { offered: sum("offered"), answered: sum("answered"), abandoned: sum("abandoned") };
    };
    expect(await fromApi()).toEqual(fromCdrs);

    const supervisorPage = await openConsole("supervisor", false);
    expect(await panelCounts(supervisorPage, salesId)).toEqual(fromCdrs);
    await agentPage.close();
    await supervisorPage.close();

    // A restart loses nothing: a fresh console reads the same figures from the restarted server.
    await f.restart();
    expect(await fromApi()).toEqual(fromCdrs);
    const afterRestart = await openConsole("supervisor", false);
    expect(await panelCounts(afterRestart, salesId)).toEqual(fromCdrs);

    // The CSV link downloads the server's CSV of the same day: the same counts.
    const panel = afterRestart.getByRole("region", { name: "History" });
    const [download] = await Promise.all([afterRestart.waitForEvent("download"), panel.getByRole("link", { name: "Sales" }).click()]);
    const [header = "", ...lines] = (await downloadText(download)).trim().split(/\r?\n/);
    const columns = header.split(",");
    const column = (name: string) => lines.reduce((total, line) => total + Number(line.split(",")[columns.indexOf(name)] ?? 0), 0);
    expect(lines).toHaveLength(96);
    expect({ offered: column("offered"), answered: column("answered"), abandoned: column("abandoned") }).toEqual(fromCdrs);

    // Another day has none of them.
    await panel.getByRole("button", { name: "Previous day" }).click();
    await panel.getByTestId("history-offered").filter({ hasText: /^0$/ }).waitFor();

    // The API decides who reads history: without call_monitor the supervisor is refused, and told why.
    const supervisorId = f.userId("supervisor");
    expect((await f.v2("PATCH", `/users/${supervisorId}`, { callq: { enabled: true, pin: "1005", permissions: [] } })).status).toBe(200);
    await panel.getByRole("button", { name: "Next day" }).click();
    await expect.poll(() => panel.getByRole("alert").innerText()).toContain("You may not read this history");
    expect(await panel.getByTestId("history-offered").count()).toBe(0);
    await afterRestart.close();
  });
});
