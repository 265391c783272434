// What worker-legs' phone heard when its 440 Hz share fell to 0.09-0.76 (session 15): whole 20 ms
// frames of silence where its receive buffer ran dry (one underrun as the buffer found its depth;
// a few after a stall of the thread both ends run on), the audio after them a tick late, none lost.
// Synthesised here frame by frame: no threads, no real time.
import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES, toneShare } from "../../server/media/index.js";
import { frameWiseShare, heardTone, measureUntilHeard } from "../helpers/tone-windows.js";

/** 50 frames of a `hz` tone as a receive buffer plays them: silence at `dry`, the frame at `lost` never played. */
function played(hz: number, { dry = [] as number[], lost = [] as number[] } = {}): Int16Array {
  const out = new Int16Array(50 * FRAME_SAMPLES);
  let n = 0;
  for (let frame = 0, at = 0; frame < 50; frame++, at += FRAME_SAMPLES) {
    if (dry.includes(frame)) continue;
    if (lost.includes(frame)) n += FRAME_SAMPLES;
    for (let i = 0; i < FRAME_SAMPLES; i++, n++) out[at + i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * n) / 8000));
  }
  return out;
}

describe("a tone heard with frames of concealment", () => {
  it("one to three silent frames take a window's 440 Hz share to 0.64-0.07 (1000 Hz: 0.98-0.94), the tone heard stays whole", () => {
    const shares = [[25], [17, 34], [12, 25, 38]].map((dry) => [toneShare(played(440, { dry }), 440), toneShare(played(1000, { dry }), 1000)]);
    expect(shares.map(([a]) => a < 0.7)).toEqual([true, true, true]);
    expect(shares[2][0]).toBeLessThan(0.1);
    expect(shares.map(([, b]) => b > 0.9)).toEqual([true, true, true]);
    for (const dry of [[25], [17, 34], [12, 25, 38]]) {
      const heard = heardTone(played(440, { dry }), 440);
      expect(heard.share).toBeGreaterThan(0.99);
      expect(heard).toMatchObject({ silentFrames: dry.length, frames: 50 });
    }
  });

  it("a lost frame (the audio after it jumps) still costs the share; another tone is not the one", () => {
    expect(heardTone(played(440, { lost: [17, 34] }), 440).share).toBeLessThan(0.4);
    expect(heardTone(played(1000), 440).share).toBeLessThan(0.01);
    expect(heardTone(new Int16Array(8000), 440)).toEqual({ share: 0, silentFrames: 50, frames: 50 });
  });

  it("frame by frame: lost or silent frames cost nothing, another tone is still not the one", () => {
    const hurt = played(440, { dry: [10], lost: [20, 30, 40] });
    expect(heardTone(hurt, 440).share).toBeLessThan(0.5);
    expect(frameWiseShare(hurt, 440)).toBeGreaterThan(0.98);
    for (const [hz, other] of [[440, 1000], [1000, 2000], [2000, 440]]) expect(frameWiseShare(played(hz, { lost: [7] }), other)).toBeLessThan(0.01);
    expect(frameWiseShare(new Int16Array(50 * FRAME_SAMPLES), 440)).toBe(0);
  });

  it("measures again up to three windows while something is short, and gives the last", async () => {
    const seen = [0.2, 0.5, 0.95, 0.99];
    let at = 0;
    const measure = () => Promise.resolve(seen[at++]);
    const { heard, short, windows } = await measureUntilHeard(measure, (share) => (share > 0.9 ? [] : [`share ${share}`]));
    expect([heard, short, windows]).toEqual([0.95, [], 3]);
    at = 0;
    const twoOnly = await measureUntilHeard(measure, (share) => (share > 0.9 ? [] : [`share ${share}`]), 2);
    expect([twoOnly.heard, twoOnly.short, twoOnly.windows]).toEqual([0.5, ["share 0.5"], 2]);
  });
});
