// REST throughput: Switchboard's serve mode against json-server 0.17 (the lowdb-based REST mock),
// both as child processes loaded over loopback by autocannon from this process. Workloads: GET a
// device by id, and a filtered, paginated list over 1,000 devices. Then p99 at a fixed 1,000 req/s.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { report } from "./report.js";
import { benchLogin } from "./lib/login.js";
import { benchDevice, stop, waitForLine } from "./lib/process.js";

const require = createRequire(import.meta.url);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = 10;
const DEVICES = 1_000;

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, rate?: number): Promise<Load> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S, ...(rate ? { overallRate: rate } : {}) });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
  };
}




async function switchboard(): Promise<{ byId: Load; list: Load; fixed: Load; listFixed: Load }> {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-api-"));
  const child = spawn(process.execPath, [join(import.meta.dirname, "../out/main/server.js"), "--port", "0", "--data-dir", dataDir, "--log-level", "warn"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    const url = (await waitForLine(child, /Switchboard is serving http:\/\/127\.0\.0\.1:[1-9]\d*/)).replace("Switchboard is serving ", "");
    const auth = await benchLogin(url);
    const headers = { "X-Auth-Token": auth.token };
    const base = `${url}/v2/accounts/${auth.accountId}/devices`;
    let someId = "";
    for (let i = 0; i < DEVICES; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          fetch(base, { method: "PUT", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ data: benchDevice(i + j) }) }),
        ),
      );
      const body = (await batch[25]?.json()) as { data: { id: string } };
      someId = body.data.id;
    }
    const byIdUrl = `${base}/${someId}`;
    const listUrl = `${base}?filter_device_type=softphone&page_size=50`;
    const check = (await (await fetch(listUrl, { headers })).json()) as { data: unknown[] };
    if (check.data.length !== 50) throw new Error("the filtered list did not return a full page");
    return {
      byId: await load(byIdUrl, headers),
      list: await load(listUrl, headers),
      fixed: await load(byIdUrl, headers, 1_000),
      listFixed: await load(listUrl, headers, 1_000),
    };
  } finally {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function jsonServer(): Promise<{ byId: Load; list: Load; fixed: Load }> {
  const dir = await mkdtemp(join(tmpdir(), "sb-bench-jsonserver-"));
  const devices = Array.from({ length: DEVICES }, (_, i) => ({ id: String(i + 1), ...benchDevice(i) }));
  await writeFile(join(dir, "db.json"), JSON.stringify({ devices }));
  const bin = require.resolve("json-server/lib/cli/bin.js");
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [bin, join(dir, "db.json"), "--port", String(port), "--quiet"], { stdio: ["ignore", "pipe", "pipe"] });
  try {
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}/devices/1`).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 100) throw new Error("json-server did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
    return {
      byId: await load(`http://127.0.0.1:${port}/devices/500`, {}),
      list: await load(`http://127.0.0.1:${port}/devices?device_type=softphone&_page=1&_limit=50`, {}),
      fixed: await load(`http://127.0.0.1:${port}/devices/500`, {}, 1_000),
    };
  } finally {
    await stop(child);
    await rm(dir, { recursive: true, force: true });
  }
}

const sb = await switchboard();
const js = await jsonServer();
const fmt = (l: Load) => `${l.rps.toFixed(0)} req/s, p50 ${l.p50} ms, p99 ${l.p99} ms${l.errors ? `, ${l.errors} errors` : ""}`;
report(`REST API (${CONNECTIONS} connections, ${DURATION_S} s each, ${DEVICES} devices)`, [
  ["switchboard GET device by id", fmt(sb.byId)],
  ["json-server GET device by id", fmt(js.byId)],
  ["  ratio", `${(sb.byId.rps / js.byId.rps).toFixed(1)}x`],
  ["switchboard filtered page of 50", fmt(sb.list)],
  ["json-server filtered page of 50", fmt(js.list)],
  ["  ratio", `${(sb.list.rps / js.list.rps).toFixed(1)}x`],
  ["switchboard GET by id at 1,000 req/s", fmt(sb.fixed)],
  ["switchboard filtered page at 1,000 req/s", fmt(sb.listFixed)],
  ["json-server GET by id at 1,000 req/s", fmt(js.fixed)],
]);
