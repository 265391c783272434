// A live training floor (issue 18 figures): the real server in this process (serve mode's media
// workers, one per core), five trainee consoles in Debian Chromium (the built console, signed in
// as agents of the Sales queue, their phones registered, each taking the first call it is
// offered) and a live training run whose callers are scripted simulated callers that speak (50
// stock lines each, one after the other, while someone talks with them) and wait on the queue's
// hold music otherwise. The trainer's burst faults add callers step by step (10, 20, ... 50 by
// default); at each step, once every caller is in the queue or talking, a measured window counts
// the frames lost, as bench/media.ts and bench/callq-media.ts count them on the server's legs
// (sequence gaps, receive FIFO drops, frames not sent because their tick ran late; FIFO underruns
// apart), and what the trainees' pages lost (Chromium's packetsLost and concealed samples on the
// calls' inbound audio). The machine is shared: the load average is reported beside each step.
//
// BENCH_TRAINING_LIVE_CALLERS: the steps (default 10,20,30,40,50; the simulator holds 50 live
// calls per account), BENCH_TRAINING_LIVE_TRAINEES (default 5), BENCH_TRAINING_LIVE_SECONDS: the
// measured window (default 10), BENCH_TRAINING_LIVE_WORKERS: the server's media workers (default
// serve mode's, one per core), BENCH_TRAINING_LIVE_DEBUG: print each leg that dropped frames
// (received, pushed, played, compressed, sent), BENCH_TRAINING_LIVE_MEMORY_REDUCER=on: the server
// child without server/v8-flags.ts's --no-memory-reducer (V8's default). On a shared machine, run it in a session of its
// own with a scheduler-group priority (`setsid sh -c 'echo -15 > /proc/$$/autogroup; exec ...'`):
// the browser's group is then given the same (shareSchedulerGroup).
//
// The server runs in a child process of its own (this file again, with --server-child), as serve
// mode runs it beside Electron: Playwright's work for the pages (the protocol's replies parsed,
// the pages' stats read) stays on this process's main thread, not on the server's, whose frame
// clock it used to delay. The server's figures (its legs, clock, event loop, collections, profile)
// are read in the child and sent over IPC.
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { Session } from "node:inspector";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { constants as perfConstants, monitorEventLoopDelay, performance, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import type { Page } from "playwright-core";
import { defaultMediaWorkers } from "../server/config.js";
import { SERVER_V8_FLAGS } from "../server/v8-flags.js";
import type { LegStats, WebRtcLeg } from "../server/media/index.js";
import { DEMO_PASSWORD } from "../test/helpers/api.js";
import { launchBrowser } from "../test/helpers/browser.js";
import { CONSOLE_DIR, openConsole, signIn, waitRegistered } from "../test/helpers/console-page.js";
import { inboundReadings, startHearing, type InboundReading } from "../test/helpers/heard-speech.js";
import { poll } from "../test/helpers/poll.js";
import { benchLogin, startBenchServer } from "./lib/server.js";
import { report } from "./report.js";

const list = (value: string | undefined, fallback: string) => (value ?? fallback).split(",").filter(Boolean).map(Number);
const STEPS = list(process.env.BENCH_TRAINING_LIVE_CALLERS, "10,20,30,40,50");
const TRAINEES = Number(process.env.BENCH_TRAINING_LIVE_TRAINEES ?? 5);
const SECONDS = Number(process.env.BENCH_TRAINING_LIVE_SECONDS ?? 10);
const WORKERS = Number(process.env.BENCH_TRAINING_LIVE_WORKERS ?? defaultMediaWorkers());
const PROFILE_DIR = process.env.BENCH_TRAINING_LIVE_PROFILE;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The server's main-thread garbage collections (the server child's main isolate; the media
// workers' are their own): a pause there is a pause of the frame clock. Observed in the child.
const collections: { start: number; ms: number; minor: boolean }[] = [];
function observeCollections(): void {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[])
      collections.push({ start: entry.startTime, ms: entry.duration, minor: entry.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR });
  }).observe({ entryTypes: ["gc"] });
}

/** Main-thread collections that started between two times (performance.now()): how many (scavenges among them), their pauses. */
function gcBetween(from: number, to: number): { count: number; minor: number; ms: number; maxMs: number; share: number } {
  const inWindow = collections.filter((c) => c.start >= from && c.start < to);
  const ms = inWindow.reduce((sum, c) => sum + c.ms, 0);
  return { count: inWindow.length, minor: inWindow.filter((c) => c.minor).length, ms, maxMs: inWindow.reduce((max, c) => Math.max(max, c.ms), 0), share: ms / (to - from) };
}

const TICK_MS = 10; // USER_HZ

/** CPU ms so far: the server child (with its media workers), this bench process (Playwright), Chromium's renderer processes (one per page), Chromium's other processes, and the whole machine (busy, all cores). */
interface CpuReading {
  server: number;
  bench: number;
  renderers: Map<number, number>;
  chromium: number;
  /** Chromium's threads by process type and thread name (summed over the processes), for the profile's breakdown. */
  threads: Map<string, number>;
  machine: number;
  at: number;
}

/** CPU ms of each thread of a process, by "process type / thread name". */
async function threadsOf(pid: number, kind: string, into: Map<string, number>): Promise<void> {
  for (const task of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const stat = await readFile(`/proc/${pid}/task/${task}/stat`, "utf8").catch(() => "");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\d+$/, "#");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const key = `${kind} / ${name}`;
    into.set(key, (into.get(key) ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS);
  }
}

async function cpuSoFar(serverPid: number): Promise<CpuReading> {
  const parents = new Map<number, number>();
  const used = new Map<number, number>();
  for (const name of await readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    // After the command's closing parenthesis: state, ppid, ... utime (14th field), stime (15th).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    parents.set(Number(name), Number(fields[1]));
    used.set(Number(name), (Number(fields[11]) + Number(fields[12])) * TICK_MS);
  }
  const ours = (pid: number): boolean => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = parents.get(p) ?? 0, hops++) if (p === process.pid) return true;
    return false;
  };
  const reading: CpuReading = { server: used.get(serverPid) ?? 0, bench: used.get(process.pid) ?? 0, renderers: new Map(), chromium: 0, threads: new Map(), machine: 0, at: 0 };
  if (PROFILE_DIR !== undefined) await threadsOf(serverPid, "server", reading.threads);
  if (PROFILE_DIR !== undefined) await threadsOf(process.pid, "bench", reading.threads);
  for (const [pid, ms] of used) {
    if (pid === process.pid || pid === serverPid || !ours(pid)) continue;
    const command = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (PROFILE_DIR !== undefined) await threadsOf(pid, /--utility-sub-type=([\w.]+)/.exec(command)?.[1] ?? /--type=([a-z-]+)/.exec(command)?.[1] ?? "browser", reading.threads);
    if (command.includes("--type=renderer")) reading.renderers.set(pid, ms);
    else reading.chromium += ms;
  }
  const line = (await readFile("/proc/stat", "utf8").catch(() => "")).split("\n")[0] ?? "";
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = line.split(/\s+/).slice(1).map(Number);
  reading.machine = (user + nice + system + irq + softirq) * TICK_MS;
  reading.at = performance.now();
  return reading;
}

/** Cores used between two readings: the server, the bench (Playwright), each busy renderer (pages that did nothing are left out), the rest of Chromium, the machine. */
function cpuBetween(a: CpuReading, b: CpuReading): { server: number; bench: number; pages: number[]; chromium: number; machine: number } {
  const span = b.at - a.at;
  const pages = [...b.renderers].map(([pid, ms]) => (ms - (a.renderers.get(pid) ?? ms)) / span).filter((cores) => cores > 0.005);
  return { server: (b.server - a.server) / span, bench: (b.bench - a.bench) / span, pages, chromium: (b.chromium - a.chromium) / span, machine: (b.machine - a.machine) / span };
}

/** Frames lost on the server's legs between two snapshots (legs present in both). */
interface ServerLoss {
  legs: number;
  sent: number;
  received: number;
  gaps: number;
  drops: number;
  late: number;
  underruns: number;
  /** FIFO drops by cause: full, the clock skipped their time; the rest is a worker's ring overflowing. */
  overflowed: number;
  skipped: number;
  /** Legs that dropped frames, and the most one leg dropped. */
  droppingLegs: number;
  mostDropped: number;
}

type LegRow = [id: string, stats: LegStats];

const rowsOf = (legs: Iterable<WebRtcLeg>): LegRow[] => [...legs].filter((l) => l.state === "connected").map((l) => [l.id, structuredClone(l.stats())]);

function serverLoss(before: LegRow[], after: LegRow[]): ServerLoss {
  const first = new Map(before);
  const total: ServerLoss = { legs: 0, sent: 0, received: 0, gaps: 0, drops: 0, late: 0, underruns: 0, overflowed: 0, skipped: 0, droppingLegs: 0, mostDropped: 0 };
  for (const [id, s1] of after) {
    const s0 = first.get(id);
    if (!s0) continue;
    total.legs += 1;
    total.sent += s1.packetsSent - s0.packetsSent;
    total.received += s1.packetsReceived - s0.packetsReceived;
    total.gaps += s1.packetsLost - s0.packetsLost;
    total.drops += s1.fifo.dropped - s0.fifo.dropped;
    total.late += s1.staleFramesSkipped - s0.staleFramesSkipped;
    total.underruns += s1.fifo.underruns - s0.fifo.underruns;
    total.overflowed += s1.fifo.overflowed - s0.fifo.overflowed;
    total.skipped += s1.fifo.skipped - s0.fifo.skipped;
    const dropped = s1.fifo.dropped - s0.fifo.dropped;
    if (dropped > 0) total.droppingLegs++;
    if (dropped > 0 && process.env.BENCH_TRAINING_LIVE_DEBUG)
      console.log(
        `leg ${id.slice(0, 8)}: received ${s1.packetsReceived - s0.packetsReceived}, pushed ${s1.fifo.pushed - s0.fifo.pushed}, played ${s1.fifo.played - s0.fifo.played}, compressed ${s1.fifo.compressed - s0.fifo.compressed}, underruns ${s1.fifo.underruns - s0.fifo.underruns}, dropped ${dropped}, sent ${s1.packetsSent - s0.packetsSent}, jb ${s1.jitterBufferMs}`,
      );
    total.mostDropped = Math.max(total.mostDropped, dropped);
  }
  return total;
}

/** What the trainees' pages received between two sets of readings (calls read in both). */
interface PageLoss {
  calls: number;
  received: number;
  lost: number;
  concealed: number;
  samples: number;
}

function pageLoss(before: InboundReading[][], after: InboundReading[][]): PageLoss {
  const total: PageLoss = { calls: 0, received: 0, lost: 0, concealed: 0, samples: 0 };
  const lastByPc = (rows: InboundReading[]) => new Map(rows.map((r) => [r.pc, r]));
  after.forEach((rows, page) => {
    const start = lastByPc(before[page] ?? []);
    for (const [pc, end] of lastByPc(rows)) {
      const from = start.get(pc);
      if (!from) continue;
      total.calls += 1;
      total.received += end.packetsReceived - from.packetsReceived;
      total.lost += end.packetsLost - from.packetsLost;
      total.concealed += end.concealedSamples - from.concealedSamples;
      total.samples += end.totalSamplesReceived - from.totalSamplesReceived;
    }
  });
  return total;
}

/**
 * Each trainee page's inbound audio as Chromium's jitter buffer (NetEq) tells it, summed over its
 * connected calls: why a page conceals samples when nothing was lost (cumulative counters; see
 * jitterOf for the differences).
 */
interface JitterReading {
  calls: number;
  jitterBufferDelay: number;
  jitterBufferEmittedCount: number;
  jitterBufferTargetDelay: number;
  concealedSamples: number;
  silentConcealedSamples: number;
  concealmentEvents: number;
  insertedSamplesForDeceleration: number;
  removedSamplesForAcceleration: number;
  packetsDiscarded: number;
  packetsReceived: number;
  /** The calls' current inter-arrival jitter (RFC 3550, s), the largest. */
  jitterMax: number;
}

const READ_JITTER = `(async () => {
  const out = { calls: 0, jitterBufferDelay: 0, jitterBufferEmittedCount: 0, jitterBufferTargetDelay: 0, concealedSamples: 0, silentConcealedSamples: 0, concealmentEvents: 0, insertedSamplesForDeceleration: 0, removedSamplesForAcceleration: 0, packetsDiscarded: 0, packetsReceived: 0, jitterMax: 0 };
  for (const pc of globalThis.__peerConnections || []) {
    if (pc.connectionState !== "connected") continue;
    const report = await pc.getStats().catch(() => undefined);
    report?.forEach((s) => {
      if (s.type !== "inbound-rtp" || s.kind !== "audio") return;
      out.calls++;
      for (const key of Object.keys(out)) if (key !== "calls" && key !== "jitterMax") out[key] += s[key] || 0;
      out.jitterMax = Math.max(out.jitterMax, s.jitter || 0);
    });
  }
  return out;
})()`;

async function readJitter(pages: Page[]): Promise<JitterReading[]> {
  return Promise.all(pages.map((p) => p.evaluate(READ_JITTER) as Promise<JitterReading>));
}

/** The pages' jitter-buffer figures over a window (summed over pages whose calls were the same at both ends). */
function jitterOf(before: JitterReading[], after: JitterReading[]) {
  const total = { pages: 0, bufferMs: 0, targetMs: 0, emitted: 0, concealed: 0, silent: 0, events: 0, inserted: 0, removed: 0, discarded: 0, jitterMaxMs: 0 };
  after.forEach((b, i) => {
    const a = before[i];
    if (!a || a.calls !== b.calls || b.calls === 0) return;
    total.pages++;
    total.emitted += b.jitterBufferEmittedCount - a.jitterBufferEmittedCount;
    total.bufferMs += (b.jitterBufferDelay - a.jitterBufferDelay) * 1000;
    total.targetMs += (b.jitterBufferTargetDelay - a.jitterBufferTargetDelay) * 1000;
    total.concealed += b.concealedSamples - a.concealedSamples;
    total.silent += b.silentConcealedSamples - a.silentConcealedSamples;
    total.events += b.concealmentEvents - a.concealmentEvents;
    total.inserted += b.insertedSamplesForDeceleration - a.insertedSamplesForDeceleration;
    total.removed += b.removedSamplesForAcceleration - a.removedSamplesForAcceleration;
    total.discarded += b.packetsDiscarded - a.packetsDiscarded;
    total.jitterMaxMs = Math.max(total.jitterMaxMs, b.jitterMax * 1000);
  });
  return {
    ...total,
    /** Mean jitter-buffer delay and target of the samples played in the window, ms. */
    meanBufferMs: total.emitted ? total.bufferMs / total.emitted : 0,
    meanTargetMs: total.emitted ? total.targetMs / total.emitted : 0,
  };
}

/** Starts profiling the page's renderer and the server's main thread (in its child); the answer stops both and writes the profiles into a directory. */
async function startProfiles(page: Page | undefined, server: ServerChild): Promise<(dir: string) => Promise<void>> {
  const cdp = page ? await page.context().newCDPSession(page) : undefined;
  await cdp?.send("Performance.enable");
  const metrics = async () => new Map((cdp ? (await cdp.send("Performance.getMetrics")).metrics : []).map((m) => [m.name, m.value]));
  const metrics0 = await metrics();
  await cdp?.send("Profiler.enable");
  await cdp?.send("Profiler.start");
  await server.request({ op: "profileStart" });
  return async (dir) => {
    await mkdir(dir, { recursive: true });
    await server.request({ op: "profileStop", dir });
    if (cdp) {
      const metrics1 = await metrics();
      const kept = ["TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration", "LayoutCount", "RecalcStyleCount", "Nodes", "JSEventListeners"];
      report("training-live: the first trainee's page in the window (Performance.getMetrics; durations in s)", kept.map((name) => [name, ((metrics1.get(name) ?? 0) - (name === "Nodes" || name === "JSEventListeners" ? 0 : (metrics0.get(name) ?? 0))).toFixed(3)]));
      const rendered = await cdp.send("Profiler.stop");
      await writeFile(join(dir, "page.cpuprofile"), JSON.stringify(rendered.profile));
      await cdp.detach();
    }
  };
}

/** The server's main thread profiled in the child: CPU, and what it allocates (garbage included, a sample every 4 KiB). */
async function startServerProfile(): Promise<(dir: string) => Promise<void>> {
  const inspector = new Session();
  inspector.connect();
  const post = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => inspector.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post("Profiler.enable");
  await post("Profiler.start");
  await post("HeapProfiler.enable");
  await post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return async (dir) => {
    await mkdir(dir, { recursive: true });
    const server = (await post("Profiler.stop")) as { profile: unknown };
    const heap = (await post("HeapProfiler.stopSampling")) as { profile: unknown };
    inspector.disconnect();
    await writeFile(join(dir, "server.cpuprofile"), JSON.stringify(server.profile));
    await writeFile(join(dir, "server.heapprofile"), JSON.stringify(heap.profile));
  };
}

/** What the bench asks of its server child, and what the child answers. */
type ChildRequest =
  | { op: "start"; workers: number }
  | { op: "ready"; accountId: string; userId: string }
  | { op: "windowStart" }
  | { op: "windowEnd" }
  | { op: "profileStart" }
  | { op: "profileStop"; dir: string }
  | { op: "close" };

/** The server's side of a window: its legs' losses, its clock and event loop, its collections, why legs closed so far. */
interface ServerWindow {
  server: ServerLoss;
  clock: { p99: number; max: number; skipped: number };
  loopP99: number;
  loopMax: number;
  gc: ReturnType<typeof gcBetween>;
  /** The server's main thread in the window, ms: on a CPU, and runnable but waiting for one (the kernel's schedstat). */
  mainOnCpuMs: number;
  mainWaitingMs: number;
  /** The busiest other threads (as many as media workers: the workers, threads being all named "node"), ms on a CPU / waiting. */
  busiestOthers: [number, number][];
  legsClosedWhy: string[];
  /** Each media worker in the window: its collections (absent from a tree whose workers do not count them), its ticks' lateness p99, its loop's p99. */
  workers: { gc?: { minor: number; major: number; ms: number; maxMs: number }; tickP99: number; loopP99: number }[];
}

/** Each thread's schedstat, by thread id: ns on a CPU, ns runnable on a run queue (waiting for a CPU). */
async function threadSchedstats(): Promise<Map<number, [number, number]>> {
  const threads = new Map<number, [number, number]>();
  for (const task of await readdir("/proc/self/task").catch(() => [])) {
    const line = await readFile(`/proc/self/task/${task}/schedstat`, "utf8").catch(() => "0 0");
    const [onCpu = 0, waiting = 0] = line.trim().split(" ").map(Number);
    threads.set(Number(task), [onCpu, waiting]);
  }
  return threads;
}

type ChildAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

interface ServerChild {
  pid: number;
  request(message: { op: "start"; workers: number }): Promise<{ url: string }>;
  request(message: { op: "windowEnd" }): Promise<ServerWindow>;
  request(message: ChildRequest): Promise<unknown>;
  /** Closes the server and waits for the child to exit. */
  close(): Promise<void>;
}

/**
 * This file again, in a child process: the server alone, in a session (so a scheduler group) of its
 * own, given this bench's group's nice as the browser's is (shareSchedulerGroup), as serve mode's
 * server would not share its group with Playwright.
 */
function forkServer(): ServerChild {
  // The server's own V8 flags, as its launchers pass them (server/v8-flags.ts), unless
  // BENCH_TRAINING_LIVE_MEMORY_REDUCER=on asks for V8's default (an A/B of the flag).
  const execArgv = process.env.BENCH_TRAINING_LIVE_MEMORY_REDUCER === "on" ? process.execArgv : [...process.execArgv, SERVER_V8_FLAGS];
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--server-child"], { execArgv, stdio: "inherit", detached: true });
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let next = 0;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.on("message", (answer: ChildAnswer) => {
    const pending = waiting.get(answer.id);
    waiting.delete(answer.id);
    if (answer.ok) pending?.resolve(answer.value);
    else pending?.reject(new Error(`server child: ${answer.error}`));
  });
  child.once("exit", (code) => {
    for (const pending of waiting.values()) pending.reject(new Error(`server child exited (${code})`));
    waiting.clear();
  });
  const request = (message: ChildRequest): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      child.send({ id, ...message });
    });
  if (child.pid === undefined) throw new Error("the server child did not start");
  return {
    pid: child.pid,
    request: request as ServerChild["request"],
    async close() {
      await request({ op: "close" }).catch(() => undefined);
      await exited;
    },
  };
}

/** The child's side: serve mode's server on a fresh data directory, answering the bench over IPC. */
async function serverChild(): Promise<void> {
  observeCollections();
  let bench: Awaited<ReturnType<typeof startBenchServer>> | undefined;
  const closedWhy = new Map<string, number>();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let window: { legs: LegRow[]; from: number; sched: Map<number, [number, number]> } | undefined;
  let profiling: ((dir: string) => Promise<void>) | undefined;
  const serverOf = () => {
    if (!bench) throw new Error("no server yet");
    return bench.server;
  };
  const handle = async (message: ChildRequest): Promise<unknown> => {
    switch (message.op) {
      case "start": {
        bench = await startBenchServer("training-live", { rendererDir: CONSOLE_DIR, mediaWorkers: message.workers });
        const media = bench.server.calls.context.media;
        // Why each server leg that closed during the run closed ("hangup", "ice failed", "dtls failed", "connect timeout", "remote-bye" ...), counted:
        // every leg the engine makes is followed from its creation.
        const createLeg = media.createLeg.bind(media);
        media.createLeg = (options) => {
          const leg = createLeg(options);
          leg.on("state", (change) => {
            if (change.to !== "closed") return;
            const why = change.reason ?? "?";
            closedWhy.set(why, (closedWhy.get(why) ?? 0) + 1);
          });
          return leg;
        };
        return { url: bench.server.url };
      }
      case "ready":
        await serverOf().callq.recipientAction(message.accountId, message.userId, "login_ready");
        return null;
      case "windowStart": {
        const media = serverOf().calls.context.media;
        media.clock.resetStats();
        loop.reset();
        loop.enable();
        // The workers' figures count from their last stats request: this one.
        await media.workerStats();
        window = { legs: rowsOf(media.legs), from: performance.now(), sched: await threadSchedstats() };
        return null;
      }
      case "windowEnd": {
        if (!window) throw new Error("windowEnd before windowStart");
        const media = serverOf().calls.context.media;
        const to = performance.now();
        loop.disable();
        const clock = media.clock.stats();
        const legs = rowsOf(media.legs);
        const workerStats = (await media.workerStats()) as { gc?: { minor: number; major: number; ms: number; maxMs: number }; tickLatenessP99Ms: number; loopP99Ms: number }[];
        const sched = await threadSchedstats();
        const spent = [...sched].map(([tid, [cpu, wait]]): [number, number, number] => {
          const [cpu0, wait0] = window?.sched.get(tid) ?? [cpu, wait];
          return [tid, (cpu - cpu0) / 1e6, (wait - wait0) / 1e6];
        });
        const main = spent.find(([tid]) => tid === process.pid) ?? [process.pid, 0, 0];
        const others = spent.filter(([tid]) => tid !== process.pid).sort((a, b) => b[1] - a[1]).slice(0, WORKERS);
        // Collections are reported to the observer after the fact: let it catch up.
        await sleep(50);
        const answer: ServerWindow = {
          server: serverLoss(window.legs, legs),
          clock: { p99: clock.latenessP99Ms, max: clock.latenessMaxMs, skipped: clock.skipped },
          loopP99: loop.percentile(99) / 1e6,
          loopMax: loop.max / 1e6,
          gc: gcBetween(window.from, to),
          mainOnCpuMs: main[1],
          mainWaitingMs: main[2],
          busiestOthers: others.map(([, cpu, wait]): [number, number] => [cpu, wait]),
          legsClosedWhy: [...closedWhy].map(([why, n]) => `${n} ${why}`),
          workers: workerStats.map((w) => ({ gc: w.gc, tickP99: w.tickLatenessP99Ms, loopP99: w.loopP99Ms })),
        };
        window = undefined;
        return answer;
      }
      case "profileStart":
        profiling = await startServerProfile();
        return null;
      case "profileStop":
        await profiling?.(message.dir);
        profiling = undefined;
        return null;
      case "close":
        await bench?.close();
        bench = undefined;
        setImmediate(() => process.exit(0));
        return null;
    }
  };
  process.on("message", (message: ChildRequest & { id: number }) => {
    handle(message).then(
      (value) => process.send?.({ id: message.id, ok: true, value } satisfies ChildAnswer),
      (error: unknown) => process.send?.({ id: message.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies ChildAnswer),
    );
  });
  // The bench's group's nice for this session's own group (a fork with detached: true is a new session).
  const parentGroup = await readFile(`/proc/${process.ppid}/autogroup`, "utf8").catch(() => "");
  const nice = /nice (-?\d+)/.exec(parentGroup)?.[1];
  if (nice !== undefined && nice !== "0") {
    const done = await writeFile("/proc/self/autogroup", nice).then(
      () => "",
      (error: unknown) => ` (not given: ${String(error)})`,
    );
    process.stdout.write(`training-live: server child's group: ${(await readFile("/proc/self/autogroup", "utf8").catch(() => "?")).trim()}${done}\n`);
  }
  // The bench went away without a close: so does the server.
  process.on("disconnect", () => {
    void (bench?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  });
}

interface Api {
  call<T>(method: string, path: string, data?: unknown): Promise<T>;
}

function apiOf(url: string, token: string, accountId: string): Api {
  return {
    async call<T>(method: string, path: string, data?: unknown): Promise<T> {
      const res = await fetch(`${url}/v2/accounts/${accountId}${path}`, {
        method,
        headers: { "Content-Type": "application/json", "X-Auth-Token": token },
        ...(data === undefined ? {} : { body: JSON.stringify({ data }) }),
      });
      const body = (await res.json()) as { data: T };
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(body)}`);
      return body.data;
    },
  };
}

interface RunDoc {
  id: string;
  callers: { state: string; outcome: string | null; left: string | null; call_id: string | null }[];
}

/**
 * Page-side (text: no DOM types here): clicks Accept on every offer as it appears, as an agent
 * would, watching the page's DOM for changes instead of polling it.
 */
const TAKE_OFFERS = `(() => {
  const take = () => {
    for (const button of document.querySelectorAll(".call-offer .button-accept")) {
      if (button.textContent.trim() === "Accept" && button.getAttribute("aria-disabled") !== "true") button.click();
    }
  };
  new MutationObserver(take).observe(document.body, { childList: true, subtree: true });
  take();
})()`;

const LINES = ["Hi, I'm calling about my order.", "I have a question about my bill.", "I've been waiting for a long time.", "Sorry, could you repeat that?"];

interface Point {
  callers: number;
  waiting: number;
  talking: number;
  ended: number;
  /** The hang-up causes of the ended callers' legs and of the trainees' ended legs, as their CDRs say. */
  endedWhy: string[];
  /** Server legs closed so far in the run, by their reason. */
  legsClosedWhy: string[];
  server: ServerLoss;
  pages: PageLoss;
  /** The pages' jitter buffers in the window. */
  jitter: ReturnType<typeof jitterOf>;
  /** The server's media workers in the window. */
  workers: ServerWindow["workers"];
  clock: { p99: number; max: number; skipped: number };
  loopP99: number;
  loopMax: number;
  /** The server's main-thread collections in the window: how many, their total and longest pause, their share of the window. */
  gc: ReturnType<typeof gcBetween>;
  /** The server's main thread in the window: ms on a CPU, ms waiting for one; the same for its busiest other threads. */
  mainSched: [number, number];
  othersSched: [number, number][];
  /** Cores: the server process (callers' legs and media workers included), each trainee page's renderer, the rest of Chromium, the whole machine. */
  cpu: ReturnType<typeof cpuBetween>;
  load: [number, number];
}

const lostOf = (p: Point) => p.server.gaps + p.server.drops + p.server.late + p.pages.lost;

/**
 * Chromium starts in a session of its own, so Linux's autogroup scheduling (on by default) weighs
 * its processes as one group apart from this bench's; nice values count only inside a group. When
 * this bench's group was given a priority (`echo -15 > /proc/$$/autogroup` in a new session, as the
 * machine's other users' `nice 19` does not reach across groups), the browser's group gets the
 * same, so the trainees' pages are no more starved than the server. Returns what it found.
 */
async function shareSchedulerGroup(): Promise<string> {
  const own = await readFile("/proc/self/autogroup", "utf8").catch(() => "");
  const nice = Number(/nice (-?\d+)/.exec(own)?.[1] ?? 0);
  if (!own) return "no autogroup scheduling";
  if (nice === 0) return `${own.trim()}, the browser's left as it is`;
  const given: string[] = [];
  for (const entry of await readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    const ppid = Number(stat.slice(close + 2).split(" ")[1]);
    if (ppid !== process.pid || !stat.slice(stat.indexOf("(") + 1, close).startsWith("chromium")) continue;
    try {
      await writeFile(`/proc/${entry}/autogroup`, String(nice));
      given.push((await readFile(`/proc/${entry}/autogroup`, "utf8")).trim());
    } catch (error) {
      given.push(`not changed (${String(error)})`);
    }
  }
  return `${own.trim()}; browser: ${given.join(", ") || "not found"}`;
}

async function main(): Promise<void> {
  const server = forkServer();
  const browser = await launchBrowser();
  process.stdout.write(`training-live: scheduler groups: ${await shareSchedulerGroup()}\n`);
  const points: Point[] = [];
  try {
    const { url } = await server.request({ op: "start", workers: WORKERS });
    const admin = await benchLogin(url);
    const api = apiOf(url, admin.token, admin.accountId);
    const queues = await api.call<{ id: string; name: string }[]>("GET", "/callq_queues");
    const sales = queues.find((q) => q.name === "Sales");
    if (!sales) throw new Error("no Sales queue in the demo account");
    // Callers wait as long as the bench lasts; a trainee's offer rings until taken.
    await api.call("PATCH", `/callq_queues/${sales.id}`, { agent_wrapup_time: 0, ring_timeout: 120, timeout: 3600 });

    // The trainees: users with callq enabled, a softphone each, members of Sales.
    const trainees: { username: string; id: string }[] = [];
    for (let i = 1; i <= TRAINEES; i++) {
      const username = `trainee${i}`;
      const user = await api.call<{ id: string }>("PUT", "/users", { username, first_name: "Trainee", last_name: String(i), password: DEMO_PASSWORD, callq: { enabled: true } });
      await api.call("PUT", "/devices", { name: `${username} softphone`, owner_id: user.id, device_type: "softphone", sip: { username: `${username}_phone`, password: randomBytes(8).toString("hex") } });
      trainees.push({ username, id: user.id });
    }
    await api.call("POST", `/callq_queues/${sales.id}/recipients`, { action: "add", members: trainees.map((t) => t.id) });
    const pages: Page[] = [];
    for (const t of trainees) {
      const opened = await openConsole(browser.browser, url);
      await signIn(opened.page, t.username);
      await waitRegistered(opened.page, 60_000);
      await startHearing(opened.page);
      // Each trainee takes what they are offered, as long as the bench lasts: clicked in the page
      // itself, so no polling through the protocol loads this process (the server's) or the page.
      await opened.page.evaluate(TAKE_OFFERS);
      pages.push(opened.page);
      await server.request({ op: "ready", accountId: admin.accountId, userId: t.id });
    }
    const scenario = await api.call<{ id: string }>("PUT", "/training_scenarios", {
      name: "Bench floor",
      duration_s: 3600,
      seed: 1,
      queues: [{ queue_id: sales.id, rate_per_hour: 0 }],
      personas: [
        {
          name: "Bench Caller",
          weight: 1,
          number: "+1415555####",
          lines: Array.from({ length: 50 }, (_, i) => ({ text: LINES[i % LINES.length] })),
          patience: { distribution: "fixed", mean_s: 3600 },
        },
      ],
      agents: { count: 0 },
    });
    const run = await api.call<RunDoc>("POST", `/training_scenarios/${scenario.id}/runs`);
    const readRun = () => api.call<RunDoc>("GET", `/training_runs/${run.id}`);

    let placed = 0;
    for (const target of STEPS) {
      if (target > placed) await api.call("POST", `/training_runs/${run.id}`, { action: "fault", fault: { kind: "burst", count: target - placed } });
      placed = Math.max(placed, target);
      const busy = Math.min(TRAINEES, placed);
      await poll(
        `${placed} callers in the queue or talking, ${busy} with trainees`,
        async () => {
          const doc = await readRun();
          const settled = doc.callers.length === placed && doc.callers.every((c) => c.state === "waiting" || c.state === "talking" || c.state === "ended");
          const live = doc.callers.filter((c) => c.state !== "ended").length;
          return settled && doc.callers.filter((c) => c.state === "talking").length >= Math.min(busy, live) ? true : undefined;
        },
        180_000,
        500,
      );
      // Every trainee's call is read by their page, and the last legs' first frames settle, before the window opens
      // (on a loaded machine a trainee's call can end meanwhile: as many as are talking now).
      await poll(
        `the trainees' calls read by their pages`,
        async () => {
          const talking = (await readRun()).callers.filter((c) => c.state === "talking").length;
          const calls = (await Promise.all(pages.map((p) => inboundReadings(p)))).reduce((n, rows) => n + new Set(rows.map((r) => r.pc)).size, 0);
          return calls >= Math.min(busy, talking) ? true : undefined;
        },
        60_000,
        500,
      );
      await sleep(2000);
      const load0 = loadavg()[0] ?? 0;
      // The server's clock and loop figures span its legs' window: a stall while the pages' stats
      // are read shows in both.
      await server.request({ op: "windowStart" });
      const pages0 = await Promise.all(pages.map((p) => inboundReadings(p)));
      const jitter0 = await readJitter(pages);
      const profiling = PROFILE_DIR !== undefined && target === STEPS[STEPS.length - 1] ? await startProfiles(pages[0], server) : undefined;
      const cpu0 = await cpuSoFar(server.pid);
      await sleep(SECONDS * 1000);
      const cpu1 = await cpuSoFar(server.pid);
      if (profiling && PROFILE_DIR !== undefined) {
        await profiling(PROFILE_DIR);
        const span = cpu1.at - cpu0.at;
        const busiest = [...cpu1.threads].map(([key, ms]): [string, number] => [key, (ms - (cpu0.threads.get(key) ?? 0)) / span]).sort((a, b) => b[1] - a[1]).slice(0, 25);
        report("training-live: busiest threads in the window (% of one core; Chromium's summed over its processes of a type)", busiest.map(([key, cores]) => [key, `${(cores * 100).toFixed(1)}%`]));
      }
      const window = await server.request({ op: "windowEnd" });
      const pages1 = await Promise.all(pages.map((p) => inboundReadings(p)));
      const jitter1 = await readJitter(pages);
      const load1 = loadavg()[0] ?? 0;
      const doc = await readRun();
      const endedIds = new Set(doc.callers.filter((c) => c.state === "ended").map((c) => c.call_id));
      const cdrs = endedIds.size === 0 ? [] : await api.call<{ call_id?: string; hangup_cause?: string; owner_id?: string; other_leg_call_id?: string }[]>("GET", "/cdrs?paginate=false");
      const traineeIds = new Set(trainees.map((t) => t.id));
      const point: Point = {
        callers: placed,
        waiting: doc.callers.filter((c) => c.state === "waiting").length,
        talking: doc.callers.filter((c) => c.state === "talking").length,
        ended: endedIds.size,
        legsClosedWhy: window.legsClosedWhy,
        endedWhy: cdrs.filter((c) => endedIds.has(c.call_id ?? null) || (c.owner_id !== undefined && traineeIds.has(c.owner_id))).map((c) => `${c.owner_id !== undefined && traineeIds.has(c.owner_id) ? "trainee" : "caller"} ${c.hangup_cause ?? "?"}`),
        server: window.server,
        pages: pageLoss(pages0, pages1),
        jitter: jitterOf(jitter0, jitter1),
        workers: window.workers,
        clock: window.clock,
        loopP99: window.loopP99,
        loopMax: window.loopMax,
        gc: window.gc,
        mainSched: [window.mainOnCpuMs, window.mainWaitingMs],
        othersSched: window.busiestOthers,
        cpu: cpuBetween(cpu0, cpu1),
        load: [load0, load1],
      };
      points.push(point);
      show(point);
    }
    await api.call("POST", `/training_runs/${run.id}`, { action: "stop" });
  } finally {
    await browser.close();
    await server.close();
  }
  summary(points);
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** One window's figures, as the per-step report and the summary's table row both show them. */
function figures(p: Point): [label: string, value: string, column: string][] {
  const s = p.server;
  const pages = p.cpu.pages;
  const own = p.cpu.server + p.cpu.bench + sum(pages) + p.cpu.chromium;
  return [
    ["callers waiting / talking / ended (CDRs' causes of the legs ended)", `${p.waiting} / ${p.talking} / ${p.ended} (${p.endedWhy.join(", ")})`, `${p.callers} | ${TRAINEES} | ${p.talking}`],
    ["server legs closed so far in the run, by reason", p.legsClosedWhy.join(", "), ""],
    [`server legs (${s.legs}): packets sent / received`, `${s.sent} / ${s.received}`, String(s.legs)],
    ["server legs: lost frames (gaps / FIFO drops / not sent late)", `${s.gaps} / ${s.drops} / ${s.late}`, `${s.gaps} / ${s.drops} / ${s.late}`],
    ["server legs: FIFO drops by cause (full / clock skipped / worker ring full); legs dropping, most on one leg", `${s.overflowed} / ${s.skipped} / ${s.drops - s.overflowed - s.skipped}; ${s.droppingLegs}, ${s.mostDropped}`, ""],
    ["server legs: FIFO underruns (late, not lost)", String(s.underruns), String(s.underruns)],
    [`trainees' pages (${p.pages.calls} calls): packets received / lost, concealed samples / samples`, `${p.pages.received} / ${p.pages.lost}, ${p.pages.concealed} / ${p.pages.samples}`, `${p.pages.lost} / ${p.pages.concealed}`],
    [
      "trainees' pages' jitter buffers: mean delay / target, ms; concealed samples (silent) in events; samples inserted / removed; packets discarded; largest inter-arrival jitter",
      `${p.jitter.meanBufferMs.toFixed(0)} / ${p.jitter.meanTargetMs.toFixed(0)} ms; ${p.jitter.concealed} (${p.jitter.silent}) in ${p.jitter.events}; ${p.jitter.inserted} / ${p.jitter.removed}; ${p.jitter.discarded}; ${p.jitter.jitterMaxMs.toFixed(1)} ms`,
      `${p.jitter.meanBufferMs.toFixed(0)}/${p.jitter.meanTargetMs.toFixed(0)} ms, ${p.jitter.events} ev, jit ${p.jitter.jitterMaxMs.toFixed(1)} ms`,
    ],
    ["frame clock lateness p99 / max, ticks skipped", `${p.clock.p99.toFixed(2)} / ${p.clock.max.toFixed(1)} ms, ${p.clock.skipped}`, `${p.clock.p99.toFixed(1)} / ${p.clock.max.toFixed(0)} ms`],
    // A stall of d ms leaves about d / 20 ticks late (owed ticks follow one per turn of the loop) but
    // one late sample among a thousand in the loop's histogram: the clock's p99 shows stalls the loop's p99 hides, its max does not.
    ["server main loop delay p99 / max", `${p.loopP99.toFixed(1)} / ${p.loopMax.toFixed(0)} ms`, `${p.loopP99.toFixed(1)} / ${p.loopMax.toFixed(0)} ms`],
    [
      "server main thread's garbage collections: pauses (scavenges), total (share of the window), longest",
      `${p.gc.count} (${p.gc.minor}), ${p.gc.ms.toFixed(0)} ms (${(p.gc.share * 100).toFixed(2)}%), ${p.gc.maxMs.toFixed(1)} ms`,
      `${p.gc.count} (${p.gc.minor}), ${(p.gc.share * 100).toFixed(2)}%, ${p.gc.maxMs.toFixed(0)} ms`,
    ],
    [
      "media workers' collections: scavenges / other, longest pause; their ticks' lateness p99; loop delay p99",
      p.workers.map((w) => `${w.gc ? `${w.gc.minor} / ${w.gc.major}, ${w.gc.maxMs.toFixed(1)} ms` : "-"}; ${w.tickP99.toFixed(1)} ms; ${w.loopP99.toFixed(1)} ms`).join(" | "),
      p.workers.map((w) => (w.gc ? `${w.gc.minor}/${w.gc.major}, ${w.gc.maxMs.toFixed(0)} ms` : "-")).join(", "),
    ],
    ["server main thread: on a CPU / runnable, waiting for a CPU (schedstat), ms in the window", `${p.mainSched[0].toFixed(0)} / ${p.mainSched[1].toFixed(0)} ms`, `${p.mainSched[0].toFixed(0)} / ${p.mainSched[1].toFixed(0)} ms`],
    [
      "server's busiest other threads (the media workers): on a CPU / waiting for a CPU, ms in the window",
      p.othersSched.map(([cpu, wait]) => `${cpu.toFixed(0)} / ${wait.toFixed(0)}`).join(", ") + " ms",
      p.othersSched.map(([cpu, wait]) => `${cpu.toFixed(0)} / ${wait.toFixed(0)}`).join(", ") + " ms",
    ],
    ["CPU, server process (callers' legs and media workers), % of one core", `${(p.cpu.server * 100).toFixed(0)}%`, `${(p.cpu.server * 100).toFixed(0)}%`],
    ["CPU, the bench's process (Playwright, the pages' stats), % of one core", `${(p.cpu.bench * 100).toFixed(0)}%`, `${(p.cpu.bench * 100).toFixed(0)}%`],
    // Per trainee: all renderers' CPU over the trainees (Chromium keeps a spare renderer or two, nearly idle).
    [`CPU, renderers (${pages.length} busy): per trainee / busiest, % of one core`, `${((sum(pages) / TRAINEES) * 100).toFixed(1)}% / ${(Math.max(0, ...pages) * 100).toFixed(1)}%`, `${((sum(pages) / TRAINEES) * 100).toFixed(1)}%`],
    ["CPU, Chromium's other processes (browser, audio, network), % of one core", `${(p.cpu.chromium * 100).toFixed(0)}%`, `${(p.cpu.chromium * 100).toFixed(0)}%`],
    ["CPU, this bench's processes / whole machine, cores of 2", `${own.toFixed(2)} / ${p.cpu.machine.toFixed(2)}`, `${own.toFixed(2)} / ${p.cpu.machine.toFixed(2)}`],
    ["load average (1 min) before / after, 2 cores, shared", `${p.load[0].toFixed(1)} / ${p.load[1].toFixed(1)}`, `${p.load[0].toFixed(1)}–${p.load[1].toFixed(1)}`],
  ];
}

const COLUMNS = ["callers | trainees | talking", "server legs", "lost: gaps / drops / not sent", "underruns", "pages: lost / concealed samples", "pages' jitter buffers: delay/target, concealment events, jitter", "clock p99 / max", "loop p99 / max", "main GC: pauses (scavenges), share, longest", "workers' GC: scavenges/other, longest", "main thread on CPU / waiting", "workers on CPU / waiting", "server CPU", "bench (Playwright) CPU", "CPU per page", "Chromium's rest", "bench / machine CPU (cores)", "load"];

function show(p: Point): void {
  report(
    `training-live: ${p.callers} callers, ${TRAINEES} trainees, ${SECONDS} s`,
    figures(p).map(([label, value]) => [label, value]),
  );
}

function summary(points: Point[]): void {
  const clean = points.filter((p) => lostOf(p) === 0 && p.ended === 0);
  const largest = clean.reduce((n, p) => Math.max(n, p.callers), 0);
  process.stdout.write(
    `\ntraining-live: server media workers ${WORKERS}; largest step with no lost frame: ${largest} callers + ${TRAINEES} trainees\n\n` +
      `| ${COLUMNS.join(" | ")} |\n|${"---|".repeat(COLUMNS.join(" | ").split(" | ").length)}\n` +
      points.map((p) => `| ${figures(p).filter(([, , column]) => column !== "").map(([, , column]) => column).join(" | ")} |`).join("\n") +
      "\n",
  );
}

if (process.argv.includes("--server-child")) await serverChild();
else await main();
