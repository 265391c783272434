// The sandboxed preload: exposes the small, read-only `window.desktop` bridge and nothing else.
// Sandboxed preloads run as CommonJS with only a few electron modules, hence no Node imports here.
import { contextBridge } from "electron";
import { versionFromArgv, type DesktopBridge } from "./desktop-bridge.js";

const desktop: DesktopBridge = {
  version: versionFromArgv(process.argv),
  platform: process.platform,
};

contextBridge.exposeInMainWorld("desktop", desktop);
