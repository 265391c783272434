import { describe, expect, it } from "vitest";
import { decodeAlaw, decodeG711, decodeUlaw, encodeAlaw, encodeG711, encodeUlaw } from "../../server/media/g711.js";

const ALL_SAMPLES = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);

/** Samples whose round trip strays more than a step, or runs backwards; empty when all is well. */
function companderFaults(back: Int16Array, smallestStep: number): string[] {
  const faults: string[] = [];
  for (let i = 0; i < ALL_SAMPLES.length && faults.length < 5; i++) {
    const x = ALL_SAMPLES[i];
    if (Math.abs(back[i] - x) > Math.max(smallestStep, Math.abs(x) / 16) + 1) faults.push(`${x} -> ${back[i]}`);
    if (i > 0 && back[i] < back[i - 1]) faults.push(`not monotonic at ${x}`);
  }
  return faults;
}

const one = (n: number) => new Int16Array([n]);
const byte = (b: number) => new Uint8Array([b]);

describe("G.711 mu-law (PCMU)", () => {
  it("matches the known code points of G.711", () => {
    expect(encodeUlaw(one(0))[0]).toBe(0xff);
    expect(decodeUlaw(byte(0xff))[0]).toBe(0);
    expect(decodeUlaw(byte(0x7f))[0]).toBe(0); // negative zero
    expect(decodeUlaw(byte(0x00))[0]).toBe(-32124);
    expect(decodeUlaw(byte(0x80))[0]).toBe(32124);
    expect(encodeUlaw(one(32767))[0]).toBe(0x80);
    expect(encodeUlaw(one(-32768))[0]).toBe(0x00);
    expect(encodeUlaw(one(-1))[0]).toBe(0x7f);
    expect(encodeUlaw(one(1000))[0]).toBe(0xce);
  });

  it("re-encodes every code it decodes to the same code (bar negative zero)", () => {
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const again = encodeUlaw(decodeUlaw(codes));
    for (let i = 0; i < 256; i++) expect(again[i]).toBe(i === 0x7f ? 0xff : i);
  });

  it("keeps the quantisation error within one step and the curve monotonic", () => {
    // mu-law steps double per segment, from 4 near zero to 1024 at the top (a 16th of the value).
    expect(companderFaults(decodeUlaw(encodeUlaw(ALL_SAMPLES)), 4)).toEqual([]);
  });
});

describe("G.711 A-law (PCMA)", () => {
  it("matches the known code points of G.711", () => {
    expect(encodeAlaw(one(0))[0]).toBe(0xd5);
    expect(decodeAlaw(byte(0xd5))[0]).toBe(8);
    expect(decodeAlaw(byte(0x55))[0]).toBe(-8);
    expect(decodeAlaw(byte(0xaa))[0]).toBe(32256);
    expect(decodeAlaw(byte(0x2a))[0]).toBe(-32256);
    expect(encodeAlaw(one(32767))[0]).toBe(0xaa);
    expect(encodeAlaw(one(-32768))[0]).toBe(0x2a);
  });

  it("re-encodes every code it decodes to the same code", () => {
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect([...encodeAlaw(decodeAlaw(codes))]).toEqual([...codes]);
  });

  it("keeps the quantisation error within one step and the curve monotonic", () => {
    expect(companderFaults(decodeAlaw(encodeAlaw(ALL_SAMPLES)), 16)).toEqual([]);
  });
});

describe("G.711 on speech-level audio", () => {
  it("carries a -10 dBFS sine with better than 35 dB signal-to-noise in both laws", () => {
    const pcm = Int16Array.from({ length: 8000 }, (_, i) => Math.round(10362 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
    for (const codec of ["PCMU", "PCMA"] as const) {
      const back = decodeG711(codec, encodeG711(codec, pcm));
      let signal = 0;
      let noise = 0;
      for (let i = 0; i < pcm.length; i++) {
        signal += pcm[i] ** 2;
        noise += (back[i] - pcm[i]) ** 2;
      }
      expect(10 * Math.log10(signal / noise)).toBeGreaterThan(35);
    }
  });

  it("writes into a caller's buffer without allocating", () => {
    const out = new Uint8Array(160);
    expect(encodeUlaw(new Int16Array(160), out)).toBe(out);
    expect(out.every((b) => b === 0xff)).toBe(true);
  });
});
