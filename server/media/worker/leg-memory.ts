// The memory a leg in a media worker shares with the main thread: no message per frame, only two
// single-producer rings and the leg's RTP counters in one SharedArrayBuffer.
//
// - In ring (worker writes, main reads): each decoded packet (or a "lost, conceal" marker) with its
//   RTP timestamp, up to 160 samples a slot; the main thread drains it into the leg's jitter FIFO
//   at each tick, so the FIFO, its stretching and its statistics stay where the clock is.
// - Out slots (main writes, worker reads): the frame the main thread's source played for a tick, in
//   slot tick % OUT_SLOTS stamped with the tick; the worker sends it when that tick's message comes.
// - Counters (worker writes after every tick, main reads): packets sent, received, lost...

import { FRAME_SAMPLES, silentFrame, type AudioSource } from "../audio-frame.js";
import type { LegCounters } from "../leg-api.js";
import type { ReceivedAudioSink } from "../receive-buffer.js";

/** Packets the network may deliver between two main-thread ticks before the worker drops them. */
export const IN_SLOTS = 32;
/**
 * Ticks the main thread may run ahead of the worker before its frames are overwritten: more than
 * the frame clock's catch-up (ten owed ticks, each written here before the worker, busy or not
 * scheduled, reads the tick messages for them).
 */
export const OUT_SLOTS = 16;

/** The counters a leg keeps in shared memory, in their slots' order. */
export const COUNTER_NAMES = [
  "packetsSent",
  "packetsReceived",
  "packetsLost",
  "packetsDiscarded",
  "dtmfPacketsSent",
  "staleFramesSkipped",
  "sendErrors",
  "forwardLateOver10Ms",
  "forwardLateOver20Ms",
  "forwardLateOver40Ms",
  "forwardLateOver60Ms",
  "forwardSteps",
  "forwardToTicks",
  "ticksToForward",
] as const satisfies readonly (keyof LegCounters)[];

// Control words: the in ring's write and read counts, then the counters, then packets the worker
// could not put in a full ring.
const IN_WRITE = 0;
const IN_READ = 1;
const COUNTERS_AT = 2;
const RING_DROPPED = COUNTERS_AT + COUNTER_NAMES.length;
const CONTROL_WORDS = 20;
// Per in-slot words: kind (audio or conceal), RTP timestamp, samples (or frames to conceal).
const IN_META_WORDS = 3;
const KIND_AUDIO = 0;
const KIND_CONCEAL = 1;

const CONTROL_BYTES = CONTROL_WORDS * 4;
const IN_META_BYTES = IN_SLOTS * IN_META_WORDS * 4;
const OUT_TICK_BYTES = OUT_SLOTS * 4;
const IN_AUDIO_BYTES = IN_SLOTS * FRAME_SAMPLES * 2;
const OUT_AUDIO_BYTES = OUT_SLOTS * FRAME_SAMPLES * 2;
export const LEG_MEMORY_BYTES = CONTROL_BYTES + IN_META_BYTES + OUT_TICK_BYTES + IN_AUDIO_BYTES + OUT_AUDIO_BYTES;

/** Where the main thread's half of a leg puts what it drains from the in ring. */
export interface DrainTarget {
  accept(pcm: Int16Array, timestamp: number): void;
  conceal(frames: number): void;
}

export class LegMemory {
  readonly buffer: SharedArrayBuffer;
  readonly #control: Int32Array;
  readonly #inMeta: Int32Array;
  readonly #outTicks: Int32Array;
  readonly #inAudio: Int16Array;
  readonly #outAudio: Int16Array;
  /** The counters as this side last stored them (worker): a counter is stored again only when it changes. */
  readonly #written = new Int32Array(COUNTER_NAMES.length);
  /** A view of each in slot's whole frame, made once: no view per packet for the usual full frame. */
  readonly #inFrames: Int16Array[] = [];

  /** A fresh block (main thread), or the one the main thread sent (worker). */
  constructor(buffer = new SharedArrayBuffer(LEG_MEMORY_BYTES)) {
    if (buffer.byteLength !== LEG_MEMORY_BYTES) throw new Error(`leg memory must be ${LEG_MEMORY_BYTES} bytes`);
    this.buffer = buffer;
    let at = 0;
    this.#control = new Int32Array(buffer, at, CONTROL_WORDS);
    at += CONTROL_BYTES;
    this.#inMeta = new Int32Array(buffer, at, IN_SLOTS * IN_META_WORDS);
    at += IN_META_BYTES;
    this.#outTicks = new Int32Array(buffer, at, OUT_SLOTS);
    at += OUT_TICK_BYTES;
    this.#inAudio = new Int16Array(buffer, at, IN_SLOTS * FRAME_SAMPLES);
    at += IN_AUDIO_BYTES;
    this.#outAudio = new Int16Array(buffer, at, OUT_SLOTS * FRAME_SAMPLES);
    this.#outTicks.fill(-1);
    for (let i = 0; i < COUNTER_NAMES.length; i++) this.#written[i] = Atomics.load(this.#control, COUNTERS_AT + i);
    for (let slot = 0; slot < IN_SLOTS; slot++) this.#inFrames.push(this.#inAudio.subarray(slot * FRAME_SAMPLES, (slot + 1) * FRAME_SAMPLES));
  }

  // --- main thread ---

  /** Hands every entry waiting in the in ring to `target`, oldest first. */
  drain(target: DrainTarget): void {
    const written = Atomics.load(this.#control, IN_WRITE);
    let read = this.#control[IN_READ];
    if (read === written) return;
    for (; read !== written; read = (read + 1) | 0) {
      const slot = modulo(read, IN_SLOTS);
      const meta = slot * IN_META_WORDS;
      const kind = this.#inMeta[meta];
      const count = this.#inMeta[meta + 2];
      if (kind === KIND_CONCEAL) {
        target.conceal(count);
      } else {
        // A view, valid during the call: the target copies what it keeps, and the worker
        // reuses the slot once it is read.
        const frame = this.#inFrames[slot];
        target.accept(count === FRAME_SAMPLES ? frame : frame.subarray(0, count), this.#inMeta[meta + 1] >>> 0);
      }
    }
    Atomics.store(this.#control, IN_READ, read);
  }

  /** Puts the frame the leg's source played for `tick` where the worker will look for it. */
  writeOut(tick: number, frame: Int16Array): void {
    const slot = tick % OUT_SLOTS;
    this.#outAudio.set(frame.length === FRAME_SAMPLES ? frame : frame.subarray(0, FRAME_SAMPLES), slot * FRAME_SAMPLES);
    Atomics.store(this.#outTicks, slot, tick | 0);
  }

  counters(): LegCounters & { ringDropped: number } {
    const counters = { ringDropped: Atomics.load(this.#control, RING_DROPPED) } as LegCounters & { ringDropped: number };
    for (let i = 0; i < COUNTER_NAMES.length; i++) counters[COUNTER_NAMES[i]] = Atomics.load(this.#control, COUNTERS_AT + i);
    return counters;
  }

  // --- worker ---

  /** The worker leg's sink: decoded audio into the in ring, in slots of at most a frame. */
  sink(): ReceivedAudioSink {
    return {
      accept: (pcm, timestamp) => {
        // The usual packet is one frame: no view of it.
        if (pcm.length === FRAME_SAMPLES) {
          this.#put(KIND_AUDIO, timestamp, FRAME_SAMPLES, pcm);
          return;
        }
        for (let at = 0; at < pcm.length; at += FRAME_SAMPLES) {
          const part = pcm.subarray(at, Math.min(pcm.length, at + FRAME_SAMPLES));
          this.#put(KIND_AUDIO, (timestamp + at) >>> 0, part.length, part);
        }
      },
      conceal: (frames) => this.#put(KIND_CONCEAL, 0, frames, undefined),
    };
  }

  /**
   * The worker leg's source: the main thread's frame for each tick, silence when it is missing
   * (the main thread played nothing for that tick, or has since run OUT_SLOTS ticks ahead).
   */
  source(): AudioSource {
    const frame = new Int16Array(FRAME_SAMPLES);
    const audio = this.#outAudio;
    return {
      read: (tick) => {
        const slot = tick % OUT_SLOTS;
        if (Atomics.load(this.#outTicks, slot) !== (tick | 0)) return silentFrame();
        // Copied sample by sample: a view of the slot per tick would be an object per leg per tick.
        for (let i = 0, at = slot * FRAME_SAMPLES; i < FRAME_SAMPLES; i++, at++) frame[i] = audio[at];
        // Overwritten while being copied: that frame's time has long passed anyway.
        return Atomics.load(this.#outTicks, slot) === (tick | 0) ? frame : silentFrame();
      },
      ended: false,
    };
  }

  /**
   * After every tick for every leg: only the counters that changed since the last write are stored
   * (one or two a tick; `Atomics.store` is a builtin call V8 does not inline, and fourteen of them
   * per leg per tick were ~2% of a worker), each read by its name, not through the name list (a
   * keyed load per counter).
   */
  writeCounters(c: Readonly<LegCounters>): void {
    this.#counter(0, c.packetsSent);
    this.#counter(1, c.packetsReceived);
    this.#counter(2, c.packetsLost);
    this.#counter(3, c.packetsDiscarded);
    this.#counter(4, c.dtmfPacketsSent);
    this.#counter(5, c.staleFramesSkipped);
    this.#counter(6, c.sendErrors);
    this.#counter(7, c.forwardLateOver10Ms);
    this.#counter(8, c.forwardLateOver20Ms);
    this.#counter(9, c.forwardLateOver40Ms);
    this.#counter(10, c.forwardLateOver60Ms);
    this.#counter(11, c.forwardSteps);
    this.#counter(12, c.forwardToTicks);
    this.#counter(13, c.ticksToForward);
  }

  #counter(i: number, value: number): void {
    const v = value | 0;
    if (this.#written[i] === v) return;
    this.#written[i] = v;
    Atomics.store(this.#control, COUNTERS_AT + i, v);
  }

  #put(kind: number, timestamp: number, count: number, pcm: Int16Array | undefined): void {
    const written = this.#control[IN_WRITE];
    if (((written - Atomics.load(this.#control, IN_READ)) | 0) >= IN_SLOTS) {
      Atomics.add(this.#control, RING_DROPPED, 1);
      return;
    }
    const slot = modulo(written, IN_SLOTS);
    const meta = slot * IN_META_WORDS;
    this.#inMeta[meta] = kind;
    this.#inMeta[meta + 1] = timestamp | 0;
    this.#inMeta[meta + 2] = count;
    if (pcm) this.#inAudio.set(pcm, slot * FRAME_SAMPLES);
    Atomics.store(this.#control, IN_WRITE, (written + 1) | 0);
  }
}

function modulo(n: number, m: number): number {
  return ((n % m) + m) % m;
}
