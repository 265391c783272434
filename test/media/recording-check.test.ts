// The media bench's recording check (bench/lib/recording-check.ts) on recordings made by the real
// mixer and recorder, the caller's voice coming through a real receive buffer fed frame by frame.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkRecording, MixedSilence } from "../../bench/lib/recording-check.js";
import { FRAME_SAMPLES } from "../../server/media/audio-frame.js";
import { toneShare } from "../../server/media/goertzel.js";
import { Mixer } from "../../server/media/mixer.js";
import { TonePlayer, parseToneStream } from "../../server/media/player.js";
import { ReceiveBuffer } from "../../server/media/receive-buffer.js";
import { StereoRecorder } from "../../server/media/recorder.js";
import { parseWav } from "../../server/media/wav.js";

const dir = mkdtempSync(join(tmpdir(), "recording-check-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CALLER = 440;
const AGENT = 1000;
const TICKS = 150;

interface CallOptions {
  /** Ticks whose packet comes with the next one: the FIFO runs dry, primes again, the tone resumes later. */
  late?: number[];
  /** Where the far end's stream skips `samples` of its tone: at sample `at` of tick `tick`'s packet. */
  jump?: { tick: number; at: number; samples: number };
  /** The member the recorder records. */
  recorded?: string;
}

/** The far end's 440 Hz, sample by sample, at the level tone_stream:// plays. */
function farTone(): (count: number, skip?: number) => Int16Array {
  let n = 0;
  return (count, skip = 0) => {
    n += skip;
    const out = Int16Array.from({ length: count }, (_, i) => Math.round(7300 * Math.sin((2 * Math.PI * CALLER * (n + i)) / 8000)));
    n += count;
    return out;
  };
}

/**
 * A bridged call of TICKS ticks recorded from its first: the caller's 440 Hz arrives through a
 * receive buffer, a packet per tick as `options` say; the agent's 1000 Hz is played straight in.
 */
async function recordCall(name: string, { late = [], jump, recorded = "caller" }: CallOptions = {}) {
  const far = farTone();
  const received = new ReceiveBuffer();
  const mixer = new Mixer();
  const ports = [mixer.join("caller", { read: (tick) => received.frameFor(tick), ended: false }), mixer.join("agent", new TonePlayer(parseToneStream(String(AGENT))))];
  const recorder = new StereoRecorder(join(dir, `${name}.wav`));
  recorder.attach(mixer, recorded);
  const mixed = new MixedSilence(mixer, "caller", 0);
  let timestamp = 0;
  let owed = 0;
  for (let tick = 1; tick <= TICKS; tick++) {
    owed++;
    if (!late.includes(tick)) {
      for (; owed > 0; owed--) {
        const packet = new Int16Array(FRAME_SAMPLES);
        if (jump?.tick === tick) {
          packet.set(far(jump.at));
          packet.set(far(FRAME_SAMPLES - jump.at, jump.samples), jump.at);
        } else {
          packet.set(far(FRAME_SAMPLES));
        }
        received.accept(packet, timestamp);
        timestamp += FRAME_SAMPLES;
      }
    }
    for (const port of ports) port.read(tick);
  }
  const result = await recorder.finish();
  return { bytes: readFileSync(result.path), expectation: mixed.expectation(TICKS, CALLER, AGENT), underruns: received.stats.underruns };
}

/** One channel of the samples of a stereo WAV, from sample `from` for `count`. */
function channel(bytes: Buffer, which: 0 | 1, from: number, count: number): Int16Array {
  const { dataOffset } = parseWav(bytes);
  return Int16Array.from({ length: count }, (_, i) => bytes.readInt16LE(dataOffset + (from + i) * 4 + which * 2));
}

describe("the media bench's recording check", () => {
  it("passes a faithful recording of a call whose caller's audio was late once (its FIFO ran dry), which one tone share over a second failed", async () => {
    const { bytes, expectation, underruns } = await recordCall("late", { late: [75, 76] });
    expect(underruns).toBe(1);
    expect(checkRecording(bytes, expectation)).toEqual({ ok: true, problems: [], frames: TICKS });
    // The check before: one tone share over the recording's second second. The silence and the
    // tone resuming later turn 440 Hz's phase, and the second's two parts cancel.
    expect(toneShare(channel(bytes, 0, 8000, 8000), CALLER)).toBeLessThan(0.9);
    expect(toneShare(channel(bytes, 1, 8000, 8000), AGENT)).toBeGreaterThan(0.9);
  });

  it("passes a recording in which the caller's tone jumps half a cycle inside a frame, as the far end sent it", async () => {
    // Half a 440 Hz cycle skipped a little after mid-frame: one share over that frame cancels.
    const { bytes, expectation } = await recordCall("jump", { jump: { tick: 75, at: 100, samples: 9 } });
    // Tick 75's packet plays a frame or two later, by the receive buffer's depth then: one of
    // the recording's frames around it holds the jump.
    const shares = [74, 75, 76, 77].map((at) => toneShare(channel(bytes, 0, at * FRAME_SAMPLES, FRAME_SAMPLES), CALLER));
    expect(Math.min(...shares), `440 Hz shares of frames 74-77: ${shares.map((x) => x.toFixed(2)).join(", ")}`).toBeLessThan(0.5);
    expect(checkRecording(bytes, expectation)).toEqual({ ok: true, problems: [], frames: TICKS });
  });

  it("fails a recording whose channels are the other way round", async () => {
    const { bytes, expectation } = await recordCall("swapped", { recorded: "agent" });
    const check = checkRecording(bytes, expectation);
    expect(check.ok).toBe(false);
    expect(check.problems.join("\n")).toMatch(/^left: \d+ frames without 440 Hz alone/m);
    expect(check.problems.join("\n")).toMatch(/^right: \d+ frames without 1000 Hz alone/m);
  });

  it("fails a recording longer or shorter than the ticks it was attached by more than a frame", async () => {
    const { bytes, expectation } = await recordCall("length");
    expect(checkRecording(bytes, { ...expectation, ticks: TICKS + 1 }).ok).toBe(true);
    expect(checkRecording(bytes, { ...expectation, ticks: TICKS + 2 }).problems).toEqual([`${TICKS} frames for ${TICKS + 2} ticks recorded`]);
    expect(checkRecording(bytes, { ...expectation, ticks: TICKS - 2 }).ok).toBe(false);
  });

  it("fails a recording with silence where the bridge had audio, or audio where it had silence", async () => {
    const faithful = await recordCall("gap", { late: [75, 76] });
    // The expectation of a call that was never late: the recording's silence is out of place.
    const onTime = await recordCall("on-time");
    const check = checkRecording(faithful.bytes, onTime.expectation);
    expect(check.ok).toBe(false);
    expect(check.problems).toEqual([expect.stringMatching(/^left: \d+ frames silent where the bridge had audio or the reverse \(first at 1\.(?:4[6-9]|5\d) s;/)]);
    expect(checkRecording(onTime.bytes, faithful.expectation).ok).toBe(false);
  });

  it("fails a file whose header was never finished", async () => {
    const { bytes, expectation } = await recordCall("unfinished");
    bytes.writeUInt32LE(0, 4);
    bytes.writeUInt32LE(0, 40);
    expect(checkRecording(bytes, expectation).problems).toEqual([expect.stringMatching(/^header sizes \(RIFF 0, data \d+\)/)]);
  });

  it("records which ticks were silent for the member, a skipped tick as silence, past its first storage and from the tick after it attached", () => {
    const mixer = new Mixer();
    const tone = new Int16Array(FRAME_SAMPLES).fill(1000);
    const lastSampleOnly = new Int16Array(FRAME_SAMPLES);
    lastSampleOnly[FRAME_SAMPLES - 1] = 7;
    // The caller says nothing at every 7th tick, only its last sample at every 11th; the agent nothing at every 5th.
    const callerSays = (tick: number) => (tick % 7 === 0 ? new Int16Array(FRAME_SAMPLES) : tick % 11 === 0 ? lastSampleOnly : tone);
    const ports = [
      mixer.join("caller", { read: callerSays, ended: false }),
      mixer.join("agent", { read: (tick) => (tick % 5 === 0 ? new Int16Array(FRAME_SAMPLES) : tone), ended: false }),
    ];
    const attached = 3;
    const mixed = new MixedSilence(mixer, "caller", attached);
    const last = 3000;
    // The clock skips every 13th tick: the bridge is never mixed then. Ticks up to the attaching one are mixed too.
    for (let tick = 1; tick <= last + 5; tick++) if (tick % 13 !== 0) for (const port of ports) port.read(tick);
    const expectation = mixed.expectation(last, CALLER, AGENT);
    const ticks = Array.from({ length: last - attached }, (_, i) => attached + 1 + i);
    expect(expectation.ticks).toBe(last - attached);
    expect(expectation.left.silent).toEqual(ticks.map((t) => t % 13 === 0 || t % 7 === 0));
    expect(expectation.right.silent).toEqual(ticks.map((t) => t % 13 === 0 || t % 5 === 0));
    expect(mixed.lastTick).toBe(last + 5);
  });
});
