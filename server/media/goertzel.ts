// The Goertzel algorithm: the power of one frequency in a block of samples, cheaper than an FFT
// when only a few frequencies matter (checking that a tone arrived, DTMF-style detection).

import { SAMPLE_RATE } from "./audio-frame.js";

/**
 * Power of `frequency` in `samples`, scaled so that a full-block sine of amplitude A at that
 * frequency gives about A² (independent of the block length).
 */
export function goertzelPower(samples: ArrayLike<number>, frequency: number, sampleRate = SAMPLE_RATE): number {
  const n = samples.length;
  if (n === 0) return 0;
  const coeff = 2 * Math.cos((2 * Math.PI * frequency) / sampleRate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const s0 = samples[i] + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return power / ((n * n) / 4);
}

/** Mean square of the block: a sine of amplitude A gives A²/2. */
export function meanSquare(samples: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  return samples.length ? sum / samples.length : 0;
}

/**
 * The share of the block's energy that sits at `frequency`: about 1 for a pure tone there,
 * near 0 for silence or other frequencies (0 when the block is silent).
 */
export function toneShare(samples: ArrayLike<number>, frequency: number, sampleRate = SAMPLE_RATE): number {
  const energy = meanSquare(samples);
  return energy === 0 ? 0 : goertzelPower(samples, frequency, sampleRate) / (2 * energy);
}

/** Level of a block in dBFS (full-scale sine = about -3 dBFS, silence = -Infinity). */
export function levelDbfs(samples: ArrayLike<number>): number {
  return 10 * Math.log10(meanSquare(samples) / (32768 * 32768));
}
