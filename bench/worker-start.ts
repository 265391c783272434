// A media worker's start (issue 17, "Start"): CPU time and wall time from a process starting one
// built media worker (out/main/media-worker.js, as server/media/worker/pool.ts does) to the
// worker's "ready" (werift loaded, its DTLS certificate made and a first offer rehearsed), for
// several builds side by side, the runs alternating. Each build gets a code cache folder of its own,
// filled by one untimed start first (as every start after an install's first). CPU is the whole
// child process's (user + system, both threads) at "ready", minus nothing: the same node start is
// in every figure, so differences are the worker's. BENCH_WORKER_JS: the builds' media-worker.js
// files, separated by commas (default this checkout's); BENCH_RUNS: runs of each (default 15).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { percentile, report } from "./report.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const root = join(import.meta.dirname, "..");
const workers = (process.env.BENCH_WORKER_JS ?? join(root, "out/main/media-worker.js")).split(",");

// The child: starts the worker, and at its "ready" prints its own CPU and the wall time since the
// Worker was made, then stops it.
const CHILD = `
const { Worker } = require("node:worker_threads");
const t0 = performance.now();
const worker = new Worker(process.argv[1], { workerData: { host: "127.0.0.1" } });
worker.on("message", (m) => {
  if (m.type !== "ready") return;
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage();
  // A turn for the worker's cache write (when it had none), before stopping it.
  setTimeout(() => worker.terminate().then(() => process.stdout.write(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000 }) + "\\n")), 500);
});
worker.on("error", (e) => { console.error(e); process.exit(1); });
`;

async function once(workerJs: string, cacheDir: string): Promise<{ wall: number; cpu: number }> {
  const child = spawn(process.execPath, ["-e", CHILD, workerJs], { env: { ...process.env, SWITCHBOARD_CODE_CACHE: cacheDir }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  const code = await new Promise((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`the worker of ${workerJs} did not start (${code}): ${out}`);
  return JSON.parse(out) as { wall: number; cpu: number };
}

const scratch = await mkdtemp(join(tmpdir(), "sb-bench-worker-"));
const results = new Map(workers.map((w) => [w, [] as { wall: number; cpu: number }[]]));
const loads: number[] = [];
try {
  const caches = new Map(workers.map((w, i) => [w, join(scratch, `cache-${i}`)]));
  for (const w of workers) await once(w, caches.get(w) ?? "off");
  for (let i = 0; i < RUNS; i++) {
    for (const w of workers) results.get(w)?.push(await once(w, caches.get(w) ?? "off"));
    loads.push(loadavg()[0]);
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
const median = (v: number[]) => percentile(v, 50);
const first = results.get(workers[0] ?? "") ?? [];
report(`a media worker's start to "ready", ${RUNS} runs alternating, load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`, [
  ...workers.flatMap((w): [string, string][] => {
    const r = results.get(w) ?? [];
    return [
      [`${w}: process CPU at ready, median / p90`, `${median(r.map((x) => x.cpu)).toFixed(0)} ms / ${percentile(r.map((x) => x.cpu), 90).toFixed(0)} ms`],
      [`${w}: wall to ready, median`, `${median(r.map((x) => x.wall)).toFixed(0)} ms`],
      [`${w}: CPU / first build's`, `${(median(r.map((x) => x.cpu)) / median(first.map((x) => x.cpu))).toFixed(2)}x`],
    ];
  }),
]);
