// Runs the built headless server (out/main/server.js) on a free port with a fresh data directory,
// for tests that need the real thing over HTTP; stop() ends it and removes the directory.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const SERVER_ENTRY = join(REPO_ROOT, "out/main/server.js");

export interface ServeOptions {
  /** Extra command-line arguments after --port 0 --data-dir D. */
  args?: string[];
  /**
   * How long to wait for the URL line. 45 s by default: a first start (seeding the demo account)
   * took over 20 s, the old default, niced on the shared 2-core machine at load 15-25 (session 15),
   * and a hook has 60 s in all.
   */
  timeoutMs?: number;
  /**
   * Runs the server on a clock this test can move (`--clock controllable`, over an IPC channel):
   * true, or the virtual time to start at (a restart carries the time on).
   */
  clock?: boolean | { startMs: number };
  /** Node's own flags for the server's process, before the entry (e.g. another `--import`). */
  nodeArgs?: string[];
}

/** The served server's clock, when serve() was given `clock`; each call answers its time after. */
export interface ServedClock {
  /** Moves the server's time on by `ms`, each timer falling due running at its own time in order. */
  advance(ms: number): Promise<number>;
  /** Moves the server's time on by `ms` at once; what fell due runs in order, at the new time. */
  jump(ms: number): Promise<number>;
  now(): Promise<number>;
}

export interface Served {
  url: string;
  dataDir: string;
  /** The server's process id. */
  pid: number;
  /** Everything the server printed so far, for failure messages. */
  output(): string;
  stop(): Promise<void>;
  /** SIGKILL, as a crash or the OOM killer would: no shutdown runs; resolves once it is gone. */
  kill(): Promise<void>;
  /** Moves the server's clock; rejects unless serve() was given `clock`. */
  clock: ServedClock;
}

// Port 0 itself must not count: only the port the server really listens on.
// The banner line, not a log line: other listeners (the events port) log their own URLs first.
const URL_LINE = /Switchboard is serving (http:\/\/127\.0\.0\.1:[1-9]\d*)/;

// Preloaded into the server: when the test process's end of the server's stdin closes, the server
// shuts itself down. A test worker that dies without stop() (crashed, killed, or ended by the
// runner before afterAll) would otherwise leave an orphan holding a port; an "exit" handler in
// the worker is not enough, since a worker ended by a signal never runs it.
const END_WITH_PARENT = `data:text/javascript,${encodeURIComponent(
  'process.stdin.on("end", () => process.kill(process.pid, "SIGTERM")); process.stdin.resume();',
)}`;
const STOP_GRACE_MS = 10_000;

export async function serve(options: ServeOptions = {}): Promise<Served> {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run npm run build first`);
  const timeoutMs = options.timeoutMs ?? 45_000;
  const dataDir = await mkdtemp(join(tmpdir(), "switchboard-test-"));
  const clockArgs = options.clock === undefined || options.clock === false ? [] : ["--clock", options.clock === true ? "controllable" : `controllable@${Math.round(options.clock.startMs)}`];
  const args = ["--import", END_WITH_PARENT, ...(options.nodeArgs ?? []), SERVER_ENTRY, "--port", "0", "--events-port", "0", "--data-dir", dataDir, ...clockArgs, ...(options.args ?? [])];
  // The IPC channel only for a movable clock: the server refuses --clock controllable without one.
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: clockArgs.length ? ["pipe", "pipe", "pipe", "ipc"] : ["pipe", "pipe", "pipe"] });

  let output = "";
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? `code ${code ?? "?"}`));
  });

  const clock = clockOver(child, clockArgs.length > 0, exited);

  const removeDataDir = () => rm(dataDir, { recursive: true, force: true });

  async function stop(): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    await removeDataDir();
  }

  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`server printed no URL within ${timeoutMs} ms; its output:\n${output}`)),
        timeoutMs,
      );
      const onOutput = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        const match = URL_LINE.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1] ?? "");
        }
      };
      child.stdout?.on("data", onOutput);
      child.stderr?.on("data", onOutput);
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      void exited.then((how) => {
        clearTimeout(timer);
        reject(new Error(`server exited (${how}) before printing its URL; its output:\n${output}`));
      });
    });
  } catch (err) {
    await stop();
    throw err;
  }

  async function kill(): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
    await removeDataDir();
  }

  return { url, dataDir, pid: child.pid ?? 0, output: () => output, stop, kill, clock };
}

interface ClockAnswer {
  switchboardClock: { id: number; now?: number; error?: string };
}

function isClockAnswer(message: unknown): message is ClockAnswer {
  return typeof message === "object" && message !== null && "switchboardClock" in message;
}

/** The clock requests of server/clock-serve.ts over the child's IPC channel, each answered by id. */
function clockOver(child: ChildProcess, enabled: boolean, exited: Promise<string>): ServedClock {
  let nextId = 1;
  const waiting = new Map<number, { resolve: (now: number) => void; reject: (err: Error) => void }>();
  if (enabled) {
    child.on("message", (message: unknown) => {
      if (!isClockAnswer(message)) return;
      const { id, now, error } = message.switchboardClock;
      const request = waiting.get(id);
      waiting.delete(id);
      if (error !== undefined || now === undefined) request?.reject(new Error(`the server's clock refused: ${error ?? "no time in the answer"}`));
      else request?.resolve(now);
    });
    void exited.then((how) => {
      for (const request of waiting.values()) request.reject(new Error(`the server exited (${how}) before moving its clock`));
      waiting.clear();
    });
  }
  const ask = (op: "advance" | "jump" | "now", ms?: number): Promise<number> => {
    if (!enabled) return Promise.reject(new Error("serve() was not given `clock`: the server's clock cannot be moved"));
    const id = nextId++;
    return new Promise<number>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      child.send({ switchboardClock: { id, op, ...(ms === undefined ? {} : { ms }) } });
    });
  };
  return { advance: (ms) => ask("advance", ms), jump: (ms) => ask("jump", ms), now: () => ask("now") };
}

export interface DemoGrant {
  token: string;
  accountId: string;
  ownerId: string;
}

/** Signs a demo user (password `switchboard`) in over HTTP, as a script would: PUT /v2/user_auth. */
export async function demoGrant(url: string, username = "admin"): Promise<DemoGrant> {
  const credentials = createHash("md5").update(`${username}:switchboard`).digest("hex");
  const res = await fetch(`${url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials, account_name: "demo" } }),
  });
  if (res.status !== 201) throw new Error(`signing ${username} in answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { auth_token: string; data: { account_id: string; owner_id: string } };
  return { token: body.auth_token, accountId: body.data.account_id, ownerId: body.data.owner_id };
}
