// Launches Debian's Chromium through playwright-core with the flags every browser test needs
// (headless, no sandbox in containers, fake media devices for WebRTC). Never downloads a browser.
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--use-fake-ui-for-media-stream",
  "--use-fake-device-for-media-stream",
  "--allow-loopback-in-peer-connection",
  "--autoplay-policy=no-user-gesture-required",
];

export interface LaunchedBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * The WebSocket endpoint of a Chromium shared by the files of a test run (the serial tier's
 * globalSetup, test/helpers/shared-chromium.ts, launches it with CHROMIUM_ARGS). Set it to `off`
 * before the run to give each file a Chromium of its own again.
 */
export const SHARED_CHROMIUM_ENV = "SWITCHBOARD_SHARED_CHROMIUM";

/**
 * Set to `1` (vitest.config.ts does, for the serial-browser project, whose files share one process):
 * launchBrowser() without extra flags launches one Chromium for this process, at its first call,
 * and hands each caller that same browser; close() closes the contexts opened since the call (the
 * caller's pages) and leaves the browser running for the next file. The shared Chromium of the
 * tier's globalSetup is reached over a WebSocket through the vitest main process, which relays
 * every protocol message (bench/README.md, "suite-cpu"): a Chromium of the process's own is
 * driven over its pipe, with no relay.
 */
export const CHROMIUM_IN_PROCESS_ENV = "SWITCHBOARD_CHROMIUM_IN_PROCESS";

const IN_PROCESS = Symbol.for("switchboard.processChromium");
const processHolder = globalThis as { [IN_PROCESS]?: Promise<Browser> };

/** This process's own Chromium, launched at the first ask (again if it was closed or crashed). */
async function processChromium(): Promise<Browser> {
  const launched = processHolder[IN_PROCESS];
  if (launched !== undefined) {
    const browser = await launched.catch(() => undefined);
    if (browser?.isConnected() === true) return browser;
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package`);
  const launching = chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  processHolder[IN_PROCESS] = launching;
  return launching;
}

/**
 * `extraArgs`: e.g. `--use-file-for-fake-audio-capture=tone.wav` to give this browser's microphone
 * a known tone. Without extra flags, in a process with a Chromium of its own
 * (CHROMIUM_IN_PROCESS_ENV), that one; else, inside a run that shares a Chromium, this connects to it: the
 * caller's pages then live in contexts of its own connection, and close() closes them all and
 * disconnects (the shared Chromium runs on). Otherwise a Chromium of its own, closed by close().
 */
export async function launchBrowser(extraArgs: string[] = []): Promise<LaunchedBrowser> {
  if (process.env[CHROMIUM_IN_PROCESS_ENV] === "1" && extraArgs.length === 0) {
    const browser = await processChromium();
    const before = new Set(browser.contexts());
    return {
      browser,
      close: async () => {
        await Promise.all(browser.contexts().filter((context) => !before.has(context)).map((context) => context.close()));
      },
    };
  }
  const shared = process.env[SHARED_CHROMIUM_ENV];
  if (shared?.startsWith("ws://") === true && extraArgs.length === 0) {
    const browser = await chromium.connect(shared);
    return { browser, close: () => browser.close() };
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package`);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...extraArgs] });
  return { browser, close: () => browser.close() };
}
