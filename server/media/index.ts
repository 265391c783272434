// The media engine's public face for calls/: one shared frame clock, WebRTC legs made from SDP,
// players for media URIs, mixers for bridges and recorders. No SIP here; callers bring SDP text.
// Legs run their peer connections in this thread, or in a pool of media worker threads
// (options.workers) while the clock, players, mixers and recorders stay here.

import type { Clock, RandomSource } from "../clock.js";
import { FrameClock, type FrameClockOptions, type TimeSource } from "./frame-clock.js";
import { PeerLeg, type WebRtcLegOptions } from "./leg.js";
import type { CallMedia, WebRtcLeg } from "./leg-api.js";
import { LegMutes } from "./leg-mutes.js";
import { Mixer } from "./mixer.js";
import { createPlayer, WavLibrary, type PlayerOptions } from "./player.js";
import { StereoRecorder, type RecorderOptions } from "./recorder.js";
import { MediaLoad, type MediaLoadOptions } from "./load.js";
import type { AudioSource } from "./audio-frame.js";
import { MediaWorkerPool, type MediaWorker } from "./worker/pool.js";
import { RemoteLeg } from "./worker/remote-leg.js";
import type { WorkerStats } from "./worker/protocol.js";
import { forwardBridgeDefault, forwardPair, forwardPathChoiceDefault, type ForwardSide, type Forwarding } from "./forward.js";

export { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, silence, type AudioSource } from "./audio-frame.js";
export { FrameClock, performanceTime, type FrameClockOptions, type FrameClockStats, type TimeSource } from "./frame-clock.js";
export type { DtmfDigit, DtmfSendOptions } from "./dtmf.js";
export { decodeG711, encodeG711, type G711Codec } from "./g711.js";
export { goertzelPower, levelDbfs, toneShare } from "./goertzel.js";
export { IllegalLegTransition, type LegState, type LegStateChange } from "./leg-state.js";
export { PeerLeg } from "./leg.js";
export { LegStateError, type CallMedia, type LegCounters, type LegDirection, type LegEvents, type LegStats, type WebRtcLeg } from "./leg-api.js";
export { RemoteLeg } from "./worker/remote-leg.js";
export { MediaWorkerError } from "./worker/pool.js";
export type { MediaWorker };
export type { WorkerStats } from "./worker/protocol.js";
export { LegMutes, type MuteDirection } from "./leg-mutes.js";
export { forwardBridgeDefault, forwardPathChoiceDefault, type ForwardSide, type Forwarding } from "./forward.js";
export type { PathChoiceOptions } from "./path-choice.js";
export { MemoryMedia, memoryMediaPair } from "./memory-media.js";
export { Mixer, type Member, type MemberRole, type MonitorMode, type MixerTap } from "./mixer.js";
export { MediaUriError, type PlayerOptions } from "./player.js";
export { StereoRecorder, sealRecording, type RecorderOptions, type RecordingResult } from "./recorder.js";
export { SdpError } from "./sdp.js";
export { MediaLoad, OVERLOAD_RETRY_AFTER_S, type CpuMeter, type LatenessSource, type MediaLoadOptions } from "./load.js";
export { WavFormatError } from "./wav.js";

export interface MediaEngineOptions {
  /** Address every leg binds and advertises (default 127.0.0.1). */
  host?: string;
  /** Stamps leg state changes (default the system clock). */
  wallClock?: Clock;
  random?: RandomSource;
  /** The frame clock's time source and catch-up limit (tests run it by hand). */
  frameClock?: FrameClockOptions;
  /**
   * Every leg's maxSendLatenessMs unless its own options say otherwise (default 60 ms). An
   * engine whose far ends are all in this process (tests) sets Infinity: they stall with the
   * server, so a burst after a stall is no network delay to them, and a dropped frame is a gap.
   */
  maxSendLatenessMs?: number;
  /**
   * Worker threads for the legs' peer connections (ICE, DTLS, SRTP, RTP, G.711): 0 (default)
   * keeps them in this thread; N spreads legs over N threads, started on first use, each new
   * leg on the one with the fewest. The clock, players, mixers and recorders stay in this thread.
   */
  workers?: number;
  /** A media worker stopped unexpectedly (its legs were closed with the reason); default: a warning. */
  onWorkerFailure?(reason: string): void;
  /** The time the worker pool waits for a quiet moment by before warming its next worker (tests run it by hand). */
  workerWarmTime?: TimeSource;
  /** When new calls are refused: the frame clock running late while the server is busy (load.ts). */
  load?: MediaLoadOptions;
  /**
   * Two-party bridges of WebRTC legs forward each packet on arrival (forward.ts) instead of
   * through receive buffers and the mix on the frame clock (default: on unless SWITCHBOARD_FORWARD_BRIDGE=0).
   */
  forwardBridge?: boolean;
  /**
   * Every leg's maxForwardLatenessMs unless its own options say otherwise (default 60 ms; never
   * more than maxSendLatenessMs): a packet to forward on arrival that late is dropped.
   */
  maxForwardLatenessMs?: number;
  /**
   * Legs forwarded to (a forwarding bridge) choose each direction's path from its lateness: on
   * arrival while packets come on time, through a receive buffer on the frame clock's ticks while
   * the server's lateness runs high (path-choice.ts; default: SWITCHBOARD_FORWARD_BRIDGE=choose).
   */
  forwardPathChoice?: boolean;
}

export type LegOptions = Omit<WebRtcLegOptions, "clock" | "wallClock" | "random" | "host" | "received" | "time"> & {
  /**
   * A leg this one will be bridged to: with media workers, the new leg goes on the same worker (a
   * two-party bridge forwarding on arrival then stays within one thread; forward.ts).
   */
  beside?: CallMedia;
};

export class MediaEngine {
  readonly clock: FrameClock;
  /** Legs every mixer of this engine passes no audio for, one way (training's one-way audio fault). */
  readonly mutes = new LegMutes();
  /** Whether the engine keeps up: new calls are refused while it does not. */
  readonly load: MediaLoad;
  readonly #options: MediaEngineOptions;
  readonly #library = new WavLibrary();
  readonly #legs = new Set<WebRtcLeg>();
  readonly #pool: MediaWorkerPool | undefined;
  /** Whether two-party bridges formed from now on forward on arrival (forward.ts); a bench turns it per round. */
  forwardBridge: boolean;
  /** Legs made from now on take this maxForwardLatenessMs (engine option); a bench turns it per round. */
  maxForwardLatenessMs: number | undefined;
  /** Whether legs made from now on choose a forwarded direction's path from its lateness; a bench turns it per round. */
  forwardPathChoice: boolean;

  constructor(options: MediaEngineOptions = {}) {
    this.#options = options;
    this.forwardBridge = options.forwardBridge ?? forwardBridgeDefault();
    this.maxForwardLatenessMs = options.maxForwardLatenessMs;
    this.forwardPathChoice = options.forwardPathChoice ?? forwardPathChoiceDefault();
    this.clock = new FrameClock(options.frameClock);
    const workers = options.workers ?? 0;
    if (!Number.isInteger(workers) || workers < 0) throw new RangeError(`workers must be a whole number >= 0, not ${workers}`);
    this.load = new MediaLoad(this.clock, options.load, 1 + workers);
    const onFailure = options.onWorkerFailure ?? ((reason: string) => process.emitWarning(reason));
    this.#pool = workers > 0 ? new MediaWorkerPool(workers, { host: options.host ?? "127.0.0.1" }, onFailure, undefined, options.workerWarmTime) : undefined;
  }

  /** Media worker threads this engine may use (0: legs run in this thread). */
  get workerCount(): number {
    return this.#pool?.size ?? 0;
  }

  /** The media workers started so far (diagnostics and tests). */
  get workers(): readonly MediaWorker[] {
    return this.#pool?.workers ?? [];
  }

  /**
   * Starts the media workers in the background (the server calls it as it starts, so the first worker loads werift on another core while the main thread opens the store and registers the routes), so the
   * first call does not wait for a worker to load werift. Without workers, nothing: the first
   * leg in this thread loads it.
   */
  warm(): void {
    this.#pool?.warm();
  }

  /** Each started worker's load since the last call: event-loop delay and utilisation. */
  workerStats(): Promise<(WorkerStats & { threadId: number })[]> {
    return this.#pool?.stats() ?? Promise.resolve([]);
  }

  /** Why a new call should be refused now (the engine does not keep up), or undefined. */
  refusal(): string | undefined {
    return this.load.refusal();
  }

  /** Legs not yet closed. */
  get legs(): ReadonlySet<WebRtcLeg> {
    return this.#legs;
  }

  /** A new WebRTC leg on the engine's clock; start it with createOffer() or acceptOffer(sdp). */
  createLeg(options: LegOptions = {}): WebRtcLeg {
    const { host, wallClock, random, maxSendLatenessMs, frameClock } = this.#options;
    const maxForwardLatenessMs = this.maxForwardLatenessMs;
    const { beside, ...legOptions } = options;
    const worker = beside instanceof RemoteLeg && beside.worker.alive ? beside.worker : this.#pool?.assign();
    // A leg in this thread reads packets' arrival on the frame clock's time (moved by hand in tests).
    const leg: WebRtcLeg = worker
      ? new RemoteLeg({ maxSendLatenessMs, maxForwardLatenessMs, choosePath: this.forwardPathChoice, ...legOptions, clock: this.clock, worker, wallClock, random })
      : new PeerLeg({
          maxSendLatenessMs,
          maxForwardLatenessMs,
          choosePath: this.forwardPathChoice,
          time: frameClock?.time,
          ...legOptions,
          clock: this.clock,
          host,
          wallClock,
          random,
        });
    this.#legs.add(leg);
    leg.on("state", (change) => {
      if (change.to === "closed") this.#legs.delete(leg);
    });
    return leg;
  }

  /** A source for a WAV path, file:// URL, tone_stream:// or silence_stream:// URI. */
  player(uri: string, options?: PlayerOptions): Promise<AudioSource> {
    return createPlayer(uri, options, this.#library);
  }

  /**
   * Pairs two bridged legs to forward on arrival, when this engine does and the legs allow it
   * (forward.ts); returns the pairing (its end() hands their audio back to the mixer), or undefined.
   */
  forward(a: ForwardSide, b: ForwardSide): Forwarding | undefined {
    return this.forwardBridge ? forwardPair(a, b) : undefined;
  }

  mixer(): Mixer {
    return new Mixer(this.mutes);
  }

  /** A stereo WAV recorder writing to `path`; attach it to a mixer, finish() when the call ends. */
  recorder(path: string, options?: RecorderOptions): StereoRecorder {
    return new StereoRecorder(path, { clock: this.clock, ...options });
  }

  /** Closes every open leg (server shutdown) and stops the workers; the clock then stops by itself. */
  async close(): Promise<void> {
    await Promise.all([...this.#legs].map((leg) => leg.close("shutdown")));
    await this.#pool?.close();
  }
}
