// Supervises the local server in an Electron utility process: forks it, waits for its "ready"
// message, restarts it with a growing back-off when it dies, and stops it with SIGTERM on quit.
import { join } from "node:path";

/** The part of Electron's UtilityProcess the supervisor uses; a fake stands in for it in tests. */
export interface ServerChild {
  on(event: "message", listener: (message: unknown) => void): unknown;
  on(event: "exit", listener: (code: number) => void): unknown;
  kill(): boolean;
  /** Piped, so a failed first start can show the server's own last words. */
  readonly stderr: NodeJS.ReadableStream | null;
}

export type ForkServer = (modulePath: string, args: string[]) => ServerChild;

export interface ServerLocation {
  port: number;
  dataDir: string;
  isPackaged: boolean;
  resourcesPath: string;
  appPath: string;
}

/**
 * The console's origin is part of where the browser keeps its storage and permissions, so the
 * port stays fixed; a random port would log the agent out and re-ask for the microphone.
 */
export const SERVER_PORT = 8000;

/**
 * `SWITCHBOARD_PORT` moves the whole app (a second copy for a trainer, an isolated test run);
 * anything that is not a port falls back to the fixed one.
 */
export function serverPort(fromEnv: string | undefined): number {
  const port = Number(fromEnv);
  return Number.isInteger(port) && port > 0 && port < 65_536 ? port : SERVER_PORT;
}

export function serverEntry(mainDir: string): string {
  return join(mainDir, "server.js");
}

/** Assets ship as loose files beside app.asar in a package (extraResources), in the tree otherwise. */
export function assetsDir(location: Pick<ServerLocation, "isPackaged" | "resourcesPath" | "appPath">): string {
  return location.isPackaged ? join(location.resourcesPath, "assets") : join(location.appPath, "assets");
}

/**
 * Where the desktop app keeps this install's demo password: in its data directory, readable by
 * the user only. The documented serve-mode password would let any account on the machine sign
 * in on 127.0.0.1 as the demo admin.
 */
export function demoPasswordFile(dataDir: string): string {
  return join(dataDir, "demo-password");
}

export function serverArguments(location: ServerLocation): string[] {
  return [
    "--port",
    String(location.port),
    "--data-dir",
    location.dataDir,
    "--assets-dir",
    assetsDir(location),
    "--demo-password-file",
    demoPasswordFile(location.dataDir),
  ];
}

export interface SupervisorOptions {
  fork: ForkServer;
  modulePath: string;
  args: string[];
  /** Called on every "ready": the first start and each restart. */
  onReady: (url: string) => void;
  /** Called when the very first start fails: nothing was ever served, so retrying would hide the cause. */
  onFatal: (message: string) => void;
  /** Called for a crash or a failed restart; the supervisor retries by itself. */
  onTrouble: (message: string) => void;
  now: () => number;
  setTimer: (run: () => void, ms: number) => () => void;
  /** Delays before successive restarts; the last one repeats. */
  backoffMs?: readonly number[];
  /** A server up this long counts as healthy again, and the back-off starts over. */
  healthyAfterMs?: number;
  /** A server that has not said "ready" by then is killed and treated as crashed. */
  readyTimeoutMs?: number;
}

const STDERR_TAIL_CHARS = 2_000;

/*
 * The supervisor's states:
 *
 *   idle --start--> starting --ready--> running --exit--> waiting --timer--> starting ...
 *                      |                                     ^
 *                      +--exit, after an earlier ready-------+
 *                      +--exit, never ready yet--> failed
 *   starting | running --stop--> stopping --exit or grace over--> stopped
 *   idle | waiting | failed --stop--> stopped
 */
type State =
  | { name: "idle" }
  | { name: "starting"; child: ServerChild; cancelTimeout: () => void }
  | { name: "running"; child: ServerChild; since: number }
  | { name: "waiting"; cancel: () => void }
  | { name: "stopping"; child: ServerChild; exited: Promise<void> }
  | { name: "stopped" }
  | { name: "failed" };

export class ServerSupervisor {
  private state: State = { name: "idle" };
  private everReady = false;
  private failures = 0;
  private lastError: string | null = null;
  private stderrTail = "";
  private readonly exitWaiters = new Map<ServerChild, () => void>();
  private readonly backoffMs: readonly number[];
  private readonly healthyAfterMs: number;
  private readonly readyTimeoutMs: number;

  constructor(private readonly options: SupervisorOptions) {
    this.backoffMs = options.backoffMs ?? [500, 1_000, 2_000, 5_000, 10_000];
    this.healthyAfterMs = options.healthyAfterMs ?? 30_000;
    this.readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  }

  get stateName(): State["name"] {
    return this.state.name;
  }

  start(): void {
    if (this.state.name !== "idle") throw new Error(`server supervisor cannot start from ${this.state.name}`);
    this.spawn();
  }

  /** Sends SIGTERM and waits up to `graceMs` for the exit; Electron reaps a straggler on quit. */
  async stop(graceMs: number): Promise<void> {
    const state = this.state;
    switch (state.name) {
      case "starting":
      case "running": {
        if (state.name === "starting") state.cancelTimeout();
        const exited = new Promise<void>((resolve) => this.exitWaiters.set(state.child, resolve));
        this.state = { name: "stopping", child: state.child, exited };
        state.child.kill();
        await this.withGrace(exited, graceMs);
        this.state = { name: "stopped" };
        return;
      }
      case "stopping":
        await this.withGrace(state.exited, graceMs);
        return;
      case "waiting":
        state.cancel();
        this.state = { name: "stopped" };
        return;
      case "idle":
      case "failed":
        this.state = { name: "stopped" };
        return;
      case "stopped":
        return;
    }
  }

  private spawn(): void {
    const child = this.options.fork(this.options.modulePath, this.options.args);
    const cancelTimeout = this.options.setTimer(() => this.onReadyTimeout(child), this.readyTimeoutMs);
    this.state = { name: "starting", child, cancelTimeout };
    child.stderr?.on("data", (chunk: Buffer | string) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    child.on("message", (message) => this.onMessage(child, message));
    child.on("exit", (code) => this.onExit(child, code));
  }

  private onMessage(child: ServerChild, message: unknown): void {
    const state = this.state;
    if (!("child" in state) || state.child !== child) return;
    if (isReadyMessage(message) && state.name === "starting") {
      state.cancelTimeout();
      this.everReady = true;
      this.state = { name: "running", child, since: this.options.now() };
      this.options.onReady(message.url);
    } else if (isErrorMessage(message)) {
      this.report(`server error: ${message.message}`);
    }
  }

  private onReadyTimeout(child: ServerChild): void {
    if (this.state.name !== "starting" || this.state.child !== child) return;
    this.report(`server did not report ready within ${this.readyTimeoutMs} ms`);
    child.kill();
  }

  private onExit(child: ServerChild, code: number): void {
    this.exitWaiters.get(child)?.();
    this.exitWaiters.delete(child);
    const state = this.state;
    if (state.name === "stopping" || !("child" in state) || state.child !== child) return;
    if (state.name === "starting") state.cancelTimeout();
    if (state.name === "running" && this.options.now() - state.since >= this.healthyAfterMs) this.failures = 0;
    if (!this.everReady) {
      this.state = { name: "failed" };
      // The "error" message can be lost when the server exits right after posting it; stderr is not.
      const said = this.lastError ?? this.stderrTail.trim();
      this.options.onFatal(said === "" ? `server exited with code ${code} before it was ready` : said);
      return;
    }
    this.options.onTrouble(`server exited with code ${code}; restarting`);
    const delay = this.backoffMs[Math.min(this.failures, this.backoffMs.length - 1)] ?? 0;
    this.failures += 1;
    const cancel = this.options.setTimer(() => {
      if (this.state.name === "waiting") this.spawn();
    }, delay);
    this.state = { name: "waiting", cancel };
  }

  private report(message: string): void {
    this.lastError = message;
    if (this.everReady) this.options.onTrouble(message);
  }

  private async withGrace(exited: Promise<void>, graceMs: number): Promise<void> {
    let cancel = (): void => undefined;
    const timedOut = new Promise<void>((resolve) => {
      cancel = this.options.setTimer(resolve, graceMs);
    });
    await Promise.race([exited, timedOut]);
    cancel();
  }
}

function isReadyMessage(message: unknown): message is { type: "ready"; url: string } {
  return isRecord(message) && message.type === "ready" && typeof message.url === "string";
}

function isErrorMessage(message: unknown): message is { type: "error"; message: string } {
  return isRecord(message) && message.type === "error" && typeof message.message === "string";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
