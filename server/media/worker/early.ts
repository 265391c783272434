// A media worker started by serve mode's entry (server/boot.ts) before the server's bundle is even
// compiled, so werift loads on its own thread while the main thread compiles and starts the server:
// the first call after a start otherwise waited in the first worker's queue while it loaded (session
// 18: 46-107 ms quiet, up to 878 ms at load 10-15). The worker has no configuration yet (the
// address its legs bind is the server's to decide): it loads werift and makes its certificate, and
// the media worker pool's first worker adopts it, sending the configuration as its first message,
// after which it rehearses an offer and says it is ready, as a worker the pool started does.
// Nothing adopts it when the server takes no media workers; it is unref'd, so it keeps no process up.

import { Worker } from "node:worker_threads";
import { workerNeedsFlags } from "./flags.js";

const KEY = Symbol.for("switchboard.earlyMediaWorker");

interface Early {
  worker: Worker;
  /** The thread failed or ended before it was adopted: the pool starts a worker of its own. */
  gone: boolean;
}

type Holder = { [KEY]?: Early };

/**
 * Whether serve mode's command line leaves the server media workers (the flag's value is read as
 * the server reads it: `--media-workers N` or `--media-workers=N`; help prints and exits).
 */
export function wantsMediaWorkers(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h" || arg === "--version") return false;
    const value = arg === "--media-workers" ? argv[i + 1] : arg.startsWith("--media-workers=") ? arg.slice("--media-workers=".length) : undefined;
    if (value !== undefined && Number(value) === 0) return false;
  }
  return true;
}

/**
 * Starts the early worker from `script` (the built media-worker.js), once per process; not when the
 * pool's workers need flags of their own (flags.ts: a CPU profile, a semi-space size), which this
 * thread would lack. It takes none of the process's own flags (a preload given with --import runs in
 * the process, not in its media threads).
 */
export function startEarlyMediaWorker(script: URL, env: NodeJS.ProcessEnv = process.env): void {
  const holder = globalThis as Holder;
  if (holder[KEY]) return;
  if (workerNeedsFlags(env)) return;
  const worker = new Worker(script, { execArgv: [] });
  worker.unref();
  const early: Early = { worker, gone: false };
  // Until it is adopted its failure is noted here (an 'error' with no listener would throw).
  const onGone = (): void => {
    early.gone = true;
  };
  worker.on("error", onGone);
  worker.once("exit", onGone);
  holder[KEY] = early;
}

/** The early worker's thread while it waits to be adopted (for diagnostics and tests). */
export function earlyMediaWorker(): { threadId: number } | undefined {
  const early = (globalThis as Holder)[KEY];
  return early ? { threadId: early.worker.threadId } : undefined;
}

/** The early worker, once, if one was started and is still alive; the caller owns it from then. */
export function takeEarlyMediaWorker(): Worker | undefined {
  const holder = globalThis as Holder;
  const early = holder[KEY];
  if (!early) return undefined;
  delete holder[KEY];
  early.worker.removeAllListeners("error");
  early.worker.removeAllListeners("exit");
  if (early.gone) {
    void early.worker.terminate();
    return undefined;
  }
  return early.worker;
}
