// The sandboxed preload: exposes the small `window.desktop` bridge and nothing else: the app's
// version and platform, desktop notifications, shown by main (notifications.ts) over IPC, and
// this install's demo password (demo-password.ts).
// Sandboxed preloads run as CommonJS with only a few electron modules, hence no Node imports here.
import { contextBridge, ipcRenderer } from "electron";
import { DEMO_PASSWORD_CHANNEL, versionFromArgv, type DesktopBridge } from "./desktop-bridge.js";
import { CLOSE_NOTIFICATION_CHANNEL, NOTIFY_CHANNEL, type NotificationOutcome } from "./notifications.js";

const desktop: DesktopBridge = {
  version: versionFromArgv(process.argv),
  platform: process.platform,
  // One argument each, passed on as given: main checks it (the page is untrusted).
  notify: (notification) => ipcRenderer.invoke(NOTIFY_CHANNEL, notification) as Promise<NotificationOutcome>,
  closeNotification: async (tag) => {
    await ipcRenderer.invoke(CLOSE_NOTIFICATION_CHANNEL, tag);
  },
  demoPassword: () => ipcRenderer.invoke(DEMO_PASSWORD_CHANNEL) as Promise<string | null>,
};

contextBridge.exposeInMainWorld("desktop", desktop);
