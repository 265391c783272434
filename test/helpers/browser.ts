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

/** `extraArgs`: e.g. `--use-file-for-fake-audio-capture=tone.wav` to give this browser's microphone a known tone. */
export async function launchBrowser(extraArgs: string[] = []): Promise<LaunchedBrowser> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package`);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...extraArgs] });
  return { browser, close: () => browser.close() };
}
