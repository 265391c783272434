// A scripted caller's digits step answers a prompt once the prompt is over: sound, then half a
// second of quiet. What it hears is fed frame by frame on a tick source the test drives, so every
// case is exact: hold music giving way to an agent whose microphone blips (Chromium's fake device
// beeps 20 ms every 500 ms), a real prompt, and blips alone (no prompt at all).
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../server/clock-control.js";
import { FRAME_SAMPLES, type AudioSource } from "../../server/media/index.js";
import { CallerConduct, type ConductCall } from "../../server/sim/conduct.js";

/** A 400 Hz tone frame at about -16 dBFS, and silence. */
const LOUD = Int16Array.from({ length: FRAME_SAMPLES }, (_, i) => Math.round(5000 * Math.sin((2 * Math.PI * 400 * i) / 8000)));
const QUIET = new Int16Array(FRAME_SAMPLES);

/** A caller whose only step is pressing `42` at a prompt, hearing `heard(tick)`; the ticks are moved by hand. */
function caller(heard: (tick: number) => boolean) {
  const listeners = new Set<(tick: number) => void>();
  let tick = 0;
  const sent: { digits: string; tick: number }[] = [];
  const incoming: AudioSource = { read: (t) => (heard(t) ? LOUD : QUIET), ended: false };
  const call: ConductCall = {
    clock: new ManualClock(0),
    ticks: {
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    incoming,
    player: () => Promise.reject(new Error("no lines here")),
    play: () => undefined,
    sendDtmf: async (digits) => {
      sent.push({ digits, tick });
    },
    hangup: () => undefined,
    onError: (err) => {
      throw err;
    },
  };
  const conduct = new CallerConduct({ steps: [{ kind: "digits", digits: "42" }] }, call, () => undefined);
  conduct.answered();
  return {
    sent,
    /** Runs `n` ticks, letting the conduct's promises settle after each. */
    async run(n: number): Promise<void> {
      for (let i = 0; i < n; i++) {
        tick += 1;
        for (const listener of [...listeners]) listener(tick);
        await Promise.resolve();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

/** A 20 ms beep every 25 frames (500 ms), as Chromium's fake microphone makes. */
const beeps = (tick: number): boolean => tick % 25 === 0;

describe("a caller's digits at a prompt", () => {
  it("presses them half a second after hold music gives way to an agent whose microphone blips", async () => {
    // Music for 40 frames, then the agent: a 1-frame beep every 25 frames.
    const c = caller((tick) => tick <= 40 || beeps(tick));
    await c.run(40);
    expect(c.sent).toEqual([]);
    await c.run(24);
    expect(c.sent).toEqual([]);
    await c.run(1);
    // 25 frames after the music's last: the beep at 50 is counted quiet, not a new prompt.
    expect(c.sent).toEqual([{ digits: "42", tick: 65 }]);
    await c.run(100);
    expect(c.sent).toHaveLength(1);
  });

  it("waits for a prompt of real sound when it hears only blips, then presses once it is over", async () => {
    // Beeps from the start (answered at once by a blipping microphone), a 1 s prompt at 110-159.
    const c = caller((tick) => beeps(tick) || (tick >= 110 && tick < 160));
    await c.run(109);
    expect(c.sent).toEqual([]);
    await c.run(50 + 24);
    expect(c.sent).toEqual([]);
    await c.run(1);
    // The beep at 175 inside the half second after it is quiet time.
    expect(c.sent).toEqual([{ digits: "42", tick: 184 }]);
  });

  it("does not take two blips in a row for the end of a prompt's pause: a loud run of three frames is sound", async () => {
    // Music to 40, quiet, then three loud frames at 55-57 (sound: the quiet starts again), quiet after.
    const c = caller((tick) => tick <= 40 || (tick >= 55 && tick <= 57));
    await c.run(57 + 24);
    expect(c.sent).toEqual([]);
    await c.run(1);
    expect(c.sent).toEqual([{ digits: "42", tick: 82 }]);
  });
});
