// What a media leg offers the rest of the server, wherever its RTP runs: a PeerLeg in this thread
// (leg.ts) or a RemoteLeg whose peer connection lives in a media worker (worker/remote-leg.ts).

import type { EventEmitter } from "node:events";
import type { AudioSource } from "./audio-frame.js";
import type { DtmfDigit, DtmfSendOptions } from "./dtmf.js";
import type { FrameFifoStats } from "./frame-fifo.js";
import type { G711Codec } from "./g711.js";
import type { LegState, LegStateChange } from "./leg-state.js";

export interface LegEvents {
  state: [LegStateChange];
  dtmf: [DtmfDigit];
}

/** Counters a leg keeps about its RTP (the receive FIFO's are added in LegStats). */
export interface LegCounters {
  /** Audio RTP packets sent and received. */
  packetsSent: number;
  packetsReceived: number;
  /** Gaps in the received sequence numbers. */
  packetsLost: number;
  /** Late or repeated packets, dropped. */
  packetsDiscarded: number;
  dtmfPacketsSent: number;
  /** Audio frames not sent because their tick ran too late (maxSendLatenessMs), and packets not forwarded, late (maxForwardLatenessMs). */
  staleFramesSkipped: number;
  /** Sends that werift rejected (the transport was going down). */
  sendErrors: number;
  /**
   * Packets to forward on arrival (forward.ts) that came more than 10, 20, 40, 60 ms later than
   * the stream's earliest, relative to their RTP timestamps (sent or not: see staleFramesSkipped).
   */
  forwardLateOver10Ms: number;
  forwardLateOver20Ms: number;
  forwardLateOver40Ms: number;
  forwardLateOver60Ms: number;
  /** Times the forward path's outgoing timeline stepped on (the path's delay grew: a run of late packets, a far end's clock running slow). */
  forwardSteps: number;
  /**
   * Times the direction forwarded to this leg went from arrival to this leg's ticks (a receive
   * buffer of its own: its lateness ran high, path-choice.ts), and back (on time again).
   */
  forwardToTicks: number;
  ticksToForward: number;
}

export interface LegStats extends LegCounters {
  fifo: Readonly<FrameFifoStats>;
  /** The receive FIFO's current cushion (it grows when packets arrive late). */
  jitterBufferMs: number;
}

/** Negotiated RTP direction from this leg's side; "stopped" once the m-line is torn down. */
export type LegDirection = "sendrecv" | "sendonly" | "recvonly" | "inactive" | "stopped";

export class LegStateError extends Error {
  override name = "LegStateError";
}

/**
 * What a call's channel uses of its media: a WebRtcLeg, or a MemoryMedia whose far end is inside
 * the server (the other side of a loopback, a simulated caller with direct media).
 */
export interface CallMedia {
  readonly incoming: AudioSource;
  acceptOffer(sdp: string): Promise<string>;
  acceptAnswer(sdp: string): Promise<void>;
  close(reason?: string): Promise<void>;
  play(source?: AudioSource): void;
  sendDtmf(digits: string): Promise<void>;
  on(event: "dtmf", listener: (digit: DtmfDigit) => void): unknown;
  on(event: "state", listener: (change: LegStateChange) => void): unknown;
  off(event: "state", listener: (change: LegStateChange) => void): unknown;
}

/** A WebRTC media leg: G.711 and RFC 4733 DTMF to one endpoint, on the engine's frame clock. */
export interface WebRtcLeg extends EventEmitter<LegEvents> {
  readonly id: string;
  /** What the far end says, one frame per tick (silence when nothing arrived): a mixer input. */
  readonly incoming: AudioSource;
  readonly state: LegState;
  /** Why the leg closed ("hangup", "ice failed", "connect timeout" ...), once closed. */
  readonly closeReason: string | undefined;
  /** The G.711 variant this leg sends, once negotiated. */
  readonly codec: G711Codec | undefined;
  /** The negotiated direction from this side ("sendonly" while this leg holds the far end). */
  readonly direction: LegDirection | undefined;
  /** What this leg plays to the far end. */
  readonly source: AudioSource;
  stats(): LegStats;
  /** Plays `source` to the far end from the next tick on (silence when given nothing). */
  play(source?: AudioSource): void;
  /**
   * An SDP offer: the first one starts negotiation, later ones re-negotiate a connected leg
   * (a re-INVITE). Candidates are gathered before it returns, so it needs no trickle.
   */
  createOffer(): Promise<string>;
  /** Applies the far end's answer to this leg's offer. */
  acceptAnswer(sdp: string): Promise<void>;
  /**
   * Answers an offer: the first starts negotiation, a later one (the far end holding, resuming,
   * re-INVITE) re-negotiates. Throws SdpError when the offer has no G.711.
   */
  acceptOffer(sdp: string): Promise<string>;
  /**
   * Puts the far end on hold: this side keeps sending (hold music) but asks for nothing back
   * ("sendonly"), or goes silent both ways ("inactive"). Returns the re-offer.
   */
  hold(mode?: "sendonly" | "inactive"): Promise<string>;
  /** Takes the far end off hold; returns the re-offer. */
  unhold(): Promise<string>;
  /** Sends digits (0-9 * # A-D) as RFC 4733 events; resolves when the last one is out. */
  sendDtmf(digits: string, options?: DtmfSendOptions): Promise<void>;
  /** Ends the leg: stops sending, releases the sockets, reports `closed` once. */
  close(reason?: string): Promise<void>;
}
