// A leg's receive buffer: a bounded FIFO of decoded 20 ms frames between the network (which
// delivers when it likes) and the frame clock (which takes one per tick). Empty reads as silence.
// A backlog that lasts (late audio after an underrun, a burst after a stall) is played out a
// little faster until one frame's worth of delay is gone, as WebRTC's NetEq "accelerates", rather
// than by dropping a frame: each faster read cuts one period where the waveform repeats (a pitch
// period of speech, whole cycles of a tone: the lag of best correlation, 2.5-20 ms) with a short
// cross-fade, so the pitch stays and nothing is lost but that repetition.

import { FRAME_SAMPLES, silentFrame } from "./audio-frame.js";

export interface FrameFifoOptions {
  /**
   * Most frames held; a full FIFO drops its oldest, bounding the delay. Default 16 (320 ms): a
   * burst after a stall of up to that fits, and the backlog is then cut without dropping audio.
   */
  capacity?: number;
  /**
   * Frames to gather before playing from empty, absorbing network jitter; a FIFO that ran dry
   * waits again, so a stream that pauses (hold) restarts with the same cushion. Default 2.
   */
  prime?: number;
  /** The most `stretch()` may raise the prime to (default 6, 120 ms). */
  maxPrime?: number;
  /** Reads without an underrun after which a stretched prime shrinks by one (default 500, 10 s). */
  relaxAfterPops?: number;
  /**
   * Consecutive reads with a backlog above prime+2 before the FIFO plays faster until one frame's
   * worth of delay is out (a few reads) to bring the delay back down (after a burst, or a sender
   * whose clock runs a little fast); default 10.
   */
  trimAfterPops?: number;
}

export interface FrameFifoStats {
  pushed: number;
  /** Frames handed to the clock (not counting silence for an empty FIFO). */
  played: number;
  /** Frames dropped: the sum of the next two (and, for a worker's leg, its ring's overflow). */
  dropped: number;
  /** ...because the FIFO was full. */
  overflowed: number;
  /** ...because the clock skipped their time. */
  skipped: number;
  /** Frames' worth of delay taken out by playing faster (repeated periods cut, no frame lost). */
  compressed: number;
  /** Reads that found the FIFO empty after it had started playing. */
  underruns: number;
  /**
   * Packets that turned up late, in sequence, after the FIFO ran dry: each raised the receive
   * buffer's target by a frame (ReceiveBuffer; absent from a bare FrameFifo's figures).
   */
  late?: number;
  /**
   * Silent frames played between two stretches of received audio beyond the far end's own pause
   * (the gap in its RTP timestamps): the underrun's read and the reads that waited for late audio
   * (ReceiveBuffer; absent from a bare FrameFifo's figures). What a listener hears as extra length.
   */
  inserted?: number;
}

/** A faster read cuts a lag of 20-160 samples (2.5-20 ms), cross-fading over 40 (5 ms). */
const MIN_LAG = 20;
const MAX_LAG = FRAME_SAMPLES;
const FADE = 40;
/** Samples compared at each lag to find where the waveform repeats. */
const MATCH = 80;
const WINDOW = FRAME_SAMPLES + MAX_LAG;

export class FrameFifo {
  readonly capacity: number;
  readonly #basePrime: number;
  readonly #maxPrime: number;
  readonly #relaxAfter: number;
  readonly #trimAfter: number;
  #prime: number;
  #calmPops = 0;
  // A ring of frame slots: push and pop are O(1) and allocate nothing.
  readonly #ring: (Int16Array | undefined)[];
  #head = 0;
  #size = 0;
  #playing = false;
  #backlogPops = 0;
  // Time compression: samples of the head frame already played, and samples still to cut.
  #offset = 0;
  #toCut = 0;
  #cut = 0;
  readonly #window = new Int16Array(WINDOW);
  // Frames this FIFO consumed while reading faster (their audio copied out): the next faster
  // reads write into them instead of a new array each. Never a frame pop() handed out: the reader
  // owns that one. Two slots and a count (an array popped to empty gives up its storage).
  readonly #released: (Int16Array | undefined)[] = [undefined, undefined];
  #releasedCount = 0;
  #stats: FrameFifoStats = { pushed: 0, played: 0, dropped: 0, overflowed: 0, skipped: 0, compressed: 0, underruns: 0 };

  constructor(options: FrameFifoOptions = {}) {
    this.capacity = Math.max(1, options.capacity ?? 16);
    this.#basePrime = Math.max(1, Math.min(options.prime ?? 2, this.capacity));
    this.#prime = this.#basePrime;
    this.#maxPrime = Math.max(this.#basePrime, Math.min(options.maxPrime ?? 6, this.capacity - 2));
    this.#relaxAfter = options.relaxAfterPops ?? 500;
    this.#trimAfter = options.trimAfterPops ?? 10;
    this.#ring = new Array<Int16Array | undefined>(this.capacity).fill(undefined);
  }

  get depth(): number {
    return this.#size;
  }

  /** Frames gathered before playing from empty; grows with stretch(), relaxes when calm. */
  get prime(): number {
    return this.#prime;
  }

  /**
   * Deepens the cushion by a frame: the leg calls this when audio it ran out of turns up late
   * but in sequence (jitter), not when the far end simply paused (hold, DTMF).
   */
  stretch(): void {
    this.#prime = Math.min(this.#maxPrime, this.#prime + 1);
    this.#calmPops = 0;
  }

  get stats(): Readonly<FrameFifoStats> {
    return this.#stats;
  }

  /** True from the read that found the FIFO primed until one finds it empty. */
  get playing(): boolean {
    return this.#playing;
  }

  /**
   * Plays the next reads faster until `frames` frames' worth of delay is out (a receive buffer
   * that judged the backlog above its target: ReceiveBuffer). No-op while a cut is under way.
   */
  compress(frames: number): void {
    if (this.#toCut > 0 || frames <= 0) return;
    this.#toCut = frames * FRAME_SAMPLES;
    this.#backlogPops = 0;
  }

  /** Hands `frame` over: the FIFO may write into it once it has read it (see #released). */
  push(frame: Int16Array): void {
    this.#stats.pushed++;
    if (this.#size === this.capacity) {
      this.#shift();
      this.#stats.dropped++;
      this.#stats.overflowed++;
    }
    this.#ring[(this.#head + this.#size) % this.capacity] = frame;
    this.#size++;
  }

  /** The next frame, or silence while empty or priming. */
  pop(): Int16Array {
    if (!this.#playing) {
      if (this.#size < this.#prime) return silentFrame();
      this.#playing = true;
    }
    const frame = this.#toCut > 0 ? this.#faster() : this.#offset > 0 ? this.#take() : this.#shift();
    if (frame === undefined) {
      this.#playing = false;
      this.#calmPops = 0;
      this.#stats.underruns++;
      return silentFrame();
    }
    this.#stats.played++;
    if (this.#prime > this.#basePrime && ++this.#calmPops >= this.#relaxAfter) {
      this.#prime--;
      this.#calmPops = 0;
    }
    this.#watchBacklog();
    return frame;
  }

  /** Drops up to `frames` frames whose play-out time has passed (the clock skipped ahead). */
  skip(frames: number): void {
    for (let i = 0; i < frames && this.#size > 0; i++) {
      this.#shift();
      this.#stats.dropped++;
      this.#stats.skipped++;
    }
  }

  clear(): void {
    while (this.#size > 0) this.#shift();
    this.#playing = false;
    this.#backlogPops = 0;
  }

  /** Samples buffered from the read position on. */
  get #available(): number {
    return this.#size * FRAME_SAMPLES - this.#offset;
  }

  /** Copies the next `n` buffered samples into `out` from `at`, consuming them when `consume`. */
  #copy(out: Int16Array, n: number, consume: boolean): void {
    let head = this.#head;
    let offset = this.#offset;
    let left = this.#size;
    let filled = 0;
    while (filled < n && left > 0) {
      const frame = this.#ring[head];
      if (!frame) break;
      const count = Math.min(n - filled, frame.length - offset);
      // Sample by sample: a view of the frame for set() would be an object per copy.
      for (let i = 0; i < count; i++) out[filled + i] = frame[offset + i];
      filled += count;
      offset += count;
      if (offset === frame.length) {
        head = (head + 1) % this.capacity;
        offset = 0;
        left--;
      }
    }
    if (consume) this.#consume(n);
  }

  /** Moves the read position on by `n` samples, freeing whole frames. */
  #consume(n: number): void {
    let rest = n + this.#offset;
    while (rest >= FRAME_SAMPLES && this.#size > 0) {
      const frame = this.#shift();
      if (frame !== undefined && frame.length === FRAME_SAMPLES && this.#releasedCount < this.#released.length) this.#released[this.#releasedCount++] = frame;
      rest -= FRAME_SAMPLES;
    }
    this.#offset = this.#size > 0 ? rest : 0;
  }

  /**
   * A frame from a read position inside the head frame (after a faster read). With less than a
   * frame left, what is left is played, followed by silence: the FIFO is dry then.
   */
  #take(): Int16Array | undefined {
    const available = this.#available;
    if (available <= 0) return this.#shift();
    // Not in the ring: copying the ring's audio into it is safe.
    const out = this.#output();
    const n = Math.min(FRAME_SAMPLES, available);
    // Less than a frame left: silence after it (a reused frame holds older audio).
    if (n < FRAME_SAMPLES) out.fill(0, n);
    this.#copy(out, n, true);
    return out;
  }

  /**
   * One faster read: 160 samples of output from 160 + L buffered, L the lag (20-160) at which
   * the next stretch of audio best repeats itself; the first 40 samples cross-fade from the
   * audio now to the audio L later. Silence is cut a whole frame at a time.
   */
  #faster(): Int16Array | undefined {
    if (this.#available < WINDOW) {
      // Not enough buffered to cut: the backlog is gone anyway.
      this.#toCut = 0;
      return this.#offset > 0 ? this.#take() : this.#shift();
    }
    const w = this.#window;
    this.#copy(w, WINDOW, false);
    let best = MAX_LAG;
    let bestScore = -Infinity;
    let energy = 0;
    for (let i = 0; i < MATCH; i++) energy += (w[i] ?? 0) * (w[i] ?? 0);
    if (energy > 0) {
      for (let lag = MIN_LAG; lag <= MAX_LAG; lag++) {
        let dot = 0;
        let other = 0;
        for (let i = 0; i < MATCH; i++) {
          const b = w[lag + i] ?? 0;
          dot += (w[i] ?? 0) * b;
          other += b * b;
        }
        const score = other > 0 ? dot / Math.sqrt(energy * other) : 0;
        // Ties to the longer lag: more delay out per cut.
        if (score >= bestScore - 1e-9) {
          bestScore = score;
          best = lag;
        }
      }
    }
    const lag = best;
    // The window holds a copy of the audio read: the frame it came from may be written again.
    const out = this.#output();
    for (let i = 0; i < FRAME_SAMPLES; i++) {
      const later = w[lag + i] ?? 0;
      out[i] = i < FADE ? Math.round(((w[i] ?? 0) * (FADE - i) + later * i) / FADE) : later;
    }
    this.#consume(FRAME_SAMPLES + lag);
    this.#cut += lag;
    this.#toCut -= lag;
    if (this.#toCut <= 0) this.#toCut = 0;
    while (this.#cut >= FRAME_SAMPLES) {
      this.#cut -= FRAME_SAMPLES;
      this.#stats.compressed++;
    }
    return out;
  }

  /** A frame for a faster read's output: one this FIFO consumed earlier, else a new one. */
  #output(): Int16Array {
    if (this.#releasedCount === 0) return new Int16Array(FRAME_SAMPLES);
    const frame = this.#released[--this.#releasedCount] ?? new Int16Array(FRAME_SAMPLES);
    this.#released[this.#releasedCount] = undefined;
    return frame;
  }

  #shift(): Int16Array | undefined {
    this.#offset = 0;
    if (this.#size === 0) return undefined;
    const frame = this.#ring[this.#head];
    this.#ring[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.capacity;
    this.#size--;
    return frame;
  }

  /** A backlog above prime+2 for `trimAfterPops` reads in a row: cut a frame's worth of it. */
  #watchBacklog(): void {
    if (this.#toCut > 0) return;
    if (this.#size <= this.#prime + 2) {
      this.#backlogPops = 0;
      return;
    }
    if (++this.#backlogPops < this.#trimAfter) return;
    this.#toCut = FRAME_SAMPLES;
    this.#backlogPops = 0;
  }
}
