// Serve mode: `node out/main/server.js [--port N] [--data-dir D] ...` runs the server alone,
// for scripts, CI, browsers, and as the child Electron's main process forks.
import { fileURLToPath } from "node:url";
import { ConfigError, DEFAULT_PORT, LOOPBACK, USAGE, defaultDataDir, defaultMediaWorkers, parseArgs, wantsHelp, type ServerConfig } from "./config.js";
import { systemClock } from "./clock.js";
import { controlledClock, takeClockOption } from "./clock-serve.js";
import { SERVING_EVENT } from "./code-cache.js";
import { DEMO_LOGINS, DEMO_PASSWORD } from "./demo.js";
import { startServer } from "./index.js";

interface ParentPort {
  postMessage(message: unknown): void;
}

// Set by Electron when this file runs in a utilityProcess; absent under plain Node.
const parentPort = (process as NodeJS.Process & { parentPort?: ParentPort }).parentPort;

const defaults: ServerConfig = {
  host: LOOPBACK,
  port: DEFAULT_PORT,
  portExplicit: false,
  dataDir: defaultDataDir(),
  // The built file is out/main/server.js: the renderer sits at out/renderer, assets at the root.
  assetsDir: fileURLToPath(new URL("../../assets", import.meta.url)),
  rendererDir: fileURLToPath(new URL("../renderer", import.meta.url)),
  demo: true,
  allowOrigins: [],
  logLevel: "info",
  mediaWorkers: defaultMediaWorkers(),
};

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return;
  }
  let config: ServerConfig;
  try {
    // A test harness's clock (server/clock-serve.ts): taken out before the options parseArgs knows.
    const clock = takeClockOption(argv, (message) => new ConfigError(message));
    config = parseArgs(clock.argv, defaults);
    if (clock.controllable) config = { ...config, clock: controlledClock(process, clock.controllable, (message) => new ConfigError(message)), mediaClock: systemClock };
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`switchboard: ${err.message} (--help lists the options)\n`);
      process.exit(2);
    }
    throw err;
  }
  // Everything this process creates (collections, journals, events, recordings) is its owner's
  // alone: the data directory holds the API key, password digests and SIP passwords.
  process.umask(0o077);
  // Listened for before starting, so a stop never meets Node's default (exit at once, no flush,
  // the lock left behind); one asked for while the server starts waits for it.
  const starting = startServer(config);
  const stop = (signal: string): void => {
    void starting.then((server) => {
      server.logger.info(`${signal}: shutting down`);
      server.close().then(
        () => process.exit(0),
        (err: unknown) => {
          server.logger.error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
    }, () => undefined);
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  const server = await starting;
  const lines = [
    `Switchboard is serving ${server.url}`,
    `  data: ${config.dataDir}`,
    `  SIP over WebSocket: ${server.url.replace(/^http/, "ws")}/sip; events: ${server.url.replace(/^http/, "ws")}/events${
      server.eventsPort ? ` (also port ${server.eventsPort})` : ""
    }`,
    ...(config.demo
      ? [
          `  demo account "demo", ${config.demoPasswordFile === undefined ? `password "${DEMO_PASSWORD}"` : `password in ${config.demoPasswordFile}`} for users: ${DEMO_LOGINS.map((l) => l.username).join(", ")}`,
        ]
      : []),
    ...(config.allowOrigins.length ? [`  consoles also allowed from: ${config.allowOrigins.join(", ")}`] : []),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  parentPort?.postMessage({ type: "ready", url: server.url });
  // The built entry (server/boot.ts) writes its code cache now, if it has to.
  const processEvents: NodeJS.EventEmitter = process;
  processEvents.emit(SERVING_EVENT);
}

main().catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  const hint = (err as NodeJS.ErrnoException).code === "EADDRINUSE" ? " (the port is taken; pick another with --port)" : "";
  process.stderr.write(`switchboard: cannot start: ${message}${hint}\n`);
  parentPort?.postMessage({ type: "error", message });
  process.exit(1);
});
