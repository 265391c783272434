// The messages between the main thread and a media worker. Audio does not travel here (see
// leg-memory.ts) nor do the ticks and the wake-ups for them (tick-share.ts): only leg set-up, SDP,
// DTMF, state changes and stats.

import type { MessagePort } from "node:worker_threads";
import type { DtmfDigit, DtmfSendOptions } from "../dtmf.js";
import type { G711Codec } from "../g711.js";
import type { LegDirection } from "../leg-api.js";
import type { LegState } from "../leg-state.js";
import type { PathChoiceOptions } from "../path-choice.js";

/** Fixed for a worker's life, given as workerData. */
export interface WorkerConfig {
  /** Address every leg binds and advertises. */
  host: string;
}

export interface RemoteLegOptions {
  codecs?: readonly G711Codec[];
  telephoneEventPayloadType?: number;
  connectTimeoutMs?: number;
  maxSendLatenessMs?: number;
  maxForwardLatenessMs?: number;
  /** The direction forwarded to the leg takes its path from its lateness (PeerLeg's choosePath). */
  choosePath?: boolean | PathChoiceOptions;
  /** Six random bytes for the initial RTP sequence number and timestamp (the main thread's random source). */
  seed: Uint8Array;
}

/** The leg facts the main thread mirrors for its synchronous getters. */
export interface LegInfo {
  codec: G711Codec | undefined;
  direction: LegDirection | undefined;
}

export type LegCall =
  | { op: "createOffer" }
  | { op: "acceptAnswer"; sdp: string }
  | { op: "acceptOffer"; sdp: string }
  | { op: "hold"; mode: "sendonly" | "inactive" }
  | { op: "unhold" }
  | { op: "sendDtmf"; digits: string; options?: DtmfSendOptions }
  | { op: "close"; reason: string };

export type ToWorker =
  /** An early worker's first message (early.ts): what a worker the pool starts gets as workerData. */
  | { type: "config"; config: WorkerConfig }
  | { type: "create"; leg: string; memory: SharedArrayBuffer; options: RemoteLegOptions }
  | ({ type: "call"; id: number; leg: string } & LegCall)
  /**
   * The shared tick memory, this worker's wake word (the last tick it must send now: a relayed
   * tick, or one marked after the worker's phase; tick-share.ts) and its phase (0: woken through
   * the wake word only).
   */
  | { type: "clock"; memory: SharedArrayBuffer; wake: SharedArrayBuffer; phaseMs: number }
  | { type: "stats"; id: number }
  /**
   * Forward on arrival (forward.ts): each audio packet `leg` receives goes at once to leg `to` of
   * this worker, or into `port` (a MessageChannel to the worker of the other leg, whose packets
   * come back on it); neither: no more forwarding.
   */
  | { type: "forward"; leg: string; to?: string; port?: MessagePort }
  /** Whether `leg` sends packets forwarded to it (and no audio of its own ticks): the main thread's gate. */
  | { type: "forwardWhile"; leg: string; on: boolean }
  /** Whether `leg` decodes what it receives into its ring (off: a forwarding leg nothing listens to). */
  | { type: "decode"; leg: string; on: boolean }
  /** The server stops: close every leg (their sockets with them), then answer "stopped". */
  | { type: "stop" };

export interface WorkerStats {
  legs: number;
  /** Busy share of the worker's event loop since the last stats request. */
  utilization: number;
  /** Event-loop delay percentiles since the last stats request, ms (0 in the first answer: the first request starts the measure). */
  loopP50Ms: number;
  loopP99Ms: number;
  loopMaxMs: number;
  /** How late ticks reached the worker after their due time, p99, ms. */
  tickLatenessP99Ms: number;
  /** The worker's garbage collections since the last stats request: young-generation (scavenges) and the rest, their pauses' total and longest, ms. */
  gc: { minor: number; major: number; ms: number; maxMs: number };
}

export type FromWorker =
  /** werift is loaded: the worker's first leg pays nothing to start. */
  | { type: "ready" }
  | { type: "reply"; id: number; ok: true; value?: string; info: LegInfo }
  | { type: "reply"; id: number; ok: false; error: { name: string; message: string }; info?: LegInfo }
  | { type: "state"; leg: string; to: LegState; reason?: string; info: LegInfo }
  | { type: "dtmf"; leg: string; digit: DtmfDigit }
  | { type: "stats"; id: number; stats: WorkerStats }
  /** Every leg is closed and no socket is open: the thread may be terminated safely. */
  | { type: "stopped" };
