// A leg's receive buffer: a bounded FIFO of decoded 20 ms frames between the network (which
// delivers when it likes) and the frame clock (which takes one per tick). Empty reads as silence.

import { silentFrame } from "./audio-frame.js";

export interface FrameFifoOptions {
  /** Most frames held; a full FIFO drops its oldest, bounding the delay. */
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
   * Consecutive reads with a backlog above prime+2 before one frame is dropped to bring the
   * delay back down (after a burst, or a sender whose clock runs a little fast); default 10,
   * so a backlog shrinks by a frame every 200 ms.
   */
  trimAfterPops?: number;
}

export interface FrameFifoStats {
  pushed: number;
  /** Frames handed to the clock (not counting silence for an empty FIFO). */
  played: number;
  /** Frames dropped because the FIFO was full or the backlog was trimmed. */
  dropped: number;
  /** Reads that found the FIFO empty after it had started playing. */
  underruns: number;
}

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
  #stats: FrameFifoStats = { pushed: 0, played: 0, dropped: 0, underruns: 0 };

  constructor(options: FrameFifoOptions = {}) {
    this.capacity = Math.max(1, options.capacity ?? 10);
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

  push(frame: Int16Array): void {
    this.#stats.pushed++;
    if (this.#size === this.capacity) {
      this.#shift();
      this.#stats.dropped++;
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
    const frame = this.#shift();
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
    this.#trimBacklog();
    return frame;
  }

  /** Drops up to `frames` frames whose play-out time has passed (the clock skipped ahead). */
  skip(frames: number): void {
    for (let i = 0; i < frames && this.#size > 0; i++) {
      this.#shift();
      this.#stats.dropped++;
    }
  }

  clear(): void {
    while (this.#size > 0) this.#shift();
    this.#playing = false;
    this.#backlogPops = 0;
  }

  #shift(): Int16Array | undefined {
    if (this.#size === 0) return undefined;
    const frame = this.#ring[this.#head];
    this.#ring[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.capacity;
    this.#size--;
    return frame;
  }

  #trimBacklog(): void {
    if (this.#size <= this.#prime + 2) {
      this.#backlogPops = 0;
      return;
    }
    if (++this.#backlogPops < this.#trimAfter) return;
    this.#shift();
    this.#stats.dropped++;
    this.#backlogPops = 0;
  }
}
