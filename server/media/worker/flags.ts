// The flags a media worker thread gets of its own, read once here by the pool that starts workers
// and by serve mode's entry that may start the first one before the server (early.ts): the same
// rule in both, so the entry starts no thread the pool could not adopt.

/**
 * The process flags a worker thread takes: profiling ones only. A preload meant for the main thread
 * (an --import that ends the process when stdin closes, say) must not run in it.
 */
export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  return execArgv.filter((a) => a.startsWith("--cpu-prof"));
}

/**
 * SWITCHBOARD_WORKER_SEMI_SPACE_MB (opt-in, for A/B runs; session 18): the young generation's
 * starting semi-space of the media workers' heaps, MB (V8 starts at 1 MB and grows it only when much
 * survives, so a worker that makes a little garbage per packet scavenges every second or two). V8's
 * flag is the process's: it is set before the first worker starts and applies to every isolate made
 * after (the workers; the main thread's heap is already made).
 */
export function workerSemiSpaceMb(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const mb = Number(env.SWITCHBOARD_WORKER_SEMI_SPACE_MB);
  return Number.isInteger(mb) && mb >= 1 && mb <= 64 ? mb : undefined;
}

/** Whether the pool's workers need flags of their own (then none is started before the pool). */
export function workerNeedsFlags(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): boolean {
  return workerExecArgv(execArgv).length > 0 || workerSemiSpaceMb(env) !== undefined;
}
