// The Electron main process: one instance, one console window, and the local server the window
// is served from, supervised in a utility process. Everything else in main/ is called from here.
import { app, dialog, ipcMain, Notification, utilityProcess, type BrowserWindow } from "electron";
import { loadConsole, openConsoleWindow } from "./console-window.js";
import { registerNotifications } from "./notifications.js";
import { registerDemoPassword } from "./demo-password.js";
import { ServerSupervisor, demoPasswordFile, serverArguments, serverEntry, serverPort } from "./server-process.js";

const mainDir = import.meta.dirname;
const QUIT_GRACE_MS = 3_000;

// On a loopback-only machine Chromium gathers no ICE candidates without it, and calls to the
// local PBX never connect. Switches only take effect before ready.
app.commandLine.appendSwitch("allow-loopback-in-peer-connection");

if (app.requestSingleInstanceLock()) {
  run();
} else {
  // A second copy would fight the first for the port and the data files; the first is focused instead.
  app.quit();
}

function run(): void {
  let window: BrowserWindow | null = null;
  let serverUrl: string | null = null;

  const showConsole = (url: string): void => {
    serverUrl = url;
    if (window === null) {
      const opened = openConsoleWindow({ mainDir, version: app.getVersion() }, url);
      opened.on("closed", () => {
        window = null;
      });
      window = opened;
    } else {
      // After a restart the page's sockets are dead and its state is stale: start it afresh.
      loadConsole(window, url);
    }
  };

  const supervisor = new ServerSupervisor({
    fork: (modulePath, args) => {
      const child = utilityProcess.fork(modulePath, args, {
        serviceName: "Switchboard server",
        // V8 takes its flags at the process's start: server/v8-flags.ts's SERVER_V8_FLAGS, written
        // out (main's bundle shares no module with the server's).
        execArgv: ["--no-memory-reducer"],
        stdio: ["ignore", "inherit", "pipe"],
      });
      child.stderr?.pipe(process.stderr, { end: false });
      return child;
    },
    modulePath: serverEntry(mainDir),
    args: serverArguments({
      port: serverPort(process.env.SWITCHBOARD_PORT),
      dataDir: app.getPath("userData"),
      isPackaged: app.isPackaged,
      resourcesPath: process.resourcesPath,
      appPath: app.getAppPath(),
    }),
    onReady: showConsole,
    onFatal: (message) => {
      dialog.showErrorBox("Switchboard could not start its local server", message);
      app.quit();
    },
    onTrouble: (message) => console.error(`[switchboard] ${message}`),
    now: Date.now,
    setTimer: (fire, ms) => {
      const timer = setTimeout(fire, ms);
      return () => clearTimeout(timer);
    },
  });

  registerDemoPassword({
    ipcMain,
    file: demoPasswordFile(app.getPath("userData")),
    consoleContents: () => (window === null || window.isDestroyed() ? null : window.webContents),
  });

  registerNotifications({
    ipcMain,
    create: (options) => new Notification(options),
    supported: () => Notification.isSupported(),
    window: () => window,
  });

  app.on("second-instance", () => {
    if (window === null) return;
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
  });

  void app.whenReady().then(() => {
    supervisor.start();
  });

  app.on("activate", () => {
    if (window === null && serverUrl !== null) showConsole(serverUrl);
  });

  app.on("window-all-closed", () => {
    if (process.platform !== "darwin") app.quit();
  });

  // Quit waits for the server to close its files and sockets; Electron reaps it if it lingers.
  let stopping = false;
  app.on("before-quit", (event) => {
    if (supervisor.stateName === "stopped") return;
    event.preventDefault();
    if (stopping) return;
    stopping = true;
    void supervisor.stop(QUIT_GRACE_MS).finally(() => app.quit());
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => app.quit());
}
