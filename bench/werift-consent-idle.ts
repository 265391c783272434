// `npx tsx bench/werift-consent-idle.ts`: what werift's ICE consent freshness (RFC 7675) costs
// with no media at all. PAIRS pairs of werift peer connections (default 50) on loopback in this
// process, connected, then SECONDS (default 10) idle: the process's CPU is then the consent
// checks (each connection sends a binding request every 4-6 s and answers its peer's) and their
// timers, beside a one-pair run's as the process's own idle cost. Printed per leg and second,
// and as µs per RTP packet at the 100 packets a second a server leg sends and receives, the unit
// of bench/media's per-packet figure. Datagrams sent are counted through dgram's send.
//
// MODES (default "werift,own"), ROUNDS (default 2): each round runs every mode, the order turned
// each round. "werift": werift's own consent loop, as the session-24 figure. "own": each connection
// with a direct path open on it (server/media/direct-rtp.ts), whose own consent checks replace
// werift's loop (session 25), still no media. "none": werift's loop stopped and nothing in its
// place (no consent at all: what an idle connection costs without it, the floor of the other two).
// The pairs come from the server's werift copy (its
// CommonJS build, server/media/werift.ts) in both modes, so the direct path can open on them.
import dgram from "node:dgram";
import { readdirSync, readFileSync } from "node:fs";
import type { RTCPeerConnection } from "werift";
import { DirectRtpPath } from "../server/media/direct-rtp.js";
import { werift } from "../server/media/werift.js";
import { report } from "./report.js";

const PAIRS = Number(process.env.PAIRS ?? 50);
const SECONDS = Number(process.env.SECONDS ?? 10);
type Mode = "werift" | "own" | "none";
const MODES = (process.env.MODES ?? "werift,own").split(",").filter(Boolean) as Mode[];
for (const m of MODES) if (m !== "werift" && m !== "own" && m !== "none") throw new Error(`MODES: no mode ${m}`);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const { RTCPeerConnection: PeerConnection, RTCRtpCodecParameters } = werift();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let sent = 0;
const send = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function (this: dgram.Socket, ...args: Parameters<typeof send>) {
  sent++;
  return send.apply(this, args);
} as typeof send;

/** CPU of the main thread and of the process's other threads, ms (/proc, 10 ms ticks). */
function threadMs(): { main: number; others: number } {
  const ms = { main: 0, others: 0 };
  for (const task of readdirSync("/proc/self/task")) {
    const fields = readFileSync(`/proc/self/task/${task}/stat`, "utf8").split(") ")[1].split(" ");
    ms[Number(task) === process.pid ? "main" : "others"] += (Number(fields[11]) + Number(fields[12])) * 10;
  }
  return ms;
}

const peer = (): RTCPeerConnection =>
  new PeerConnection({
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: "audio/PCMU", clockRate: 8000, channels: 1, payloadType: 0 })], video: [] },
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ["127.0.0.1"],
    iceInterfaceAddresses: { udp4: "127.0.0.1" },
  });

async function idle(pairs: number, mode: Mode): Promise<{ legSecondUs: number; datagramsPerLegSecond: number; mainMs: number; othersMs: number }> {
  const pcs: RTCPeerConnection[] = [];
  for (let i = 0; i < pairs; i++) {
    const [a, b] = [peer(), peer()];
    pcs.push(a, b);
    a.addTransceiver("audio", { direction: "sendrecv" });
    await a.setLocalDescription(await a.createOffer());
    const offer = a.localDescription;
    if (!offer) throw new Error("no offer");
    await b.setRemoteDescription(offer);
    await b.setLocalDescription(await b.createAnswer());
    const answer = b.localDescription;
    if (!answer) throw new Error("no answer");
    await a.setRemoteDescription(answer);
  }
  while (pcs.some((pc) => pc.connectionState !== "connected")) await sleep(100);
  const paths: DirectRtpPath[] = [];
  if (mode === "own") {
    const handlers = { packet: () => undefined, bad: () => undefined, sendFailed: () => undefined };
    for (const pc of pcs) {
      const dtls = pc.getTransceivers()[0]?.dtlsTransport;
      while (dtls && !dtls.srtpStarted) await sleep(50);
      const path = dtls ? DirectRtpPath.open(dtls, handlers, { own: true }) : undefined;
      if (!path?.consentCounts) throw new Error("no direct path with our consent on a connection");
      paths.push(path);
    }
  }
  if (mode === "none") {
    // werift 0.25's private method (server/media/direct-rtp.ts wraps it for the path).
    for (const pc of pcs) (pc.getTransceivers()[0]?.dtlsTransport.iceTransport.connection as unknown as { stopConsentLifecycle(): void }).stopConsentLifecycle();
  }
  await sleep(2000);
  const [cpu0, sent0, threads0] = [process.cpuUsage(), sent, threadMs()];
  await sleep(SECONDS * 1000);
  const [cpu, datagrams, threads1] = [process.cpuUsage(cpu0), sent - sent0, threadMs()];
  if (mode === "own") {
    // Every request our paths sent answered by the other path, none left to werift.
    const counts = { requestsSent: 0, answersReceived: 0, requestsAnswered: 0, requestsRefused: 0 };
    for (const path of paths) for (const key of Object.keys(counts) as (keyof typeof counts)[]) counts[key] += path.consentCounts?.[key] ?? 0;
    if (pairs > 1) console.log(`own consent, all paths: ${JSON.stringify(counts)}`);
  }
  for (const path of paths) path.close(true);
  await Promise.all(pcs.map((pc) => pc.close()));
  const legSeconds = 2 * pairs * SECONDS;
  return {
    legSecondUs: (cpu.user + cpu.system) / legSeconds,
    datagramsPerLegSecond: datagrams / legSeconds,
    mainMs: threads1.main - threads0.main,
    othersMs: threads1.others - threads0.others,
  };
}

const rows: [string, string][] = [["pairs (legs), seconds, rounds", `${PAIRS} (${2 * PAIRS}), ${SECONDS}, ${ROUNDS}`]];
const perMode = new Map<Mode, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? MODES : [...MODES].reverse();
  for (const mode of order) {
    const one = await idle(1, mode);
    const many = await idle(PAIRS, mode);
    // The one-pair run's CPU is mostly the process's own (timers, GC): taken out per second.
    const consentUs = (many.legSecondUs * 2 * PAIRS - one.legSecondUs * 2) / (2 * PAIRS - 2);
    perMode.set(mode, [...(perMode.get(mode) ?? []), consentUs]);
    rows.push([
      `round ${round + 1}, ${mode}: datagrams per leg-second (0.4 expected); CPU per leg-second one pair / all / own taken out; per RTP packet at 100 a second; main / other threads`,
      `${many.datagramsPerLegSecond.toFixed(2)}; ${one.legSecondUs.toFixed(0)} / ${many.legSecondUs.toFixed(0)} / ${consentUs.toFixed(0)} µs; ${(consentUs / 100).toFixed(2)} µs; ${many.mainMs} / ${many.othersMs} ms`,
    ]);
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? (s[(s.length - 1) / 2] ?? 0) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
};
for (const [mode, values] of perMode) rows.push([`${mode}: median CPU per leg-second (per RTP packet)`, `${median(values).toFixed(0)} µs (${(median(values) / 100).toFixed(2)} µs)`]);
report("ICE consent, idle connections", rows);
process.exit(0);
