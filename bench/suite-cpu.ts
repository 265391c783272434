// Where the test streams' CPU goes (issue 16): runs one vitest invocation (the projects and files
// given) and samples every process under it from /proc every SAMPLE_MS: utime + stime of each, the
// node processes split into their main thread and their other threads (media worker threads, GC
// helpers, libuv's pool: one name, "node", for all of them), every process sorted into a kind
// (Chromium by its --type=, the serve-mode server, the vitest workers, esbuild, ...). The vitest
// reporter bench/lib/file-marks.ts marks each file's start and end; with the files one at a time,
// a file gets what every kind used between the end of the file before and its own end (its
// worker's start included). CPU a process used after the last sample before it exited is missed
// (at most SAMPLE_MS of it; the reaped-children counters cannot check it: Chromium's processes
// are not all reaped by their parents).
//
//   npx tsx bench/suite-cpu.ts [--json out.json] -- --project serial test/x.test.ts ...
// Without vitest arguments: the serial tier's test/calls/transfer-targets.test.ts (one file, for
// `npm run bench`). BENCH_SUITE_SAMPLE_MS (default 200). Each file's tests get a line of their own (the CPU
// between the test's start and end); BENCH_SUITE_SERIES=1 adds the CPU per second by kind to --json.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SAMPLE_MS = Number(process.env.BENCH_SUITE_SAMPLE_MS ?? 200);
const TICK_MS = 10; // USER_HZ 100

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const own = dash < 0 ? argv : argv.slice(0, dash);
const jsonOut = own.includes("--json") ? own[own.indexOf("--json") + 1] : undefined;
const vitestArgs = dash < 0 ? ["--project", "serial", "test/calls/transfer-targets.test.ts"] : argv.slice(dash + 1);

interface Proc {
  kind: string;
  /** Ticks of the whole process (every thread) and of its main thread, at the last sample. */
  ticks: number;
  mainTicks: number;
  node: boolean;
  /** Its command line's start. */
  args: string;
}

function stat(path: string): string[] | undefined {
  try {
    const text = readFileSync(path, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** A process's command line, split at NULs and spaces (Chromium rewrites its own as one string). */
function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split(/[\0 ]/).filter((a) => a !== "");
  } catch {
    return [];
  }
}

/** The kind of a process, from its command line; `node` says whether its threads are split. */
function kindOf(args: string[]): { kind: string; node: boolean } {
  const exe = args[0] ?? "";
  const line = args.join(" ");
  if (/chrom/.test(exe) || line.includes("--type=")) {
    const type = /--type=([\w-]+)/.exec(line)?.[1];
    if (type === undefined) return { kind: "chromium browser", node: false };
    if (type === "utility") return { kind: `chromium utility ${/--utility-sub-type=([\w.]+)/.exec(line)?.[1] ?? "?"}`, node: false };
    return { kind: `chromium ${type}`, node: false };
  }
  if (/(^|\/)node$/.test(exe) || /(^|\/)tsx$/.test(exe)) {
    if (line.includes("out/main/server.js")) return { kind: "serve-mode server", node: true };
    // The main process is started as vitest.mjs (its file arguments may name anything); its forked
    // workers run a module under vitest/dist/.
    if (args.some((a) => /vitest\.mjs$|\.bin\/vitest$/.test(a))) return { kind: "vitest main", node: true };
    if (/vitest[/\\]dist[/\\]/.test(line)) return { kind: "vitest worker", node: true };
    return { kind: `node ${args.slice(1).find((a) => !a.startsWith("-")) ?? ""}`.trim(), node: true };
  }
  if (/esbuild/.test(exe)) return { kind: "esbuild", node: false };
  if (/electron/.test(line)) return { kind: "electron", node: false };
  if (/espeak/.test(exe)) return { kind: "espeak-ng", node: false };
  return { kind: exe.split("/").pop() ?? "?", node: false };
}

const procs = new Map<number, Proc>();
/** Cumulative ticks per kind (main thread and other threads of node processes apart), per sample. */
const series: { t: number; byKind: Map<string, number> }[] = [];

function sample(root: number): void {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const f = stat(`/proc/${name}/stat`);
    if (f !== undefined) parent.set(Number(name), Number(f[1]));
  }
  const mine = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; p = parent.get(p), hops++) {
      if (p === root || procs.has(p)) return true;
    }
    return false;
  };
  for (const pid of parent.keys()) {
    if (pid !== root && !procs.has(pid) && !mine(pid)) continue;
    const f = stat(`/proc/${pid}/stat`);
    if (f === undefined) continue;
    let p = procs.get(pid);
    if (p === undefined) {
      const args = cmdline(pid);
      const k = kindOf(args);
      p = { kind: k.kind, node: k.node, ticks: 0, mainTicks: 0, args: args.join(" ").slice(0, 160) };
      procs.set(pid, p);
    } else {
      // A fork that exec'd since (a shell such as /usr/bin/chromium's wrapper, a fresh worker,
      // Chromium's zygote children): its command line now.
      const args = cmdline(pid);
      if (args.length > 0) {
        const k = kindOf(args);
        p.kind = k.kind;
        p.node = k.node;
        p.args = args.join(" ").slice(0, 160);
      }
    }
    p.ticks = Number(f[11]) + Number(f[12]);
    if (p.node) {
      const m = stat(`/proc/${pid}/task/${pid}/stat`);
      if (m !== undefined) p.mainTicks = Number(m[11]) + Number(m[12]);
    }
  }
  const byKind = new Map<string, number>();
  for (const p of procs.values()) {
    if (p.node) {
      byKind.set(`${p.kind} (main)`, (byKind.get(`${p.kind} (main)`) ?? 0) + p.mainTicks);
      byKind.set(`${p.kind} (threads)`, (byKind.get(`${p.kind} (threads)`) ?? 0) + p.ticks - p.mainTicks);
    } else byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + p.ticks);
  }
  series.push({ t: Date.now(), byKind });
}

function loadavg(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

const dir = mkdtempSync(join(tmpdir(), "suite-cpu-"));
const marksPath = join(dir, "marks.jsonl");
writeFileSync(marksPath, "");
const loadBefore = loadavg();
const started = Date.now();
const child = spawn(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--reporter=default", "--reporter=./bench/lib/file-marks.ts", ...vitestArgs], {
  stdio: ["ignore", "inherit", "inherit"],
  env: { ...process.env, SUITE_CPU_MARKS: marksPath, CI: "1", NO_COLOR: "1" },
});
const root = child.pid;
if (root === undefined) throw new Error("vitest did not start");
const timer = setInterval(() => sample(root), SAMPLE_MS);
sample(root);
const status = await new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
clearInterval(timer);
const wall = (Date.now() - started) / 1000;
const loadAfter = loadavg();

const marks = readFileSync(marksPath, "utf8")
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => JSON.parse(l) as { t: number; event: "start" | "end" | "test"; file: string; state?: string; name?: string; start?: number });
rmSync(dir, { recursive: true, force: true });

/** Cumulative ticks per kind at time t (the last sample at or before it). */
function at(t: number): Map<string, number> {
  let best = series[0].byKind;
  for (const s of series) if (s.t <= t) best = s.byKind;
  return best;
}

const kinds = [...new Set(series.flatMap((s) => [...s.byKind.keys()]))];
const final = series[series.length - 1].byKind;
const sampledTotal = [...final.values()].reduce((a, b) => a + b, 0);
interface Row {
  file: string;
  state?: string;
  wall: number;
  cpu: Record<string, number>;
  total: number;
}
const rows: Row[] = [];
let from = started;
let fromTicks = series[0].byKind;
for (const m of marks.filter((m) => m.event === "end")) {
  const to = at(m.t);
  const cpu: Record<string, number> = {};
  let total = 0;
  for (const k of kinds) {
    const d = ((to.get(k) ?? 0) - (fromTicks.get(k) ?? 0)) * TICK_MS;
    if (d > 0) cpu[k] = d / 1000;
    total += Math.max(0, d) / 1000;
  }
  rows.push({ file: m.file, state: m.state, wall: (m.t - from) / 1000, cpu, total });
  from = m.t;
  fromTicks = to;
}
/** Each test's CPU per kind between its own start and end (its file's hooks and set-up are not in it). */
function between(fromT: number, toT: number): { cpu: Record<string, number>; total: number } {
  const a = at(fromT);
  const b = at(toT);
  const cpu: Record<string, number> = {};
  let total = 0;
  for (const k of kinds) {
    const d = ((b.get(k) ?? 0) - (a.get(k) ?? 0)) * TICK_MS;
    if (d > 0) cpu[k] = d / 1000;
    total += Math.max(0, d) / 1000;
  }
  return { cpu, total };
}
const tests = marks
  .filter((m) => m.event === "test" && m.start !== undefined)
  .map((m) => ({ file: m.file, name: m.name ?? "", state: m.state, wall: (m.t - (m.start ?? m.t)) / 1000, ...between(m.start ?? m.t, m.t) }));
/**
 * With BENCH_SUITE_SERIES=1, the CPU per second of the run by kind (Chromium's processes, the
 * serve-mode servers, the vitest processes): where in a file its CPU goes.
 */
const seriesOut: { t: number; cpu: Record<string, number> }[] = [];
if (process.env.BENCH_SUITE_SERIES === "1") {
  const group = (k: string): string => (k.startsWith("chromium ") ? k.replace(/^chromium (utility )?/, "chr ") : k.replace(/ \((main|threads)\)$/, ""));
  let prev = series[0];
  for (const s of series) {
    if (s.t - prev.t < 1000 && s !== series[series.length - 1]) continue;
    const cpu: Record<string, number> = {};
    for (const k of kinds) {
      const d = ((s.byKind.get(k) ?? 0) - (prev.byKind.get(k) ?? 0)) * TICK_MS;
      if (d > 0) cpu[group(k)] = (cpu[group(k)] ?? 0) + d / (s.t - prev.t);
    }
    seriesOut.push({ t: s.t, cpu });
    prev = s;
  }
}
const tailCpu: Record<string, number> = {};
for (const k of kinds) {
  const d = ((final.get(k) ?? 0) - (fromTicks.get(k) ?? 0)) * TICK_MS;
  if (d > 0) tailCpu[k] = d / 1000;
}

const totals: Record<string, number> = {};
for (const k of kinds) totals[k] = ((final.get(k) ?? 0) * TICK_MS) / 1000;
const result = {
  args: vitestArgs,
  status,
  wall,
  load: { before: loadBefore, after: loadAfter },
  sampleMs: SAMPLE_MS,
  totals,
  sampled: (sampledTotal * TICK_MS) / 1000,
  processes: [...procs.entries()]
    .sort((a, b) => b[1].ticks - a[1].ticks)
    .slice(0, 40)
    .map(([pid, p]) => ({ pid, kind: p.kind, cpu: (p.ticks * TICK_MS) / 1000, args: p.args })),
  files: rows,
  tests,
  afterLastFile: tailCpu,
  ...(seriesOut.length > 0 ? { series: seriesOut, marks } : {}),
};
if (jsonOut !== undefined) writeFileSync(jsonOut, `${JSON.stringify(result, null, 2)}\n`);

const fmt = (n: number): string => n.toFixed(1);
console.log(`\nsuite-cpu: ${vitestArgs.join(" ")}: exit ${status}, wall ${fmt(wall)} s, load ${loadBefore} -> ${loadAfter}`);
console.log(`CPU sampled ${fmt(result.sampled)} s`);
for (const [k, v] of Object.entries(totals).sort((a, b) => b[1] - a[1])) if (v >= 0.05) console.log(`  ${k.padEnd(40)} ${fmt(v).padStart(8)} s`);
for (const r of rows) {
  const top = Object.entries(r.cpu)
    .sort((a, b) => b[1] - a[1])
    .filter(([, v]) => v >= 0.3)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(", ");
  console.log(`${r.file} (${r.state ?? "?"}): wall ${fmt(r.wall)} s, CPU ${fmt(r.total)} s: ${top}`);
  for (const t of tests.filter((x) => x.file === r.file)) {
    const kindsOf = Object.entries(t.cpu)
      .sort((a, b) => b[1] - a[1])
      .filter(([, v]) => v >= 0.3)
      .map(([k, v]) => `${k} ${fmt(v)}`)
      .join(", ");
    console.log(`  - ${t.name} (${t.state ?? "?"}): wall ${fmt(t.wall)} s, CPU ${fmt(t.total)} s: ${kindsOf}`);
  }
}
process.exit(status ?? 1);
