// Reading a bundle for its code cache at start (issue 17, "Start"), CPU per read, the ways taking
// turns in one process: main's way before session 16 (read as UTF-8, sha256 of the text for the
// cache's key) on its non-ASCII bundle, and session 16's (read the bytes, the build's digest file
// beside them checked against fstat, Latin-1 when ASCII only) on the ASCII-only bundle; also
// session 16's way on a bundle that is not ASCII and has no digest file (UTF-8, hashed).
// BENCH_OLD_BUNDLE: the before build's server.cjs; BENCH_RUNS: rounds (default 40).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { readBundle } from "../server/code-cache.js";
import { percentile, report } from "./report.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const root = join(import.meta.dirname, "..");
const oldBundle = process.env.BENCH_OLD_BUNDLE;
if (!oldBundle) throw new Error("BENCH_OLD_BUNDLE: the server.cjs of a build before session 16");
const newBundle = join(root, "out/main/server.cjs");

// The read and the key only (the compile after it is the same for both). A cache folder is given so
// the key is made; nothing is read from or written to it.
const cacheDir = "/nonexistent/switchboard-bench";
const ways: Record<string, () => void> = {
  "before: UTF-8 text, sha256 of it": () => {
    const source = readFileSync(oldBundle, "utf8");
    createHash("sha256").update(source).update("\0v8\0x64").digest("hex");
  },
  "session 16: bytes, build's digest, Latin-1": () => {
    if (readBundle(newBundle, cacheDir).digestFrom !== "build") throw new Error(`${newBundle} has no digest file that fits: build it`);
  },
  "session 16 on the old bundle (no digest file): UTF-8, hashed": () => {
    readBundle(oldBundle, cacheDir);
  },
};

const cpu = new Map(Object.keys(ways).map((k) => [k, [] as number[]]));
const loads = [loadavg()[0]];
for (let i = 0; i < RUNS; i++) {
  for (const [name, way] of Object.entries(ways)) {
    const c0 = process.cpuUsage();
    way();
    const c = process.cpuUsage(c0);
    cpu.get(name)?.push((c.user + c.system) / 1000);
  }
}
loads.push(loadavg()[0]);
const before = percentile(cpu.get("before: UTF-8 text, sha256 of it") ?? [], 50);
report(`reading the server's bundle for its code cache, CPU per read, ${RUNS} rounds alternating, load ${loads.map((l) => l.toFixed(1)).join(" -> ")}`, [
  ...[...cpu].map(([name, v]): [string, string] => [name, `${percentile(v, 50).toFixed(1)} ms median (${(percentile(v, 50) / before).toFixed(2)}x)`]),
]);
