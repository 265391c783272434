// Server configuration: defaults and the command-line flags of serve mode.
import { availableParallelism, homedir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import type { Clock, RandomSource } from "./clock.js";
import type { CallSignalling } from "./sip/call-signalling.js";
import type { EventSocketLimits } from "./events/websocket.js";
import type { MediaEngineOptions } from "./media/index.js";

export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";

export interface ServerConfig {
  /** Address to listen on; 127.0.0.1 unless asked otherwise. */
  host: string;
  /** 8000 by default, 0 for a random free port. */
  port: number;
  /** True when the port was chosen by the user; then a taken port is an error, not a fall-back. */
  portExplicit: boolean;
  /** The event websocket's classic port, 5555 when absent, 0 for a random free one. */
  eventsPort?: number;
  dataDir: string;
  /** Where hold music and other shipped media live. */
  assetsDir: string;
  /** The built renderer to serve at `/`; null serves nothing. */
  rendererDir: string | null;
  /** Seed the demo account on first run. */
  demo: boolean;
  /**
   * Seed the demo users with this install's random password kept in this file (made 0600 on
   * first run) rather than the documented one: the desktop app's choice (issue 14).
   */
  demoPasswordFile?: string;
  /** Origins of consoles served elsewhere that may use this server. */
  allowOrigins: string[];
  logLevel: LogLevel;
  /** Seconds a token lives without use (each use slides the window). */
  tokenTtlS?: number;
  clock?: Clock;
  /** The clock the media legs' timeouts run on: `clock` unless set (serve mode's --clock controllable keeps them on real time). */
  mediaClock?: Clock;
  random?: RandomSource;
  /** A logger to use instead of one made from logLevel (tests capture warnings with it). */
  logger?: Logger;
  /** Milliseconds between a failed webhook attempt and its retry; 2 s unless tests shorten it. */
  webhookRetryDelayMs?: number;
  /** Milliseconds a webhook receiver has to answer before the attempt fails; 10 s by default. */
  webhookTimeoutMs?: number;
  /** Calls come and go through this instead of SIP (tests drive the call engine with it). */
  callSignalling?: CallSignalling;
  /**
   * Media worker threads for the calls' audio legs (0: all in the main thread, the default here).
   * Serve mode and the app start with defaultMediaWorkers(), one per core, for capacity.
   */
  mediaWorkers?: number;
  /** The frame clock's time source and the media load rule (tests make the clock late by hand). */
  media?: Pick<MediaEngineOptions, "frameClock" | "load">;
  /**
   * Milliseconds a logged-in queue recipient may have no queue device registered before they get
   * no offers (unavailable_reason no_device); 10 s unless a test shortens it.
   */
  deviceGraceMs?: number;
  /** The event websocket's bounds (idle window, sockets, bindings); the defaults unless set. */
  eventSockets?: Partial<EventSocketLimits>;
}

export const DEFAULT_PORT = 8000;
export const DEFAULT_EVENTS_PORT = 5555;
export const LOOPBACK = "127.0.0.1";

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWITCHBOARD_DATA) return env.SWITCHBOARD_DATA;
  // The same folder Electron uses as userData on Linux, so serve mode and the app share data.
  const configHome = env.XDG_CONFIG_HOME ?? join(homedir(), ".config");
  return join(configHome, "Switchboard");
}

/** Serve mode's media workers when --media-workers is not given: one per core. */
export function defaultMediaWorkers(): number {
  return availableParallelism();
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** What `--help` prints: every flag parseArgs reads, with its default. */
export const USAGE = `Usage: node out/main/server.js [options]   (npm run serve -- [options])

Runs the Switchboard server alone and serves the console at its URL.

Options:
  --port N              port to listen on; 0 picks a free one (default 8000, or the next free port)
  --events-port N       the event websocket's own port; 0 picks a free one (default 5555)
  --host H              address to listen on (default 127.0.0.1; others are announced with a warning)
  --data-dir D          where the documents and attachments live
                        (default $SWITCHBOARD_DATA, else ~/.config/Switchboard)
  --no-demo             start empty, without the demo account
  --demo-password-file F
                        give the demo users a random password kept in F (readable by
                        you only, made on first run) instead of the documented one
  --allow-origin O      a console origin allowed to use this server; repeatable
  --log-level L         ${LOG_LEVELS.join(", ")} (default info)
  --token-ttl S         seconds a token lives without use (default 3600)
  --media-workers N     media worker threads, 0..64 (default: one per core)
  --device-grace S      seconds a logged-in agent may have no phone registered before they
                        get no queue calls (default 10; fractions allowed)
  --events-idle S       seconds an event socket may hold no subscription before it is closed,
                        and how often subscribed ones are pinged (default 30; fractions allowed)
  --events-max-sockets N
                        event sockets open at once (default 512)
  --events-max-per-account N
                        event sockets bound to one account at once (default 100)
  --assets-dir D        shipped media (default: beside the build)
  --renderer-dir D      the built console (default: beside the build)
  -h, --help            print this and exit

Environment: SWITCHBOARD_DATA (the data folder, as above); SWITCHBOARD_CODE_CACHE, where the built
server keeps its compiled code between starts (default $XDG_CACHE_HOME or ~/.cache, then
Switchboard/code-cache; "off" for none)
`;

/** Whether the command line asks for the usage text rather than a server. */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.some((arg) => arg === "--help" || arg === "-h");
}

/** Parse serve-mode flags over the given defaults. Unknown flags are errors. */
export function parseArgs(argv: readonly string[], defaults: ServerConfig): ServerConfig {
  const config: ServerConfig = { ...defaults, allowOrigins: [...defaults.allowOrigins] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === "") throw new ConfigError(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case "--port":
        config.port = portNumber(flag, value());
        config.portExplicit = true;
        break;
      case "--events-port":
        config.eventsPort = portNumber(flag, value());
        break;
      case "--host":
        config.host = value();
        break;
      case "--data-dir":
        config.dataDir = value();
        break;
      case "--assets-dir":
        config.assetsDir = value();
        break;
      case "--renderer-dir":
        config.rendererDir = value();
        break;
      case "--no-demo":
        config.demo = false;
        break;
      case "--demo-password-file":
        config.demoPasswordFile = value();
        break;
      case "--allow-origin": {
        const v = value();
        let url: URL;
        try {
          url = new URL(v);
        } catch {
          throw new ConfigError(`--allow-origin must be an origin such as http://host:port, not ${v}`);
        }
        config.allowOrigins.push(url.origin);
        break;
      }
      case "--token-ttl": {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) < 1) throw new ConfigError(`--token-ttl must be a whole number of seconds, not ${v}`);
        config.tokenTtlS = Number(v);
        break;
      }
      case "--media-workers": {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) > 64) throw new ConfigError(`--media-workers must be a whole number 0..64, not ${v}`);
        config.mediaWorkers = Number(v);
        break;
      }
      case "--device-grace": {
        const v = value();
        if (!/^\d+(\.\d+)?$/.test(v)) throw new ConfigError(`--device-grace must be a number of seconds such as 10 or 0.5, not ${v}`);
        config.deviceGraceMs = Math.round(Number(v) * 1000);
        break;
      }
      case "--events-idle": {
        const v = value();
        if (!/^\d+(\.\d+)?$/.test(v) || Number(v) < 0.1) throw new ConfigError(`--events-idle must be a number of seconds, at least 0.1, such as 30 or 0.5, not ${v}`);
        config.eventSockets = { ...config.eventSockets, idleMs: Math.round(Number(v) * 1000) };
        break;
      }
      case "--events-max-sockets":
        config.eventSockets = { ...config.eventSockets, maxSockets: positiveCount(flag, value()) };
        break;
      case "--events-max-per-account":
        config.eventSockets = { ...config.eventSockets, maxPerAccount: positiveCount(flag, value()) };
        break;
      case "--log-level": {
        const v = value();
        const level = LOG_LEVELS.find((l) => l === v);
        if (!level) throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(", ")}`);
        config.logLevel = level;
        break;
      }
      default:
        throw new ConfigError(`unknown option ${arg}`);
    }
  }
  return config;
}

function positiveCount(flag: string, v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 1_000_000) throw new ConfigError(`${flag} must be a whole number 1..1000000, not ${v}`);
  return Number(v);
}

function portNumber(flag: string, v: string): number {
  const port = Number(v);
  if (!/^\d+$/.test(v) || port > 65535) throw new ConfigError(`${flag} must be 0..65535, not ${v}`);
  return port;
}
