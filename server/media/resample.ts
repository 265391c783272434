// Sample-rate conversion for uploaded audio that is not already 8 kHz: a band-limited
// (Blackman-windowed sinc) resampler, run once when a file is loaded, never per frame.

const ZERO_CROSSINGS = 8;
const TABLE_STEPS = 64;

/**
 * Converts `input` from `inRate` to `outRate`. The pass band ends at 45% of the lower rate, so
 * downsampling music to 8 kHz does not fold its highs back as aliasing.
 */
export function resample(input: Float32Array, inRate: number, outRate: number): Float32Array {
  if (inRate === outRate) return input;
  const cutoff = (0.45 * Math.min(inRate, outRate)) / inRate; // cycles per input sample
  const half = Math.ceil(ZERO_CROSSINGS / (2 * cutoff));
  const kernel = kernelTable(cutoff, half);
  const step = inRate / outRate;
  const output = new Float32Array(Math.floor((input.length * outRate) / inRate));
  for (let n = 0; n < output.length; n++) {
    const center = n * step;
    const first = Math.max(0, Math.floor(center) - half + 1);
    const last = Math.min(input.length - 1, Math.floor(center) + half);
    let sum = 0;
    for (let i = first; i <= last; i++) {
      const pos = (i - center + half) * TABLE_STEPS;
      const k = Math.floor(pos);
      const frac = pos - k;
      const a = kernel[k];
      const b = kernel[k + 1];
      sum += input[i] * (a + (b - a) * frac);
    }
    output[n] = sum;
  }
  return output;
}

/** The windowed-sinc impulse response sampled every 1/TABLE_STEPS input sample over ±half. */
function kernelTable(cutoff: number, half: number): Float64Array {
  const table = new Float64Array(2 * half * TABLE_STEPS + 2);
  for (let j = 0; j < table.length; j++) {
    const t = j / TABLE_STEPS - half;
    const x = 2 * cutoff * t;
    const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    const u = (t + half) / (2 * half);
    const window = u < 0 || u > 1 ? 0 : 0.42 - 0.5 * Math.cos(2 * Math.PI * u) + 0.08 * Math.cos(4 * Math.PI * u);
    table[j] = 2 * cutoff * sinc * window;
  }
  return table;
}
