// Call recording: a bridge written as a stereo 8 kHz 16-bit WAV (left = one party's voice,
// right = what that party hears), streamed to disk a chunk at a time, header fixed at the end.
// A recorder killed mid-call leaves a file whose header says "no samples" but whose samples are
// there up to the last chunk written: sealRecording() fixes the header of such a file.

import { open, type FileHandle } from "node:fs/promises";
import { endianness } from "node:os";
import { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, silentFrame } from "./audio-frame.js";
import type { Mixer } from "./mixer.js";
import { WAV_HEADER_BYTES, wavHeader } from "./wav.js";

export interface RecordingResult {
  path: string;
  /** Audio length: frames written × 20 ms. */
  durationMs: number;
  /** File size including the header. */
  bytes: number;
}

export interface RecorderOptions {
  /** Bytes buffered before a write is issued (default one second of audio, 32,000 bytes). */
  chunkBytes?: number;
  /**
   * The frame clock the recorded mixers run on: a recording then starts at the tick after the
   * one current when it attaches, even if the clock skips that one. Without it, at the first tick mixed.
   */
  clock?: { readonly tick: number };
}

const FORMAT = { channels: 2, sampleRate: SAMPLE_RATE, bitsPerSample: 16 };
const FRAME_BYTES = FRAME_SAMPLES * 4;
/** WAV samples are little-endian: on such a machine a typed array writes them as they are. */
const NATIVE_ORDER = endianness() === "LE";

export class StereoRecorder {
  readonly path: string;
  readonly #chunkBytes: number;
  readonly #clock: { readonly tick: number } | undefined;
  #chunk: Buffer;
  #samples: Int16Array;
  #view: DataView;
  #fill = 0;
  #frames = 0;
  /** Where the next chunk goes; the header's 44 bytes come first. */
  #offset = WAV_HEADER_BYTES;
  // Writes run one after another on this chain, so the file is written in order and only the
  // chunks not yet on disk are held in memory.
  #chain: Promise<FileHandle | undefined>;
  #error: unknown;
  #finished: Promise<RecordingResult> | undefined;
  readonly #detach: (() => void)[] = [];

  constructor(path: string, options: RecorderOptions = {}) {
    this.path = path;
    this.#clock = options.clock;
    this.#chunkBytes = Math.max(FRAME_BYTES, Math.floor((options.chunkBytes ?? 32000) / FRAME_BYTES) * FRAME_BYTES);
    this.#chunk = Buffer.alloc(this.#chunkBytes);
    this.#samples = samplesOf(this.#chunk);
    this.#view = viewOf(this.#chunk);
    // Owner-only: a call's audio is as private as the documents.
    this.#chain = open(path, "w", 0o600).then(
      async (file) => {
        // A placeholder until finish(): a reader of an unfinished file sees sizes of zero.
        await file.write(wavHeader(FORMAT, 0), 0, WAV_HEADER_BYTES, 0).catch((error: unknown) => (this.#error ??= error));
        return file;
      },
      (error: unknown) => {
        this.#error ??= error;
        return undefined;
      },
    );
  }

  get durationMs(): number {
    return this.#frames * FRAME_MS;
  }

  /** Appends one 20 ms stereo frame; the samples are copied, so the caller may reuse them. */
  write(left: Int16Array, right: Int16Array): void {
    if (this.#finished) throw new Error(`recording ${this.path} is finished`);
    if (this.#error !== undefined) return;
    if (NATIVE_ORDER && left.length >= FRAME_SAMPLES && right.length >= FRAME_SAMPLES) {
      // Interleaved straight into the chunk: one typed-array store per sample, no byte-order work.
      const samples = this.#samples;
      let at = this.#fill >> 1;
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        samples[at] = left[i];
        samples[at + 1] = right[i];
        at += 2;
      }
    } else {
      const view = this.#view;
      let at = this.#fill;
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        view.setInt16(at, left[i] ?? 0, true);
        view.setInt16(at + 2, right[i] ?? 0, true);
        at += 4;
      }
    }
    this.#fill += FRAME_BYTES;
    this.#frames++;
    if (this.#fill >= this.#chunkBytes) this.#flush();
  }

  /**
   * Records member `left` of `mixer`: its voice left, what it hears right, one frame per clock
   * tick from the next one on. Returns the detach.
   */
  attach(mixer: Mixer, left: string): () => void {
    let lastTick = this.#clock?.tick;
    const detach = mixer.tap((tick, input, output) => {
      // Ticks the frame clock skipped after a stall were never mixed: their time is written as
      // silence, so the recording lasts as long as the call and what follows stays in its place.
      if (lastTick !== undefined) for (let skipped = lastTick + 1; skipped < tick; skipped++) this.write(silentFrame(), silentFrame());
      lastTick = tick;
      const voice = input.get(left);
      const heard = output.get(left);
      if (voice && heard) this.write(voice, heard);
    });
    this.#detach.push(detach);
    return detach;
  }

  /**
   * Stops recording (detaching from any mixer), writes what is buffered, then the real header;
   * resolves with the recording's figures.
   */
  finish(): Promise<RecordingResult> {
    this.#finished ??= this.#finish();
    return this.#finished;
  }

  async #finish(): Promise<RecordingResult> {
    // The bridge may carry on (a transfer, a conference) after its recording stops.
    for (const detach of this.#detach) detach();
    this.#flush();
    const file = await this.#chain;
    if (file === undefined) throw this.#error;
    try {
      if (this.#error !== undefined) throw this.#error;
      const dataBytes = this.#frames * FRAME_BYTES;
      await file.write(wavHeader(FORMAT, dataBytes), 0, WAV_HEADER_BYTES, 0);
      return { path: this.path, durationMs: this.durationMs, bytes: WAV_HEADER_BYTES + dataBytes };
    } finally {
      await file.close();
    }
  }

  #flush(): void {
    if (this.#fill === 0) return;
    const data = this.#chunk.subarray(0, this.#fill);
    const position = this.#offset;
    this.#offset += this.#fill;
    this.#chunk = Buffer.alloc(this.#chunkBytes);
    this.#samples = samplesOf(this.#chunk);
    this.#view = viewOf(this.#chunk);
    this.#fill = 0;
    this.#chain = this.#chain.then(async (file) => {
      if (file && this.#error === undefined) {
        await file.write(data, 0, data.length, position).catch((error: unknown) => (this.#error ??= error));
      }
      return file;
    });
  }
}

function samplesOf(buffer: Buffer): Int16Array {
  return new Int16Array(buffer.buffer, buffer.byteOffset, buffer.byteLength >> 1);
}

function viewOf(buffer: Buffer): DataView {
  return new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/**
 * Makes a recording left unfinished by a crash a valid WAV of the samples it holds: a partly
 * written last frame is cut off and the header given the real sizes. Resolves with its length.
 */
export async function sealRecording(path: string): Promise<RecordingResult> {
  const file = await open(path, "r+");
  try {
    const { size } = await file.stat();
    const frames = Math.max(0, Math.floor((size - WAV_HEADER_BYTES) / FRAME_BYTES));
    const dataBytes = frames * FRAME_BYTES;
    await file.truncate(WAV_HEADER_BYTES + dataBytes);
    await file.write(wavHeader(FORMAT, dataBytes), 0, WAV_HEADER_BYTES, 0);
    await file.sync();
    return { path, durationMs: frames * FRAME_MS, bytes: WAV_HEADER_BYTES + dataBytes };
  } finally {
    await file.close();
  }
}
