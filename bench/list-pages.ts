// List pages whose cost does not grow with the collection (issue 17, "REST"): a filtered page of
// 50 devices (`filter_device_type=softphone&page_size=50`, half the devices match) from serve mode
// with 1,000, 10,000 and 100,000 devices in the account, against bare Fastify handing back the same
// bytes (bench/lib/bare-fastify.ts), both child processes loaded over loopback by autocannon from
// this process in alternating rounds; then ours at a fixed 1,000 req/s at the largest size.
// Devices are seeded through the store itself (files written as the server writes them), with
// the server stopped, then the server is started on that data directory.
// BENCH_LIST_SIZES=1000,10000 picks the sizes; BENCH_SERVER=<path> runs another build;
// BENCH_CPU_PROF=<dir> writes a CPU profile of each measured Switchboard child there;
// BENCH_AB_SERVER=<path> runs a second build beside it on a copy of the same data directory, in
// the same alternating rounds (ours, the other build, bare Fastify), and prints the two builds'
// CPU per request side by side. The reference checks the Host and the token and sends the same
// headers as ours; BENCH_BARE_PLAIN=1 makes it send the body alone (sessions 11-13).
// Ours keeps a collection's recent pages (server/http/resource.ts, PageAnswers), so one query asked
// again and again measures a kept answer. A second figure walks WALKED distinct pages of the same
// list (each its own start_key, more than the pages kept) in turn, so each answer is made afresh
// (its seek, walk, join and md5); the reference serves the same bytes for each of those queries,
// and the other build (BENCH_AB_SERVER) walks the same pages in the same rounds.
import { spawn, type ChildProcess } from "node:child_process";
import { cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { Store } from "../server/store/index.js";
import { benchLogin } from "./lib/login.js";
import { sameWorkFile } from "./lib/bare-same.js";
import { cpuMs, stop, waitForLine } from "./lib/process.js";
import { percentile, report } from "./report.js";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SIZES = (process.env.BENCH_LIST_SIZES ?? "1000,10000,100000").split(",").map(Number);
const CONNECTIONS = 10;
const WARM_UP_S = 2;
const SERVER = process.env.BENCH_SERVER ?? join(import.meta.dirname, "../out/main/server.js");
const QUERY = "?filter_device_type=softphone&page_size=50";
const SEED_BATCH = 5_000;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const AB_SERVER = process.env.BENCH_AB_SERVER;
/** Distinct pages the walked figure cycles through: more than a collection keeps (32). */
const WALKED = Number(process.env.BENCH_PAGES_WALKED ?? 64);

interface Load {
  rps: number;
  p99: number;
  errors: number;
  /** Server CPU per request, ms. */
  cpu: number;
}

async function load(child: ChildProcess, url: string, headers: Record<string, string>, rate?: number, duration = DURATION_S, paths?: string[]): Promise<Load> {
  const pid = child.pid ?? 0;
  const cpuBefore = cpuMs(pid);
  let next = 0;
  // With paths, each request asks the next of them in turn (url is then the origin).
  const requests = paths === undefined ? undefined : [{ setupRequest: (req: { path?: string }) => ({ ...req, path: paths[next++ % paths.length] }) }];
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration, ...(rate ? { overallRate: rate } : {}), ...(requests ? { requests } : {}) });
  const cpu = cpuMs(pid) - cpuBefore;
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
    cpu: result.requests.total > 0 ? cpu / result.requests.total : Number.NaN,
  };
}

function startServer(dataDir: string, profile = false, server = SERVER): { child: ChildProcess; url: Promise<string> } {
  const profileArgs = profile && PROFILE_DIR !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  const child = spawn(process.execPath, [...profileArgs, server, "--port", "0", "--data-dir", dataDir, "--log-level", "warn", "--media-workers", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = waitForLine(child, /Switchboard is serving http:\/\/127\.0\.0\.1:[1-9]\d*/).then((line) => line.replace("Switchboard is serving ", ""));
  return { child, url };
}

/** A device as the API stores one (defaults filled in); half softphones, half SIP devices. */
function device(i: number): Record<string, unknown> {
  return {
    name: `device ${i}`,
    device_type: i % 2 === 0 ? "softphone" : "sip_device",
    enabled: true,
    sip: { method: "password", invite_format: "contact", registration_expiration: 300, username: `seeded${i}`, password: "0123456789abcdef01234567" },
    media: { audio: { codecs: ["PCMU", "PCMA"] }, video: { codecs: [] }, encryption: { enforce_security: false, methods: [] } },
    caller_id: { internal: { name: `Device ${i}`, number: String(1000 + i) } },
  };
}

/** A data directory with the demo account (seeded by a first start) and `size` devices in it. */
async function seed(size: number): Promise<{ dataDir: string; seedS: number }> {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-list-"));
  const first = startServer(dataDir);
  let accountId: string;
  try {
    accountId = (await benchLogin(await first.url)).accountId;
  } finally {
    await stop(first.child);
  }
  const t = performance.now();
  const store = await Store.open({ dir: dataDir });
  const devices = await store.account(accountId, "devices");
  for (let i = devices.size; i < size; i += SEED_BATCH) {
    await Promise.all(Array.from({ length: Math.min(SEED_BATCH, size - i) }, (_, j) => devices.create(device(i + j))));
  }
  await store.close();
  return { dataDir, seedS: (performance.now() - t) / 1000 };
}

interface SizeResult {
  size: number;
  ours: Load[];
  /** The other build's rounds (BENCH_AB_SERVER), empty without one. */
  other: Load[];
  theirs: Load[];
  /** Walking distinct pages: ours, the other build (BENCH_AB_SERVER) and the reference serving the same pages' bytes. */
  walkedOurs: Load[];
  walkedOther: Load[];
  walkedTheirs: Load[];
  /** How many distinct pages the walk had (fewer than WALKED in a small collection). */
  walkedPages: number;
  fixed?: Load;
  seedS: number;
  bodyBytes: number;
}

async function measure(size: number, fixedRate: boolean): Promise<SizeResult> {
  const { dataDir, seedS } = await seed(size);
  const otherDir = AB_SERVER === undefined ? undefined : `${dataDir}-b`;
  if (otherDir !== undefined) await cp(dataDir, otherDir, { recursive: true });
  const sb = startServer(dataDir, true);
  const ab = otherDir === undefined ? undefined : startServer(otherDir, false, AB_SERVER);
  let bare: ChildProcess | undefined;
  try {
    const url = await sb.url;
    const auth = await benchLogin(url);
    const headers = { "X-Auth-Token": auth.token };
    const list = `/v2/accounts/${auth.accountId}/devices${QUERY}`;
    // Opens the collection and builds its order; the reference serves this answer's bytes.
    const res = await fetch(`${url}${list}`, { headers });
    const body = await res.text();
    const page = JSON.parse(body) as { data?: unknown[]; next_start_key?: string };
    if (res.status !== 200 || page.data?.length !== 50 || page.next_start_key === undefined) throw new Error(`list at ${size}: ${res.status} ${body.slice(0, 200)}`);
    // The walked pages: the list's first WALKED pages, each asked by its own start_key.
    const walked: Record<string, string> = {};
    let startKey: string | undefined = page.next_start_key;
    for (let i = 0; i < WALKED && startKey !== undefined; i++) {
      const query: string = `${QUERY}&start_key=${encodeURIComponent(startKey)}`;
      const text: string = await (await fetch(`${url}/v2/accounts/${auth.accountId}/devices${query}`, { headers })).text();
      walked[query] = text;
      startKey = (JSON.parse(text) as { next_start_key?: string }).next_start_key;
    }
    const walkedPaths = Object.keys(walked).map((query) => `/v2/accounts/${auth.accountId}/devices${query}`);
    const bodiesFile = join(dataDir, "bare-bodies.json");
    await writeFile(bodiesFile, JSON.stringify({ [QUERY]: body, ...walked }));
    const sameFile = await sameWorkFile(dataDir, auth.token, res.headers);
    bare = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, "lib/bare-fastify.ts"), bodiesFile, ...sameFile], { stdio: ["ignore", "pipe", "pipe"] });
    const bareUrl = (await waitForLine(bare, /http:\/\/127\.0\.0\.1:[1-9]\d*/)).trim();
    const bareChild = bare; // (the loads below run in closures, where bare's narrowing is lost)
    // The other build answers its copy of the same data: its own token, the same page.
    let abTarget: { url: string; headers: Record<string, string>; walked: string[] } | undefined;
    if (ab !== undefined) {
      const abUrl = await ab.url;
      const abAuth = await benchLogin(abUrl);
      const abHeaders = { "X-Auth-Token": abAuth.token };
      const abList = `${abUrl}/v2/accounts/${abAuth.accountId}/devices${QUERY}`;
      const abRes = await fetch(abList, { headers: abHeaders });
      const abBody = await abRes.text();
      if (abRes.status !== 200 || (JSON.parse(abBody) as { data?: unknown[] }).data?.length !== 50) throw new Error(`other build's list at ${size}: ${abRes.status}`);
      // Its walked pages: the same start keys (the data are a copy), its own account id.
      const abWalked = Object.keys(walked).map((query) => `/v2/accounts/${abAuth.accountId}/devices${query}`);
      abTarget = { url: abList, headers: abHeaders, walked: abWalked };
    }
    // A first short load on each compiles the hot paths: the rounds measure neither cold.
    await load(sb.child, `${url}${list}`, headers, undefined, WARM_UP_S);
    if (ab !== undefined && abTarget !== undefined) await load(ab.child, abTarget.url, abTarget.headers, undefined, WARM_UP_S);
    await load(bare, `${bareUrl}${list}`, headers, undefined, WARM_UP_S);
    const ours: Load[] = [];
    const other: Load[] = [];
    const theirs: Load[] = [];
    // Each round's loads, in an order turned every other round: the first server of a round paid
    // 3-6% more in api-by-id (session 22).
    const inTurn = async (round: number, steps: (() => Promise<void>)[]): Promise<void> => {
      for (const step of round % 2 === 0 ? steps : [...steps].reverse()) await step();
    };
    for (let round = 0; round < ROUNDS; round++) {
      await inTurn(round, [
        async () => void ours.push(await load(sb.child, `${url}${list}`, headers)),
        async () => void (ab !== undefined && abTarget !== undefined && other.push(await load(ab.child, abTarget.url, abTarget.headers))),
        async () => void theirs.push(await load(bareChild, `${bareUrl}${list}`, headers)),
      ]);
    }
    const walkedOurs: Load[] = [];
    const walkedOther: Load[] = [];
    const walkedTheirs: Load[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await inTurn(round, [
        async () => void walkedOurs.push(await load(sb.child, url, headers, undefined, DURATION_S, walkedPaths)),
        async () => void (ab !== undefined && abTarget !== undefined && walkedOther.push(await load(ab.child, new URL(abTarget.url).origin, abTarget.headers, undefined, DURATION_S, abTarget.walked))),
        async () => void walkedTheirs.push(await load(bareChild, bareUrl, headers, undefined, DURATION_S, walkedPaths)),
      ]);
    }
    const fixed = fixedRate ? await load(sb.child, `${url}${list}`, headers, 1_000) : undefined;
    return { size, ours, other, theirs, walkedOurs, walkedOther, walkedTheirs, walkedPages: walkedPaths.length, seedS, bodyBytes: Buffer.byteLength(body), ...(fixed ? { fixed } : {}) };
  } finally {
    if (bare) await stop(bare);
    if (ab !== undefined) await stop(ab.child);
    await stop(sb.child);
    await rm(dataDir, { recursive: true, force: true });
    if (otherDir !== undefined) await rm(otherDir, { recursive: true, force: true });
  }
}

const median = (values: number[]): number => percentile(values, 50);

/**
 * BENCH_IN_PROCESS_OTHER=<another checkout's root>: the page's own work alone, no HTTP. For each
 * size, the same devices are opened twice in this process, by this tree's store and by the other
 * tree's (its server/ imported through tsx), and each tree's PageAnswers asks WALKED distinct
 * `start_key` pages of the filtered list in turn (more than are kept: every page made afresh, its
 * revision included, as in the server), in alternating rounds; CPU per page by process.cpuUsage.
 */
async function inProcess(otherRoot: string): Promise<void> {
  interface Tree {
    Store: typeof Store;
    resource: typeof import("../server/http/resource.js");
    filters: typeof import("../server/http/filters.js");
    envelope: typeof import("../server/http/envelope.js");
  }
  const load = async (root: string): Promise<Tree> => ({
    Store: ((await import(join(root, "server/store/index.ts"))) as { Store: typeof Store }).Store,
    resource: (await import(join(root, "server/http/resource.ts"))) as Tree["resource"],
    filters: (await import(join(root, "server/http/filters.ts"))) as Tree["filters"],
    envelope: (await import(join(root, "server/http/envelope.ts"))) as Tree["envelope"],
  });
  const BYTES = process.env.BENCH_IN_PROCESS_BYTES === "1";
  let bytes = 0;
  const ours = await load(join(import.meta.dirname, ".."));
  // The third: this tree's page with the other's kind of revision (the md5 of the rows' revisions), to tell the parts apart.
  const trees: [string, Tree, boolean][] = [
    ["this tree", ours, true],
    ["other tree", await load(otherRoot), true],
    ["this tree, rows' md5 as revision", ours, false],
  ];
  const PAGES_PER_ROUND = Number(process.env.BENCH_PAGES_PER_ROUND ?? 3_000);
  const inRows: [string, string][] = [];
  for (const size of SIZES) {
    const dir = await mkdtemp(join(tmpdir(), "sb-bench-list-inproc-"));
    try {
      const accountId = "0123456789abcdef0123456789abcdef";
      const seeding = await Store.open({ dir });
      const seeded = await seeding.account(accountId, "devices");
      for (let i = 0; i < size; i += SEED_BATCH) {
        await Promise.all(Array.from({ length: Math.min(SEED_BATCH, size - i) }, (_, j) => seeded.create(device(i + j))));
      }
      await seeding.close();
      const runs: { name: string; page: () => void; cpu: number[] }[] = [];
      for (const [name, tree, epochRevision] of trees) {
        const copy = `${dir}-${runs.length}`;
        await cp(dir, copy, { recursive: true });
        const store = await tree.Store.open({ dir: copy });
        store.equalityIndex("devices", tree.filters.equalityIndexOn("device_type"));
        const devices = await store.account(accountId, "devices");
        const texts = new tree.resource.RowTexts(tree.resource.view);
        const answers = new tree.resource.PageAnswers();
        const base: Record<string, string> = { filter_device_type: "softphone", page_size: "50" };
        const queries: Record<string, string>[] = [base];
        for (let i = 1; i < WALKED; i++) {
          const last = queries[queries.length - 1] ?? base;
          const next = tree.resource.listPageText(devices, last, { texts }).paging?.next_start_key;
          if (next === undefined) break;
          queries.push({ ...base, start_key: next });
        }
        let n = 0;
        const page = (): void => {
          const query = queries[n++ % queries.length] ?? base;
          // The server's call (server/http/resource.ts, the list's GET): the other tree's make takes one argument.
          const outcome = answers.of(devices, query, (q: Record<string, string>, revision?: string) => tree.resource.listPageText(devices, q, revision === undefined || !epochRevision ? { texts } : { texts, revision }));
          // BENCH_IN_PROCESS_BYTES=1: also the answer's text as the server sends it (the envelope
          // joined around the page, measured by Buffer.byteLength as Fastify does, which flattens it).
          if (BYTES && outcome.data instanceof tree.envelope.JsonText) {
            const text = tree.envelope.successEnvelopeText({ data: outcome.data, revision: outcome.revision, requestId: "0".repeat(32), authToken: "t".repeat(32), now: new Date(), paging: outcome.paging });
            bytes += Buffer.byteLength(text);
          }
        };
        for (let i = 0; i < PAGES_PER_ROUND; i++) page();
        runs.push({ name, page, cpu: [] });
      }
      for (let round = 0; round < ROUNDS * 2; round++) {
        for (const run of round % 2 === 0 ? runs : [...runs].reverse()) {
          const before = process.cpuUsage();
          for (let i = 0; i < PAGES_PER_ROUND; i++) run.page();
          const used = process.cpuUsage(before);
          run.cpu.push((used.user + used.system) / PAGES_PER_ROUND);
        }
      }
      const n = size.toLocaleString("en");
      for (const run of runs) inRows.push([`${n}: ${run.name}, µs CPU per fresh page (median; rounds)`, `${median(run.cpu).toFixed(1)}; ${run.cpu.map((c) => c.toFixed(1)).join(" ")}`]);
      const [mine, other] = runs;
      if (mine !== undefined && other !== undefined) inRows.push([`${n}: this / other tree`, `${(median(mine.cpu) / median(other.cpu)).toFixed(2)}x`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
      for (let i = 0; i < trees.length; i++) await rm(`${dir}-${i}`, { recursive: true, force: true });
    }
  }
  report(`fresh pages in process (${WALKED} distinct pages of ${QUERY} in turn, ${ROUNDS * 2} alternating rounds of ${PAGES_PER_ROUND}${BYTES ? `; each answer's envelope text made and measured, ${bytes} bytes in all` : ""})`, inRows);
}

if (process.env.BENCH_IN_PROCESS_OTHER !== undefined) {
  await inProcess(process.env.BENCH_IN_PROCESS_OTHER);
  process.exit(0);
}
const fmt = (l: Load): string => `${l.rps.toFixed(0)} req/s, p99 ${l.p99} ms, ${(l.cpu * 1000).toFixed(0)} µs CPU/req${l.errors ? `, ${l.errors} errors` : ""}`;
const largest = Math.max(...SIZES);
const rows: [string, string][] = [];
for (const size of SIZES) {
  const r = await measure(size, size === largest);
  const n = size.toLocaleString("en");
  const ourRps = median(r.ours.map((l) => l.rps));
  const theirRps = median(r.theirs.map((l) => l.rps));
  rows.push(
    ...r.ours.flatMap((l, i): [string, string][] => [
      [`${n}: round ${i + 1} switchboard`, fmt(l)],
      ...(r.other[i] === undefined ? [] : [[`${n}: round ${i + 1} other build`, fmt(r.other[i])] as [string, string]]),
      [`${n}: round ${i + 1} bare Fastify`, fmt(r.theirs[i] ?? l)],
    ]),
    [`${n}: switchboard median`, `${ourRps.toFixed(0)} req/s, ${(median(r.ours.map((l) => l.cpu)) * 1000).toFixed(0)} µs CPU/req`],
    [`${n}: bare Fastify median`, `${theirRps.toFixed(0)} req/s, ${(median(r.theirs.map((l) => l.cpu)) * 1000).toFixed(0)} µs CPU/req`],
    [`${n}: ratio (target >= 0.6x)`, `${(ourRps / theirRps).toFixed(2)}x, CPU/req ${(median(r.theirs.map((l) => l.cpu)) / median(r.ours.map((l) => l.cpu))).toFixed(2)}x`],
    [
      `${n}: ${r.walkedPages} distinct pages in turn${r.walkedPages <= 32 ? " (all can be kept)" : ""}, switchboard / bare median`,
      `${median(r.walkedOurs.map((l) => l.rps)).toFixed(0)} / ${median(r.walkedTheirs.map((l) => l.rps)).toFixed(0)} req/s, ${(median(r.walkedOurs.map((l) => l.cpu)) * 1000).toFixed(0)} / ${(median(r.walkedTheirs.map((l) => l.cpu)) * 1000).toFixed(0)} µs CPU/req`,
    ],
    [
      `${n}: ${r.walkedPages} distinct pages: ratio (target >= 0.6x)`,
      `${(median(r.walkedOurs.map((l) => l.rps)) / median(r.walkedTheirs.map((l) => l.rps))).toFixed(2)}x, CPU/req ${(median(r.walkedTheirs.map((l) => l.cpu)) / median(r.walkedOurs.map((l) => l.cpu))).toFixed(2)}x`,
    ],
    [`${n}: page bytes, seeding through the store`, `${r.bodyBytes} B, ${r.seedS.toFixed(1)} s`],
  );
  if (r.other.length > 0) {
    const otherRps = median(r.other.map((l) => l.rps));
    rows.push(
      [`${n}: other build median`, `${otherRps.toFixed(0)} req/s, ${(median(r.other.map((l) => l.cpu)) * 1000).toFixed(0)} µs CPU/req, ratio ${(otherRps / theirRps).toFixed(2)}x`],
      [`${n}: CPU/req, switchboard / other build`, `${(median(r.ours.map((l) => l.cpu)) / median(r.other.map((l) => l.cpu))).toFixed(2)}x`],
      ...r.walkedOther.map((l, i): [string, string] => [`${n}: distinct pages, round ${i + 1}: switchboard / other build`, `${fmt(r.walkedOurs[i] ?? l)} / ${fmt(l)}`]),
      [
        `${n}: distinct pages, other build median; CPU/req switchboard / other build`,
        `${median(r.walkedOther.map((l) => l.rps)).toFixed(0)} req/s, ${(median(r.walkedOther.map((l) => l.cpu)) * 1000).toFixed(0)} µs CPU/req; ${(median(r.walkedOurs.map((l) => l.cpu)) / median(r.walkedOther.map((l) => l.cpu))).toFixed(2)}x`,
      ],
    );
  }
  if (r.fixed) rows.push([`${n}: switchboard at 1,000 req/s (target p99 < 10 ms)`, fmt(r.fixed)]);
}
report(`filtered page of 50 (${QUERY}; ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_S} s)`, rows);
