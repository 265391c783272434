// What a phone heard, measured in windows: the tone shares a media test asserts on, measured again
// (up to three windows) when one fell short, and a share that tells concealment from loss.
//
// Why again: on a loaded machine a thread stalls now and then, and a window that holds the stall
// is a figure of the machine, not of the media path (bench/media.ts measures the losses under
// load). Each test keeps its own threshold; only the number of windows is shared here.
//
// Why a second share: toneShare over a window is phase-coherent (one Goertzel over 8,000 samples),
// so a single 20 ms frame of silence where a receive buffer ran dry (an underrun: the audio after
// it is played a tick later, none lost) shifts a 440 Hz tone by 0.8 cycle and takes its share from
// 1 to 0.64; three such frames take it to 0.07. A 1000 Hz tone (20 whole cycles a frame) hardly
// moves. `heardTone` measures the tone over the frames that were played (whole silent frames, the
// receive buffer's concealment, left out and counted), so a late frame costs its 20 ms and a lost
// frame (a dropped or skipped one: the audio after it jumps in phase) still costs the share.

import { FRAME_SAMPLES, toneShare } from "../../server/media/index.js";

/** The most windows measured: the first and up to two more. */
export const TONE_WINDOWS = 3;

/**
 * Measures up to `windows` times, until `shortOf` finds nothing short in a measurement; gives the
 * last measurement and what was short in it (empty when it was heard well).
 */
export async function measureUntilHeard<T>(
  measure: () => Promise<T>,
  shortOf: (heard: T) => string[],
  windows = TONE_WINDOWS,
): Promise<{ heard: T; short: string[]; windows: number }> {
  let heard = await measure();
  let short = shortOf(heard);
  let count = 1;
  for (; count < windows && short.length > 0; count++) {
    heard = await measure();
    short = shortOf(heard);
  }
  return { heard, short, windows: count };
}

export interface HeardTone {
  /** toneShare of `frequency` over the frames played, silent frames left out (0 when all were silent). */
  share: number;
  /** Whole 20 ms frames of silence in the window (where the receive buffer ran dry). */
  silentFrames: number;
  /** Frames in the window. */
  frames: number;
}

/**
 * The share of `frequency` in `samples` (whole 20 ms frames, as a leg's `incoming` gives them)
 * over the frames that carry sound, and how many were silent.
 */
export function heardTone(samples: ArrayLike<number>, frequency: number): HeardTone {
  const played: number[] = [];
  let silentFrames = 0;
  let frames = 0;
  for (const frame of framesOf(samples)) {
    frames++;
    if (frame === undefined) silentFrames++;
    else played.push(...frame);
  }
  return { share: played.length > 0 ? toneShare(played, frequency) : 0, silentFrames, frames };
}

/**
 * The share of `frequency` measured frame by frame (each whole 20 ms frame on its own, weighted by
 * its energy): which tone is where, whatever the phase between frames. For checks of content (a
 * recording's channels, who hears whom), not of continuity: a frame dropped or cut from a backlog
 * on a loaded machine costs nothing here, while `heardTone` still counts it. 440, 1000 and 2000 Hz
 * leak nothing into each other over one frame.
 */
export function frameWiseShare(samples: ArrayLike<number>, frequency: number): number {
  let tone = 0;
  let total = 0;
  for (const frame of framesOf(samples)) {
    if (frame === undefined) continue;
    let energy = 0;
    for (const s of frame) energy += s * s;
    tone += toneShare(frame, frequency) * energy;
    total += energy;
  }
  return total === 0 ? 0 : tone / total;
}

/**
 * Each whole 20 ms frame of `samples` in order: its samples, or undefined for a silent one (every
 * sample 0: where a receive buffer ran dry). The one walk heardTone and frameWiseShare share.
 */
function* framesOf(samples: ArrayLike<number>): Generator<number[] | undefined> {
  const frames = Math.floor(samples.length / FRAME_SAMPLES);
  for (let f = 0; f < frames; f++) {
    const frame = Array.prototype.slice.call(samples, f * FRAME_SAMPLES, (f + 1) * FRAME_SAMPLES) as number[];
    yield frame.every((s) => s === 0) ? undefined : frame;
  }
}
