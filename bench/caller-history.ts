// Offer to caller history visible (issue 19 item 3): the console asks for the caller's history as
// an offer rings, so the figure is one GET /caller_history/{number} answered, the number having
// 1,000 previous calls (2 legs each) among 100,000 CDRs, 1,000 more of them from a number with the
// same last seven digits (left out by the exact match). Serve mode from a data directory seeded
// through the store (as bench/list-pages.ts seeds devices), against bare Fastify handing back the
// same bytes (bench/lib/bare-fastify.ts; its list route serves a body per query string, so the
// reference is asked for it on that route), one request at a time as a console asks, alternating.
// BENCH_HISTORY_REQUESTS=<n> sets the requests per side; BENCH_SERVER=<path> runs another build.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { CDRS_COLLECTION } from "../server/calls/index.js";
import { toGregorianSeconds } from "../server/clock.js";
import { Store } from "../server/store/index.js";
import { benchLogin } from "./lib/login.js";
import { stop, waitForLine } from "./lib/process.js";
import { percentile, report } from "./report.js";

const SERVER = process.env.BENCH_SERVER ?? join(import.meta.dirname, "../out/main/server.js");
const REQUESTS = Number(process.env.BENCH_HISTORY_REQUESTS ?? 300);
const TOTAL_CDRS = 100_000;
const CALLS_OF_NUMBER = 1_000;
const SAME_TAIL = 1_000;
const SEED_BATCH = 5_000;
const NUMBER = "+14155550100";
const REFERENCE_QUERY = "?caller_history";

function startServer(dataDir: string): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(process.execPath, [SERVER, "--port", "0", "--data-dir", dataDir, "--log-level", "warn", "--media-workers", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = waitForLine(child, /Switchboard is serving http:\/\/127\.0\.0\.1:[1-9]\d*/).then((line) => line.replace("Switchboard is serving ", ""));
  return { child, url };
}

/** The i-th CDR: the number's calls (caller's leg, agent's leg) spread through the others. */
function cdr(i: number, agentId: string): Record<string, unknown> {
  const started = Date.UTC(2026, 0, 1) + i * 1_000;
  const base = { timestamp: toGregorianSeconds(started), duration_seconds: 120, billing_seconds: 110, pvt_started_ms: started, call_direction: "inbound", direction: "inbound" };
  const spacing = Math.floor(TOTAL_CDRS / (2 * CALLS_OF_NUMBER + SAME_TAIL));
  const slot = i % spacing === 0 ? i / spacing : -1;
  if (slot >= 0 && slot < 2 * CALLS_OF_NUMBER) {
    const call = Math.floor(slot / 2);
    const disposition = { code: "sale", label: "Sale", note: `call ${call}`, recipient_id: agentId, queue_id: "q" };
    return slot % 2 === 0
      ? { ...base, call_id: `c${i}`, caller_id_number: NUMBER, callee_id_number: "5001", interaction_id: `i${call}`, disposition }
      : { ...base, call_id: `c${i}`, caller_id_number: NUMBER, callee_id_number: "1002", owner_id: agentId, interaction_id: `i${call}`, disposition };
  }
  if (slot >= 2 * CALLS_OF_NUMBER && slot < 2 * CALLS_OF_NUMBER + SAME_TAIL) return { ...base, call_id: `c${i}`, caller_id_number: "+12125550100", callee_id_number: "5001", interaction_id: `s${i}` };
  return { ...base, call_id: `c${i}`, caller_id_number: `+1415${String(2_000_000 + i).padStart(7, "0")}`, callee_id_number: "5001", interaction_id: `o${i}` };
}

async function seed(): Promise<{ dataDir: string; seedS: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-history-"));
  const first = startServer(dataDir);
  const login = await benchLogin(await first.url, "agent1").finally(() => stop(first.child));
  const t = performance.now();
  const store = await Store.open({ dir: dataDir });
  const cdrs = await store.account(login.accountId, CDRS_COLLECTION);
  for (let i = 0; i < TOTAL_CDRS; i += SEED_BATCH) {
    await Promise.all(Array.from({ length: Math.min(SEED_BATCH, TOTAL_CDRS - i) }, (_, j) => cdrs.create(cdr(i + j, login.ownerId), { modb: true })));
  }
  await store.close();
  return { dataDir, seedS: (performance.now() - t) / 1000 };
}

async function timed(url: string, headers: Record<string, string>): Promise<{ ms: number; body: string; status: number }> {
  const t = performance.now();
  const res = await fetch(url, { headers });
  const body = await res.text();
  return { ms: performance.now() - t, body, status: res.status };
}

const { dataDir, seedS } = await seed();
const sb = startServer(dataDir);
let bare: ChildProcess | undefined;
try {
  const url = await sb.url;
  const auth = await benchLogin(url);
  const headers = { "X-Auth-Token": auth.token };
  const history = `${url}/v2/accounts/${auth.accountId}/caller_history/${encodeURIComponent(NUMBER)}`;
  // The first ask opens the collection and builds its order and number index: a console's first offer after a start.
  const cold = await timed(history, headers);
  const page = JSON.parse(cold.body) as { data?: { calls?: unknown[] }; next_start_key?: string };
  if (cold.status !== 200 || page.data?.calls?.length !== 20 || page.next_start_key === undefined) throw new Error(`history: ${cold.status} ${cold.body.slice(0, 200)}`);
  const bodiesFile = join(dataDir, "bare-bodies.json");
  await writeFile(bodiesFile, JSON.stringify({ [REFERENCE_QUERY]: cold.body }));
  bare = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "lib/bare-fastify.ts"), bodiesFile], { stdio: ["ignore", "pipe", "pipe"] });
  const bareUrl = (await waitForLine(bare, /http:\/\/127\.0\.0\.1:[1-9]\d*/)).trim();
  const reference = `${bareUrl}/v2/accounts/${auth.accountId}/devices${REFERENCE_QUERY}`;
  for (let i = 0; i < 20; i++) {
    await timed(history, headers);
    await timed(reference, headers);
  }
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const a = await timed(history, headers);
    if (a.status !== 200) throw new Error(`history: ${a.status}`);
    ours.push(a.ms);
    theirs.push((await timed(reference, headers)).ms);
  }
  const fmt = (values: number[]) => `p50 ${percentile(values, 50).toFixed(2)} ms, p95 ${percentile(values, 95).toFixed(2)} ms, max ${Math.max(...values).toFixed(2)} ms`;
  report(`caller history of a number with ${CALLS_OF_NUMBER.toLocaleString("en")} calls among ${TOTAL_CDRS.toLocaleString("en")} CDRs (${REQUESTS} requests each, one at a time)`, [
    ["switchboard (target p95 < 100 ms)", fmt(ours)],
    ["bare Fastify, same bytes", fmt(theirs)],
    ["first request after a start (builds the order and index)", `${cold.ms.toFixed(0)} ms`],
    ["page bytes, seeding through the store", `${Buffer.byteLength(cold.body)} B, ${seedS.toFixed(1)} s`],
  ]);
} finally {
  if (bare) await stop(bare);
  await stop(sb.child);
  await rm(dataDir, { recursive: true, force: true });
}
