// Media engine capacity (issue 4): N bridged, recorded calls, each two server legs (caller and
// agent) mixed and recorded, against two simulated phones per call in a second process (as the
// far ends are in production: browsers and desk phones elsewhere), tones both ways. Reports the
// server process's CPU per call, its main event loop's delay, frame-clock lateness and frames lost,
// with the server's legs in its main thread (workers 0) and in media worker threads, and checks
// every call's recording against what its legs played (bench/lib/recording-check.ts).
//
// BENCH_MEDIA_CALLS (default 10,50,100), BENCH_MEDIA_WORKERS: the server's media workers, one run
// per value (default 0,2), BENCH_MEDIA_PHONE_WORKERS: the phones process's (default 2),
// BENCH_MEDIA_RUNS: runs per point (default 1), BENCH_MEDIA_SECONDS: measured window (default 10),
// BENCH_MEDIA_PHONES_NICE: a nice value for the phones process (default 0), BENCH_MEDIA_FORWARD: the
// bridges' path, one run per value, their order turned each round so A and B alternate (default
// "mixer"): "mixer" (receive buffers and the mix on the frame clock), "forward" (each packet
// forwarded on arrival, media/forward.ts; the agent's leg placed by the pool as any leg, so with
// workers most pairs cross between two workers), "beside" (forward, the agent's leg on its caller's
// worker), "beside-decoding" (as beside, but the legs decode what they receive even with no
// recorder: session 19's forward path). BENCH_MEDIA_RECORD=0: calls with no recorder (as a bridge
// with no recorder does, the forward paths' legs then decode nothing: Forwarding.decode(false)).
// BENCH_MEDIA_PERF=<dir> (Linux, perf installed; run node with --perf-basic-prof to name the
// JavaScript): each run's measured window is also recorded by `perf record -e cpu-clock -g` on the
// server process (on-CPU samples of every thread), left in <dir> for `perf report --tid`.
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { loadavg, setPriority, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { MediaEngine, type LegStats, type RecordingResult, type StereoRecorder, type WebRtcLeg, type WorkerStats } from "../server/media/index.js";
import { checkRecording, MixedSilence, type RecordingCheck } from "./lib/recording-check.js";
import { report } from "./report.js";

const list = (value: string | undefined, fallback: string) => (value ?? fallback).split(",").filter(Boolean).map(Number);
const CALLS = list(process.env.BENCH_MEDIA_CALLS, "10,50,100");
const WORKERS = list(process.env.BENCH_MEDIA_WORKERS, "0,2");
const PHONE_WORKERS = Number(process.env.BENCH_MEDIA_PHONE_WORKERS ?? 2);
const RUNS = Number(process.env.BENCH_MEDIA_RUNS ?? 1);
/** Nice value for the phones process (0: same priority as the server). */
const PHONES_NICE = Number(process.env.BENCH_MEDIA_PHONES_NICE ?? 0);
const SECONDS = Number(process.env.BENCH_MEDIA_SECONDS ?? 10);
type Path = "mixer" | "forward" | "beside" | "beside-decoding";
const PATHS = (process.env.BENCH_MEDIA_FORWARD ?? "mixer").split(",").filter(Boolean) as Path[];
for (const p of PATHS) if (!["mixer", "forward", "beside", "beside-decoding"].includes(p)) throw new Error(`BENCH_MEDIA_FORWARD: no path ${p}`);
const RECORD = process.env.BENCH_MEDIA_RECORD !== "0";
const PERF_DIR = process.env.BENCH_MEDIA_PERF;
const SETUP_BATCH = 5;
// Set-up is not what is measured: on a loaded machine DTLS handshakes queue up, so legs wait longer.
const CONNECT_TIMEOUT_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The machine's CPU time so far (all cores, in ms): busy (user, nice, system, irq, softirq) and stolen by the host. */
async function machineCpu(): Promise<{ busy: number; steal: number }> {
  const line = (await readFile("/proc/stat", "utf8").catch(() => "")).split("\n")[0] ?? "";
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line.split(/\s+/).slice(1).map(Number);
  const tick = 1000 / 100; // USER_HZ
  return { busy: (user + nice + system + irq + softirq) * tick, steal: steal * tick };
}

/**
 * CPU time of each of this process's threads so far (ms, from /proc): the main thread (its id is
 * the process's) apart from the rest (media workers, libuv's pool, V8's helpers).
 */
async function threadCpu(): Promise<{ main: number; others: number }> {
  const tick = 1000 / 100; // USER_HZ
  let main = 0;
  let others = 0;
  const tasks = await readdir("/proc/self/task").catch(() => [] as string[]);
  for (const tid of tasks) {
    const stat = await readFile(`/proc/self/task/${tid}/stat`, "utf8").catch(() => "");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ms = (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * tick;
    if (Number(tid) === process.pid) main += ms;
    else others += ms;
  }
  return { main, others };
}

async function connected(...legs: WebRtcLeg[]): Promise<void> {
  const deadline = performance.now() + 70_000;
  while (legs.some((l) => l.state !== "connected")) {
    const down = legs.find((l) => l.state === "closed");
    if (down) throw new Error(`leg ${down.id} closed while connecting: ${down.closeReason ?? "?"}`);
    if (performance.now() > deadline) throw new Error(`legs not connected: ${legs.map((l) => `${l.id}=${l.state}`).join(" ")}`);
    await sleep(10);
  }
}

type Request =
  | { op: "dial"; id: string; tone: string }
  | { op: "answer"; id: string; sdp: string }
  | { op: "stats" }
  | { op: "cpu" }
  | { op: "close" };
type Reply =
  | { op: "offer"; id: string; sdp: string }
  | { op: "connected"; id: string }
  | { op: "stats"; stats: [string, LegStats][] }
  | { op: "cpu"; micros: number; workers: WorkerStats[] }
  | { op: "error"; message: string };

/**
 * The simulated phones, in a child process (this file again, as BENCH_MEDIA_ROLE=phones) driven
 * over IPC: each makes the offer (as a browser calling in would) and plays a tone.
 */
class Phones {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<string, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();

  constructor() {
    this.#child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, BENCH_MEDIA_ROLE: "phones" },
    });
    // Lower priority for the far ends: on a machine too small for both sides, the server's share
    // of the CPU is then what the server needs, and their lateness shows as loss at the server.
    if (PHONES_NICE && this.#child.pid !== undefined) setPriority(this.#child.pid, PHONES_NICE);
    this.#child.on("message", (message: Reply) => {
      if (message.op === "error") {
        // The run fails (what it was waiting for will not come); the next run starts afresh.
        for (const waiting of this.#waiting.values()) waiting.reject(new Error(`phones process: ${message.message}`));
        this.#waiting.clear();
        return;
      }
      const key = "id" in message ? `${message.op}:${message.id}` : message.op;
      this.#waiting.get(key)?.resolve(message);
      this.#waiting.delete(key);
    });
  }

  #ask<R extends Reply>(request: Request, key: string): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#waiting.set(key, { resolve: (reply) => resolve(reply as R), reject });
      this.#child.send(request);
    });
  }

  /** Creates phone `id`, offers, lets `answer` produce the server's answer, waits until connected. */
  async dial(id: string, tone: string, answer: (offer: string) => Promise<string>): Promise<void> {
    const offer = await this.#ask<Extract<Reply, { op: "offer" }>>({ op: "dial", id, tone }, `offer:${id}`);
    const sdp = await answer(offer.sdp);
    await this.#ask({ op: "answer", id, sdp }, `connected:${id}`);
  }

  async stats(): Promise<Map<string, LegStats>> {
    return new Map((await this.#ask<Extract<Reply, { op: "stats" }>>({ op: "stats" }, "stats")).stats);
  }

  /** CPU microseconds the phones process used so far, and its workers' load since the last ask. */
  async cpu(): Promise<{ micros: number; workers: WorkerStats[] }> {
    return this.#ask<Extract<Reply, { op: "cpu" }>>({ op: "cpu" }, "cpu");
  }

  /** Closes the phones' legs and waits for the process to exit. */
  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once("exit", resolve));
    this.#child.send({ op: "close" } satisfies Request);
    await exited;
  }
}

/** The child's side: answers the parent's requests with a MediaEngine of its own. */
function servePhones(): void {
  const engine = new MediaEngine({ workers: PHONE_WORKERS });
  const legs = new Map<string, WebRtcLeg>();
  const send = (reply: Reply) => process.send?.(reply);
  process.on("message", (request: Request) => {
    void (async () => {
      switch (request.op) {
        case "dial": {
          const leg = engine.createLeg({ id: request.id, connectTimeoutMs: CONNECT_TIMEOUT_MS });
          legs.set(request.id, leg);
          leg.play(await engine.player(request.tone));
          send({ op: "offer", id: request.id, sdp: await leg.createOffer() });
          break;
        }
        case "answer": {
          const leg = legs.get(request.id);
          if (!leg) throw new Error(`no phone ${request.id}`);
          await leg.acceptAnswer(request.sdp);
          await connected(leg);
          send({ op: "connected", id: request.id });
          break;
        }
        case "stats":
          send({ op: "stats", stats: [...legs].map(([id, leg]) => [id, leg.stats()]) });
          break;
        case "cpu": {
          const cpu = process.cpuUsage();
          send({ op: "cpu", micros: cpu.user + cpu.system, workers: await engine.workerStats() });
          break;
        }
        case "close":
          await engine.close();
          process.exit(0);
      }
    })().catch((error: unknown) => send({ op: "error", message: String(error) }));
  });
}

interface Call {
  id: number;
  caller: WebRtcLeg;
  agent: WebRtcLeg;
  /** Absent with BENCH_MEDIA_RECORD=0. */
  recorder?: StereoRecorder;
  mixed?: MixedSilence;
}

const CALLER_TONE = 440;
const AGENT_TONE = 1000;



async function setUpCall(engine: MediaEngine, phones: Phones, dir: string, id: number, path: Path): Promise<Call> {
  const caller = engine.createLeg({ id: `caller-${id}`, connectTimeoutMs: CONNECT_TIMEOUT_MS });
  const agent = engine.createLeg({ id: `agent-${id}`, connectTimeoutMs: CONNECT_TIMEOUT_MS, beside: path.startsWith("beside") ? caller : undefined });
  await Promise.all([
    phones.dial(`caller-phone-${id}`, `tone_stream://${CALLER_TONE}`, (offer) => caller.acceptOffer(offer)),
    phones.dial(`agent-phone-${id}`, `tone_stream://${AGENT_TONE}`, (offer) => agent.acceptOffer(offer)),
  ]);
  await connected(caller, agent);
  const mixer = engine.mixer();
  const callerHears = mixer.join("caller", caller.incoming);
  const agentHears = mixer.join("agent", agent.incoming);
  caller.play(callerHears);
  agent.play(agentHears);
  if (path !== "mixer") {
    const forwarding = engine.forward({ media: caller, hears: callerHears }, { media: agent, hears: agentHears });
    if (!forwarding) throw new Error("the legs could not be paired to forward");
    if (!RECORD && path !== "beside-decoding") forwarding.decode(false);
  }
  if (!RECORD) return { id, caller, agent };
  const recorder = engine.recorder(join(dir, `call-${id}.wav`));
  recorder.attach(mixer, "caller");
  const mixed = new MixedSilence(mixer, "caller", engine.clock.tick);
  return { id, caller, agent, recorder, mixed };
}

interface Flow {
  sent: number;
  received: number;
  /** Sequence gaps at the receivers. */
  lost: number;
  /** Frames the receivers' FIFOs (and worker rings) dropped, or found missing when due (underruns). */
  dropped: number;
  underruns: number;
  /** The drops by cause: FIFO full / clock skipped (the rest: a worker ring's overflow). */
  overflowed: number;
  skipped: number;
  /** Frames' worth of delay taken out by playing a backlog 5% faster (no audio lost). */
  compressed: number;
  /** Frames not sent because their tick ran more than 60 ms late. */
  stale: number;
  /** The deepest receive cushion any leg grew to. */
  jitterMaxMs: number;
}

type Snapshot = Map<string, LegStats>;

async function snapshot(calls: Call[], phones: Phones): Promise<Snapshot> {
  const all = await phones.stats();
  for (const c of calls) for (const leg of [c.caller, c.agent]) all.set(leg.id, structuredClone(leg.stats()));
  return all;
}

/** Every direction audio travels in the calls, summed between two snapshots. */
function flows(calls: Call[], before: Snapshot, after: Snapshot, only?: "at server" | "at phones"): Flow {
  const total: Flow = { sent: 0, received: 0, lost: 0, dropped: 0, underruns: 0, overflowed: 0, skipped: 0, compressed: 0, stale: 0, jitterMaxMs: 0 };
  for (const c of calls) {
    for (const [server, phone] of [[`caller-${c.id}`, `caller-phone-${c.id}`], [`agent-${c.id}`, `agent-phone-${c.id}`]]) {
      const directions = [[server, phone], [phone, server]].filter(([, to]) => !only || (only === "at server") === (to === server));
      for (const [from, to] of directions) {
        const [f0, f1, t0, t1] = [before.get(from), after.get(from), before.get(to), after.get(to)];
        if (!f0 || !f1 || !t0 || !t1) throw new Error(`no stats for ${from} or ${to}`);
        total.sent += f1.packetsSent - f0.packetsSent;
        total.stale += f1.staleFramesSkipped - f0.staleFramesSkipped;
        total.received += t1.packetsReceived - t0.packetsReceived;
        total.lost += t1.packetsLost - t0.packetsLost;
        total.dropped += t1.fifo.dropped - t0.fifo.dropped;
        total.underruns += t1.fifo.underruns - t0.fifo.underruns;
        total.overflowed += t1.fifo.overflowed - t0.fifo.overflowed;
        total.skipped += t1.fifo.skipped - t0.fifo.skipped;
        total.compressed += t1.fifo.compressed - t0.fifo.compressed;
        total.jitterMaxMs = Math.max(total.jitterMaxMs, t1.jitterBufferMs);
      }
    }
  }
  return total;
}

/**
 * RTP packets the server's legs sent and received between two snapshots: what the server's CPU did
 * work for. A loaded machine's server sends fewer (frames not sent, late) and so uses less CPU per
 * call; per packet, runs that carried different shares of their audio compare.
 */
function serverPackets(calls: Call[], before: Snapshot, after: Snapshot): number {
  let packets = 0;
  for (const c of calls) {
    for (const id of [c.caller.id, c.agent.id]) {
      const [b, a] = [before.get(id), after.get(id)];
      if (b && a) packets += a.packetsSent - b.packetsSent + (a.packetsReceived - b.packetsReceived);
    }
  }
  return packets;
}

/** The whole recording against what its bridge mixed: left the caller's voice, right the agent's. */
async function recordingCheck(mixed: MixedSilence, result: RecordingResult, endTick: number): Promise<RecordingCheck> {
  return checkRecording(await readFile(result.path), mixed.expectation(endTick, CALLER_TONE, AGENT_TONE));
}

/** `perf record` of this process's threads (BENCH_MEDIA_PERF) until `stop`, into `file`. */
async function perfRecord(file: string): Promise<{ stop(): Promise<void> }> {
  const perf = spawn("perf", ["record", "-e", "cpu-clock", "-F", "999", "-g", "-p", String(process.pid), "-o", file], { stdio: "ignore" });
  const exited = new Promise((resolve) => perf.once("exit", resolve));
  // perf attaches to the threads before the window starts.
  await sleep(300);
  return {
    async stop() {
      perf.kill("SIGINT");
      await exited;
      process.stdout.write(`perf data: ${file}\n`);
    },
  };
}

const ms = (x: number) => x.toFixed(1);
const workerLoops = (stats: WorkerStats[]) =>
  stats.length === 0 ? "-" : stats.map((w) => `${ms(w.loopP99Ms)} (${Math.round(w.utilization * 100)}% busy)`).join(", ");

/** One summary line per run, for bench/README.md's table. */
const summary: string[] = [];

async function run(n: number, workers: number, round: number, path: Path): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "sb-bench-media-"));
  const engine = new MediaEngine({ workers, forwardBridge: path !== "mixer" });
  const phones = new Phones();
  const calls: Call[] = [];
  try {
    const setupStart = performance.now();
    for (let i = 0; i < n; i += SETUP_BATCH) {
      const batch = Array.from({ length: Math.min(SETUP_BATCH, n - i) }, (_, j) => setUpCall(engine, phones, dir, i + j, path));
      calls.push(...(await Promise.all(batch)));
    }
    const setupMs = performance.now() - setupStart;
    await sleep(1000);

    const perf = PERF_DIR ? await perfRecord(join(PERF_DIR, `media-${n}-${workers}-${path}-${round}.data`)) : undefined;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    const load0 = loadavg()[0];
    const elu0 = performance.eventLoopUtilization();
    const before = await snapshot(calls, phones);
    const phones0 = await phones.cpu();
    await engine.workerStats();
    engine.clock.resetStats();
    loop.enable();
    const cpu0 = process.cpuUsage();
    const threads0 = await threadCpu();
    const machine0 = await machineCpu();
    const wall0 = performance.now();
    // Loss second by second: whether it comes in bursts (a thread unscheduled) or all along.
    const timeline: string[] = [];
    let last = before;
    // The admission check a new call would meet (media/load.ts: SIP 503 "Media Overloaded"), each second.
    const refusals: string[] = [];
    for (let second = 1; second <= SECONDS; second++) {
      await sleep(1000);
      const refusal = engine.refusal();
      if (refusal !== undefined) refusals.push(refusal);
      const now = await snapshot(calls, phones);
      const [f, g] = [flows(calls, last, now, "at server"), flows(calls, last, now, "at phones")];
      timeline.push(`${f.lost}/${f.dropped}/${f.underruns}/${f.stale}+${g.lost}/${g.dropped}/${g.underruns}/${g.stale}`);
      last = now;
    }
    const cpu = process.cpuUsage(cpu0);
    await perf?.stop();
    const threads1 = await threadCpu();
    const machine1 = await machineCpu();
    const wallMs = performance.now() - wall0;
    loop.disable();
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const serverWorkers = await engine.workerStats();
    const load1 = loadavg()[0];
    const clock = engine.clock.stats();
    const phones1 = await phones.cpu();
    const flow = flows(calls, before, last);
    const packets = serverPackets(calls, before, last);
    const rssMiB = process.memoryUsage().rss / 2 ** 20;

    // A leg stops reading its bridge as close() is called: the recordings end at this tick.
    const endTick = engine.clock.tick;
    // A call whose legs closed during the run (a far end's ICE or DTLS gave up under load) is no
    // recording fault: its bridge stopped being mixed then, and its recording ends there.
    const dropped = calls.filter((c) => c.caller.state === "closed" || c.agent.state === "closed");
    const bothClosed = new Set(dropped.filter((c) => c.caller.state === "closed" && c.agent.state === "closed"));
    const dropReasons = [...new Set(dropped.flatMap((c) => [c.caller, c.agent].filter((l) => l.state === "closed").map((l) => l.closeReason ?? "?")))];
    await Promise.all(calls.flatMap((c) => [c.caller.close(), c.agent.close()]));
    const results = await Promise.all(calls.map((c) => c.recorder?.finish()));
    const checks: RecordingCheck[] = [];
    for (const [i, c] of calls.entries()) {
      const result = results[i];
      const mixed = c.mixed;
      if (result && mixed) checks.push(await recordingCheck(mixed, result, bothClosed.has(c) ? mixed.lastTick : endTick));
    }
    const good = checks.filter((c) => c.ok).length;
    const failing = checks.flatMap((c, i) => (c.ok ? [] : [`call ${i}: ${c.problems.join("; ")}`]));
    const seconds = results.flatMap((r) => (r ? [r.durationMs / 1000] : []));

    const share = (micros: number) => micros / 1000 / wallMs;
    const serverShare = share(cpu.user + cpu.system);
    const mainShare = (threads1.main - threads0.main) / wallMs;
    const otherShare = (threads1.others - threads0.others) / wallMs;
    const phonesShare = share(phones1.micros - phones0.micros);
    const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`;
    const p99 = loop.percentile(99) / 1e6;
    // µs of the server's CPU per RTP packet its legs sent or received (50 each way a second per leg).
    const perPacketUs = ((cpu.user + cpu.system) / Math.max(1, packets)).toFixed(1);
    // Lost: audio that never played (never received, dropped, not sent). Late: a FIFO that ran
    // dry played 20 ms of silence, and the frame after it.
    const lostAll = flow.lost + flow.dropped + flow.stale;
    const rows: [string, string][] = [
      ["set-up time (all calls connected)", `${(setupMs / 1000).toFixed(1)} s`],
      ["CPU, server process (all threads)", `${pct(serverShare)} of one core`],
      ["CPU per call (2 server legs, mixer, recorder)", `${pct(serverShare / n, 2)} of a core`],
      [
        "CPU per call: main thread / other threads (media workers, libuv pool, V8 helpers; /proc, 10 ms ticks)",
        `${pct(mainShare / n, 3)} / ${pct(otherShare / n, 3)} of a core`,
      ],
      [
        "server CPU per RTP packet its legs sent or received (packets: expected 200 a second per call)",
        `${perPacketUs} µs (${packets} packets, ${((100 * packets) / (200 * n * (wallMs / 1000))).toFixed(0)}% of expected)`,
      ],
      [`CPU, phones process (${2 * n} legs, ${PHONE_WORKERS} workers)`, `${pct(phonesShare)} of one core`],
      ["server main thread: event-loop utilisation", pct(elu)],
      ["server main thread: event-loop delay p50 / p99 / max (1 ms sampling)", `${ms(loop.percentile(50) / 1e6)} / ${ms(p99)} / ${ms(loop.max / 1e6)} ms`],
      ["server workers: event-loop delay p99 (busy share)", workerLoops(serverWorkers)],
      ["phones workers: event-loop delay p99 (busy share)", workerLoops(phones1.workers)],
      ["machine load average (1 min) before / after, 2 cores", `${load0.toFixed(1)} / ${load1.toFixed(1)}`],
      [
        "other processes' CPU / stolen by the host (of one core)",
        `${pct(Math.max(0, (machine1.busy - machine0.busy) / wallMs - serverShare - phonesShare))} / ${pct((machine1.steal - machine0.steal) / wallMs)}`,
      ],
      ["frame clock lateness p50 / p99 / max", `${clock.latenessP50Ms.toFixed(2)} / ${clock.latenessP99Ms.toFixed(2)} / ${clock.latenessMaxMs.toFixed(1)} ms`],
      ["frame clock ticks (expected) / skipped", `${clock.ticks} (${Math.round(wallMs / 20)}) / ${clock.skipped}`],
      ["RTP frames sent / received, all directions", `${flow.sent} / ${flow.received} (difference ${flow.sent - flow.received})`],
      ["frames lost: sequence gaps / FIFO drops / FIFO underruns", `${flow.lost} / ${flow.dropped} / ${flow.underruns}`],
      ["FIFO drops by cause: full / clock skipped / worker ring full", `${flow.overflowed} / ${flow.skipped} / ${flow.dropped - flow.overflowed - flow.skipped}`],
      ["frames' worth of backlog cut (repeated periods, no frame lost)", `${flow.compressed}`],
      ["frames not sent (tick more than 60 ms late)", `${flow.stale}`],
      ["each second, received at the server + at the phones: gaps/drops/underruns/not sent", timeline.join("  ")],
      ["deepest jitter buffer at the end (starts at 40 ms)", `${flow.jitterMaxMs} ms`],
      [
        "recordings good (a frame per tick; 440 Hz left, 1000 Hz right; silent where the bridge was)",
        `${good} of ${checks.length}, ${Math.min(...seconds).toFixed(1)}-${Math.max(...seconds).toFixed(1)} s long`,
      ],
      ...failing.slice(0, 3).map((line): [string, string] => ["  failed", line]),
      ["seconds in which a new call would have been refused (media/load.ts), the last reason", `${refusals.length} of ${SECONDS}${refusals.length ? ` (${refusals[refusals.length - 1]})` : ""}`],
      ["calls with a leg closed before the end of the run (reasons)", `${dropped.length}${dropReasons.length ? ` (${dropReasons.join("; ")})` : ""}`],
      ["RSS (server process)", `${rssMiB.toFixed(0)} MiB`],
    ];
    const where = workers === 0 ? "server legs in the main thread" : `server legs in ${workers} media workers`;
    report(`media: ${n} bridged ${RECORD ? "recorded" : "unrecorded"} calls, ${where}, bridges: ${path}, phones in a second process; run ${round}, ${SECONDS} s`, rows);
    summary.push(
      `| ${n} | ${workers} | ${path}${RECORD ? "" : " (unrecorded)"} | ${pct(serverShare / n, 2)} (main ${pct(mainShare / n, 3)}, others ${pct(otherShare / n, 3)}) | ${pct(serverShare, 0)} | ${ms(p99)} ms | ${workerLoops(serverWorkers)} | ` +
        `${flow.sent - flow.received} of ${flow.sent} (${pct((flow.sent - flow.received) / Math.max(1, flow.sent), 2)}) | ` +
        `${flow.lost} / ${flow.dropped} / ${flow.stale} (${lostAll}) | ${flow.underruns} | ${flow.compressed} | ${pct(phonesShare, 0)} | ${good} of ${checks.length} | ${load0.toFixed(1)}–${load1.toFixed(1)} | ${perPacketUs} µs |`,
    );
  } finally {
    await Promise.all([engine.close(), phones.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.env.BENCH_MEDIA_ROLE === "phones") {
  servePhones();
} else {
  const started = performance.now();
  for (const n of CALLS) {
    for (const workers of WORKERS) {
      for (let round = 1; round <= RUNS; round++) {
        // The paths in turn, starting one later each round: A B, B A, ...
        const paths = PATHS.map((_, i) => PATHS[(i + round - 1) % PATHS.length] as Path);
        for (const path of paths) {
          // A point the machine cannot carry (calls that never connect) is a figure too, not the end.
          await run(n, workers, round, path).catch((error: unknown) => {
            process.stdout.write(`\nmedia: ${n} calls, ${workers} workers, ${path}, run ${round} failed: ${String(error)}\n`);
            summary.push(`| ${n} | ${workers} | ${path} | failed: ${String(error).slice(0, 120)} |`);
          });
          // Let the last run's processes and sockets go before the next one binds its own.
          await sleep(3000);
        }
      }
    }
  }
  process.stdout.write(
    "\n| calls | server workers | bridges | CPU per call | server CPU | main loop p99 | worker loops p99 | packets not received | lost: gaps / drops / not sent | late (FIFO dry) | backlog cut | phones CPU | recordings good | load | server CPU per packet |\n" +
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" +
      summary.join("\n") +
      `\n\nmedia bench wall time ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
}
