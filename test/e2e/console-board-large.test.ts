// The supervisor's board of a large floor in Chromium (120 agents, 14 queues): the agents table
// renders the rows in its scrolled box (all counted in aria-rowcount), scrolling brings the last
// agent's row, and a queue tile far from the view is a placeholder with its name until it comes
// near, then shows its figures.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole as openConsolePage, signIn } from "../helpers/console-page.js";
import { demoGrant, serve, type Served } from "../helpers/serve.js";

const AGENTS = 120;
const QUEUES = 14;
let server: Served | undefined;
let launched: LaunchedBrowser | undefined;
const pageErrors: string[] = [];

function served(): Served {
  if (server === undefined) throw new Error("beforeAll did not start the server");
  return server;
}

beforeAll(async () => {
  server = await serve();
  launched = await launchBrowser();
});

afterAll(async () => {
  await launched?.close();
  await server?.stop();
  expect(pageErrors, "uncaught errors in the pages").toEqual([]);
});

describe("a supervisor board of a large floor", () => {
  it("renders the agents in view and the queue tiles near it, and brings the rest as they scroll in", async () => {
    const admin = await demoGrant(served().url, "admin");
    const account = `${served().url}/v2/accounts/${admin.accountId}`;
    const v2 = async <T>(method: string, path: string, data?: unknown): Promise<T> => {
      const res = await fetch(account + path, { method, headers: { "Content-Type": "application/json", "X-Auth-Token": admin.token }, ...(data === undefined ? {} : { body: JSON.stringify({ data }) }) });
      expect(res.status, `${method} ${path}`).toBeLessThan(300);
      return ((await res.json()) as { data: T }).data;
    };
    const existing = await v2<{ id: string }[]>("GET", "/callq_recipients?paginate=false");
    const lanes = Array.from({ length: 4 }, async (_, lane) => {
      for (let i = existing.length + lane; i < AGENTS; i += 4) {
        await v2("PUT", "/users", { username: `floor${String(i).padStart(3, "0")}`, first_name: "Floor", last_name: `Agent ${String(i).padStart(3, "0")}`, password: "switchboard", callq: { enabled: true, permissions: [] } });
      }
    });
    await Promise.all(lanes);
    const queues = await v2<{ id: string }[]>("GET", "/callq_queues?paginate=false");
    for (let n = queues.length + 1; n <= QUEUES; n++) await v2("PUT", "/callq_queues", { name: `Zulu ${String(n).padStart(2, "0")}` });
    const last = await v2<{ id: string; name: string }[]>("GET", "/callq_queues?paginate=false").then((all) => all.find((q) => q.name === `Zulu ${QUEUES}`));
    if (last === undefined) throw new Error("the last queue was not made");

    if (launched === undefined) throw new Error("beforeAll did not launch the browser");
    const { page }: { page: Page } = await openConsolePage(launched.browser, served().url);
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await signIn(page, "admin");
    await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Supervisor" }).click();

    const agents = page.getByRole("group", { name: "Agents" });
    const table = agents.locator(`table[aria-rowcount="${AGENTS + 1}"]`);
    await table.locator("tr[data-recipient-id]").first().waitFor({ timeout: 30_000 });
    const rendered = await table.locator("tr[data-recipient-id]").count();
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(60);
    // An agent near the end (by username: floor119, then supervisor) is not rendered until the box scrolls to it.
    const lastAgent = table.locator("tr[data-recipient-id]", { hasText: `floor${AGENTS - 1}` });
    expect(await lastAgent.count()).toBe(0);
    await agents.evaluate((box) => box.scrollTo({ top: box.scrollHeight }));
    await lastAgent.waitFor({ timeout: 10_000 });
    expect(await lastAgent.getAttribute("aria-rowindex")).toBe(String(AGENTS));

    // The last queue's tile is far below: its name only, then its figures once it is near.
    const tile = page.locator(`section[data-queue-id="${last.id}"]`);
    await tile.waitFor();
    expect(await tile.getByTestId("board-waiting").count()).toBe(0);
    expect(await tile.innerText()).toContain(`Zulu ${QUEUES}`);
    await tile.scrollIntoViewIfNeeded();
    await tile.getByTestId("board-waiting").waitFor({ timeout: 10_000 });
  });
});
