// The main thread's media work per frame (issues 17 and 18): what the server's own thread does for
// each leg at each 20 ms tick when the legs' peer connections run in media workers (the frame
// clock, each leg's main-thread half draining the packets its worker left in shared memory into
// the receive buffer, the bridges' mixers, recorders, hold music and spoken lines, the frame
// written back for the worker), measured as bytes allocated (what the garbage collector later
// pays for) and CPU per leg per tick, this tree against a reference tree side by side in one
// process, alternating rounds.
//
// The legs are the real RemoteLeg, FrameClock, ReceiveBuffer, Mixer, StereoRecorder and players of
// each tree; what stands in for the media worker is the worker's half of each leg's shared memory
// (LegMemory), fed one decoded packet per leg per tick as the worker's socket would, and a worker
// object that answers the leg's set-up and counts its tick messages. The clock is driven by hand
// (its TimeSource), tick after tick as fast as the CPU goes, so the machine's load changes the CPU
// figure but not the bytes.
//
// A second part measures what a media worker's thread does per packet: werift legs (PeerLeg: RTP
// straight to SRTP and the socket, G.711, the receive path) in this thread, BENCH_MEDIA_FRAMES_PAIRS
// pairs (default 10) calling each other over loopback on a real frame clock for
// BENCH_MEDIA_FRAMES_SECONDS (default 5) per round: bytes and CPU per leg per tick (one packet
// sent and one received). Its CPU includes the UDP system calls; the machine's load moves it.
//
// A third part measures the main thread's per-tick path to the media workers (issue 18, session 18):
// the real frame clock on real time and two real media workers (MediaWorkerPool, no legs), each
// told of every tick as a leg on it would tell it (`ticked`), so each tick is marked in the shared
// tick memory and both workers are woken: bytes allocated and CPU per tick on the main thread
// (its own schedstat) and the two workers' threads' CPU per tick, for BENCH_MEDIA_FRAMES_SECONDS per
// round. BENCH_MEDIA_FRAMES_PARTS: which parts run (default `main,worker,ticks`).
//
// BENCH_MEDIA_FRAMES_BASE: the reference tree (a checkout of main with node_modules, e.g.
// `git archive main | tar -x -C /tmp/base`); without it, this tree alone. BENCH_MEDIA_FRAMES_CALLS
// (default 20 talking calls: 2 legs bridged and recorded, plus as many waiting callers: a leg
// hearing hold music and its caller's leg saying lines), _ROUNDS (default 4 each), _TICKS (1000).
// Bytes are counted by V8's sampling heap profiler (a sample every 256 bytes allocated, garbage
// included), so a collection during the round does not spoil them.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadavg } from "node:os";
import { Session } from "node:inspector";
import type { WebRtcLeg } from "../server/media/index.js";
import { report } from "./report.js";

const CALLS = Number(process.env.BENCH_MEDIA_FRAMES_CALLS ?? 20);
const ROUNDS = Number(process.env.BENCH_MEDIA_FRAMES_ROUNDS ?? 4);
const TICKS = Number(process.env.BENCH_MEDIA_FRAMES_TICKS ?? 1000);
const BASE = process.env.BENCH_MEDIA_FRAMES_BASE;
const PAIRS = Number(process.env.BENCH_MEDIA_FRAMES_PAIRS ?? 10);
const SECONDS = Number(process.env.BENCH_MEDIA_FRAMES_SECONDS ?? 5);
/** Where each tree's last round's allocation profile goes (`<tree>.heapprofile`), when set. */
const PROFILE_DIR = process.env.BENCH_MEDIA_FRAMES_PROFILE;
const FRAME = 160;
const PARTS = new Set((process.env.BENCH_MEDIA_FRAMES_PARTS ?? "main,worker,ticks").split(","));

interface Tree {
  name: string;
  media: typeof import("../server/media/index.js");
  clock: typeof import("../server/media/frame-clock.js");
  memory: typeof import("../server/media/worker/leg-memory.js");
  mixer: typeof import("../server/media/mixer.js");
  recorder: typeof import("../server/media/recorder.js");
  player: typeof import("../server/media/player.js");
  pool: typeof import("../server/media/worker/pool.js");
}

async function load(name: string, root: string): Promise<Tree> {
  const at = (path: string) => import(resolve(root, path));
  return {
    name,
    media: await at("server/media/index.ts"),
    clock: await at("server/media/frame-clock.ts"),
    memory: await at("server/media/worker/leg-memory.ts"),
    mixer: await at("server/media/mixer.ts"),
    recorder: await at("server/media/recorder.ts"),
    player: await at("server/media/player.ts"),
    pool: await at("server/media/worker/pool.ts"),
  };
}

/** A clock whose time and timer move only when the bench says. */
function handClock(tree: Tree) {
  let now = 0;
  let due: (() => void) | undefined;
  const time = {
    now: () => now,
    schedule(fn: () => void) {
      due = fn;
      return () => {
        if (due === fn) due = undefined;
      };
    },
  };
  const clock = new tree.clock.FrameClock({ time });
  return {
    clock,
    /** Moves time on a period and runs the tick now due. */
    step(): void {
      now += 20;
      const fn = due;
      due = undefined;
      fn?.();
    },
  };
}

type Leg = InstanceType<Tree["media"]["RemoteLeg"]>;

interface Floor {
  step(): void;
  legs: number;
  ticksSent: () => number;
  close(): Promise<void>;
}

/** Talking calls (2 legs, bridged, recorded) and waiting callers (hold music one way, lines the other). */
async function floor(tree: Tree, dir: string): Promise<Floor> {
  const { clock, step } = handClock(tree);
  let ticksSent = 0;
  // What the worker would fill: one decoded packet per leg per tick into the leg's in ring.
  const feeds: { accept(pcm: Int16Array, timestamp: number): void }[] = [];
  const worker = {
    threadId: 1,
    create(_leg: string, _handle: unknown, memory: SharedArrayBuffer) {
      feeds.push(new tree.memory.LegMemory(memory).sink());
    },
    release() {},
    call: async () => ({ value: "v=0", info: { codec: "PCMU" as const, direction: "sendrecv" as const } }),
    ticked: () => void ticksSent++,
    follow() {},
  };
  const legs: Leg[] = [];
  const newLeg = async (): Promise<Leg> => {
    const leg = new tree.media.RemoteLeg({ clock, worker: worker as never });
    await leg.createOffer();
    leg.remoteState("connected", undefined, { codec: "PCMU", direction: "sendrecv" });
    legs.push(leg);
    return leg;
  };
  const music = new Int16Array(8000 * 30).map((_, i) => Math.round(8000 * Math.sin(i / 7)));
  const speech = new Int16Array(8000 * 60).map((_, i) => Math.round(6000 * Math.sin(i / 3)));
  const recorders: InstanceType<Tree["recorder"]["StereoRecorder"]>[] = [];
  for (let c = 0; c < CALLS; c++) {
    const caller = await newLeg();
    const agent = await newLeg();
    const mixer = new tree.mixer.Mixer();
    caller.play(mixer.join(caller.id, caller.incoming));
    agent.play(mixer.join(agent.id, agent.incoming));
    const recorder = new tree.recorder.StereoRecorder(join(dir, `${tree.name}-${c}.wav`), { clock });
    recorder.attach(mixer, caller.id);
    recorders.push(recorder);
    const waiting = await newLeg();
    waiting.play(new tree.player.PcmPlayer(music, { loop: true }));
    const saying = await newLeg();
    saying.play(new tree.player.PcmPlayer(speech));
  }
  const packet = new Int16Array(FRAME).map((_, i) => (i * 97) % 2000);
  let timestamp = 0x9000_0000;
  return {
    legs: legs.length,
    ticksSent: () => ticksSent,
    step() {
      for (const feed of feeds) feed.accept(packet, timestamp);
      timestamp = (timestamp + FRAME) >>> 0;
      step();
    },
    async close() {
      for (const leg of legs) await leg.close("bench");
      await Promise.all(recorders.map((r) => r.finish()));
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const inspector = new Session();
inspector.connect();
const post = (method: string, params: object = {}) =>
  new Promise<unknown>((resolve, reject) => inspector.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));

interface SampledNode {
  selfSize: number;
  children: SampledNode[];
}
const sizeOf = (node: SampledNode): number => node.children.reduce((sum, child) => sum + sizeOf(child), node.selfSize);

interface Round {
  tree: string;
  bytesPerLegTick: number;
  cpuUsPerLegTick: number;
}

async function round(tree: Tree, dir: string): Promise<Round> {
  const f = await floor(tree, dir);
  for (let i = 0; i < 300; i++) f.step(); // compiled, buffers primed
  await settle();
  // Bytes: everything sampled as allocated during the ticks, collected or not.
  await post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let i = 0; i < TICKS; i++) f.step();
  const sampled = (await post("HeapProfiler.stopSampling")) as { profile: { head: SampledNode } };
  if (PROFILE_DIR !== undefined) {
    await writeFile(join(PROFILE_DIR, `${tree.name.replace(/\W+/g, "-")}.heapprofile`), JSON.stringify(sampled.profile));
  }
  await settle();
  // CPU: the same ticks again.
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < TICKS; i++) f.step();
  const cpu = process.cpuUsage(cpu0);
  await f.close();
  return {
    tree: tree.name,
    bytesPerLegTick: sizeOf(sampled.profile.head) / (TICKS * f.legs),
    cpuUsPerLegTick: (cpu.user + cpu.system) / (TICKS * f.legs),
  };
}

/** PeerLeg pairs in this thread, as a worker runs them: bytes and CPU per leg per tick. */
async function workerRound(tree: Tree): Promise<Round> {
  const engine = new tree.media.MediaEngine({ maxSendLatenessMs: Infinity });
  const legs: WebRtcLeg[] = [];
  try {
    for (let i = 0; i < PAIRS; i++) {
      const a = engine.createLeg();
      const b = engine.createLeg();
      a.play(await engine.player(`tone_stream://${400 + 10 * i}`));
      b.play(await engine.player(`tone_stream://${1000 + 10 * i}`));
      await a.acceptAnswer(await b.acceptOffer(await a.createOffer()));
      legs.push(a, b);
    }
    const deadline = performance.now() + 20_000;
    while (legs.some((l) => l.state !== "connected") && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Every leg's audio read each tick, as a bridge would.
    const stop = engine.clock.subscribe((tick) => {
      for (const l of legs) l.incoming.read(tick);
    });
    await new Promise((r) => setTimeout(r, 1000));
    const tick0 = engine.clock.tick;
    const cpu0 = process.cpuUsage();
    await post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const sampled = (await post("HeapProfiler.stopSampling")) as { profile: { head: SampledNode } };
    const cpu = process.cpuUsage(cpu0);
    const ticks = engine.clock.tick - tick0;
    stop();
    if (PROFILE_DIR !== undefined) await writeFile(join(PROFILE_DIR, `worker-${tree.name.replace(/\W+/g, "-")}.heapprofile`), JSON.stringify(sampled.profile));
    return { tree: tree.name, bytesPerLegTick: sizeOf(sampled.profile.head) / (ticks * legs.length), cpuUsPerLegTick: (cpu.user + cpu.system) / (ticks * legs.length) };
  } finally {
    await engine.close();
  }
}

/** Each thread of this process: ns on a CPU (schedstat), by thread id. */
async function threadCpuNs(): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const task of await readdir("/proc/self/task").catch(() => [])) {
    const line = await readFile(`/proc/self/task/${task}/schedstat`, "utf8").catch(() => "0");
    out.set(Number(task), Number(line.split(" ")[0]));
  }
  return out;
}

interface TickFloor {
  tree: string;
  clock: InstanceType<Tree["clock"]["FrameClock"]>;
  workers: readonly InstanceType<Tree["pool"]["MediaWorker"]>[];
  /** The workers' threads (those that appeared while they started). */
  tids: number[];
  close(): Promise<void>;
}

/** A tree's frame clock on real time and a pool of two media workers, loaded. */
async function tickFloor(tree: Tree): Promise<TickFloor> {
  const before = await threadCpuNs();
  const pool = new tree.pool.MediaWorkerPool(2, { host: "127.0.0.1" });
  const workers = [pool.assign(), pool.assign()];
  await Promise.all(workers.map((w) => w.loaded));
  const tids = [...(await threadCpuNs()).keys()].filter((tid) => !before.has(tid));
  const clock = new tree.clock.FrameClock();
  for (const w of workers) (w as { follow?: (clock: unknown) => void }).follow?.(clock);
  return { tree: tree.name, clock, workers, tids, close: () => pool.close() };
}

interface TickRound {
  tree: string;
  bytesPerTick: number;
  mainUsPerTick: number;
  workersUsPerTick: number;
}

async function tickRound(f: TickFloor): Promise<TickRound> {
  const stop = f.clock.subscribe((tick) => {
    for (let i = 0; i < f.workers.length; i++) f.workers[i]?.ticked(tick, f.clock.lateMs);
  });
  try {
    await new Promise((r) => setTimeout(r, 1000));
    let tick0 = f.clock.tick;
    await post("HeapProfiler.startSampling", { samplingInterval: 64, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const sampled = (await post("HeapProfiler.stopSampling")) as { profile: { head: SampledNode } };
    const bytesPerTick = sizeOf(sampled.profile.head) / (f.clock.tick - tick0);
    if (PROFILE_DIR !== undefined) await writeFile(join(PROFILE_DIR, `ticks-${f.tree.replace(/\W+/g, "-")}.heapprofile`), JSON.stringify(sampled.profile));
    await new Promise((r) => setTimeout(r, 200));
    tick0 = f.clock.tick;
    const cpu0 = await threadCpuNs();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const cpu1 = await threadCpuNs();
    const ticks = f.clock.tick - tick0;
    const spent = (tid: number) => ((cpu1.get(tid) ?? 0) - (cpu0.get(tid) ?? 0)) / 1000;
    return {
      tree: f.tree,
      bytesPerTick,
      mainUsPerTick: spent(process.pid) / ticks,
      workersUsPerTick: f.tids.reduce((sum, tid) => sum + spent(tid), 0) / ticks,
    };
  } finally {
    stop();
  }
}

async function tickPart(trees: Tree[]): Promise<void> {
  const load0 = loadavg()[0] ?? 0;
  const floors: TickFloor[] = [];
  for (const tree of trees) floors.push(await tickFloor(tree));
  const rounds: TickRound[] = [];
  try {
    for (let r = 0; r < ROUNDS; r++) for (const f of r % 2 ? [...floors].reverse() : floors) rounds.push(await tickRound(f));
  } finally {
    for (const f of floors) await f.close();
  }
  const load1 = loadavg()[0] ?? 0;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const rows: [string, string][] = [];
  const medians = new Map<string, TickRound>();
  for (const f of floors) {
    const mine = rounds.filter((r) => r.tree === f.tree);
    const m = { tree: f.tree, bytesPerTick: median(mine.map((r) => r.bytesPerTick)), mainUsPerTick: median(mine.map((r) => r.mainUsPerTick)), workersUsPerTick: median(mine.map((r) => r.workersUsPerTick)) };
    medians.set(f.tree, m);
    rows.push([`${f.tree}: main thread bytes allocated per tick (rounds)`, `${mine.map((r) => r.bytesPerTick.toFixed(0)).join(", ")} (median ${m.bytesPerTick.toFixed(0)})`]);
    rows.push([`${f.tree}: main thread CPU per tick, µs (rounds)`, `${mine.map((r) => r.mainUsPerTick.toFixed(1)).join(", ")} (median ${m.mainUsPerTick.toFixed(1)})`]);
    rows.push([`${f.tree}: the two workers' CPU per tick, µs (rounds)`, `${mine.map((r) => r.workersUsPerTick.toFixed(1)).join(", ")} (median ${m.workersUsPerTick.toFixed(1)})`]);
  }
  const ours = medians.get("this tree");
  const ref = medians.get("reference");
  if (ours && ref) {
    rows.push(["main thread bytes per tick, this tree / reference", `${ours.bytesPerTick.toFixed(0)} / ${ref.bytesPerTick.toFixed(0)} (${(ours.bytesPerTick / ref.bytesPerTick).toFixed(2)}x)`]);
    rows.push(["main thread CPU per tick, this tree / reference", `${ours.mainUsPerTick.toFixed(1)} / ${ref.mainUsPerTick.toFixed(1)} µs (${(ours.mainUsPerTick / ref.mainUsPerTick).toFixed(2)}x)`]);
    rows.push(["workers' CPU per tick, this tree / reference", `${ours.workersUsPerTick.toFixed(1)} / ${ref.workersUsPerTick.toFixed(1)} µs (${(ours.workersUsPerTick / ref.workersUsPerTick).toFixed(2)}x)`]);
  }
  rows.push(["load average (1 min) before / after, 2 cores, shared", `${load0.toFixed(1)} / ${load1.toFixed(1)}`]);
  report(`media-frames: the main thread's tick path to two media workers (real clock, no legs), ${ROUNDS} rounds of ${SECONDS} s each way`, rows);
}

async function main(): Promise<void> {
  const trees = [await load("this tree", resolve(import.meta.dirname, ".."))];
  if (BASE) trees.unshift(await load("reference", BASE));
  await post("HeapProfiler.enable");
  const dir = await mkdtemp(join(tmpdir(), "media-frames-"));
  if (PROFILE_DIR !== undefined) await mkdir(PROFILE_DIR, { recursive: true });
  if (PARTS.has("ticks")) await tickPart(trees);
  if (!PARTS.has("main") && !PARTS.has("worker")) return;
  const load0 = loadavg()[0] ?? 0;
  if (PROFILE_DIR !== undefined) await mkdir(PROFILE_DIR, { recursive: true });
  const rounds: Round[] = [];
  try {
    if (PARTS.has("main")) for (let r = 0; r < ROUNDS; r++) for (const tree of r % 2 ? [...trees].reverse() : trees) rounds.push(await round(tree, dir));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const load1 = loadavg()[0] ?? 0;
  if (PARTS.has("main"))
    summarise(`media-frames: the main thread's work per leg per tick, ${ROUNDS} rounds of ${TICKS} ticks each`, trees, rounds, [
    ["legs per round (talking calls x 2, waiting callers x 2)", String(CALLS * 4)],
    ["load average (1 min) before / after, 2 cores, shared", `${load0.toFixed(1)} / ${load1.toFixed(1)}`],
  ]);
  const load2 = loadavg()[0] ?? 0;
  const workerRounds: Round[] = [];
  if (PARTS.has("worker")) for (let r = 0; r < ROUNDS; r++) for (const tree of r % 2 ? [...trees].reverse() : trees) workerRounds.push(await workerRound(tree));
  const load3 = loadavg()[0] ?? 0;
  if (PARTS.has("worker"))
    summarise(`media-frames: a media worker's work per leg per tick (werift legs in this thread, one packet each way), ${ROUNDS} rounds of ${SECONDS} s each`, trees, workerRounds, [
    ["legs per round", String(PAIRS * 2)],
    ["load average (1 min) before / after, 2 cores, shared", `${load2.toFixed(1)} / ${load3.toFixed(1)}`],
  ]);
}

function summarise(title: string, trees: Tree[], rounds: Round[], extra: [string, string][]): void {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const rows: [string, string][] = [];
  const medians = new Map<string, { bytes: number; cpu: number }>();
  for (const tree of trees) {
    const mine = rounds.filter((r) => r.tree === tree.name);
    const bytes = mine.map((r) => r.bytesPerLegTick);
    const cpu = mine.map((r) => r.cpuUsPerLegTick);
    medians.set(tree.name, { bytes: median(bytes), cpu: median(cpu) });
    rows.push([`${tree.name}: bytes allocated per leg per tick (rounds)`, `${bytes.map((b) => b.toFixed(0)).join(", ")} (median ${median(bytes).toFixed(0)})`]);
    rows.push([`${tree.name}: CPU per leg per tick, µs (rounds)`, `${cpu.map((c) => c.toFixed(2)).join(", ")} (median ${median(cpu).toFixed(2)})`]);
  }
  const ours = medians.get("this tree");
  const ref = medians.get("reference");
  if (ours && ref) {
    rows.push(["bytes per leg per tick, this tree / reference", `${ours.bytes.toFixed(0)} / ${ref.bytes.toFixed(0)} (${(ours.bytes / ref.bytes).toFixed(2)}x)`]);
    rows.push(["CPU per leg per tick, this tree / reference", `${ours.cpu.toFixed(2)} / ${ref.cpu.toFixed(2)} µs (${(ours.cpu / ref.cpu).toFixed(2)}x)`]);
  }
  rows.push(...extra);
  report(title, rows);
}

await main();
