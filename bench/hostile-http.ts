// Issue 14, items 10 and 15: a legitimate client beside HTTP floods. Serve mode runs as a child
// process; a worker thread floods it (4 requests in flight) while this thread is the legitimate
// client, one request at a time: GET a device, then create one (an acknowledged write). Each
// flood's figures sit beside the no-flood run: the client's p50/p99, the server's CPU (from
// /proc), flood requests tried and their answers, 5xx seen, and acknowledged writes lost
// (every created device read back at the end). BENCH_SERVER=<path to a server.js> measures
// another build the same way (bench/README.md sets this build beside the one before issue 14).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { percentile, report } from "./report.js";
import { waitForLine, cpuMs } from "./lib/process.js";

const PHASE_S = Number(process.env.BENCH_DURATION_S ?? 10);
const FLOOD_IN_FLIGHT = 4;

interface Flood {
  name: string;
  /** What the worker sends: headers and a body built once. */
  headers: Record<string, string>;
  body: () => string;
  path: (accountId: string) => string;
}

const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

const FLOODS: Flood[] = [
  {
    name: "7.5 MB bodies, unknown token",
    headers: { "X-Auth-Token": "0".repeat(32), "Content-Type": "application/json" },
    // Just under the 8 MiB limit of the build before issue 14, which parsed it.
    body: () => JSON.stringify({ data: keys(460_000) }),
    path: (a) => `/v2/accounts/${a}/devices`,
  },
  {
    name: "7.5 MB bodies, token said to be inside",
    headers: { "Content-Type": "application/json" },
    body: () => JSON.stringify({ auth_token: "0".repeat(32), data: keys(460_000) }),
    path: (a) => `/v2/accounts/${a}/devices`,
  },
  {
    name: "admin PUT, 300,000 keys",
    headers: { "Content-Type": "application/json" },
    body: () => JSON.stringify({ data: { name: "flood", ...keys(300_000) } }),
    path: (a) => `/v2/accounts/${a}/devices`,
  },
  {
    name: "admin PUT, 6,000 keys (under 1 MiB)",
    headers: { "Content-Type": "application/json" },
    body: () => JSON.stringify({ data: { name: "flood", ...keys(6_000) } }),
    path: (a) => `/v2/accounts/${a}/devices`,
  },
  {
    name: "admin PUT, 4,998 keys (at the bound, stored)",
    headers: { "Content-Type": "application/json" },
    body: () => JSON.stringify({ data: { name: "flood", ...keys(4_998) } }),
    path: (a) => `/v2/accounts/${a}/devices`,
  },
];

// The flooder: plain JavaScript on its own event loop, so its work never delays the client's.
const FLOODER = `
const { parentPort, workerData } = require("node:worker_threads");
const { url, headers, body, seconds, inFlight } = workerData;
const statuses = {};
let tried = 0, failed = 0;
const until = Date.now() + seconds * 1000;
async function one() {
  while (Date.now() < until) {
    tried++;
    try {
      const res = await fetch(url, { method: "PUT", headers, body });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    } catch {
      failed++;
    }
  }
}
Promise.all(Array.from({ length: inFlight }, one)).then(() => parentPort.postMessage({ tried, failed, statuses }));
`;

interface FloodResult {
  tried: number;
  failed: number;
  statuses: Record<string, number>;
}

interface Phase {
  name: string;
  p50: number;
  p99: number;
  requests: number;
  legit5xx: number;
  cpuPercent: number;
  flood?: FloodResult;
}



const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-hostile-http-"));
const SERVER = process.env.BENCH_SERVER ?? join(import.meta.dirname, "../out/main/server.js");
const child = spawn(process.execPath, [SERVER, "--port", "0", "--events-port", "0", "--data-dir", dataDir, "--log-level", "warn"], {
  stdio: ["ignore", "pipe", "pipe"],
});
const pid = child.pid ?? 0;
try {
  const url = (await waitForLine(child, /Switchboard is serving http:\/\/127\.0\.0\.1:[1-9]\d*/)).replace("Switchboard is serving ", "");
  const login = await fetch(`${url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: createHash("md5").update("admin:switchboard").digest("hex"), account_name: "demo" } }),
  });
  const auth = (await login.json()) as { auth_token: string; data: { account_id: string } };
  const token = auth.auth_token;
  const accountId = auth.data.account_id;
  const devices = `${url}/v2/accounts/${accountId}/devices`;
  const headers = { "X-Auth-Token": token, "Content-Type": "application/json" };
  const first = (await (await fetch(`${devices}?page_size=1`, { headers })).json()) as { data: { id: string }[] };
  const readable = `${devices}/${first.data[0]?.id ?? ""}`;
  const acknowledged: string[] = [];
  let serial = 0;

  /** The legitimate client for `seconds`: GET, then PUT, one at a time. */
  async function client(seconds: number): Promise<{ latencies: number[]; fivexx: number }> {
    const latencies: number[] = [];
    let fivexx = 0;
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until) {
      const t0 = performance.now();
      const got = await fetch(readable, { headers: { "X-Auth-Token": token } });
      await got.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (got.status >= 500) fivexx++;
      const t1 = performance.now();
      const put = await fetch(devices, { method: "PUT", headers, body: JSON.stringify({ data: { name: `legit ${serial++}` } }) });
      const body = (await put.json()) as { data?: { id?: string } };
      latencies.push(performance.now() - t1);
      if (put.status >= 500) fivexx++;
      if (put.status === 201 && body.data?.id) acknowledged.push(body.data.id);
    }
    return { latencies, fivexx };
  }

  async function phase(name: string, flood?: Flood): Promise<Phase> {
    const worker = flood
      ? new Worker(FLOODER, {
          eval: true,
          workerData: {
            url: `${url}${flood.path(accountId)}`,
            headers: flood.name.startsWith("admin") ? { ...flood.headers, "X-Auth-Token": token } : flood.headers,
            body: flood.body(),
            seconds: PHASE_S,
            inFlight: FLOOD_IN_FLIGHT,
          },
        })
      : undefined;
    const floodDone = worker ? new Promise<FloodResult>((resolve) => worker.once("message", resolve)) : undefined;
    const cpu0 = cpuMs(pid);
    const t0 = performance.now();
    const { latencies, fivexx } = await client(PHASE_S);
    const floodResult = await floodDone;
    const cpuPercent = ((cpuMs(pid) - cpu0) / (performance.now() - t0)) * 100;
    await worker?.terminate();
    return { name, p50: percentile(latencies, 50), p99: percentile(latencies, 99), requests: latencies.length, legit5xx: fivexx, cpuPercent, flood: floodResult };
  }

  // Warm the server's code paths before measuring.
  await client(2);
  const phases: Phase[] = [await phase("no flood")];
  for (const flood of FLOODS) phases.push(await phase(flood.name, flood));

  let lost = 0;
  for (const id of acknowledged) {
    const res = await fetch(`${devices}/${id}`, { headers: { "X-Auth-Token": token } });
    if (res.status !== 200) lost++;
  }
  const rows: [string, string][] = [];
  for (const p of phases) {
    rows.push([p.name, `client p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms (${p.requests} requests, ${p.legit5xx} 5xx); server CPU ${p.cpuPercent.toFixed(0)}%`]);
    if (p.flood) {
      const answers = Object.entries(p.flood.statuses).map(([s, n]) => `${n}x ${s}`).join(", ");
      const fivexx = Object.entries(p.flood.statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0);
      rows.push(["  flood", `${p.flood.tried} tried: ${answers || "none answered"}${p.flood.failed ? `, ${p.flood.failed} cut` : ""}; 5xx ${fivexx}`]);
    }
  }
  rows.push(["acknowledged writes", `${acknowledged.length} created, ${lost} lost`]);
  report(`Hostile HTTP, ${SERVER} (${PHASE_S} s per phase, flood ${FLOOD_IN_FLIGHT} in flight, client 1 at a time)`, rows);
} finally {
  if (child.exitCode === null) {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
  await rm(dataDir, { recursive: true, force: true });
}
