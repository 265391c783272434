// Media whose two ends are both inside the server: what one side plays, the other receives, a frame
// per tick, in memory. No SDP, no RTP, no socket: a loopback's two channels (FreeSWITCH's loopback
// endpoint) and a simulated caller with direct media use it, so a call the server makes to itself
// costs a frame copy per tick instead of two WebRTC legs with DTLS and SRTP between them.

import { EventEmitter } from "node:events";
import { FRAME_SAMPLES, silence, type AudioSource } from "./audio-frame.js";
import type { CallMedia, LegEvents } from "./leg-api.js";

/** The DTMF duration reported for digits crossing in memory (no RTP to measure it on). */
export const MEMORY_DTMF_MS = 100;

/**
 * One side: what is played to it is what the other side receives. Each direction copies the frame
 * once per tick, so a chain that loops back through two bridges reads last tick's frame instead of
 * recursing.
 */
export class MemoryMedia extends EventEmitter<LegEvents> implements CallMedia {
  readonly incoming: AudioSource;
  #peer: MemoryMedia | undefined;
  #played: AudioSource = silence;
  #closed = false;
  readonly #frame = new Int16Array(FRAME_SAMPLES);
  #frameTick = -1;
  #reading = false;

  constructor() {
    super();
    this.incoming = {
      read: (tick) => {
        const peer = this.#peer;
        return peer ? peer.#playedFrame(tick) : silence.read(tick);
      },
      ended: false,
    };
  }

  connect(peer: MemoryMedia): void {
    this.#peer = peer;
    peer.#peer = this;
  }

  /** Closed: it plays and passes nothing any more. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The frame this side is played at `tick`: what its peer hears from it. */
  #playedFrame(tick: number): Int16Array {
    if (this.#closed) return silence.read(tick);
    if (tick === this.#frameTick || this.#reading) return this.#frame;
    this.#reading = true;
    try {
      const frame = this.#played.read(tick);
      // A view only for a frame longer than ours (a view is an object per tick and side).
      this.#frame.set(frame.length > FRAME_SAMPLES ? frame.subarray(0, FRAME_SAMPLES) : frame);
      this.#frameTick = tick;
    } finally {
      this.#reading = false;
    }
    return this.#frame;
  }

  // No SDP crosses in memory.
  async acceptOffer(): Promise<string> {
    return "";
  }

  async acceptAnswer(): Promise<void> {}

  async close(): Promise<void> {
    this.#closed = true;
    this.#played = silence;
  }

  play(source: AudioSource = silence): void {
    if (!this.#closed) this.#played = source;
  }

  /** The digits arrive at the peer as if its device had sent them, one per turn of the event loop. */
  async sendDtmf(digits: string): Promise<void> {
    const peer = this.#peer;
    if (this.#closed || !peer) return;
    for (const digit of digits) {
      await nextTurn();
      if (!peer.#closed) peer.emit("dtmf", { digit, durationMs: MEMORY_DTMF_MS });
    }
  }
}

/** Two sides joined: what `[0]` plays, `[1]` hears, and the other way round. */
export function memoryMediaPair(): [MemoryMedia, MemoryMedia] {
  const a = new MemoryMedia();
  const b = new MemoryMedia();
  a.connect(b);
  return [a, b];
}

/** Digits cross on a later turn of the event loop, as a packet would, never inside the sender's step. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
