// A media worker's entry: it runs the werift peer connections (ICE, DTLS, SRTP, RTP, G.711, DTMF)
// of the legs the main thread gives it, sending on the main thread's frame clock as relayed by its
// tick messages. Audio crosses in shared memory (leg-memory.ts); everything else is a message.

import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";
import { performanceTime, type TickListener, type TickSource } from "../frame-clock.js";
import { PeerLeg } from "../leg.js";
import type { LegInfo, FromWorker, ToWorker, WorkerConfig, WorkerStats, LegCall } from "./protocol.js";
import { LegMemory } from "./leg-memory.js";
import weriftModule from "./werift-cjs.cjs";
import { provideWerift } from "../werift.js";

const port = parentPort;
if (!port) throw new Error("the media worker runs only as a worker thread");
const config = workerData as WorkerConfig;
const post = (message: FromWorker): void => port.postMessage(message);

// Tick lateness histogram: 0.25 ms buckets up to 250 ms, the last holding everything later. A
// list of every tick's lateness grew by 50 numbers a second for as long as no one asked for stats.
const LATE_BUCKET_MS = 0.25;
const LATE_BUCKETS = 1000;

/** The main thread's frame clock, one tick per message; lateness counts the trip here. */
class RelayedClock implements TickSource {
  readonly #listeners = new Set<TickListener>();
  #lateMs = 0;
  readonly #lateness = new Uint32Array(LATE_BUCKETS);
  #counted = 0;

  get lateMs(): number {
    return this.#lateMs;
  }

  subscribe(listener: TickListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  deliver(tick: number, due: number): void {
    this.#lateMs = Math.max(0, performance.timeOrigin + performanceTime.now() - due);
    this.#lateness[Math.min(LATE_BUCKETS - 1, Math.floor(this.#lateMs / LATE_BUCKET_MS))]++;
    this.#counted++;
    for (const listener of this.#listeners) {
      try {
        listener(tick);
      } catch (error) {
        process.emitWarning(`media worker tick listener failed: ${String(error)}`);
      }
    }
  }

  /** The p99 of the lateness since the last call (the upper edge of its bucket, ms), then forgets. */
  takeLatenessP99(): number {
    let p99 = 0;
    if (this.#counted > 0) {
      const rank = Math.ceil(this.#counted * 0.99);
      let seen = 0;
      for (let i = 0; i < LATE_BUCKETS; i++) {
        seen += this.#lateness[i];
        if (seen >= rank) {
          p99 = (i + 1) * LATE_BUCKET_MS;
          break;
        }
      }
    }
    this.#lateness.fill(0);
    this.#counted = 0;
    return p99;
  }
}

interface Entry {
  leg: PeerLeg;
  memory: LegMemory;
}

const clock = new RelayedClock();
const legs = new Map<string, Entry>();
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
let elu = performance.eventLoopUtilization();

const infoOf = (leg: PeerLeg): LegInfo => ({ codec: leg.codec, direction: leg.direction });

function create(id: string, memory: LegMemory, options: Extract<ToWorker, { type: "create" }>["options"]): void {
  const seed = Buffer.from(options.seed);
  const leg = new PeerLeg({
    id,
    clock,
    host: config.host,
    random: { bytes: (n) => (n <= seed.length ? seed.subarray(0, n) : Buffer.alloc(n)) },
    codecs: options.codecs,
    telephoneEventPayloadType: options.telephoneEventPayloadType,
    connectTimeoutMs: options.connectTimeoutMs,
    maxSendLatenessMs: options.maxSendLatenessMs,
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
  };
  elu = performance.eventLoopUtilization();
  loopDelay.reset();
  return result;
}

port.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "tick":
      clock.deliver(message.tick, message.due);
      for (const { leg, memory } of legs.values()) memory.writeCounters(leg.counters);
      break;
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
      call(leg, message).then(
        (value) => {
          if (message.op === "close") {
            memory.writeCounters(leg.counters);
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
  }
});

// A worker loads werift as it starts (a static import: the build bundles it into this thread's
// file, so node's loader reads one file instead of a few hundred), off the main thread, so no call
// waits for it; messages sent meanwhile wait in the port's queue.
provideWerift(weriftModule);
// The thread's DTLS certificate (one for all its legs, an ECDSA key and a signed certificate) is
// made now too, not by the first call's offer. Ready either way: werift keeps this one attempt,
// so a failure here is the one the first leg would have met.
const ready = (): void => post({ type: "ready" });
weriftModule.RTCDtlsTransport.SetupCertificate().then(rehearse).then(ready, ready);

/**
 * One offer made and thrown away, as a leg makes it (one host candidate on `host`), so the first
 * call's offer runs code already compiled. Its socket closes with it.
 */
async function rehearse(): Promise<void> {
  const pc = new weriftModule.RTCPeerConnection({
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: [config.host],
    iceInterfaceAddresses: { [config.host.includes(":") ? "udp6" : "udp4"]: config.host },
  });
  try {
    pc.addTransceiver("audio", { direction: "sendrecv" });
    await pc.setLocalDescription(await pc.createOffer());
  } finally {
    await pc.close();
  }
}
