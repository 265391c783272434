// The real desktop app under Playwright's Electron driver: it must start its server, open the
// console from it and expose window.desktop. Skipped, with a message, where no Electron binary exists.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { _electron, type ElectronApplication, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findElectronBinary } from "../../scripts/electron-bin.mjs";

const root = resolve(import.meta.dirname, "../..");
const electron = findElectronBinary(root);
if (electron.path === null) {
  console.log(`Electron binary not found (looked at ${electron.searched.join(", ")}): the desktop app test is skipped`);
}

describe.skipIf(electron.path === null)("desktop app", () => {
  let home = "";
  let port = 0;
  let app: ElectronApplication | undefined;
  let page: Page | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(root, "out/main/index.js"))) throw new Error("out/main/index.js is missing: run `npm run build` first");
    home = await mkdtemp(join(tmpdir(), "switchboard-electron-"));
    port = await freePort();
    app = await _electron.launch({
      executablePath: electron.path ?? "",
      args: [...platformArgs(), root],
      cwd: root,
      // userData lands under XDG_CONFIG_HOME on Linux; a spare port keeps clear of a running copy.
      env: { ...process.env, XDG_CONFIG_HOME: join(home, "config"), SWITCHBOARD_PORT: String(port) },
      timeout: 60_000,
    });
    page = await app.firstWindow();
    page.on("pageerror", (error) => pageErrors.push(error.message));
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    if (home !== "") await rm(home, { recursive: true, force: true });
  });

  function consolePage(): Page {
    if (page === undefined) throw new Error("beforeAll did not open the console window");
    return page;
  }

  it("opens the console served by its own server", async () => {
    const p = consolePage();
    await p.getByRole("heading", { name: "Sign in to Switchboard" }).waitFor({ timeout: 30_000 });
    expect(new URL(p.url()).origin).toBe(`http://127.0.0.1:${port}`);
    expect(await p.title()).toMatch(/Switchboard/);
    expect(pageErrors).toEqual([]);
  });

  it("exposes the app's version and platform on window.desktop", async () => {
    const manifest: unknown = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
    const version = typeof manifest === "object" && manifest !== null && "version" in manifest ? manifest.version : null;
    expect(await consolePage().evaluate("window.desktop")).toEqual({ version, platform: process.platform });
  });

  it("gives the page no Node and no new windows", async () => {
    const p = consolePage();
    expect(await p.evaluate("typeof require")).toBe("undefined");
    expect(await p.evaluate("typeof process")).toBe("undefined");
    expect(await p.evaluate("window.open('https://example.com/') === null")).toBe(true);
    expect(app?.windows()).toHaveLength(1);
  });
});

/** Containers often run tests as root, without a display. */
function platformArgs(): string[] {
  if (process.platform !== "linux") return [];
  const args: string[] = [];
  if (process.getuid?.() === 0) args.push("--no-sandbox");
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) args.push("--ozone-platform=headless");
  return args;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const found = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolvePort(found));
    });
  });
}
