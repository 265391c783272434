import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { FRAME_SAMPLES, type AudioSource } from "../../server/media/audio-frame.js";
import { encodeAlaw } from "../../server/media/g711.js";
import { levelDbfs, toneShare } from "../../server/media/goertzel.js";
import { createPlayer, decodeWav, MediaUriError, parseToneStream, WavLibrary } from "../../server/media/player.js";
import { wavHeader, WavFormatError } from "../../server/media/wav.js";

const dir = mkdtempSync(join(tmpdir(), "media-player-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Reads `frames` frames, copying each (sources may reuse their buffer). */
function take(source: AudioSource, frames: number): Int16Array {
  const out = new Int16Array(frames * FRAME_SAMPLES);
  for (let i = 0; i < frames; i++) out.set(source.read(i + 1), i * FRAME_SAMPLES);
  return out;
}

function wavFile(name: string, format: { channels: number; sampleRate: number; bitsPerSample: number }, data: Buffer, formatCode = 1): string {
  const header = wavHeader(format, data.length);
  header.writeUInt16LE(formatCode, 20);
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat([header, data]));
  return path;
}

function pcm16(samples: ArrayLike<number>): Buffer {
  const b = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) b.writeInt16LE(samples[i], i * 2);
  return b;
}

const sine = (freq: number, rate: number, n: number, amp = 8000) =>
  Array.from({ length: n }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * freq * i) / rate)));

describe("tone_stream://", () => {
  it("plays a plain frequency forever at -13 dBFS per tone", async () => {
    const tone = await createPlayer("tone_stream://440");
    const audio = take(tone, 100);
    expect(toneShare(audio, 440)).toBeGreaterThan(0.99);
    expect(toneShare(audio, 1000)).toBeLessThan(0.01);
    expect(levelDbfs(audio)).toBeCloseTo(-16, 0); // a sine's RMS sits 3 dB under its peak
    expect(tone.ended).toBe(false);
  });

  it("plays a cadence of two frequencies, then ends after one pass", async () => {
    const ring = await createPlayer("tone_stream://%(100,100,350,440)");
    const on = take(ring, 5);
    const off = take(ring, 5);
    expect(toneShare(on, 350)).toBeGreaterThan(0.45);
    expect(toneShare(on, 440)).toBeGreaterThan(0.45);
    expect(toneShare(on, 1000)).toBeLessThan(0.01);
    expect(off.every((s) => s === 0)).toBe(true);
    expect(ring.ended).toBe(true);
    expect(take(ring, 1).every((s) => s === 0)).toBe(true);
  });

  it("honours loops=, L=, v= and the loop option", async () => {
    const twice = await createPlayer("tone_stream://%(40,0,1000);loops=2");
    take(twice, 3);
    expect(twice.ended).toBe(false);
    take(twice, 1);
    expect(twice.ended).toBe(true);

    const forever = await createPlayer("tone_stream://L=-1;%(20,20,1000)");
    take(forever, 500);
    expect(forever.ended).toBe(false);

    const looped = await createPlayer("tone_stream://%(20,20,1000)", { loop: true });
    take(looped, 50);
    expect(looped.ended).toBe(false);

    const quiet = await createPlayer("tone_stream://v=-30;%(1000,0,1000)");
    expect(levelDbfs(take(quiet, 10))).toBeCloseTo(-33, 0);
  });

  it("keeps exact cadence when segments are not whole frames", () => {
    const script = parseToneStream("%(30,10,500);%(25,15,700)");
    expect(script.segments).toEqual([
      { onMs: 30, offMs: 10, frequencies: [500] },
      { onMs: 25, offMs: 15, frequencies: [700] },
    ]);
  });

  it("rejects what it cannot play with a MediaUriError", async () => {
    for (const uri of ["tone_stream://%(abc)", "tone_stream://%(100,100)", "tone_stream://5000", "tone_stream://", "tone_stream://beep", "http://x/y.wav"]) {
      await expect(createPlayer(uri), uri).rejects.toBeInstanceOf(MediaUriError);
    }
  });
});

describe("silence_stream://", () => {
  it("is silent for the given time, then ended; forever without one", async () => {
    const pause = await createPlayer("silence_stream://100");
    expect(take(pause, 4).every((s) => s === 0)).toBe(true);
    expect(pause.ended).toBe(false);
    take(pause, 1);
    expect(pause.ended).toBe(true);
    for (const uri of ["silence_stream://", "silence_stream://-1", "silence_stream://-1,1400"]) {
      const endless = await createPlayer(uri);
      take(endless, 200);
      expect(endless.ended).toBe(false);
    }
    await expect(createPlayer("silence_stream://soon")).rejects.toBeInstanceOf(MediaUriError);
  });
});

describe("WAV player", () => {
  const ramp = Array.from({ length: 400 }, (_, i) => i * 10 - 2000);
  const rampPath = wavFile("ramp.wav", { channels: 1, sampleRate: 8000, bitsPerSample: 16 }, pcm16(ramp));

  it("yields the file's samples frame by frame, pads the last frame, then ends", async () => {
    const player = await createPlayer(rampPath);
    expect([...player.read(1)]).toEqual(ramp.slice(0, 160));
    expect([...player.read(2)]).toEqual(ramp.slice(160, 320));
    expect(player.ended).toBe(false);
    expect([...player.read(3)]).toEqual([...ramp.slice(320), ...new Array<number>(80).fill(0)]);
    expect(player.ended).toBe(true);
    expect(player.read(4).every((s) => s === 0)).toBe(true);
  });

  it("wraps around with loop, also through file:// URLs", async () => {
    const player = await createPlayer(pathToFileURL(rampPath).href, { loop: true });
    take(player, 2);
    expect([...player.read(3)]).toEqual([...ramp.slice(320), ...ramp.slice(0, 80)]);
    expect([...player.read(4)]).toEqual(ramp.slice(80, 240));
    expect(player.ended).toBe(false);
  });

  it("averages stereo to mono and resamples 16 kHz to 8 kHz, keeping a 1 kHz tone", async () => {
    const left = sine(1000, 16000, 16000);
    const interleaved = left.flatMap((s) => [s, s]);
    const path = wavFile("stereo16k.wav", { channels: 2, sampleRate: 16000, bitsPerSample: 16 }, pcm16(interleaved));
    const player = await createPlayer(path);
    const audio = take(player, 49);
    expect(toneShare(audio.subarray(800), 1000)).toBeGreaterThan(0.99);
    expect(levelDbfs(audio.subarray(800))).toBeCloseTo(levelDbfs(left), 0);
    take(player, 1);
    expect(player.ended).toBe(true);
  });

  it("filters out what 8 kHz cannot carry when downsampling 44.1 kHz", () => {
    const rate = 44100;
    // 6 kHz would fold back to 2 kHz without the low-pass.
    const mixed = sine(500, rate, rate).map((s, i) => s + Math.round(8000 * Math.sin((2 * Math.PI * 6000 * i) / rate)));
    const audio = decodeWav(Buffer.concat([wavHeader({ channels: 1, sampleRate: rate, bitsPerSample: 16 }, mixed.length * 2), pcm16(mixed)]));
    expect(audio.length).toBe(8000);
    const body = audio.subarray(400, 7600);
    expect(toneShare(body, 500)).toBeGreaterThan(0.98);
    expect(toneShare(body, 2000)).toBeLessThan(0.001);
  });

  it("plays A-law WAV files", async () => {
    const tone = Int16Array.from(sine(700, 8000, 1600));
    const path = wavFile("alaw.wav", { channels: 1, sampleRate: 8000, bitsPerSample: 8 }, Buffer.from(encodeAlaw(tone)), 6);
    expect(toneShare(take(await createPlayer(path), 10), 700)).toBeGreaterThan(0.99);
  });

  it("refuses other encodings and non-WAV files with a clear error", async () => {
    const adpcm = wavFile("adpcm.wav", { channels: 1, sampleRate: 8000, bitsPerSample: 4 }, Buffer.alloc(100), 2);
    await expect(createPlayer(adpcm)).rejects.toThrow(/format 2, 4-bit.*unsupported.*sox in.wav -r 8000/);
    await expect(createPlayer(adpcm)).rejects.toBeInstanceOf(WavFormatError);
    const text = join(dir, "notes.wav");
    writeFileSync(text, "hello, not audio at all");
    await expect(createPlayer(text)).rejects.toThrow("not a RIFF/WAVE file");
    await expect(createPlayer(join(dir, "missing.wav"))).rejects.toThrow(/ENOENT/);
  });

  it("decodes a file once and shares the samples until it changes", async () => {
    const library = new WavLibrary();
    const path = wavFile("shared.wav", { channels: 1, sampleRate: 8000, bitsPerSample: 16 }, pcm16(ramp));
    const first = await library.load(path);
    expect(await library.load(path)).toBe(first);
    writeFileSync(path, Buffer.concat([wavHeader({ channels: 1, sampleRate: 8000, bitsPerSample: 16 }, 4), pcm16([1, 2])]));
    expect([...(await library.load(path))]).toEqual([1, 2]);
  });

  it("plays the demo account's hold music", async () => {
    const music = await createPlayer(join(process.cwd(), "assets/hold-music.wav"));
    const audio = take(music, 100);
    expect(levelDbfs(audio)).toBeGreaterThan(-40);
    expect(music.ended).toBe(false);
  });
});
