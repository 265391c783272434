// The real desktop app under Playwright's Electron driver: it must start its server, open the
// console from it and expose window.desktop. Skipped, with a message, where no Electron binary exists.
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
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

  it("shows this install's own demo password on the sign-in page, never the documented one", async () => {
    const p = consolePage();
    const file = join(home, "config", "Switchboard", "demo-password");
    const password = (await readFile(file, "utf8")).trim();
    expect(password).not.toBe("switchboard");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await p.getByTestId("demo-password").filter({ hasText: password }).waitFor({ timeout: 10_000 });
    expect(await p.evaluate("window.desktop.demoPassword()")).toBe(password);
  });

  it("exposes the app's version and platform on window.desktop", async () => {
    const manifest: unknown = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
    const version = typeof manifest === "object" && manifest !== null && "version" in manifest ? manifest.version : null;
    const desktop = await consolePage().evaluate("({ version: window.desktop.version, platform: window.desktop.platform, keys: Object.keys(window.desktop).sort() })");
    expect(desktop).toEqual({ version, platform: process.platform, keys: ["closeNotification", "notify", "platform", "version"] });
  });

  it("shows a notification for window.desktop.notify and brings the window forward on its click", async () => {
    const electronApp = app;
    if (electronApp === undefined) throw new Error("beforeAll did not start the app");
    const p = consolePage();
    // Keep each Notification main shows: a native click cannot be made from here, so the test
    // emits the click Electron would. Hidden rather than minimised: headless Linux has no minimise.
    await electronApp.evaluate(({ Notification }) => {
      const kept: Electron.Notification[] = [];
      Object.assign(globalThis, { __notifications: kept });
      const show = Notification.prototype.show;
      Notification.prototype.show = function (this: Electron.Notification) {
        kept.push(this);
        show.call(this);
      };
    });
    const visible = () => electronApp.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]?.isVisible());
    await electronApp.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]?.hide());
    expect(await visible()).toBe(false);

    const outcome = p.evaluate("window.desktop.notify({ title: 'Text from Ada', body: 'Call me back', tag: 'text-e2e' })");
    const shown = await pollMain(electronApp, () => {
      const n = (globalThis as unknown as { __notifications: Electron.Notification[] }).__notifications.at(-1);
      return n === undefined ? undefined : { title: n.title, body: n.body };
    });
    expect(shown).toEqual({ title: "Text from Ada", body: "Call me back" });
    expect(await visible()).toBe(false);
    await electronApp.evaluate(() => {
      (globalThis as unknown as { __notifications: Electron.Notification[] }).__notifications.at(-1)?.emit("click");
    });
    expect(await outcome).toBe("click");
    expect(await visible()).toBe(true);

    // An urgent one (a call offer) brings a hidden window forward at once; the page can close it.
    await electronApp.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0]?.hide());
    const urgent = p.evaluate("window.desktop.notify({ title: 'Incoming call', body: 'Bob', tag: 'call-e2e', urgent: true })");
    await pollMain(electronApp, ({ BrowserWindow }) => (BrowserWindow.getAllWindows()[0]?.isVisible() === true ? true : undefined));
    await p.evaluate("window.desktop.closeNotification('call-e2e')");
    expect(await urgent).toBe("close");
  });

  it("refuses a bad notification from the page with a clear error", async () => {
    const p = consolePage();
    const refused = await p.evaluate("window.desktop.notify({ title: 'x'.repeat(5000), body: '', tag: 't' }).then(() => 'shown', (e) => String(e.message))");
    expect(refused).toMatch(/title must be 1 to 200 characters long/);
    const unknown = await p.evaluate("window.desktop.notify({ title: 'Call', body: '', tag: 't', icon: 'file:///etc/passwd' }).then(() => 'shown', (e) => String(e.message))");
    expect(unknown).toMatch(/no field "icon"/);
  });

  it("enforces the console's Content-Security-Policy: an injected inline script does not run", async () => {
    const p = consolePage();
    await p.evaluate(`(() => {
      const script = document.createElement("script");
      script.textContent = "globalThis.__injected = true";
      document.body.append(script);
    })()`);
    expect(await p.evaluate("globalThis.__injected")).toBeUndefined();
  });

  it("gives the page no Node and no new windows", async () => {
    const p = consolePage();
    expect(await p.evaluate("typeof require")).toBe("undefined");
    expect(await p.evaluate("typeof process")).toBe("undefined");
    expect(await p.evaluate("window.open('https://example.com/') === null")).toBe(true);
    expect(app?.windows()).toHaveLength(1);
  });
});

/** Runs `check` in the main process until it answers something other than undefined. */
async function pollMain<T>(electronApp: ElectronApplication, check: (electron: typeof Electron.CrossProcessExports) => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await electronApp.evaluate(check);
    if (value !== undefined) return value as T;
    if (Date.now() > end) throw new Error("timed out waiting for the main process");
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
