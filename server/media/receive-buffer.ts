// The receive side of a leg between the network and the frame clock: decoded audio re-framed into
// 20 ms frames in a jitter FIFO read once per tick. A leg in this thread feeds it as packets
// arrive; a leg in a media worker feeds it at each tick from the shared memory its thread writes
// (worker/leg-memory.ts), which comes to the same thing.
//
// Its depth adapts as WebRTC's NetEq does, in whole ticks: it starts shallow (playing from the
// first frame), audio that turns up late after the FIFO ran dry raises a target of spare frames
// (the late frame itself already added the delay it needed), calm lowers it again, and whatever
// the FIFO held above the target at every tick of a short watch is played out faster (repeated
// periods cut, frame-fifo.ts). So a backlog (a burst after set-up, after a stall) is gone within
// a second, and a steady stream sits at one frame or less, not at a cushion that once had to grow.

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

export interface ReceiveBufferOptions extends FrameFifoOptions {
  /**
   * Ticks over which the lowest level is watched before the excess above the target is cut
   * (default 25, 0.5 s): a level that stayed above the target that long is backlog, not cushion.
   */
  watchTicks?: number;
  /** Ticks played without running dry after which the target drops a frame (default 250, 5 s). */
  relaxTicks?: number;
}

/** A far end's pause longer than this (frames: 10 minutes) is read as a new timeline, not a pause. */
const MAX_PAUSE_FRAMES = 30_000;

/** Frames at a tick (before its read) that mean the audio came just in time: the one played. */
const JUST_IN_TIME = 1;

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
  readonly #watchTicks: number;
  readonly #relaxTicks: number;
  readonly #maxSpare: number;
  /** Frames kept above just-in-time: raised by late audio, lowered by calm. */
  #spareTarget = 0;
  #late = 0;
  #calmTicks = 0;
  /** The lowest level seen at a tick in the current watch, and the ticks watched. */
  #lowest = Infinity;
  #watched = 0;
  /** Whether the FIFO has played received audio since it was made or cleared. */
  #played = false;
  /** Silent reads since the FIFO stopped playing (an underrun's read included). */
  #silentReads = 0;
  /** The far end's pause before the audio that ended them, in frames (-1: not known, a new timeline). */
  #resumeGap = -1;
  #inserted = 0;

  constructor(options: ReceiveBufferOptions = {}) {
    const { watchTicks, relaxTicks, ...fifo } = options;
    const prime = fifo.prime ?? 1;
    // The FIFO's own backlog trim (a fixed margin over its prime) is replaced by the watch here.
    this.#fifo = new FrameFifo({ ...fifo, prime, trimAfterPops: fifo.trimAfterPops ?? Infinity });
    this.#watchTicks = Math.max(1, watchTicks ?? 25);
    this.#relaxTicks = Math.max(1, relaxTicks ?? 250);
    this.#maxSpare = Math.max(0, Math.min(fifo.maxPrime ?? 6, this.#fifo.capacity - 1) - JUST_IN_TIME);
  }

  get stats(): Readonly<FrameFifoStats> {
    return { ...this.#fifo.stats, late: this.#late, inserted: this.#inserted };
  }

  /** The delay the buffer aims at: the frame played plus the spare frames late audio asked for. */
  get jitterBufferMs(): number {
    return (JUST_IN_TIME + this.#spareTarget) * FRAME_MS;
  }

  /** Whether the last read played received audio (the FIFO primed), not silence for want of it. */
  get playing(): boolean {
    return this.#fifo.playing;
  }

  /** Frames buffered now (whole or part). */
  get depth(): number {
    return this.#fifo.depth;
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
      this.#watch();
      const played = this.#frame;
      this.#frame = this.#fifo.pop();
      this.#countSilence();
      if (played !== this.#frame && played !== silentFrame() && played.length === FRAME_SAMPLES && this.#spare.length < SPARE_FRAMES) {
        this.#spare.push(played);
      }
    }
    return this.#frame;
  }

  /**
   * Hands every whole frame buffered now to `each`, oldest first, as reads at once would (a part
   * frame staged from odd-sized packets stays); the frames are valid only during the call.
   */
  drain(each: (frame: Int16Array) => void): void {
    for (let left = this.#fifo.capacity; left > 0 && this.#fifo.depth > 0; left--) {
      const frame = this.#fifo.pop();
      if (frame === silentFrame()) break;
      each(frame);
    }
  }

  /** clear(), and the ticks read before forgotten: the next read skips no frame for ticks it did not see. */
  restart(): void {
    this.clear();
    this.#tick = -1;
  }

  clear(): void {
    this.#fifo.clear();
    this.#lowest = Infinity;
    this.#watched = 0;
    this.#played = false;
    this.#silentReads = 0;
    this.#resumeGap = -1;
  }

  /**
   * After each read: silence read once the FIFO had played (an underrun, then the wait for audio)
   * is counted as inserted when audio plays again, less the far end's own pause (its timestamps'
   * gap): a far end that paused (hold, DTMF, frames it did not send) inserts nothing here, audio
   * that came late inserts every silent read. Across a new timeline nothing is known, nothing counted.
   */
  #countSilence(): void {
    if (!this.#fifo.playing) {
      if (this.#played) this.#silentReads++;
      return;
    }
    this.#played = true;
    if (this.#silentReads === 0) return;
    if (this.#resumeGap >= 0) this.#inserted += Math.max(0, this.#silentReads - this.#resumeGap);
    this.#silentReads = 0;
    this.#resumeGap = -1;
  }

  /**
   * Once a tick, before its read: the level while playing. After `watchTicks` of them, whatever
   * stayed above the target the whole time is cut; after `relaxTicks` calm ones the target drops.
   */
  #watch(): void {
    const level = this.#fifo.depth;
    if (!this.#fifo.playing && level < this.#fifo.prime) {
      // Idle, paused or priming: nothing is being delayed.
      this.#lowest = Infinity;
      this.#watched = 0;
      return;
    }
    if (this.#spareTarget > 0 && ++this.#calmTicks >= this.#relaxTicks) {
      this.#spareTarget--;
      this.#calmTicks = 0;
    }
    this.#lowest = Math.min(this.#lowest, level);
    if (++this.#watched < this.#watchTicks) return;
    const excess = this.#lowest - JUST_IN_TIME - this.#spareTarget;
    if (excess > 0) this.#fifo.compress(excess);
    this.#lowest = Infinity;
    this.#watched = 0;
  }

  /** A frame to fill: a spare one, or a new one. */
  #blank(): Int16Array {
    return this.#spare.pop() ?? new Int16Array(FRAME_SAMPLES);
  }

  /**
   * The FIFO ran dry since the last packet: if this packet continues the last one's audio
   * (timestamps adjacent), it was merely late, so the target keeps a spare frame more (and the
   * watch lets the delay the late frame added stay). A far end that paused (hold, DTMF) resumes
   * with a timestamp gap and leaves the target alone.
   */
  #adapt(timestamp: number, samples: number): void {
    const underruns = this.#fifo.stats.underruns;
    const lastEnd = this.#lastAudioEnd;
    if (underruns !== this.#underrunsSeen && lastEnd !== undefined) {
      // The far end's pause before this packet, in whole frames (wrapping timestamps read as signed):
      // none when it continues the last one, unknown when it went back or seconds on (a new timeline).
      const gap = Math.round(((timestamp - lastEnd) | 0) / FRAME_SAMPLES);
      this.#resumeGap = gap >= 0 && gap <= MAX_PAUSE_FRAMES ? gap : -1;
      if (timestamp === lastEnd) {
        this.#late++;
        this.#spareTarget = Math.min(this.#maxSpare, this.#spareTarget + 1);
        this.#calmTicks = 0;
        this.#lowest = Infinity;
        this.#watched = 0;
      }
    }
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
