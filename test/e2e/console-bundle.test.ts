// The console as a browser downloads it from serve mode (the real build in out/renderer): the
// sign-in screen loads without the console's views, charts and sip.js; every file comes
// compressed when the browser accepts it; hashed assets are cached for good and index.html is
// revalidated; the rest of the console arrives after signing in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { serve, type Served } from "../helpers/serve.js";

let served: Served;
let browser: LaunchedBrowser;

beforeAll(async () => {
  served = await serve();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await served?.stop();
});

describe("the console's download", () => {
  it("sends each file compressed when accepted, as it is otherwise, with the caching its name allows", async () => {
    const page = await fetch(`${served.url}/`, { headers: { "Accept-Encoding": "br, gzip" } });
    expect(page.headers.get("content-encoding")).toBe("br");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const html = await page.text();
    const script = /src="\.?(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();

    const gz = await fetch(`${served.url}${script ?? ""}`, { headers: { "Accept-Encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(gz.headers.get("vary")?.toLowerCase()).toContain("accept-encoding");
    const plain = await fetch(`${served.url}${script ?? ""}`, { headers: { "Accept-Encoding": "identity" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
    // fetch decodes: both are the same script.
    expect(await gz.text()).toBe(await plain.text());
  });

  it("loads the sign-in screen without the console, then the console once signed in", async () => {
    const page = await browser.browser.newPage();
    const scripts: { url: string }[] = [];
    page.on("requestfinished", (request) => {
      if (request.resourceType() === "script") scripts.push({ url: request.url() });
    });
    await page.goto(`${served.url}/#/login`);
    await page.getByLabel("Username", { exact: true }).waitFor();
    const signIn = scripts.map((s) => s.url.replace(/.*\/assets\//, ""));
    // The entry, and at most the chunk it shares with the wallboard page (React): nothing else.
    const wallboard = await (await fetch(`${served.url}/wallboard.html`)).text();
    const shared = [...wallboard.matchAll(/assets\/([\w-]+\.js)/g)].map((m) => m[1]).filter((name) => !name?.startsWith("wallboard-"));
    expect(signIn.filter((name) => name.startsWith("index-"))).toHaveLength(1);
    expect(signIn.filter((name) => !name.startsWith("index-") && !shared.includes(name))).toEqual([]);
    expect(signIn.join(" ")).not.toMatch(/ConsoleRoutes|softphone/);

    await page.getByLabel("Username", { exact: true }).fill("agent1");
    await page.getByLabel("Password", { exact: true }).fill("switchboard");
    await page.getByLabel("Account name", { exact: true }).fill("demo");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("agent-state").waitFor();
    // The phone's code comes once the profile is read and the line starts: a state to wait for,
    // not a time (expect.poll's default second ran out at load 13).
    await expect.poll(() => scripts.map((s) => s.url).join(" "), { timeout: 20_000 }).toMatch(/ConsoleRoutes-.*softphone-|softphone-.*ConsoleRoutes-/);
    await page.close();
  });
});
