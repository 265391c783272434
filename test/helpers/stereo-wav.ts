// Reading a recording back in tests: a stereo 16-bit WAV split into its left and right channels,
// and how much of one tone each carries (Goertzel per frame), away from the edges where audio starts late.
import { frameWiseShare } from "./tone-windows.js";
import { parseWav } from "../../server/media/wav.js";

export interface StereoWav {
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  left: Int16Array;
  right: Int16Array;
}

export function readStereoWav(bytes: Buffer): StereoWav {
  const wav = parseWav(bytes);
  const frames = Math.floor(wav.dataLength / 4);
  const left = new Int16Array(frames);
  const right = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    left[i] = bytes.readInt16LE(wav.dataOffset + i * 4);
    right[i] = bytes.readInt16LE(wav.dataOffset + i * 4 + 2);
  }
  return { channels: wav.channels, sampleRate: wav.sampleRate, bitsPerSample: wav.bitsPerSample, left, right };
}

/**
 * The share of `frequency` in the middle half of `samples` (the first audio arrives late), frame
 * by frame: what the channel holds, whatever a frame late or cut on a loaded machine did to the
 * phase between frames.
 */
export function middleShare(samples: Int16Array, frequency: number): number {
  const quarter = Math.floor(samples.length / 4);
  return frameWiseShare(samples.subarray(quarter, samples.length - quarter), frequency);
}
