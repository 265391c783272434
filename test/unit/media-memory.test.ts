// Media with both ends inside the server (a loopback's channels, a simulated caller or bot with
// direct media): what one side plays the other hears, one frame per tick read once, a loop of
// sides read last tick's frame instead of recursing, digits cross on later turns, a closed side
// passes nothing.
import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES, silence, type AudioSource } from "../../server/media/audio-frame.js";
import type { DtmfDigit } from "../../server/media/dtmf.js";
import type { CallMedia } from "../../server/media/leg-api.js";
import { MEMORY_DTMF_MS, memoryMediaPair } from "../../server/media/memory-media.js";

/** A source whose frame at tick t holds t in every sample; counts its reads. */
function ticking(): AudioSource & { reads: number } {
  const source = {
    reads: 0,
    ended: false,
    read(tick: number): Int16Array {
      source.reads++;
      return new Int16Array(FRAME_SAMPLES).fill(tick);
    },
  };
  return source;
}

describe("memory media", () => {
  it("passes what one side plays to the other, each way, the source read once per tick", () => {
    const [a, b] = memoryMediaPair();
    const voice = ticking();
    a.play(voice);
    expect(Array.from(new Set(b.incoming.read(7)))).toEqual([7]);
    expect(Array.from(new Set(b.incoming.read(7)))).toEqual([7]);
    expect(voice.reads).toBe(1);
    expect(Array.from(new Set(b.incoming.read(8)))).toEqual([8]);
    expect(voice.reads).toBe(2);
    // Nothing played the other way: silence.
    expect(a.incoming.read(8).every((s) => s === 0)).toBe(true);
    const back = ticking();
    b.play(back);
    expect(Array.from(new Set(a.incoming.read(9)))).toEqual([9]);
  });

  it("reads last tick's frame where sides play each other in a loop, instead of recursing", () => {
    const [x1, y1] = memoryMediaPair();
    const [x2, y2] = memoryMediaPair();
    // y1 hears x1, which plays what y2 hears, which is x2, which plays what y1 hears.
    x1.play(y2.incoming);
    x2.play(y1.incoming);
    expect(() => y1.incoming.read(1)).not.toThrow();
    expect(y1.incoming.read(1)).toHaveLength(FRAME_SAMPLES);
  });

  it("sends digits to the peer on later turns, in order, with the memory duration", async () => {
    const [a, b] = memoryMediaPair();
    const heard: DtmfDigit[] = [];
    b.on("dtmf", (digit) => heard.push(digit));
    const sent = a.sendDtmf("1#");
    expect(heard).toEqual([]);
    await sent;
    expect(heard).toEqual([
      { digit: "1", durationMs: MEMORY_DTMF_MS },
      { digit: "#", durationMs: MEMORY_DTMF_MS },
    ]);
  });

  it("passes nothing once a side is closed: silence to its peer, no digits, plays ignored", async () => {
    const [a, b] = memoryMediaPair();
    a.play(ticking());
    await a.close();
    expect(a.closed).toBe(true);
    expect(b.incoming.read(3).every((s) => s === 0)).toBe(true);
    a.play(ticking());
    expect(b.incoming.read(4).every((s) => s === 0)).toBe(true);
    const heard: DtmfDigit[] = [];
    a.on("dtmf", (digit) => heard.push(digit));
    await b.sendDtmf("5");
    await a.sendDtmf("6");
    expect(heard).toEqual([]);
    // No SDP crosses memory: a channel's offer and answer are empty.
    const asChannelMedia: CallMedia = b;
    expect(await asChannelMedia.acceptOffer("v=0")).toBe("");
    b.play(silence);
  });
});
