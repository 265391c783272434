// The queues' history after a start (issue 20, item 3 figures): 50 queues with 90 days of stored
// 15-minute intervals each (432,000 intervals, every interval of every day: one document per queue
// and day in the day's collection, or BENCH_HISTORY_LAYOUT=legacy's document per interval), then
// serve mode started on that data directory, alternating with the same directory without the
// history: spawn to the first HTTP 200 on `/` (the start), then signed in as the admin, the first
// day view after the start (GET callq_queues/{id}/intervals?day= of a day 30 days back, timed from
// the request to its last byte), then 20 more day views of other queues and days.
// BENCH_RUNS (default 3 of each), BENCH_DAYS (90), BENCH_QUEUES (50), BENCH_SERVER_JS another build;
// BENCH_HISTORY_LAYOUT=legacy writes session 9's single callq_intervals collection instead of one
// collection per day (for a build before the day collections, or to time their one-off move).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { dayIntervals, dayOf, emptyFigures, FIGURE_NAMES, type QueueInterval } from "../server/callq/index.js";
import { dayDocId, intervalsCollection, LEGACY_INTERVALS_COLLECTION, legacyIntervalDoc, legacyIntervalId } from "../server/callq-host/intervals.js";
import { toGregorianSeconds } from "../server/clock.js";
import { percentile, report } from "./report.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const DAYS = Number(process.env.BENCH_DAYS ?? 90);
const QUEUES = Number(process.env.BENCH_QUEUES ?? 50);
const root = join(import.meta.dirname, "..");
const serverJs = process.env.BENCH_SERVER_JS ?? join(root, "out/main/server.js");
const LEGACY = process.env.BENCH_HISTORY_LAYOUT === "legacy";
const URL_LINE = /Switchboard is serving (http:\/\/127\.0\.0\.1:\d+)/;

interface Started {
  url: string;
  t0: number;
  stop(): Promise<void>;
}

async function start(dataDir: string): Promise<Started> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [serverJs, "--port", "0", "--events-port", "0", "--data-dir", dataDir], { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const m = URL_LINE.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return {
    url,
    t0,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function firstOk(url: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${url}/`).catch(() => null);
    if (res) await res.arrayBuffer();
    if (res?.status === 200) return;
  }
}

async function signIn(url: string): Promise<{ token: string; accountId: string }> {
  const credentials = createHash("md5").update("admin:switchboard").digest("hex");
  const res = await fetch(`${url}/v2/user_auth`, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ data: { credentials, account_name: "demo" } }) });
  const body = (await res.json()) as { auth_token: string; data: { account_id: string } };
  return { token: body.auth_token, accountId: body.data.account_id };
}

async function v2<T>(url: string, grant: { token: string; accountId: string }, method: string, path: string, data?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", "X-Auth-Token": grant.token };
  if (data !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${url}/v2/accounts/${grant.accountId}${path}`, { method, headers, ...(data === undefined ? {} : { body: JSON.stringify({ data }) }) });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

/** A day view timed from the request to its last byte; checks it lists the whole day (and calls in it, `stored`). */
async function dayView(url: string, grant: { token: string; accountId: string }, queueId: string, day: string, stored = true): Promise<number> {
  const t = performance.now();
  const rows = await v2<{ offered: number }[]>(url, grant, "GET", `/callq_queues/${queueId}/intervals?day=${day}`);
  const ms = performance.now() - t;
  if (rows.length < 92 || rows.some((r) => r.offered > 0) !== stored) throw new Error(`the day view of ${queueId} on ${day} lists ${rows.length} intervals, ${stored ? "none" : "some"} offered`);
  return ms;
}

/** A seeded server's directory with QUEUES queues; answers the queue ids. */
async function seed(dir: string): Promise<{ accountId: string; queueIds: string[] }> {
  const server = await start(dir);
  try {
    const grant = await signIn(server.url);
    const queues = await v2<{ id: string }[]>(server.url, grant, "GET", "/callq_queues?paginate=false");
    for (let i = queues.length; i < QUEUES; i++) queues.push(await v2<{ id: string }>(server.url, grant, "PUT", "/callq_queues", { name: `Bench queue ${i + 1}` }));
    return { accountId: grant.accountId, queueIds: queues.map((q) => q.id) };
  } finally {
    await server.stop();
  }
}

/** DAYS days of intervals up to yesterday for every queue, written as the collections' files. */
async function writeHistory(dir: string, accountId: string, queueIds: readonly string[], days: readonly string[]): Promise<number> {
  const now = toGregorianSeconds(Date.now());
  const folder = join(dir, "accounts", accountId);
  await mkdir(folder, { recursive: true });
  const write = (collection: string, docs: unknown[]) => writeFile(join(folder, `${collection}.json`), JSON.stringify({ docs }), { mode: 0o600 });
  const all: unknown[] = [];
  let written = 0;
  for (const day of days) {
    const docs: unknown[] = [];
    for (const queueId of queueIds) {
      const intervals = dayIntervals(day).map((start): QueueInterval => {
        const hour = new Date(start).getHours();
        const offered = hour >= 8 && hour < 18 ? 3 + ((start / 60_000) % 7) : 0;
        const answered = Math.max(0, offered - 1);
        return { ...emptyFigures(), queue_id: queueId, start, offered, answered, abandoned: offered - answered, answered_within: answered, wait_sum: 12 * offered, answered_wait_sum: 10 * answered };
      });
      const stored = (id: string, data: Record<string, unknown>) => ({ id, rev: `1-${randomBytes(16).toString("hex")}`, created: now, modified: now, data });
      if (LEGACY) {
        for (const interval of intervals) docs.push(stored(legacyIntervalId(interval), legacyIntervalDoc(interval)));
      } else {
        // The day document as the server writes it: the starts, then each figure in their order.
        const data: Record<string, unknown> = { queue_id: queueId, day, interval_start: intervals.map((i) => toGregorianSeconds(i.start)) };
        for (const name of FIGURE_NAMES) data[name] = intervals.map((i) => i[name]);
        docs.push(stored(dayDocId(queueId, day), data));
      }
      written += intervals.length;
    }
    if (LEGACY) all.push(...docs);
    else await write(intervalsCollection(day), docs);
  }
  if (LEGACY) await write(LEGACY_INTERVALS_COLLECTION, all);
  return written;
}

interface Run {
  startMs: number;
  firstViewMs: number;
  laterMs: number[];
}

async function measure(dir: string, grantDays: readonly string[], queueIds: readonly string[]): Promise<Run> {
  const server = await start(dir);
  try {
    await firstOk(server.url);
    const startMs = performance.now() - server.t0;
    const grant = await signIn(server.url);
    const firstViewMs = await dayView(server.url, grant, queueIds[0] ?? "", grantDays[30] ?? "");
    const laterMs: number[] = [];
    for (let i = 1; i <= 20; i++) laterMs.push(await dayView(server.url, grant, queueIds[i % queueIds.length] ?? "", grantDays[(i * 7) % grantDays.length] ?? ""));
    return { startMs, firstViewMs, laterMs };
  } finally {
    await server.stop();
  }
}

const work = await mkdtemp(join(tmpdir(), "sb-bench-history-"));
try {
  const base = join(work, "base");
  const { accountId, queueIds } = await seed(base);
  const today = Date.now();
  const days: string[] = [];
  for (let d = DAYS; d >= 1; d--) days.push(dayOf(new Date(new Date(today).setDate(new Date(today).getDate() - d)).getTime()));
  // Newest first: day 30 is a month back.
  days.reverse();
  const withHistory = join(work, "history");
  await cp(base, withHistory, { recursive: true });
  const written = performance.now();
  const docs = await writeHistory(withHistory, accountId, queueIds, days);
  process.stdout.write(`history: ${docs} intervals written in ${Math.round(performance.now() - written)} ms\n`);

  const plain: number[] = [];
  const plainViews: number[] = [];
  const runs: Run[] = [];
  const loads: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    loads.push(loadavg()[0] ?? 0);
    // The reference: the same start and first view (of a day with nothing stored) without history.
    const bare = await start(base);
    await firstOk(bare.url);
    plain.push(performance.now() - bare.t0);
    plainViews.push(await dayView(bare.url, await signIn(bare.url), queueIds[0] ?? "", days[30] ?? "", false));
    await bare.stop();
    const run = await measure(withHistory, days, queueIds);
    runs.push(run);
    process.stdout.write(
      `run ${r + 1}: start ${Math.round(plain.at(-1) ?? 0)} ms without history, ${Math.round(run.startMs)} ms with; first day view ${(plainViews.at(-1) ?? 0).toFixed(1)} ms without, ${run.firstViewMs.toFixed(1)} ms with; later median ${percentile(run.laterMs, 50).toFixed(2)} ms\n`,
    );
  }
  const later = runs.flatMap((r) => r.laterMs);
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  report(`history: ${QUEUES} queues x ${DAYS} days (${docs} intervals${LEGACY ? ", one document each in one collection" : ""}), ${RUNS} runs alternating`, [
    ["start, no history: median / max", `${ms(percentile(plain, 50))} / ${ms(Math.max(...plain))}`],
    ["start, with history: median / max", `${ms(percentile(runs.map((r) => r.startMs), 50))} / ${ms(Math.max(...runs.map((r) => r.startMs)))}`],
    ["first day view after the start, no history: median / max", `${ms(percentile(plainViews, 50))} / ${ms(Math.max(...plainViews))}`],
    ["first day view after the start: median / max", `${ms(percentile(runs.map((r) => r.firstViewMs), 50))} / ${ms(Math.max(...runs.map((r) => r.firstViewMs)))}  (target < 300 ms)`],
    ["later day views: median / p95 / max", `${ms(percentile(later, 50))} / ${ms(percentile(later, 95))} / ${ms(Math.max(...later))}`],
    ["load average (1 min) at each run", loads.map((l) => l.toFixed(1)).join(", ")],
  ]);
} finally {
  await rm(work, { recursive: true, force: true });
}
