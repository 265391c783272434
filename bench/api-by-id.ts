// GET a device by id: Switchboard's serve mode against bare Fastify handing back the same bytes
// from a Map (bench/lib/bare-fastify.ts), both child processes loaded over loopback by autocannon
// from this process, in alternating rounds so a load that comes and goes hits both alike. The
// difference is what Switchboard spends per request: the guard, the token, the envelope.
// BENCH_CPU_PROF=<dir> writes CPU profiles of the Switchboard child there and of the bare Fastify
// child in <dir>/bare (the two side by side say where the difference goes); BENCH_SERVER=<path>
// runs another build's out/main/server.js (to compare two commits on one machine at one load);
// BENCH_AB_SERVER=<path> runs a second build beside it, in the same alternating rounds (ours,
// the other build, bare Fastify), and prints the two builds' CPU per request side by side.
// The reference checks the Host and the token and sends the same headers as ours (same bytes but
// the request id and Date); a second reference in the same rounds sends the body alone (the
// issue's own reference, sessions 11-13), and the ratio is printed against both.
// BENCH_BARE_PLAIN=1 runs the body-only one alone.
// BENCH_PERF=1 (Linux, perf installed): each measured round of each server is also recorded by
// `perf record -e cpu-clock -g` (on-CPU samples only: time a loaded machine kept a process off the
// CPU is not in them, as it is in --cpu-prof's wall-clock samples), its JavaScript named through
// --perf-basic-prof, and the on-CPU µs per request printed by kind of code (kernel, V8 and Node's
// C++, JIT code, libc) and by function, each server beside the others.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { percentile, report } from "./report.js";
import { benchLogin } from "./lib/login.js";
import { benchDevice, cpuMs, stop, waitForLine } from "./lib/process.js";
import { sameWorkFile } from "./lib/bare-same.js";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 1_000);
const CONNECTIONS = 10;
const WARM_UP_S = 2;
const PROFILE_DIR = process.env.BENCH_CPU_PROF;
const SERVER = process.env.BENCH_SERVER ?? join(import.meta.dirname, "../out/main/server.js");
const AB_SERVER = process.env.BENCH_AB_SERVER;
const PERF = process.env.BENCH_PERF === "1";
/** perf's sampling rate with BENCH_PERF: one sample per ~500 µs of a thread's CPU. */
const PERF_HZ = 1999;
const PERF_ARGS = PERF ? ["--perf-basic-prof"] : [];
/**
 * No media workers (as list-pages runs): a GET uses none, and idle workers still use CPU of their
 * own (about 3% of a core each, session 18), which /proc counts into the server's CPU per request.
 * BENCH_MEDIA_WORKERS=default keeps serve mode's default (one per core), as sessions 11-17 ran.
 */
const MEDIA_ARGS = process.env.BENCH_MEDIA_WORKERS === "default" ? [] : ["--media-workers", process.env.BENCH_MEDIA_WORKERS ?? "0"];

interface Load {
  rps: number;
  p99: number;
  errors: number;
  /** Server CPU per request, ms. */
  cpu: number;
  /** Requests answered in the load. */
  requests: number;
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
    requests: result.requests.total,
  };
}



interface Target {
  name: string;
  child: ChildProcess;
  url: string;
  headers: Record<string, string>;
}

/** Starts a Switchboard build, signs in and creates the devices; the path of one device. */
async function startSwitchboard(name: string, server: string, dataDir: string, profileArgs: string[]): Promise<Target> {
  const child = spawn(process.execPath, [...PERF_ARGS, ...profileArgs, server, "--port", "0", "--data-dir", dataDir, "--log-level", "warn", ...MEDIA_ARGS], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const base = (await waitForLine(child, /Switchboard is serving http:\/\/127\.0\.0\.1:[1-9]\d*/)).replace("Switchboard is serving ", "");
  const { headers, url } = await seedDevices(base);
  return { name, child, url, headers };
}

/** Signs in to the server at `base` and creates DEVICES devices (50 at a time): the token's
 *  headers and the URL of the 51st device, the one the rounds GET. */
async function seedDevices(base: string): Promise<{ headers: Record<string, string>; url: string; token: string }> {
  const auth = await benchLogin(base);
  const headers = { "X-Auth-Token": auth.token };
  const path = `/v2/accounts/${auth.accountId}/devices`;
  const ids: string[] = [];
  for (let i = 0; i < DEVICES; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, DEVICES - i) }, (_, j) =>
        fetch(`${base}${path}`, { method: "PUT", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify({ data: benchDevice(i + j) }) }),
      ),
    );
    for (const res of batch) ids.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  return { headers, url: `${base}${path}/${ids[50] ?? ""}`, token: auth.token };
}

/**
 * BENCH_HOOK_COSTS=1: what the request path's extra hooks cost on their own, in one process, no
 * Switchboard code: Fastify serving one body on GET /v2/x/:id bare, with @fastify/websocket
 * registered (its onRequest and onResponse hooks and handler wrapper on every route), with it in
 * a scope of its own beside one WebSocket route (what the server does since session 17), with two
 * preParsing hooks (ours: the app's 404 one and the endpoint's), and with both. One keep-alive
 * client asks one request at a time; alternating rounds; CPU of the whole process per request
 * (client included, the same for all four), by process.cpuUsage.
 */
const dataDirs: string[] = [];

async function hookCosts(): Promise<void> {
  const { default: Fastify } = await import("fastify");
  const { default: fastifyWebsocket } = await import("@fastify/websocket");
  const { Agent, request } = await import("node:http");
  const body = JSON.stringify({ status: "success", data: { id: "x".repeat(32), name: "device" }, revision: `1-${"0".repeat(32)}` });
  const variants: { name: string; ws: boolean | "scoped"; preParsing: boolean }[] = [
    { name: "bare", ws: false, preParsing: false },
    { name: "+ @fastify/websocket", ws: true, preParsing: false },
    { name: "+ @fastify/websocket in a scope of its own (session 17)", ws: "scoped", preParsing: false },
    { name: "+ 2 preParsing hooks", ws: false, preParsing: true },
    { name: "+ both", ws: true, preParsing: true },
  ];
  // BENCH_HOOK_INJECT=1: each request through app.inject (Fastify's whole request path, hooks
  // included, no socket, no wake-up): far less noise than the keep-alive ping-pong on a busy machine.
  const INJECT = process.env.BENCH_HOOK_INJECT === "1";
  const PER_ROUND = Number(process.env.BENCH_HOOK_REQUESTS ?? (INJECT ? 20_000 : 3_000));
  const servers: { name: string; url: URL; agent: InstanceType<typeof Agent>; close: () => Promise<void>; inject: () => Promise<unknown>; cpu: number[] }[] = [];
  for (const v of variants) {
    const app = Fastify({ logger: false });
    if (v.ws === true) await app.register(fastifyWebsocket);
    // As server/http/app.ts registerWebsocket does since session 17: the plugin and its one
    // WebSocket route in a scope of their own, the measured route outside it.
    if (v.ws === "scoped") {
      await app.register(async (scope) => {
        await scope.register(fastifyWebsocket);
        scope.get("/ws", { websocket: true }, (socket) => socket.close());
      });
    }
    if (v.preParsing) app.addHook("preParsing", (_request, _reply, payload, done) => done(null, payload));
    app.get("/v2/x/:id", { ...(v.preParsing ? { preParsing: (_request, _reply, payload, done) => done(null, payload) } : {}) }, (_request, reply) => {
      reply.type("application/json; charset=utf-8").send(body);
    });
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    const path = `/v2/x/${"a".repeat(32)}`;
    servers.push({
      name: v.name,
      url: new URL(`${address}${path}`),
      agent: new Agent({ keepAlive: true, maxSockets: 1 }),
      close: () => app.close(),
      inject: () => app.inject({ method: "GET", url: path }),
      cpu: [],
    });
  }
  const ask = async (s: (typeof servers)[number]): Promise<void> => {
    if (INJECT) await s.inject();
    else await askOver(s);
  };
  const askOver = (s: (typeof servers)[number]): Promise<void> =>
    new Promise((resolve, reject) => {
      const req = request(s.url, { agent: s.agent }, (res) => {
        res.resume();
        res.on("end", () => resolve());
      });
      req.on("error", reject);
      req.end();
    });
  for (const s of servers) for (let i = 0; i < PER_ROUND; i++) await ask(s);
  for (let round = 0; round < ROUNDS * 2; round++) {
    for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
      const before = process.cpuUsage();
      for (let i = 0; i < PER_ROUND; i++) await ask(s);
      const used = process.cpuUsage(before);
      s.cpu.push((used.user + used.system) / PER_ROUND);
    }
  }
  const bare = percentile(servers[0]?.cpu ?? [], 50);
  report(
    `request path hooks alone (one process, ${INJECT ? "app.inject" : "one keep-alive client"}, ${ROUNDS * 2} alternating rounds of ${PER_ROUND})`,
    servers.map((s) => [s.name, `${percentile(s.cpu, 50).toFixed(1)} µs CPU/req (median; ${s.cpu.map((c) => c.toFixed(0)).join(" ")}), ${(percentile(s.cpu, 50) - bare).toFixed(1)} µs over bare`]),
  );
  for (const s of servers) {
    s.agent.destroy();
    await s.close();
  }
}

/**
 * BENCH_IN_PROCESS_OTHER=<another checkout's root>: GET by id with no other process in the
 * figure. This tree's server and the other tree's (each its server/index.ts through tsx, started
 * in this process on loopback with no media workers, signed in, BENCH_DEVICES devices made) and
 * bare Fastify doing the same work (the Host and token checks, the same headers and body) each
 * answer one keep-alive client asking one request at a time, in alternating rounds; CPU of the
 * whole process per request (the client's is the same for all three) by process.cpuUsage. The
 * difference between two of them is one's own extra work per request, whatever the machine's
 * load (which changes the rounds' spread, not what they count).
 */
async function inProcess(otherRoot: string): Promise<void> {
  const { default: Fastify } = await import("fastify");
  const { Agent, request } = await import("node:http");
  const { localServerConfig } = await import("../test/helpers/api.js");
  type Start = typeof import("../server/index.js").startServer;
  const PER_ROUND = Number(process.env.BENCH_IN_PROCESS_REQUESTS ?? 4_000);
  interface Served {
    name: string;
    url: URL;
    headers: Record<string, string>;
    agent: InstanceType<typeof Agent>;
    close: () => Promise<void>;
    cpu: number[];
  }
  const served: Served[] = [];
  let sample: { body: string; headers: Record<string, string>; token: string } | undefined;
  for (const [name, root] of [
    ["this tree", join(import.meta.dirname, "..")],
    ["other tree", otherRoot],
  ] as const) {
    const { startServer } = (await import(join(root, "server/index.ts"))) as { startServer: Start };
    const dir = await mkdtemp(join(tmpdir(), "sb-bench-by-id-inproc-"));
    dataDirs.push(dir);
    const server = await startServer({ ...localServerConfig(dir), mediaWorkers: 0 });
    const seeded = await seedDevices(server.url);
    const headers = seeded.headers;
    const url = new URL(seeded.url);
    if (sample === undefined) {
      const res = await fetch(url, { headers });
      const same: Record<string, string> = {};
      res.headers.forEach((value, key) => {
        if (!["date", "connection", "keep-alive", "content-length", "content-type", "transfer-encoding", "x-request-id", "etag"].includes(key)) same[key] = value;
      });
      sample = { body: await res.text(), headers: same, token: seeded.token };
    }
    served.push({ name, url, headers, agent: new Agent({ keepAlive: true, maxSockets: 1 }), close: () => server.close(), cpu: [] });
  }
  if (sample === undefined) throw new Error("no answer to copy");
  // bench/lib/bare-fastify.ts's same work, in this process.
  const { body, token } = sample;
  const sameHeaders = sample.headers;
  const etag = `"${(JSON.parse(body) as { revision?: string }).revision ?? ""}"`;
  const { randomUUID } = await import("node:crypto");
  const bare = Fastify({ logger: false });
  let host = "";
  bare.get("/v2/accounts/:account_id/devices/:id", async (req, reply) => {
    if (req.headers.host !== host) return reply.status(421).send({ error: "421" });
    if (req.headers["x-auth-token"] !== token) return reply.status(401).send({ error: "401" });
    reply.header("X-Request-ID", randomUUID().replaceAll("-", "")).headers(sameHeaders).header("ETag", etag);
    return reply.type("application/json; charset=utf-8").send(body);
  });
  const address = await bare.listen({ host: "127.0.0.1", port: 0 });
  host = new URL(address).host;
  const first = served[0];
  if (first === undefined) throw new Error("no server");
  served.push({ name: "bare Fastify (same work)", url: new URL(`${address}${first.url.pathname}`), headers: first.headers, agent: new Agent({ keepAlive: true, maxSockets: 1 }), close: () => bare.close(), cpu: [] });

  const askHttp = (s: Served): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(s.url, { agent: s.agent, headers: s.headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end();
    });
  // BENCH_IN_PROCESS_RAW=1: the client is one raw keep-alive socket per server writing the request's
  // bytes and reading the answer's head and Content-Length itself: a few µs of the process's CPU
  // per request instead of Node's http client's ~100-200, so the servers' own difference is a far
  // larger part of what the rounds count.
  const RAW = process.env.BENCH_IN_PROCESS_RAW === "1";
  const raws = new Map<Served, (s: Served) => Promise<number>>();
  if (RAW) {
    const { connect } = await import("node:net");
    for (const s of served) {
      const socket = connect(Number(s.url.port), s.url.hostname);
      await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
      socket.setNoDelay(true);
      const head = `GET ${s.url.pathname} HTTP/1.1\r\nHost: ${s.url.host}\r\n${Object.entries(s.headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join("")}\r\n`;
      let pending: { resolve: (status: number) => void; chunks: Buffer[]; length: number } | undefined;
      socket.on("data", (chunk: Buffer) => {
        if (pending === undefined) return;
        pending.chunks.push(chunk);
        pending.length += chunk.length;
        const all = pending.chunks.length === 1 ? chunk : Buffer.concat(pending.chunks);
        const end = all.indexOf("\r\n\r\n");
        if (end < 0) return;
        const text = all.toString("latin1", 0, end);
        const declared = /\r\ncontent-length: (\d+)/i.exec(text);
        if (all.length < end + 4 + Number(declared?.[1] ?? 0)) return;
        const done = pending;
        pending = undefined;
        done.resolve(Number(text.slice(9, 12)));
      });
      raws.set(s, () => new Promise((resolve) => {
        pending = { resolve, chunks: [], length: 0 };
        socket.write(head);
      }));
      const close = s.close;
      s.close = async () => {
        socket.destroy();
        await close();
      };
    }
  }
  const ask = (s: Served): Promise<number> => raws.get(s)?.(s) ?? askHttp(s);
  for (const s of served) {
    for (let i = 0; i < PER_ROUND; i++) {
      const status = await ask(s);
      if (status !== 200) throw new Error(`${s.name} answered ${status}`);
    }
  }
  for (let round = 0; round < ROUNDS * 2; round++) {
    for (const s of round % 2 === 0 ? served : [...served].reverse()) {
      const before = process.cpuUsage();
      for (let i = 0; i < PER_ROUND; i++) await ask(s);
      const used = process.cpuUsage(before);
      s.cpu.push((used.user + used.system) / PER_ROUND);
    }
  }
  const median = (values: number[]): number => percentile(values, 50);
  const [mine, other, ref] = served.map((s) => median(s.cpu));
  report(
    `GET by id in one process (one keep-alive client, ${ROUNDS * 2} alternating rounds of ${PER_ROUND}; CPU of the process, client included, per request)`,
    [
      ...served.map((s): [string, string] => [s.name, `${median(s.cpu).toFixed(1)} µs (median; ${s.cpu.map((c) => c.toFixed(1)).join(" ")})`]),
      ["this tree / other tree", mine !== undefined && other !== undefined ? `${(mine / other).toFixed(3)}x, ${(mine - other).toFixed(1)} µs` : "-"],
      ["over bare Fastify: this tree, other tree", mine !== undefined && other !== undefined && ref !== undefined ? `${(mine - ref).toFixed(1)} µs, ${(other - ref).toFixed(1)} µs` : "-"],
    ],
  );
  for (const s of served) {
    s.agent.destroy();
    await s.close();
  }
}

if (process.env.BENCH_IN_PROCESS_OTHER !== undefined) {
  try {
    await inProcess(process.env.BENCH_IN_PROCESS_OTHER);
  } finally {
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

if (process.env.BENCH_HOOK_COSTS === "1") {
  await hookCosts();
  process.exit(0);
}

const children: ChildProcess[] = [];
try {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-by-id-"));
  dataDirs.push(dataDir);
  const profileArgs = PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`];
  const sb = await startSwitchboard("switchboard", SERVER, dataDir, profileArgs);
  const targets: Target[] = [sb];
  if (AB_SERVER !== undefined) {
    const otherDir = await mkdtemp(join(tmpdir(), "sb-bench-by-id-b-"));
    dataDirs.push(otherDir);
    targets.push(await startSwitchboard("other build", AB_SERVER, otherDir, []));
  }
  // The reference serves what Switchboard answers for each device, byte for byte.
  const devicesUrl = sb.url.slice(0, sb.url.lastIndexOf("/"));
  const list = (await (await fetch(`${devicesUrl}?paginate=false`, { headers: sb.headers })).json()) as { data: { id: string }[] };
  const bodies: Record<string, string> = {};
  for (const { id } of list.data.slice(0, 100)) bodies[id] = await (await fetch(`${devicesUrl}/${id}`, { headers: sb.headers })).text();
  const measured = await fetch(sb.url, { headers: sb.headers });
  bodies[sb.url.slice(sb.url.lastIndexOf("/") + 1)] = await measured.text();
  const bodiesFile = join(dataDir, "bare-bodies.json");
  await writeFile(bodiesFile, JSON.stringify(bodies));
  const sameFile = await sameWorkFile(dataDir, sb.headers["X-Auth-Token"] ?? "", measured.headers);
  const bareProfileArgs = PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(PROFILE_DIR, "bare")}`];
  const bare = spawn(process.execPath, [...PERF_ARGS, ...bareProfileArgs, "--import", "tsx", join(import.meta.dirname, "lib/bare-fastify.ts"), bodiesFile, ...sameFile], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(bare);
  const bareBase = (await waitForLine(bare, /http:\/\/127\.0\.0\.1:[1-9]\d*/)).trim();
  const bareTarget: Target = { name: "bare Fastify", child: bare, url: bareBase + new URL(sb.url).pathname, headers: sb.headers };
  targets.push(bareTarget);
  // The issue's own reference (sessions 11-13), in the same rounds: the body alone.
  let plainTarget: Target | undefined;
  if (sameFile.length > 0) {
    const plain = spawn(process.execPath, [...PERF_ARGS, "--import", "tsx", join(import.meta.dirname, "lib/bare-fastify.ts"), bodiesFile], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(plain);
    const plainBase = (await waitForLine(plain, /http:\/\/127\.0\.0\.1:[1-9]\d*/)).trim();
    plainTarget = { name: "bare Fastify, body only", child: plain, url: plainBase + new URL(sb.url).pathname, headers: sb.headers };
    targets.push(plainTarget);
  }
  const references = new Set([bareTarget, ...(plainTarget ? [plainTarget] : [])]);
  const ours = targets.filter((t) => !references.has(t));

  // A first short load on each compiles the hot paths: the rounds measure neither cold.
  for (const t of targets) await load(t.child, t.url, t.headers, undefined, WARM_UP_S);
  const rounds = new Map<Target, Load[]>(targets.map((t) => [t, []]));
  const onCpu = new Map<Target, OnCpu>(targets.map((t) => [t, { requests: 0, kinds: new Map(), symbols: new Map() }]));
  for (let round = 0; round < ROUNDS; round++) {
    // The order turned every other round: the first server of a round paid 3-6% more (session 22).
    for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
      const recording = PERF ? await perfRecord(t.child.pid ?? 0) : undefined;
      const l = await load(t.child, t.url, t.headers);
      rounds.get(t)?.push(l);
      const seen = onCpu.get(t);
      if (recording !== undefined && seen !== undefined) await recording.stop(seen, l.requests);
    }
  }
  const fixed = ours.map((t) => [t, { rps: 0, p99: 0, errors: 0, cpu: 0, requests: 0 }] as [Target, Load]);
  for (const entry of fixed) entry[1] = await load(entry[0].child, entry[0].url, entry[0].headers, 1_000);

  const median = (values: number[]): number => percentile(values, 50);
  const fmt = (l: Load): string => `${l.rps.toFixed(0)} req/s, p99 ${l.p99} ms, ${(l.cpu * 1000).toFixed(0)} µs CPU/req${l.errors ? `, ${l.errors} errors` : ""}`;
  const medianRps = (t: Target): number => median((rounds.get(t) ?? []).map((l) => l.rps));
  const medianCpu = (t: Target): number => median((rounds.get(t) ?? []).map((l) => l.cpu));
  const rows: [string, string][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) rows.push([`round ${round + 1} ${t.name}`, fmt((rounds.get(t) ?? [])[round] ?? { rps: 0, p99: 0, errors: 0, cpu: 0, requests: 0 })]);
  }
  for (const t of targets) rows.push([`${t.name} median`, `${medianRps(t).toFixed(0)} req/s, ${(medianCpu(t) * 1000).toFixed(0)} µs CPU/req`]);
  for (const t of ours) {
    for (const ref of references) {
      rows.push([`${t.name} / ${ref.name}: ratio (target >= 0.85x)`, `${(medianRps(t) / medianRps(ref)).toFixed(2)}x, CPU/req ${(medianCpu(ref) / medianCpu(t)).toFixed(2)}x`]);
    }
  }
  if (AB_SERVER !== undefined && targets[1] !== undefined) {
    rows.push(["CPU/req, switchboard / other build", `${(medianCpu(sb) / medianCpu(targets[1])).toFixed(2)}x`]);
  }
  for (const [t, l] of fixed) rows.push([`${t.name} at 1,000 req/s`, fmt(l)]);
  if (PERF) rows.push(...onCpuRows(targets.map((t) => [t.name, onCpu.get(t)] as [string, OnCpu | undefined])));
  report(`GET device by id (${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION_S} s, ${DEVICES} devices)`, rows);
} finally {
  for (const child of children.reverse()) await stop(child);
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  // --perf-basic-prof's symbol maps (perf reads them at each round's report, done by now).
  if (PERF) for (const child of children) await rm(`/tmp/perf-${child.pid ?? 0}.map`, { force: true });
}

/** On-CPU samples of one server over its measured rounds (BENCH_PERF). */
interface OnCpu {
  requests: number;
  /** Samples by kind of code: the kernel, the node binary (V8's builtins and runtime, GC, Node's C++), JIT code, libc. */
  kinds: Map<string, number>;
  symbols: Map<string, number>;
}

/** Starts `perf record` on a process; `stop` ends it and adds its samples and `requests` to `into`. */
async function perfRecord(pid: number): Promise<{ stop(into: OnCpu, requests: number): Promise<void> }> {
  const file = join(tmpdir(), `sb-bench-perf-${pid}-${Date.now()}.data`);
  const perf = spawn("perf", ["record", "-e", "cpu-clock", "-F", String(PERF_HZ), "-g", "-p", String(pid), "-o", file], { stdio: "ignore" });
  // perf attaches to the process's threads before the round's load starts.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return {
    async stop(into, requests) {
      perf.kill("SIGINT");
      await new Promise((resolve) => perf.once("exit", resolve));
      const text = execFileSync("perf", ["report", "-i", file, "--stdio", "--no-children", "-g", "none", "--sort", "dso,sym", "-n"], {
        encoding: "utf8",
        maxBuffer: 1 << 28,
        stdio: ["ignore", "pipe", "ignore"],
      });
      await rm(file, { force: true });
      into.requests += requests;
      for (const line of text.split("\n")) {
        // "  12.34%  1234  node  [.] Builtins_LoadIC"
        const m = /^\s*[\d.]+%\s+(\d+)\s+(\S.*?)\s+\[([.k])\]\s+(.*)$/.exec(line);
        if (m === null) continue;
        const samples = Number(m[1]);
        const dso = m[2] ?? "";
        const kind = m[3] === "k" ? "kernel" : dso.startsWith("[JIT]") ? "JIT code (JavaScript, regexps)" : dso === "node" ? "node (V8 builtins and runtime, GC, Node's C++)" : dso.startsWith("libc") ? "libc" : "other";
        into.kinds.set(kind, (into.kinds.get(kind) ?? 0) + samples);
        // A JIT function's name without its optimisation tier or its build's path, so two builds' names match.
        const name = (m[4] ?? "").replace(/^JS:[*~^+-]?/, "").replace(/\S*\/out\/main\//, "").replace(/:\d+:\d+$/, "").trim();
        into.symbols.set(name, (into.symbols.get(name) ?? 0) + samples);
      }
    },
  };
}

/** Rows of on-CPU µs per request, by kind of code and by function (the largest differences first). */
function onCpuRows(seen: [string, OnCpu | undefined][]): [string, string][] {
  const perRequest = (samples: number, o: OnCpu): number => (o.requests > 0 ? (samples * 1e6) / PERF_HZ / o.requests : Number.NaN);
  const rows: [string, string][] = [];
  const names = seen.map(([n]) => n).join(" / ");
  const kinds = new Set(seen.flatMap(([, o]) => [...(o?.kinds.keys() ?? [])]));
  const total = (o: OnCpu | undefined): number => (o === undefined ? Number.NaN : perRequest([...o.kinds.values()].reduce((a, b) => a + b, 0), o));
  rows.push([`on-CPU µs/req (perf), ${names}`, seen.map(([, o]) => total(o).toFixed(1)).join(" / ")]);
  for (const kind of kinds) rows.push([`  ${kind}`, seen.map(([, o]) => (o === undefined ? "-" : perRequest(o.kinds.get(kind) ?? 0, o).toFixed(1))).join(" / ")]);
  const symbols = new Set(seen.flatMap(([, o]) => [...(o?.symbols.keys() ?? [])]));
  const of = (o: OnCpu | undefined, s: string): number => (o === undefined ? 0 : perRequest(o.symbols.get(s) ?? 0, o));
  const [first] = seen;
  const spread = (s: string): number => Math.max(...seen.map(([, o]) => of(o, s))) - Math.min(...seen.map(([, o]) => of(o, s)));
  const top = [...symbols].sort((a, b) => spread(b) - spread(a) || of(first?.[1], b) - of(first?.[1], a)).slice(0, 25);
  for (const s of top) rows.push([`  ${s.slice(0, 90)}`, seen.map(([, o]) => of(o, s).toFixed(2)).join(" / ")]);
  return rows;
}
