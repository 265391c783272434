// Cold start and first call of serve mode (issue 17, "Start"), each beside a reference in the same
// run, the runs alternating so load falls on both alike:
// - cold start: spawn `node out/main/server.js --port 0` on a fresh data directory (so the demo
//   account is seeded too) to the first HTTP 200 of a real API answer: a demo user's sign-in
//   (PUT /v2/user_auth, 201, asked for the moment the server says it is serving) and then an
//   authenticated read of its account (GET /v2/accounts/{id}, the "first 200"; since session 14,
//   before which it was `/`, the console's page, which needs none of the API's work); references:
//   a bare Fastify 5 process answering `/` (the framework's own floor) and `node -e 0` (the runtime's).
// - first call: spawn the server and, the moment it says it is serving, sign in and place a
//   simulated call to the Sales queue (5001); timed from the POST to its 201 (the caller's leg has
//   its offer, made in a media worker) and to the queue answering it (the server's leg made too).
//   Reference: a second call on the same server, every worker warm.
// Also the main thread's CPU time to the first 200 and when the server says it is serving (from
// /proc, Linux only): on a loaded machine the wall times mostly measure the other processes, the
// CPU time much less so; the second leaves out what the server does in idle time after listen.
// BENCH_RUNS sets the runs of each (default 15); BENCH_SERVER_JS another build's server.js, or
// several separated by commas (a before/after comparison: the builds take turns in each round, in
// an order reversed every other round).
// Since session 15 the built server.js compiles the server's bundle with a V8 code cache
// (server/code-cache.ts): each build gets a cache folder of its own, filled by one untimed start
// before the rounds (the figures are a start with a warm cache, as every start after the first
// one of an install is); `<server.js>#nocache` runs the same build with the cache off, and
// `<server.js>#NAME=value` (several joined by `#`) runs it with those environment variables set
// (the same build with a switch on and off, e.g. `#SWITCHBOARD_CHECK_SCHEMAS=1`); a switch that starts
// with `--` is a flag for node itself, given before the script (e.g. `#--min-semi-space-size=16`).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { percentile, report } from "./report.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
/** BENCH_FIRST_CALLS=0 leaves out the first-call rounds (cold starts only: more rounds in the time). */
const FIRST_CALLS = process.env.BENCH_FIRST_CALLS !== "0";
const root = join(import.meta.dirname, "..");
const serverFiles = (process.env.BENCH_SERVER_JS ?? join(root, "out/main/server.js")).split(",");
const URL_LINE = /(?:Switchboard is serving|bare fastify at) (http:\/\/127\.0\.0\.1:\d+)/;

// The bare reference: Fastify from the same node_modules, one route, listening on port 0.
const BARE = `import Fastify from ${JSON.stringify(import.meta.resolve("fastify"))};
const app = Fastify();
app.get("/", async () => "ok");
await app.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write("bare fastify at http://127.0.0.1:" + app.server.address().port + "\\n");
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
`;

interface Started {
  child: ChildProcess;
  url: string;
  t0: number;
  stop(): Promise<void>;
}

async function start(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const m = URL_LINE.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}: ${out}`)));
  });
  return {
    child,
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

async function withDataDir<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "sb-bench-cold-"));
  try {
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A server entry as BENCH_SERVER_JS names it: the file, then `#nocache` or `#NAME=value` switches. */
const fileOf = (serverJs: string): string => serverJs.split("#")[0] ?? serverJs;
const noCache = (serverJs: string): boolean => serverJs.split("#").includes("nocache");
const envOf = (serverJs: string): NodeJS.ProcessEnv =>
  Object.fromEntries(
    serverJs
      .split("#")
      .slice(1)
      .filter((s) => s.includes("=") && !s.startsWith("--"))
      .map((s) => [s.slice(0, s.indexOf("=")), s.slice(s.indexOf("=") + 1)]),
  );
/** `#--flag` switches: Node's (or V8's) own flags for that entry's process, before the script. */
const nodeFlags = (serverJs: string): string[] => serverJs.split("#").slice(1).filter((s) => s.startsWith("--"));
const serveArgs = (serverJs: string, dir: string) => [...nodeFlags(serverJs), fileOf(serverJs), "--port", "0", "--events-port", "0", "--data-dir", dir, "--log-level", "warn"];

/** Each entry's own code cache folder (or "off" for `#nocache`): an entry never reads another's cache. */
const cacheDirs = new Map<string, string>();
const serveEnv = (serverJs: string): NodeJS.ProcessEnv => ({ ...process.env, ...envOf(serverJs), SWITCHBOARD_CODE_CACHE: noCache(serverJs) ? "off" : (cacheDirs.get(serverJs) ?? "off") });

/** CPU time (user + system) of a process's main thread so far, in ms; NaN where /proc is missing. */
async function mainThreadCpuMs(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const stat = await readFile(`/proc/${pid}/task/${pid}/stat`, "utf8").catch(() => undefined);
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in ticks (100 per s).
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : Number.NaN;
}

const DEMO_CREDENTIALS = createHash("md5").update("admin:switchboard").digest("hex");

/** The first API answers: the sign-in's 201 and then an authenticated read's 200 (each must be first time right). */
async function firstApiOk(url: string): Promise<{ signedIn: number }> {
  const login = await api<{ auth_token: string; data: { account_id: string } }>(url, "PUT", "/v2/user_auth", { credentials: DEMO_CREDENTIALS, account_name: "demo" });
  if (login.status !== 201) throw new Error(`sign-in answered ${login.status}`);
  const signedIn = performance.now();
  const read = await api(url, "GET", `/v2/accounts/${login.body.data.account_id}`, undefined, login.body.auth_token);
  if (read.status !== 200) throw new Error(`the account's read answered ${read.status}`);
  return { signedIn };
}

function serverColdStart(serverJs: string): Promise<{ wall: number; signedIn: number; cpu: number; cpuServing: number }> {
  return withDataDir(async (dir) => {
    const s = await start(serveArgs(serverJs, dir), serveEnv(serverJs));
    try {
      const cpuServing = await mainThreadCpuMs(s.child.pid);
      const { signedIn } = await firstApiOk(s.url);
      const wall = performance.now() - s.t0;
      return { wall, signedIn: signedIn - s.t0, cpu: await mainThreadCpuMs(s.child.pid), cpuServing };
    } finally {
      await s.stop();
    }
  });
}

async function bareColdStart(script: string): Promise<number> {
  const s = await start([script]);
  try {
    await firstOk(s.url);
    return performance.now() - s.t0;
  } finally {
    await s.stop();
  }
}

async function nodeNothing(): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return performance.now() - t0;
}

async function api<T>(url: string, method: string, path: string, data?: unknown, token?: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "Content-Type": "application/json", ...(token ? { "X-Auth-Token": token } : {}) },
    body: data === undefined ? undefined : JSON.stringify({ data }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** ms from a sim call's POST to its 201, and to the queue answering it. */
async function simCall(url: string, token: string, accountId: string): Promise<{ created: number; answered: number; posted: number }> {
  const t0 = performance.now();
  const call = { to: "5001", caller_id_name: "Bench", caller_id_number: "+14155550100", audio: "tone_stream://1200" };
  const posted = await api<{ data: { id: string } }>(url, "POST", `/v2/accounts/${accountId}/sim/calls`, call, token);
  if (posted.status !== 201) throw new Error(`sim call refused: ${JSON.stringify(posted.body)}`);
  const created = performance.now() - t0;
  const path = `/v2/accounts/${accountId}/sim/calls/${posted.body.data.id}`;
  for (;;) {
    const row = await api<{ data: { state: string } }>(url, "GET", path, undefined, token);
    if (row.body.data.state === "answered") break;
    if (row.body.data.state === "ended") throw new Error("the sim call ended unanswered");
  }
  const answered = performance.now() - t0;
  await api(url, "POST", path, { action: "hangup" }, token);
  return { created, answered, posted: t0 };
}

type SimCallTimes = Awaited<ReturnType<typeof simCall>>;

/**
 * The first and second calls of a start, and the first's answer timed from the spawn too (a start
 * that serves sooner places its first call sooner, while its media workers still load: the
 * figure from the POST alone can then grow while the whole wait did not).
 */
async function firstCalls(serverJs: string): Promise<{ first: SimCallTimes; second: SimCallTimes; fromSpawn: number; serving: number }> {
  return withDataDir(async (dir) => {
    const s = await start(serveArgs(serverJs, dir), serveEnv(serverJs));
    const serving = performance.now() - s.t0;
    try {
      const login = await api<{ auth_token: string; data: { account_id: string } }>(s.url, "PUT", "/v2/user_auth", { credentials: DEMO_CREDENTIALS, account_name: "demo" });
      const first = await simCall(s.url, login.body.auth_token, login.body.data.account_id);
      const fromSpawn = first.posted + first.answered - s.t0;
      const second = await simCall(s.url, login.body.auth_token, login.body.data.account_id);
      return { first, second, fromSpawn, serving };
    } finally {
      await s.stop();
    }
  });
}

const ms = (v: number) => `${v.toFixed(0)} ms`;
const median = (v: number[]) => percentile(v, 50);

const bareDir = await mkdtemp(join(tmpdir(), "sb-bench-bare-"));
for (const f of serverFiles) {
  if (noCache(f)) continue;
  cacheDirs.set(f, join(bareDir, `code-cache-${cacheDirs.size}`));
  // The untimed start that writes the cache: it is written a turn after the server serves, and kept only on a clean stop.
  await serverColdStart(f);
}
const bareScript = join(bareDir, "bare-fastify.mjs");
await writeFile(bareScript, BARE);
const ours = new Map(serverFiles.map((f) => [f, [] as { wall: number; signedIn: number; cpu: number; cpuServing: number }[]]));
const calls = new Map(serverFiles.map((f) => [f, [] as Awaited<ReturnType<typeof firstCalls>>[]]));
const bare: number[] = [];
const nothing: number[] = [];
const loads: number[] = [];
try {
  for (let i = 0; i < RUNS; i++) {
    // The builds' order turns round every round, so neither is always the one after a bare start.
    const order = i % 2 === 0 ? serverFiles : [...serverFiles].reverse();
    for (const f of order) ours.get(f)?.push(await serverColdStart(f));
    bare.push(await bareColdStart(bareScript));
    nothing.push(await nodeNothing());
    if (FIRST_CALLS) for (const f of order) calls.get(f)?.push(await firstCalls(f));
    loads.push(loadavg()[0]);
  }
} finally {
  await rm(bareDir, { recursive: true, force: true });
}

const load = `load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`;
for (const serverJs of serverFiles) {
  const starts = ours.get(serverJs) ?? [];
  const walls = starts.map((s) => s.wall);
  const cpus = starts.map((s) => s.cpu);
  report(`cold start of ${serverJs} (serve mode, fresh data dir, to the first API 200: sign-in, then a read), ${RUNS} runs alternating, ${load}`, [
    ["switchboard, median / p90", `${ms(median(walls))} / ${ms(percentile(walls, 90))}`],
    ["switchboard, to the sign-in's 201, median", ms(median(starts.map((s) => s.signedIn)))],
    ["switchboard, main thread's CPU to the first 200, median", ms(median(cpus))],
    ["switchboard, main thread's CPU when it says it is serving, median", ms(median(starts.map((s) => s.cpuServing)))],
    ["bare Fastify 5, median / p90", `${ms(median(bare))} / ${ms(percentile(bare, 90))}`],
    ["node -e 0, median", ms(median(nothing))],
    ["switchboard / bare Fastify", `${(median(walls) / median(bare)).toFixed(2)}x`],
    ["target", `< 500 ms: ${median(walls) < 500 ? "met" : "not met"}`],
  ]);
  const made = calls.get(serverJs) ?? [];
  if (made.length === 0) continue;
  const first = made.map((c) => c.first);
  const second = made.map((c) => c.second);
  report(`first call after start on ${serverJs} (sim call to queue 5001, POSTed once the server says it is serving), ${RUNS} runs`, [
    ["first call: POST → 201, median / max", `${ms(median(first.map((c) => c.created)))} / ${ms(Math.max(...first.map((c) => c.created)))}`],
    ["first call: POST → answered, median / max", `${ms(median(first.map((c) => c.answered)))} / ${ms(Math.max(...first.map((c) => c.answered)))}`],
    ["second call (warm): POST → answered, median", ms(median(second.map((c) => c.answered)))],
    ["spawn → serving / spawn → first call answered, medians", `${ms(median(made.map((c) => c.serving)))} / ${ms(median(made.map((c) => c.fromSpawn)))}`],
    ["first / second", `${(median(first.map((c) => c.answered)) / median(second.map((c) => c.answered))).toFixed(2)}x`],
    ["target", `< 150 ms: ${median(first.map((c) => c.answered)) < 150 ? "met" : "not met"}`],
  ]);
}
