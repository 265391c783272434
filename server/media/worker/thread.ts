// A media worker's entry: it runs the werift peer connections (ICE, DTLS, SRTP, RTP, G.711, DTMF)
// of the legs the main thread gives it, sending the frames of each tick the main thread's frame clock
// has marked in shared memory, on its own timer at its phase or when the main thread asks through
// its wake word (tick-share.ts). Audio crosses in shared memory (leg-memory.ts); everything else is a message.

import { constants as perfConstants, monitorEventLoopDelay, performance, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { PeerLeg } from "../leg.js";
import type { LegInfo, FromWorker, ToWorker, WorkerConfig, WorkerStats, LegCall } from "./protocol.js";
import { LegMemory } from "./leg-memory.js";
import { TickShare, TickWake, WorkerClock } from "./tick-share.js";
import weriftModule from "./werift-cjs.cjs";
import { provideWerift } from "../werift.js";
import { MEDIA_WORKER_READY_EVENT } from "../../code-cache.js";
import { makeDtlsCertificate } from "../dtls-certificate.js";
import { rehearse } from "./rehearse.js";

const port = parentPort;
if (!port) throw new Error("the media worker runs only as a worker thread");
// A worker the pool starts gets its configuration as workerData; one serve mode's entry started
// before the server (early.ts) gets it as its first message.
let config = (workerData ?? undefined) as WorkerConfig | undefined;
let configured: (config: WorkerConfig) => void = () => undefined;
const configuration = config ? Promise.resolve(config) : new Promise<WorkerConfig>((resolve) => (configured = resolve));
/** The configuration, which precedes every leg. */
const configOf = (): WorkerConfig => {
  if (!config) throw new Error("the media worker has no configuration yet");
  return config;
};
const post = (message: FromWorker): void => port.postMessage(message);

interface Entry {
  leg: PeerLeg;
  memory: LegMemory;
  /** The channel to the worker of the leg this one forwards to and from (forward.ts). */
  port?: MessagePort;
}

/** A packet crossing to another worker: payload type, RTP timestamp (big-endian), then the payload. */
const FORWARD_HEAD = 5;

/** Links `entry`'s leg to a leg of this worker, to one in another worker through `port`, or to none. */
function forward(entry: Entry, to: string | undefined, port: MessagePort | undefined): void {
  entry.port?.close();
  entry.port = undefined;
  if (port) {
    entry.port = port;
    entry.leg.forwardTo({
      forwarded(payload, payloadType, timestamp) {
        // A buffer of its own, moved rather than copied: the payload is a view of the socket's.
        const bytes = Buffer.allocUnsafeSlow(FORWARD_HEAD + payload.length);
        bytes[0] = payloadType;
        bytes.writeUInt32BE(timestamp, 1);
        payload.copy(bytes, FORWARD_HEAD);
        port.postMessage(bytes, [bytes.buffer]);
      },
    });
    const leg = entry.leg;
    port.on("message", (bytes: Uint8Array) => {
      const packet = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      if (packet.length > FORWARD_HEAD) leg.forwarded(packet.subarray(FORWARD_HEAD), packet[0], packet.readUInt32BE(1));
    });
    return;
  }
  entry.leg.forwardTo(to === undefined ? undefined : legs.get(to)?.leg);
}

const legs = new Map<string, Entry>();
/** Closes under way (a leg leaves `legs` only once its close is done), and the start's rehearsal. */
const closing = new Set<Promise<unknown>>();
const writeCounters = (): void => {
  for (const { leg, memory } of legs.values()) memory.writeCounters(leg.counters);
};
/** Replaced by the main thread's first message (the shared tick memory and this worker's phase), before any leg. */
let clock = new WorkerClock({ share: new TickShare(), phaseMs: 0, afterTicks: writeCounters });
// The loop-delay histogram samples on a 1 ms timer of its own: a thousand wake-ups a second in a
// thread whose work is fifty ticks a second. It runs only once something asked for stats (a bench),
// so a server nobody measures does not pay for it; the first answer's loop figures are then 0.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
let loopMeasured = false;
let elu = performance.eventLoopUtilization();
// This thread's collections (a pause here is a pause of its legs' sending), counted from the start.
const collections = { minor: 0, major: 0, ms: 0, maxMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    if (entry.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) collections.minor++;
    else collections.major++;
    collections.ms += entry.duration;
    collections.maxMs = Math.max(collections.maxMs, entry.duration);
  }
}).observe({ entryTypes: ["gc"] });

const infoOf = (leg: PeerLeg): LegInfo => ({ codec: leg.codec, direction: leg.direction });

function create(id: string, memory: LegMemory, options: Extract<ToWorker, { type: "create" }>["options"]): void {
  const seed = Buffer.from(options.seed);
  const leg = new PeerLeg({
    id,
    clock,
    host: configOf().host,
    random: { bytes: (n) => (n <= seed.length ? seed.subarray(0, n) : Buffer.alloc(n)) },
    codecs: options.codecs,
    telephoneEventPayloadType: options.telephoneEventPayloadType,
    connectTimeoutMs: options.connectTimeoutMs,
    maxSendLatenessMs: options.maxSendLatenessMs,
    maxForwardLatenessMs: options.maxForwardLatenessMs,
    choosePath: options.choosePath,
    received: memory.sink(),
  });
  leg.play(memory.source());
  legs.set(id, { leg, memory });
  leg.on("state", (change) => {
    memory.writeCounters(leg.counters);
    post({ type: "state", leg: id, to: change.to, reason: change.reason, info: infoOf(leg) });
  });
  leg.on("dtmf", (digit) => post({ type: "dtmf", leg: id, digit }));
}

async function call(leg: PeerLeg, request: LegCall): Promise<string | undefined> {
  switch (request.op) {
    case "createOffer":
      return leg.createOffer();
    case "acceptAnswer":
      await leg.acceptAnswer(request.sdp);
      return undefined;
    case "acceptOffer":
      return leg.acceptOffer(request.sdp);
    case "hold":
      return leg.hold(request.mode);
    case "unhold":
      return leg.unhold();
    case "sendDtmf":
      await leg.sendDtmf(request.digits, request.options);
      return undefined;
    case "close":
      await leg.close(request.reason);
      return undefined;
  }
}

function stats(): WorkerStats {
  const result: WorkerStats = {
    legs: legs.size,
    utilization: performance.eventLoopUtilization(elu).utilization,
    loopP50Ms: loopDelay.percentile(50) / 1e6,
    loopP99Ms: loopDelay.percentile(99) / 1e6,
    loopMaxMs: loopDelay.max / 1e6,
    tickLatenessP99Ms: clock.takeLatenessP99(),
    gc: { ...collections },
  };
  collections.minor = 0;
  collections.major = 0;
  collections.ms = 0;
  collections.maxMs = 0;
  elu = performance.eventLoopUtilization();
  loopDelay.reset();
  if (!loopMeasured) {
    loopMeasured = true;
    loopDelay.enable();
  }
  return result;
}

port.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "config":
      config = message.config;
      configured(message.config);
      break;
    case "clock": {
      const ticking = new WorkerClock({ share: new TickShare(message.memory), phaseMs: message.phaseMs, afterTicks: writeCounters });
      clock = ticking;
      new TickWake(message.wake).listen((tick) => ticking.nudge(tick));
      break;
    }
    case "create":
      create(message.leg, new LegMemory(message.memory), message.options);
      break;
    case "call": {
      const entry = legs.get(message.leg);
      if (!entry) {
        // A leg already gone: closing it again is done; anything else is the caller's mistake.
        if (message.op === "close") post({ type: "reply", id: message.id, ok: true, info: { codec: undefined, direction: undefined } });
        else post({ type: "reply", id: message.id, ok: false, error: { name: "LegStateError", message: `${message.op} on a closed leg` } });
        break;
      }
      const { leg, memory } = entry;
      const done = call(leg, message);
      if (message.op === "close") track(done);
      done.then(
        (value) => {
          if (message.op === "close") {
            memory.writeCounters(leg.counters);
            entry.port?.close();
            legs.delete(message.leg);
          }
          post({ type: "reply", id: message.id, ok: true, value, info: infoOf(leg) });
        },
        (error: unknown) => {
          const { name, message: text } = error instanceof Error ? error : new Error(String(error));
          post({ type: "reply", id: message.id, ok: false, error: { name, message: text }, info: infoOf(leg) });
        },
      );
      break;
    }
    case "stats":
      post({ type: "stats", id: message.id, stats: stats() });
      break;
    case "forward": {
      const entry = legs.get(message.leg);
      if (entry) forward(entry, message.to, message.port);
      else message.port?.close();
      break;
    }
    case "forwardWhile": {
      const leg = legs.get(message.leg)?.leg;
      leg?.forwardWhile(message.on ? leg.source : undefined);
      break;
    }
    case "decode":
      legs.get(message.leg)?.leg.decode(message.on);
      break;
    case "stop":
      void stop();
      break;
  }
});

function track(work: Promise<unknown>): void {
  closing.add(work);
  const settled = (): void => void closing.delete(work);
  work.then(settled, settled);
}

/**
 * Closes every leg and waits for the closes already under way, so no UDP socket of this thread
 * is open when the main thread terminates it: a datagram arriving while a worker's isolate is
 * being torn down aborts the whole process (Node 20: `FATAL ERROR: v8::FromJust` in
 * UDPWrap::OnRecv).
 */
async function stop(): Promise<void> {
  for (const entry of legs.values()) {
    entry.port?.close();
    track(entry.leg.close("shutdown"));
  }
  while (closing.size > 0) await Promise.allSettled([...closing]);
  post({ type: "stopped" });
}

// A worker loads werift as it starts (a static import: the build bundles it into this thread's
// file, so node's loader reads one file instead of a few hundred), off the main thread, so no call
// waits for it; messages sent meanwhile wait in the port's queue.
provideWerift(weriftModule);
// The thread's DTLS certificate (one for all its legs, an ECDSA key and a signed certificate) is
// made now too, not by the first call's offer: with node:crypto (dtls-certificate.ts), handed to
// werift as the one its `SetupCertificate` keeps, so werift never makes its own (with
// @peculiar/x509, which the worker's bundle then never evaluates: WORKER_PATCHES in
// electron.vite.config.ts load it on first use). Ready either way: a failure here is the one the
// first leg would have met.
// The built entry (boot.ts) writes the worker bundle's code cache then, when it has to.
const ready = (): void => {
  post({ type: "ready" });
  const threadEvents: NodeJS.EventEmitter = process;
  threadEvents.emit(MEDIA_WORKER_READY_EVENT);
};
const rehearsed = Promise.resolve()
  .then(() => {
    const { keyPem, certPem, signatureHash } = makeDtlsCertificate();
    weriftModule.RTCDtlsTransport.localCertificate = new weriftModule.RTCCertificate(keyPem, certPem, signatureHash);
    return weriftModule.RTCDtlsTransport.SetupCertificate();
  })
  .then(() => configuration)
  .then((settings) => rehearse(weriftModule, settings.host));
track(rehearsed);
rehearsed.then(ready, ready);
