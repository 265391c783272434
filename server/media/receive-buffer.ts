// The receive side of a leg between the network and the frame clock: decoded audio re-framed into
// 20 ms frames in a jitter FIFO that stretches when packets turn up late, read once per tick.
// A leg in this thread feeds it as packets arrive; a leg in a media worker feeds it at each tick
// from the shared ring its thread writes (worker/ring.ts), which comes to the same thing.

import { FRAME_SAMPLES, FRAME_MS, silentFrame } from "./audio-frame.js";
import { FrameFifo, type FrameFifoOptions, type FrameFifoStats } from "./frame-fifo.js";

/** Where a leg puts the audio it decodes: here, or a ring to the thread that plays it. */
export interface ReceivedAudioSink {
  /**
   * A packet's decoded audio; `timestamp` is its RTP timestamp (8 kHz units). `pcm` is the
   * leg's scratch buffer, valid only during the call: a sink copies what it keeps.
   */
  accept(pcm: Int16Array, timestamp: number): void;
  /** Silent frames standing in for lost packets. */
  conceal(frames: number): void;
}

/** Frames kept for reuse: one is freed per tick and one taken per packet, so a few suffice. */
const SPARE_FRAMES = 4;

export class ReceiveBuffer implements ReceivedAudioSink {
  readonly #fifo: FrameFifo;
  #underrunsSeen = 0;
  #lastAudioEnd: number | undefined;
  #stage: Int16Array = new Int16Array(FRAME_SAMPLES);
  #staged = 0;
  #tick = -1;
  #frame = silentFrame();
  // Frames played at an earlier tick, reused for the next packets instead of a new array each
  // (10,000 a second at 100 calls): readers do not keep a frame past its tick (AudioSource).
  readonly #spare: Int16Array[] = [];

  constructor(options?: FrameFifoOptions) {
    this.#fifo = new FrameFifo(options);
  }

  get stats(): Readonly<FrameFifoStats> {
    return this.#fifo.stats;
  }

  /** The FIFO's current cushion (it grows when packets arrive late). */
  get jitterBufferMs(): number {
    return this.#fifo.prime * FRAME_MS;
  }

  accept(pcm: Int16Array, timestamp: number): void {
    this.#adapt(timestamp, pcm.length);
    this.#push(pcm);
  }

  conceal(frames: number): void {
    for (let i = 0; i < frames; i++) this.#fifo.push(this.#blank().fill(0));
  }

  /** The frame for `tick`; several readers in one tick (a mixer, a recorder) see the same one. */
  frameFor(tick: number): Int16Array {
    if (tick !== this.#tick) {
      // Ticks the clock skipped after a long stall: their audio is too late to play.
      if (this.#tick >= 0 && tick > this.#tick + 1) this.#fifo.skip(tick - this.#tick - 1);
      this.#tick = tick;
      const played = this.#frame;
      this.#frame = this.#fifo.pop();
      if (played !== this.#frame && played !== silentFrame() && played.length === FRAME_SAMPLES && this.#spare.length < SPARE_FRAMES) {
        this.#spare.push(played);
      }
    }
    return this.#frame;
  }

  clear(): void {
    this.#fifo.clear();
  }

  /** A frame to fill: a spare one, or a new one. */
  #blank(): Int16Array {
    return this.#spare.pop() ?? new Int16Array(FRAME_SAMPLES);
  }

  /**
   * The FIFO ran dry since the last packet: if this packet continues the last one's audio
   * (timestamps adjacent), it was merely late, so the cushion grows. A far end that paused
   * (hold, DTMF) resumes with a timestamp gap and leaves the cushion alone.
   */
  #adapt(timestamp: number, samples: number): void {
    const underruns = this.#fifo.stats.underruns;
    if (underruns !== this.#underrunsSeen && this.#lastAudioEnd === timestamp) this.#fifo.stretch();
    this.#underrunsSeen = underruns;
    this.#lastAudioEnd = (timestamp + samples) >>> 0;
  }

  /** Re-frames decoded audio into 160-sample frames, whatever packet time the far end uses. */
  #push(pcm: Int16Array): void {
    if (this.#staged === 0 && pcm.length === FRAME_SAMPLES) {
      const frame = this.#blank();
      frame.set(pcm);
      this.#fifo.push(frame);
      return;
    }
    let at = 0;
    while (at < pcm.length) {
      const n = Math.min(FRAME_SAMPLES - this.#staged, pcm.length - at);
      this.#stage.set(pcm.subarray(at, at + n), this.#staged);
      this.#staged += n;
      at += n;
      if (this.#staged === FRAME_SAMPLES) {
        this.#fifo.push(this.#stage);
        this.#stage = this.#blank();
        this.#staged = 0;
      }
    }
  }
}
