// GET a device by id: Switchboard's serve mode against bare Fastify handing back the same bytes
// from a Map (bench/lib/bare-fastify.ts), both child processes loaded over loopback by autocannon
// from this process, in alternating rounds so a load that comes and goes hits both alike. The
// difference is what Switchboard spends per request: the guard, the token, the envelope.
// BENCH_CPU_PROF=<dir> writes CPU profiles of the Switchboard child there and of the bare Fastify
// child in <dir>/bare (the two side by side say where the difference goes); BENCH_SERVER=<path>
// runs another build's out/main/server.js (to compare two commits on one machine at one load).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { percentile, report } from "./report.js";
import { benchLogin } from "./lib/login.js";
import { benchDevice, cpuMs, stop, waitForLine } from "./lib/process.js";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 1_000);
const CONNECTIONS = 10;
const WARM_UP_S = 2;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const SERVER = process.env.BENCH_SERVER ?? join(import.meta.dirname, "../out/main/server.js");

interface Load {
  rps: number;
  p99: number;
  errors: number;
  /** Server CPU per request, ms. */
  cpu: number;
}

async function load(child: ChildProcess, url: string, headers: Record<string, string>, rate?: number, duration = DURATION_S): Promise<Load> {
  const pid = child.pid ?? 0;
  const cpuBefore = cpuMs(pid);
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration, ...(rate ? { overallRate: rate } : {}) });
  const cpu = cpuMs(pid) - cpuBefore;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
    cpu: result.requests.total > 0 ? cpu / result.requests.total : Number.NaN,
  };
}



const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-by-id-"));
const profileArgs = PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`];
const sb = spawn(process.execPath, [...profileArgs, SERVER, "--port", "0", "--data-dir", dataDir, "--log-level", "warn"], {
  stdio: ["ignore", "pipe", "pipe"],
});
let bare: ChildProcess | undefined;
try {
  const url = (await waitForLine(sb, /Switchboard is serving http:\/\/127\.0\.0\.1:[1-9]\d*/)).replace("Switchboard is serving ", "");
  const auth = await benchLogin(url);
  const headers = { "X-Auth-Token": auth.token };
  const path = `/v2/accounts/${auth.accountId}/devices`;
  const ids: string[] = [];
  for (let i = 0; i < DEVICES; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, DEVICES - i) }, (_, j) =>
        fetch(`${url}${path}`, { method: "PUT", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ data: benchDevice(i + j) }) }),
      ),
    );
    for (const res of batch) ids.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  // The reference serves what Switchboard answers for each device, byte for byte.
  const bodies: Record<string, string> = {};
  for (const id of ids.slice(0, 100)) bodies[id] = await (await fetch(`${url}${path}/${id}`, { headers })).text();
  const someId = ids[50] ?? "";
  const bodiesFile = join(dataDir, "bare-bodies.json");
  await writeFile(bodiesFile, JSON.stringify(bodies));
  const bareProfileArgs = PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(PROFILE_DIR, "bare")}`];
  bare = spawn(process.execPath, [...bareProfileArgs, "--import", "tsx", join(import.meta.dirname, "lib/bare-fastify.ts"), bodiesFile], { stdio: ["ignore", "pipe", "pipe"] });
  const bareUrl = (await waitForLine(bare, /http:\/\/127\.0\.0\.1:[1-9]\d*/)).trim();

  // A first short load on each compiles the hot paths: the rounds measure neither cold.
  await load(sb, `${url}${path}/${someId}`, headers, undefined, WARM_UP_S);
  await load(bare, `${bareUrl}${path}/${someId}`, headers, undefined, WARM_UP_S);
  const ours: Load[] = [];
  const theirs: Load[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    ours.push(await load(sb, `${url}${path}/${someId}`, headers));
    theirs.push(await load(bare, `${bareUrl}${path}/${someId}`, headers));
  }
  const fixed = await load(sb, `${url}${path}/${someId}`, headers, 1_000);

  const median = (values: number[]): number => percentile(values, 50);
  const ourRps = median(ours.map((l) => l.rps));
  const theirRps = median(theirs.map((l) => l.rps));
  const fmt = (l: Load): string => `${l.rps.toFixed(0)} req/s, p99 ${l.p99} ms, ${(l.cpu * 1000).toFixed(0)} µs CPU/req${l.errors ? `, ${l.errors} errors` : ""}`;
  report(`GET device by id (${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_S} s, ${DEVICES} devices)`, [
    ...ours.flatMap((l, i): [string, string][] => [
      [`round ${i + 1} switchboard`, fmt(l)],
      [`round ${i + 1} bare Fastify`, fmt(theirs[i] ?? l)],
    ]),
    ["switchboard median", `${ourRps.toFixed(0)} req/s`],
    ["bare Fastify median", `${theirRps.toFixed(0)} req/s`],
    ["ratio (target >= 0.85x)", `${(ourRps / theirRps).toFixed(2)}x`],
    ["switchboard at 1,000 req/s", fmt(fixed)],
  ]);
} finally {
  if (bare) await stop(bare);
  await stop(sb);
  await rm(dataDir, { recursive: true, force: true });
}
