// Cold start of serve mode: spawn `node out/main/server.js --port 0` on a fresh data directory
// (so the demo account is seeded too) and time until the first HTTP 200 on `/`.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { percentile, report } from "./report.js";

const RUNS = 15;
const serverJs = join(import.meta.dirname, "../out/main/server.js");

async function once(): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-cold-"));
  const t0 = performance.now();
  const child = spawn(process.execPath, [serverJs, "--port", "0", "--data-dir", dataDir, "--log-level", "warn"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        const m = /Switchboard is serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      child.on("exit", (code) => reject(new Error(`server exited with ${code}: ${out}`)));
    });
    for (;;) {
      const res = await fetch(`${url}/`).catch(() => null);
      if (res?.status === 200) {
        await res.arrayBuffer();
        return performance.now() - t0;
      }
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
}

const times: number[] = [];
for (let i = 0; i < RUNS; i++) times.push(await once());
report("cold start (serve mode, fresh data dir, to first HTTP 200)", [
  ["runs", String(RUNS)],
  ["median", `${percentile(times, 50).toFixed(0)} ms`],
  ["p90", `${percentile(times, 90).toFixed(0)} ms`],
  ["min / max", `${Math.min(...times).toFixed(0)} / ${Math.max(...times).toFixed(0)} ms`],
]);
