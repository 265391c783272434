// The media bench's check of a call's recording against what the call's bridge mixed while it was
// recorded: a finished stereo WAV, one frame per clock tick (duration within a frame), each
// channel silent exactly at the ticks its party's audio was silent (a receive FIFO that ran dry
// or was priming, a lost packet's concealment, a far end that sent silence, a tick the clock
// skipped) and, in every frame with audio, its own party's tone and not the other's.
//
// It judges frame by frame on purpose. One tone share over a whole second of the recording (the
// check before issue 17) is a coherent measure: a single late frame (20 ms of silence, the tone
// then resuming 20 ms later) turns a 440 Hz tone's phase by 0.8 of a cycle, the two parts of the
// second cancel, and a faithful recording of a call that lost nothing read as wrong.
import { FRAME_SAMPLES, SAMPLE_RATE } from "../../server/media/audio-frame.js";
import { toneShare } from "../../server/media/goertzel.js";
import type { Mixer } from "../../server/media/mixer.js";
import { parseWav, WavFormatError } from "../../server/media/wav.js";

export interface ChannelExpectation {
  /** The tone of the party this channel holds (Hz). */
  tone: number;
  /** The other party's tone (Hz), which must not be in this channel. */
  other: number;
  /** For each tick recorded, in order: whether this channel's audio was silence at that tick. */
  silent: readonly boolean[];
}

export interface RecordingExpectation {
  /** Frame-clock ticks from the one after the recorder was attached to the last one recorded. */
  ticks: number;
  left: ChannelExpectation;
  right: ChannelExpectation;
}

export interface RecordingCheck {
  ok: boolean;
  /** What is wrong (empty when ok), for the bench's report. */
  problems: string[];
  /** Frames in the file. */
  frames: number;
}

/** A tick's entry in MixedSilence's record: mixed at all, and which of its two frames were silence. */
const MIXED = 1;
const VOICE_SILENT = 2;
const HEARD_SILENT = 4;

/**
 * Which ticks of a bridge had silence for the member a recorder records (its voice, what it
 * hears), from the tick the recorder attached at on: what the recording must match.
 *
 * Its tap runs in the server's main thread at every tick of every recorded call, so bench/media
 * counts it in the server's CPU: it is kept to a byte per tick in a typed array (grown by
 * doubling) and a plain loop over each frame. A Map entry holding a new two-element array per
 * tick, and `every` with a callback, were ~14% of the main thread's samples at 50 calls (session
 * 24, helper cap's profile), ~3 µs of the ~56 µs the bench reported per packet.
 */
export class MixedSilence {
  readonly #attachedTick: number;
  /** Entry i: tick attachedTick + 1 + i (0: not mixed, the clock skipped it). */
  #ticks = new Uint8Array(1024);
  #lastTick: number;

  /** Call as the recorder attaches, `attachedTick` being the clock's last tick. */
  constructor(mixer: Mixer, member: string, attachedTick: number) {
    this.#attachedTick = attachedTick;
    this.#lastTick = attachedTick;
    mixer.tap((tick, input, output) => {
      this.#lastTick = tick;
      const at = tick - attachedTick - 1;
      if (at < 0) return;
      if (at >= this.#ticks.length) {
        const grown = new Uint8Array(Math.max(2 * this.#ticks.length, at + 1));
        grown.set(this.#ticks);
        this.#ticks = grown;
      }
      this.#ticks[at] = MIXED | (isSilent(input.get(member)) ? VOICE_SILENT : 0) | (isSilent(output.get(member)) ? HEARD_SILENT : 0);
    });
  }

  /** The last tick the bridge was mixed at: where a call whose legs both closed early ended. */
  get lastTick(): number {
    return this.#lastTick;
  }

  /**
   * The expectation for a recording that ended at `endTick` (the last tick before its legs
   * stopped reading the bridge): left `voice` Hz, right `heard` Hz. A tick the clock skipped was
   * never mixed: its audio is silence.
   */
  expectation(endTick: number, voice: number, heard: number): RecordingExpectation {
    const recorded = Array.from({ length: endTick - this.#attachedTick }, (_, i) => {
      const entry = i < this.#ticks.length ? this.#ticks[i] : 0;
      return entry === 0 ? [true, true] : [(entry & VOICE_SILENT) !== 0, (entry & HEARD_SILENT) !== 0];
    });
    return {
      ticks: recorded.length,
      left: { tone: voice, other: heard, silent: recorded.map(([v]) => v) },
      right: { tone: heard, other: voice, silent: recorded.map(([, h]) => h) },
    };
  }
}

function isSilent(frame: Int16Array | undefined): boolean {
  if (frame === undefined) return true;
  for (let i = 0; i < frame.length; i++) if (frame[i] !== 0) return false;
  return true;
}

/**
 * A frame's tone is judged in blocks of 5 ms (two cycles of 440 Hz, five of 1000 Hz), those
 * wholly within its audio: where the far end's stream jumped (it skipped frames while the FIFO
 * read from inside a frame, after a backlog cut) the tone's phase turns mid-frame, and one share
 * over the frame can cancel out; the jump spoils at most one block.
 */
const BLOCK = 40;
/** A block must hold at least this share of its energy at its tone... */
const MIN_TONE_SHARE = 0.5;
/** ...and at most this share at the other party's. */
const MAX_OTHER_SHARE = 0.05;
const FRAME_BYTES = FRAME_SAMPLES * 4;

export function checkRecording(bytes: Buffer, expected: RecordingExpectation): RecordingCheck {
  const problems: string[] = [];
  let wav;
  try {
    wav = parseWav(bytes);
  } catch (error) {
    if (!(error instanceof WavFormatError)) throw error;
    return { ok: false, problems: [error.message], frames: 0 };
  }
  if (wav.formatCode !== 1 || wav.channels !== 2 || wav.sampleRate !== SAMPLE_RATE || wav.bitsPerSample !== 16) {
    problems.push(`format ${wav.formatCode}/${wav.channels} ch/${wav.sampleRate} Hz/${wav.bitsPerSample} bit, not 16-bit stereo PCM at 8 kHz`);
  }
  // A finished file's header holds its real sizes; an unfinished one says 0.
  if (wav.riffSize !== bytes.length - 8 || wav.dataOffset + wav.dataLength !== bytes.length) {
    problems.push(`header sizes (RIFF ${wav.riffSize}, data ${wav.dataLength}) do not match the file's ${bytes.length} bytes`);
  }
  if (wav.dataLength % FRAME_BYTES !== 0) problems.push(`${wav.dataLength} bytes of samples is not a whole number of 20 ms frames`);
  const frames = Math.floor(wav.dataLength / FRAME_BYTES);
  if (Math.abs(frames - expected.ticks) > 1) problems.push(`${frames} frames for ${expected.ticks} ticks recorded`);
  if (problems.length > 0) return { ok: false, problems, frames };

  for (const [channel, name, want] of [
    [0, "left", expected.left],
    [1, "right", expected.right],
  ] as const) {
    const samples = new Int16Array(FRAME_SAMPLES);
    let silent = 0;
    let wrong = 0;
    let firstWrong = -1;
    let misplaced = 0;
    let firstMisplaced = -1;
    for (let f = 0; f < frames; f++) {
      const base = wav.dataOffset + f * FRAME_BYTES + channel * 2;
      let first = -1;
      let last = -1;
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        const sample = bytes.readInt16LE(base + i * 4);
        samples[i] = sample;
        if (sample !== 0) {
          if (first < 0) first = i;
          last = i;
        }
      }
      // Silence exactly where the bridge had none of this party's audio: nothing lost, nothing
      // moved, nothing from another tick.
      if ((first < 0) !== (want.silent[f] ?? first < 0)) {
        misplaced++;
        if (firstMisplaced < 0) firstMisplaced = f;
      }
      if (first < 0) {
        silent++;
        continue;
      }
      // Only blocks with audio throughout: a frame the FIFO ran dry in ends in silence. Wrong
      // when most of them lack the party's tone or carry the other's.
      let judged = 0;
      let failed = 0;
      for (let at = 0; at + BLOCK <= FRAME_SAMPLES; at += BLOCK) {
        if (at < first || at + BLOCK - 1 > last) continue;
        const block = samples.subarray(at, at + BLOCK);
        judged++;
        if (toneShare(block, want.tone) < MIN_TONE_SHARE || toneShare(block, want.other) > MAX_OTHER_SHARE) failed++;
      }
      if (failed * 2 > judged) {
        wrong++;
        if (firstWrong < 0) firstWrong = f;
      }
    }
    if (wrong > 0) problems.push(`${name}: ${wrong} frames without ${want.tone} Hz alone (first at ${(firstWrong * 0.02).toFixed(2)} s)`);
    if (misplaced > 0) {
      const expectedSilent = want.silent.filter(Boolean).length;
      problems.push(
        `${name}: ${misplaced} frames silent where the bridge had audio or the reverse (first at ${(firstMisplaced * 0.02).toFixed(2)} s; ${silent} silent, ${expectedSilent} expected)`,
      );
    }
  }
  return { ok: problems.length === 0, problems, frames };
}
