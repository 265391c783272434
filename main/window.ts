// Options for the console window: one hardened BrowserWindow whose renderer gets nothing from
// Node, only the sandboxed preload. Pure, so tests can check the hardening without Electron.
import { join } from "node:path";
import type { BrowserWindowConstructorOptions } from "electron";
import { versionArgument } from "./desktop-bridge.js";

export interface WindowInputs {
  /** The directory holding the built main process (`out/main`); the preload is built beside it. */
  mainDir: string;
  /** The app version, handed to the preload on its command line. */
  version: string;
}

export function preloadPath(mainDir: string): string {
  return join(mainDir, "..", "preload", "preload.cjs");
}

export function windowOptions(inputs: WindowInputs): BrowserWindowConstructorOptions {
  return {
    title: "Switchboard",
    width: 1280,
    height: 820,
    minWidth: 960,
    minHeight: 600,
    // Shown on ready-to-show, so the agent never sees an empty white frame.
    show: false,
    autoHideMenuBar: true,
    webPreferences: {
      preload: preloadPath(inputs.mainDir),
      additionalArguments: [versionArgument(inputs.version)],
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      // A softphone must ring and keep its SIP registration fresh while minimised; Chromium's
      // timer throttling in hidden windows would delay both.
      backgroundThrottling: false,
    },
  };
}
