import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { toneShare } from "../../server/media/goertzel.js";
import { Mixer } from "../../server/media/mixer.js";
import { TonePlayer, parseToneStream } from "../../server/media/player.js";
import { StereoRecorder } from "../../server/media/recorder.js";
import { parseWav } from "../../server/media/wav.js";

const dir = mkdtempSync(join(tmpdir(), "media-recorder-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function channels(bytes: Buffer): { left: Int16Array; right: Int16Array } {
  const wav = parseWav(bytes);
  const frames = wav.dataLength / 4;
  const left = new Int16Array(frames);
  const right = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    left[i] = bytes.readInt16LE(wav.dataOffset + i * 4);
    right[i] = bytes.readInt16LE(wav.dataOffset + i * 4 + 2);
  }
  return { left, right };
}

const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe("StereoRecorder", () => {
  it("records a bridge: caller's voice left, what the caller hears right, with a correct header", async () => {
    const mixer = new Mixer();
    const callerPort = mixer.join("caller", new TonePlayer(parseToneStream("440")));
    const agentPort = mixer.join("agent", new TonePlayer(parseToneStream("1000")));
    const path = join(dir, "call.wav");
    const recorder = new StereoRecorder(path, { chunkBytes: 6400 });
    recorder.attach(mixer, "caller");
    for (let tick = 1; tick <= 150; tick++) {
      callerPort.read(tick);
      agentPort.read(tick);
    }
    const result = await recorder.finish();
    expect(result).toEqual({ path, durationMs: 3000, bytes: 44 + 150 * FRAME_SAMPLES * 4 });

    const bytes = readFileSync(path);
    expect(bytes.length).toBe(result.bytes);
    const wav = parseWav(bytes);
    expect(wav).toMatchObject({ formatCode: 1, channels: 2, sampleRate: 8000, bitsPerSample: 16, dataOffset: 44 });
    expect(wav.dataLength).toBe(150 * 640);
    expect(wav.riffSize).toBe(bytes.length - 8);
    expect(bytes.readUInt32LE(28)).toBe(32000); // byte rate
    expect(bytes.readUInt16LE(32)).toBe(4); // block align

    const { left, right } = channels(bytes);
    expect(toneShare(left, 440)).toBeGreaterThan(0.99);
    expect(toneShare(left, 1000)).toBeLessThan(0.001);
    expect(toneShare(right, 1000)).toBeGreaterThan(0.99);
    expect(toneShare(right, 440)).toBeLessThan(0.001);
  });

  it("puts a barging supervisor in the caller's right channel, a whisper not", async () => {
    const mixer = new Mixer();
    const ports = [
      mixer.join("caller", new TonePlayer(parseToneStream("440"))),
      mixer.join("agent", new TonePlayer(parseToneStream("1000"))),
      mixer.join("sup", new TonePlayer(parseToneStream("2000")), { kind: "monitor", mode: "whisper", target: "agent" }),
    ];
    const recorder = new StereoRecorder(join(dir, "monitored.wav"));
    recorder.attach(mixer, "caller");
    const run = (from: number) => {
      for (let tick = from; tick < from + 50; tick++) for (const p of ports) p.read(tick);
    };
    run(1);
    mixer.setMonitor("sup", "barge");
    run(51);
    const { right } = channels(readFileSync((await recorder.finish()).path));
    expect(toneShare(right.subarray(0, 8000), 2000)).toBeLessThan(0.001);
    expect(toneShare(right.subarray(8000), 2000)).toBeGreaterThan(0.4);
  });

  it("streams to disk in chunks while recording instead of holding the call in memory", async () => {
    const path = join(dir, "streamed.wav");
    const recorder = new StereoRecorder(path, { chunkBytes: 3200 });
    const frame = new Int16Array(FRAME_SAMPLES).fill(7);
    for (let i = 0; i < 25; i++) recorder.write(frame, frame); // 16,000 bytes: five chunks
    await waitFor(() => existsSync(path) && statSync(path).size >= 44 + 16000);
    expect(statSync(path).size).toBe(44 + 16000);
    // Until finished, the header says 0 bytes, and a reader takes what is there.
    const unfinished = parseWav(readFileSync(path));
    expect(unfinished.riffSize).toBe(36);
    expect(unfinished.dataLength).toBe(16000);
    recorder.write(frame, frame);
    expect((await recorder.finish()).durationMs).toBe(520);
    expect(parseWav(readFileSync(path)).riffSize).toBe(36 + 26 * 640);
    expect(() => recorder.write(frame, frame)).toThrow(/finished/);
  });

  it("writes a valid empty WAV when nothing was recorded", async () => {
    const result = await new StereoRecorder(join(dir, "empty.wav")).finish();
    expect(result).toMatchObject({ durationMs: 0, bytes: 44 });
    expect(parseWav(readFileSync(result.path)).dataLength).toBe(0);
  });

  it("reports a file it cannot write from finish()", async () => {
    const recorder = new StereoRecorder(join(dir, "no-such-dir", "x.wav"));
    recorder.write(new Int16Array(FRAME_SAMPLES), new Int16Array(FRAME_SAMPLES));
    await expect(recorder.finish()).rejects.toThrow(/ENOENT/);
  });
});
