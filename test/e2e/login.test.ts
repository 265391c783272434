// The login view in Chromium against the built server: the form is there by its labels, wrong
// credentials give a readable error without leaving the view, and sign-in leads to the console.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { REPO_ROOT, serve, type Served } from "../helpers/serve.js";

const SCREENSHOTS = join(REPO_ROOT, "test-results/screenshots");

let server: Served | undefined;
let launched: LaunchedBrowser | undefined;
let page: Page | undefined;
let pageErrors: string[] = [];

async function openConsole(): Promise<{ server: Served; page: Page }> {
  if (server === undefined || launched === undefined) throw new Error("beforeAll did not start the server and browser");
  page = await launched.browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(server.url);
  return { server, page };
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  server = await serve();
  launched = await launchBrowser();
});

afterEach(async () => {
  await page?.close();
  page = undefined;
  expect(pageErrors, "uncaught errors in the page").toEqual([]);
  pageErrors = [];
});

afterAll(async () => {
  await launched?.close();
  await server?.stop();
});

describe("login view", () => {
  it("greets a signed-out visitor with the sign-in form", async () => {
    const { page } = await openConsole();
    // The console route redirects a signed-out visitor to the login route.
    await page.waitForURL(/#\/login$/);
    await page.getByRole("heading", { name: "Sign in to Switchboard" }).waitFor();
    for (const label of ["Account name", "Username", "Password"]) {
      expect(await page.getByLabel(label, { exact: true }).isVisible(), label).toBe(true);
    }
    expect(await page.getByLabel("Password", { exact: true }).getAttribute("type")).toBe("password");
    expect(await page.getByRole("button", { name: "Sign in" }).isVisible()).toBe(true);
    expect(await page.getByRole("alert").count()).toBe(0);
    await page.screenshot({ path: join(SCREENSHOTS, "login.png") });
  });

  it("shows a readable error for wrong credentials and stays on the login view", async () => {
    const { page } = await openConsole();
    await page.getByLabel("Account name", { exact: true }).fill("no-such-account");
    await page.getByLabel("Username", { exact: true }).fill("NoBody");
    await page.getByLabel("Password", { exact: true }).fill("wrong password");
    const [response] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === "/v2/user_auth"),
      page.getByRole("button", { name: "Sign in" }).click(),
    ]);

    // The platform's credentials: md5 of the lowercased username, a colon and the password.
    expect(response.request().method()).toBe("PUT");
    expect(response.request().postDataJSON()).toEqual({
      data: {
        credentials: createHash("md5").update("nobody:wrong password").digest("hex"),
        account_name: "no-such-account",
      },
    });

    const status = response.status();
    expect([401, 404]).toContain(status);
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const text = await alert.innerText();
    expect(text).toMatch(status === 401 ? /account name, username or password is not right/ : /does not offer sign-in/);
    expect(text).not.toMatch(/[{}]|undefined|null/);

    expect(new URL(page.url()).hash).toBe("#/login");
    expect(await page.getByRole("heading", { name: "Sign in to Switchboard" }).isVisible()).toBe(true);
    expect(await page.getByLabel("Username", { exact: true }).inputValue()).toBe("NoBody");
    await page.screenshot({ path: join(SCREENSHOTS, "login-error.png") });
  });

  it("signs in to the console frame and signs out again, remembering the account and username", async () => {
    const { page, server } = await openConsole();
    // The token the console got from the real /v2/user_auth, read off the wire.
    let token = "";
    page.on("response", (res) => {
      if (res.url().endsWith("/v2/user_auth") && res.status() === 201) {
        void res.json().then((body: { auth_token: string }) => (token = body.auth_token));
      }
    });
    await page.getByLabel("Account name", { exact: true }).fill("demo");
    await page.getByLabel("Username", { exact: true }).fill("agent1");
    await page.getByLabel("Password", { exact: true }).fill("switchboard");
    await page.getByRole("button", { name: "Sign in" }).click();

    await page.getByRole("button", { name: "Sign out" }).waitFor();
    // The console opens on its first view.
    expect(new URL(page.url()).hash).toMatch(/^#\/[a-z]+$/);
    const header = await page.getByRole("banner").innerText();
    expect(header).toContain("agent1");
    expect(header).toContain("demo");
    // Every entry of the navigation is a working link to a view.
    const nav = page.getByRole("navigation", { name: "Console views" });
    expect(await nav.getByRole("link", { name: "Settings" }).isVisible()).toBe(true);
    await nav.getByRole("link", { name: "Settings" }).click();
    await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe("#/settings");
    await page.screenshot({ path: join(SCREENSHOTS, "console.png") });

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Switchboard" }).waitFor();
    // The console revoked its token on the real server: it no longer opens anything.
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const after = await fetch(`${server.url}/v2/token_auth`, { headers: { "X-Auth-Token": token } });
    expect(after.status).toBe(401);
    expect(await page.getByLabel("Account name", { exact: true }).inputValue()).toBe("demo");
    expect(await page.getByLabel("Username", { exact: true }).inputValue()).toBe("agent1");
    expect(await page.getByLabel("Password", { exact: true }).inputValue()).toBe("");

    // The console is out of reach once signed out, and the remembered login survives a reload.
    await page.goto(`${new URL(page.url()).origin}/#/`);
    await page.waitForURL(/#\/login$/);
    await page.getByRole("heading", { name: "Sign in to Switchboard" }).waitFor();
    expect(await page.getByLabel("Username", { exact: true }).inputValue()).toBe("agent1");
  });
});
