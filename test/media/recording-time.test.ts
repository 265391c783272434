// A recording keeps the call's time: one frame per frame-clock tick from the one after it is
// attached, silence for ticks the clock skipped after a stall, each frame at its tick's place.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { FrameClock } from "../../server/media/frame-clock.js";
import { toneShare } from "../../server/media/goertzel.js";
import { Mixer } from "../../server/media/mixer.js";
import { TonePlayer, parseToneStream } from "../../server/media/player.js";
import { StereoRecorder } from "../../server/media/recorder.js";
import { parseWav } from "../../server/media/wav.js";
import { HandTime } from "../helpers/hand-time.js";

const dir = mkdtempSync(join(tmpdir(), "recording-time-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** Frame `index` of one channel (0 left, 1 right) of a stereo 16-bit WAV. */
function frameOf(bytes: Buffer, dataOffset: number, index: number, channel: 0 | 1): Int16Array {
  const frame = new Int16Array(FRAME_SAMPLES);
  for (let i = 0; i < FRAME_SAMPLES; i++) frame[i] = bytes.readInt16LE(dataOffset + (index * FRAME_SAMPLES + i) * 4 + channel * 2);
  return frame;
}

describe("a recording on the frame clock", () => {
  it("lasts as many frames as ticks went by, with silence where the clock skipped ticks after a stall", async () => {
    const time = new HandTime();
    const clock = new FrameClock({ time, maxCatchUpTicks: 10 });
    const mixer = new Mixer();
    // The bridge's two legs: each reads what its member hears once per tick, as a leg sends it.
    const ports = [mixer.join("caller", new TonePlayer(parseToneStream("440"))), mixer.join("agent", new TonePlayer(parseToneStream("1000")))];
    const stop = clock.subscribe((tick) => {
      for (const port of ports) port.read(tick);
    });
    time.advanceTo(200);
    const recorder = new StereoRecorder(join(dir, "stalled.wav"), { clock });
    const attachedTick = clock.tick;
    recorder.attach(mixer, "caller");
    time.advanceTo(1200);
    const beforeStall = clock.tick;
    time.stall(500); // 25 ticks owed, more than the clock catches up: it skips ahead
    time.advanceTo(2400);
    const skipped = clock.stats().skipped;
    const endTick = clock.tick;
    stop();
    const result = await recorder.finish();

    expect(skipped).toBeGreaterThan(0);
    expect(result.durationMs).toBe((endTick - attachedTick) * 20);
    const bytes = readFileSync(result.path);
    const { dataOffset, dataLength } = parseWav(bytes);
    expect(dataLength).toBe((endTick - attachedTick) * FRAME_SAMPLES * 4);
    // Frame i holds tick attachedTick + 1 + i: the tones before the stall, silence for the
    // skipped ticks, the tones again from the first tick after them.
    const indexOf = (tick: number) => tick - attachedTick - 1;
    const resumed = beforeStall + skipped + 1;
    for (const tick of [attachedTick + 1, beforeStall, resumed, endTick]) {
      expect(toneShare(frameOf(bytes, dataOffset, indexOf(tick), 0), 440)).toBeGreaterThan(0.9);
      expect(toneShare(frameOf(bytes, dataOffset, indexOf(tick), 1), 1000)).toBeGreaterThan(0.9);
    }
    for (let tick = resumed - skipped; tick < resumed; tick++) {
      expect(frameOf(bytes, dataOffset, indexOf(tick), 0).every((s) => s === 0)).toBe(true);
      expect(frameOf(bytes, dataOffset, indexOf(tick), 1).every((s) => s === 0)).toBe(true);
    }
  });

  it("starts at the tick after the one current as it attaches, though the clock skips ahead at once", async () => {
    const time = new HandTime();
    const clock = new FrameClock({ time, maxCatchUpTicks: 10 });
    const mixer = new Mixer();
    const ports = [mixer.join("caller", new TonePlayer(parseToneStream("440"))), mixer.join("agent", new TonePlayer(parseToneStream("1000")))];
    const stop = clock.subscribe((tick) => {
      for (const port of ports) port.read(tick);
    });
    time.advanceTo(200);
    const recorder = new StereoRecorder(join(dir, "stalled-at-start.wav"), { clock });
    const attachedTick = clock.tick;
    recorder.attach(mixer, "caller");
    time.stall(400); // the first tick mixed after the attach comes 20 ticks on
    time.advanceTo(1000);
    const endTick = clock.tick;
    stop();
    expect(clock.stats().skipped).toBeGreaterThan(0);
    const result = await recorder.finish();
    expect(result.durationMs).toBe((endTick - attachedTick) * 20);
    const { dataOffset } = parseWav(readFileSync(result.path));
    expect(frameOf(readFileSync(result.path), dataOffset, 0, 0).every((s) => s === 0)).toBe(true);
  });
});
