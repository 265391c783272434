// The console and the docs page under a strict Content-Security-Policy (issue 14, item 7): the
// headers are there, the console signs in and registers and the docs page renders without one
// violation, and what the policy exists for is refused: an injected inline script, being framed.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openConsole, signIn, waitRegistered } from "../helpers/console-page.js";
import { serve, type Served } from "../helpers/serve.js";

let server: Served;
let browser: LaunchedBrowser;

beforeAll(async () => {
  [server, browser] = await Promise.all([serve(), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Directive name to its sources, from a policy header. */
function directives(header: string | null): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of (header ?? "").split(";")) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out.set(name, sources);
  }
  return out;
}

// Page-side code as text (the node project has no DOM types): every violation the page reports.
const RECORD_VIOLATIONS = `(() => {
  globalThis.__violations = [];
  document.addEventListener("securitypolicyviolation", (e) => {
    globalThis.__violations.push(e.effectiveDirective + " " + e.blockedURI);
  });
})()`;

async function violations(page: Page): Promise<string[]> {
  return (await page.evaluate("globalThis.__violations")) as string[];
}

function expectStrict(policy: Map<string, string[]>): void {
  for (const sources of policy.values()) {
    expect(sources).not.toContain("'unsafe-inline'");
    expect(sources).not.toContain("'unsafe-eval'");
    expect(sources).not.toContain("*");
  }
  expect(policy.get("default-src")).toEqual(["'none'"]);
  expect(policy.get("script-src")).toEqual(["'self'"]);
  expect(policy.get("object-src")).toEqual(["'none'"]);
  expect(policy.get("base-uri")).toEqual(["'none'"]);
  expect(policy.get("frame-ancestors")).toEqual(["'none'"]);
}

describe("the security headers", () => {
  it("give the console page, its assets and the docs page a strict policy, and every answer no framing and no sniffing", async () => {
    const page = await fetch(`${server.url}/`);
    const html = await page.text();
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1] ?? "";
    expect(asset).not.toBe("");
    const answers = {
      console: page,
      asset: await fetch(`${server.url}/${asset}`),
      docs: await fetch(`${server.url}/docs/`),
      notFound: await fetch(`${server.url}/nowhere`),
    };
    for (const [what, res] of Object.entries(answers)) {
      expect(res.status, what).toBeLessThan(what === "notFound" ? 500 : 300);
      expectStrict(directives(res.headers.get("content-security-policy")));
      expect(res.headers.get("x-frame-options"), what).toBe("DENY");
      expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
    }
    const consolePolicy = directives(answers.console.headers.get("content-security-policy"));
    expect(consolePolicy.get("connect-src")).toContain("'self'");
    expect(consolePolicy.get("connect-src")).not.toContain("http:");
    expect(directives(answers.docs.headers.get("content-security-policy")).get("connect-src")).toEqual(["'self'"]);
    // The API answers JSON, never a page; it is still neither sniffed nor framed.
    const api = await fetch(`${server.url}/v2/token_auth`);
    expect(api.status).toBe(401);
    expect(api.headers.get("x-content-type-options")).toBe("nosniff");
    expect(api.headers.get("x-frame-options")).toBe("DENY");
  });
});

describe("in Chromium", () => {
  it("signs an agent in and registers the softphone with no violation, and refuses an injected inline script", async () => {
    const agent = await browser.browser.newPage();
    try {
      await agent.addInitScript(RECORD_VIOLATIONS);
      const errors: string[] = [];
      agent.on("pageerror", (e) => errors.push(e.message));
      agent.on("console", (m) => {
        if (m.type() === "error" && /Content Security Policy/i.test(m.text())) errors.push(m.text());
      });
      await agent.goto(server.url);
      await signIn(agent, "agent1");
      await waitRegistered(agent);
      expect(await violations(agent)).toEqual([]);
      expect(errors).toEqual([]);

      await agent.evaluate(`(() => {
        const script = document.createElement("script");
        script.textContent = "globalThis.__injected = true";
        document.body.append(script);
      })()`);
      await agent.waitForFunction("globalThis.__violations.length > 0");
      expect(await agent.evaluate("globalThis.__injected")).toBeUndefined();
      expect((await violations(agent)).join("\n")).toMatch(/^script-src-elem inline/m);
    } finally {
      await agent.close();
    }
  });

  it("shows an admin every console view with no violation", async () => {
    const admin = await browser.browser.newPage({ viewport: { width: 1280, height: 860 } });
    try {
      await admin.addInitScript(RECORD_VIOLATIONS);
      await admin.goto(server.url);
      await signIn(admin, "admin");
      await waitRegistered(admin);
      const nav = admin.getByRole("navigation", { name: "Console views" });
      for (const view of ["Agent", "Queues", "Supervisor", "Texting", "Directory", "Recordings", "Admin", "Training", "Audio", "Settings", "Agent"]) {
        await nav.getByRole("link", { name: view }).click();
        await admin.waitForURL(new RegExp(`/${view.toLowerCase()}$`));
        await admin.locator("main h1, main h2").first().waitFor();
      }
      expect(await violations(admin)).toEqual([]);
    } finally {
      await admin.close();
    }
  });

  it("renders the docs page with no violation", async () => {
    const docs = await browser.browser.newPage();
    try {
      await docs.addInitScript(RECORD_VIOLATIONS);
      await docs.goto(`${server.url}/docs`);
      await docs.locator(".swagger-ui .info .title").waitFor();
      await docs.locator(".opblock").first().waitFor();
      expect(await violations(docs)).toEqual([]);
    } finally {
      await docs.close();
    }
  });

  it("will not show the console inside another page's frame", async () => {
    const { page } = await openConsole(browser.browser, "about:blank");
    try {
      await page.setContent(`<iframe id="framed" src="${server.url}/" width="600" height="400"></iframe>`);
      const framed = page.frameLocator("#framed");
      // Chromium replaces a refused frame with its error page: the console's root never appears.
      await expect.poll(() => page.frames().length).toBe(2);
      const frame = page.frames()[1];
      await expect.poll(async () => frame?.url()).not.toBe("about:blank");
      expect(await framed.locator("#root").count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
