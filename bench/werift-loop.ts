// `npx tsx bench/werift-loop.ts`: the receive jitter buffer's cushion on two werift legs over
// loopback, after the far end paused (a sendonly hold and unhold, then DTMF) against the same time
// of steady audio, in alternating rounds in one process. test/media/werift-loop.test.ts asserted
// the paused figure (40 ms) until session 13; a busy machine delays packets over loopback too, so
// the figure lives here and the test keeps what load cannot change (the unit test
// test/unit/media-leg-parts.test.ts checks the pause rule on ticks it moves by hand).
// BENCH_ROUNDS (default 8, half each kind); BENCH_WORKERS=1 puts the legs in a media worker.
import { execSync } from "node:child_process";
import { MediaEngine, type WebRtcLeg } from "../server/media/index.js";
import { report } from "./report.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await sleep(10);
  }
}

interface Round {
  kind: "steady" | "paused";
  /** A's cushion (B held, then resumed) and B's (A sent DTMF), ms. */
  cushionA: number;
  cushionB: number;
  underruns: number;
  cpuMs: number;
}

async function round(kind: Round["kind"]): Promise<Round> {
  const engine = new MediaEngine({ workers: WORKERS });
  try {
    const a: WebRtcLeg = engine.createLeg({ id: "A" });
    const b: WebRtcLeg = engine.createLeg({ id: "B" });
    a.play(await engine.player("tone_stream://440"));
    b.play(await engine.player("tone_stream://1000"));
    await a.acceptAnswer(await b.acceptOffer(await a.createOffer()));
    await until(() => a.state === "connected" && b.state === "connected");
    const cpu = process.cpuUsage();
    await sleep(1000);
    if (kind === "paused") {
      await a.acceptAnswer(await b.acceptOffer(await a.hold()));
      await sleep(800);
      await a.acceptAnswer(await b.acceptOffer(await a.unhold()));
      await sleep(600);
      await a.sendDtmf("159#*D");
      await sleep(600);
    } else {
      await sleep(2000);
    }
    const used = process.cpuUsage(cpu);
    const sa = a.stats();
    const sb = b.stats();
    return {
      kind,
      cushionA: sa.jitterBufferMs,
      cushionB: sb.jitterBufferMs,
      underruns: sa.fifo.underruns + sb.fifo.underruns,
      cpuMs: (used.user + used.system) / 1000,
    };
  } finally {
    await engine.close();
  }
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const load = () => execSync("uptime").toString().trim().replace(/^.*load average: /, "");

const loadBefore = load();
const rounds: Round[] = [];
for (let i = 0; i < ROUNDS; i++) rounds.push(await round(i % 2 === 0 ? "steady" : "paused"));
const loadAfter = load();

const rows: [string, string][] = [["load average before / after", `${loadBefore} / ${loadAfter}`]];
for (const kind of ["steady", "paused"] as const) {
  const of = rounds.filter((r) => r.kind === kind);
  rows.push([
    `${kind} (${of.length} rounds): cushion A, B ms`,
    `${of.map((r) => `${r.cushionA}/${r.cushionB}`).join(" ")} (mean ${mean(of.map((r) => r.cushionA)).toFixed(1)} / ${mean(of.map((r) => r.cushionB)).toFixed(1)})`,
  ]);
  rows.push([`${kind}: FIFO underruns, both legs`, of.map((r) => r.underruns).join(" ")]);
  rows.push([`${kind}: process CPU ms a round`, of.map((r) => r.cpuMs.toFixed(0)).join(" ")]);
}
const steady = rounds.filter((r) => r.kind === "steady");
const paused = rounds.filter((r) => r.kind === "paused");
rows.push([
  "paused / steady, mean cushion A, B",
  `${(mean(paused.map((r) => r.cushionA)) / mean(steady.map((r) => r.cushionA))).toFixed(2)} / ${(mean(paused.map((r) => r.cushionB)) / mean(steady.map((r) => r.cushionB))).toFixed(2)}`,
]);
report(`werift-loop: jitter buffer cushion after a pause (legs ${WORKERS === 0 ? "in this thread" : "in a media worker"})`, rows);
