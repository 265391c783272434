// `npx tsx bench/werift-consent-idle.ts`: what werift's ICE consent freshness (RFC 7675) costs
// with no media at all. PAIRS pairs of werift peer connections (default 50) on loopback in this
// process, connected, then SECONDS (default 10) idle: the process's CPU is then the consent
// checks (each connection sends a binding request every 4-6 s and answers its peer's) and their
// timers, beside a one-pair run's as the process's own idle cost. Printed per leg and second,
// and as µs per RTP packet at the 100 packets a second a server leg sends and receives, the unit
// of bench/media's per-packet figure. Datagrams sent are counted through dgram's send.
import dgram from "node:dgram";
import { readdirSync, readFileSync } from "node:fs";
import { RTCPeerConnection, RTCRtpCodecParameters } from "werift";
import { report } from "./report.js";

const PAIRS = Number(process.env.PAIRS ?? 50);
const SECONDS = Number(process.env.SECONDS ?? 10);
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

const peer = () =>
  new RTCPeerConnection({
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: "audio/PCMU", clockRate: 8000, channels: 1, payloadType: 0 })], video: [] },
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ["127.0.0.1"],
    iceInterfaceAddresses: { udp4: "127.0.0.1" },
  });

async function idle(pairs: number): Promise<{ legSecondUs: number; datagramsPerLegSecond: number; mainMs: number; othersMs: number }> {
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
  await sleep(2000);
  const [cpu0, sent0, threads0] = [process.cpuUsage(), sent, threadMs()];
  await sleep(SECONDS * 1000);
  const [cpu, datagrams, threads1] = [process.cpuUsage(cpu0), sent - sent0, threadMs()];
  await Promise.all(pcs.map((pc) => pc.close()));
  const legSeconds = 2 * pairs * SECONDS;
  return {
    legSecondUs: (cpu.user + cpu.system) / legSeconds,
    datagramsPerLegSecond: datagrams / legSeconds,
    mainMs: threads1.main - threads0.main,
    othersMs: threads1.others - threads0.others,
  };
}

const one = await idle(1);
const many = await idle(PAIRS);
// The one-pair run's CPU is mostly the process's own (timers, GC): taken out per second.
const consentUs = (many.legSecondUs * 2 * PAIRS - one.legSecondUs * 2) / (2 * PAIRS - 2);
report("werift consent, idle connections", [
  ["pairs (legs), seconds", `${PAIRS} (${2 * PAIRS}), ${SECONDS}`],
  ["datagrams sent per leg and second (a request, an answer: 0.4 expected)", many.datagramsPerLegSecond.toFixed(2)],
  ["CPU per leg and second, one pair / all pairs", `${one.legSecondUs.toFixed(0)} / ${many.legSecondUs.toFixed(0)} µs`],
  ["CPU per leg and second, the process's own taken out", `${consentUs.toFixed(0)} µs`],
  ["the same per RTP packet at 100 a leg a second", `${(consentUs / 100).toFixed(2)} µs`],
  ["all pairs: the main thread / the other threads (V8's compiler and GC, libuv)", `${many.mainMs} / ${many.othersMs} ms`],
]);
process.exit(0);
