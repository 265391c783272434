// The switch between a forwarded direction's two paths (path-choice.ts, PeerLeg's choosePath), made
// at every packet: thresholds that read every packet as late and one packet as calm enough move each
// direction to the sending leg's ticks at one packet and back to arrival at the next, hundreds of
// times a call. What the phones hear must stay whole through it: every sequence number, none twice,
// the tone phase-coherent over the frames played (a lost or repeated frame breaks the phase). Legs
// in this thread, both in one media worker (forwarded within the worker), and in two workers
// (forwarded across a MessageChannel); the server's clock is real and never drops a late frame.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MediaEngine, RemoteLeg, type AudioSource, type PathChoiceOptions, type WebRtcLeg } from "../../server/media/index.js";
import { frameWiseShare, heardTone, measureUntilHeard } from "../helpers/tone-windows.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every packet a late event (lateness >= 0 > -1 ms, from the first), every packet calm (never > 1e6 ms): a switch at each packet. */
const SWITCH_EVERY_PACKET: PathChoiceOptions = { enter: 1, lateMs: -1, calm: 1, calmMs: 1e6, setup: 0 };

describe.each([0, 1, 2])("a forwarded direction switching path at every packet, %i media workers", (workers) => {
  const server = new MediaEngine({ maxSendLatenessMs: Infinity, forwardBridge: true, workers });
  const phones = new MediaEngine({ maxSendLatenessMs: Infinity });
  let a: { phone: WebRtcLeg; leg: WebRtcLeg; hears: AudioSource };
  let b: { phone: WebRtcLeg; leg: WebRtcLeg; hears: AudioSource };

  async function pair(name: string, beside?: WebRtcLeg): Promise<{ phone: WebRtcLeg; leg: WebRtcLeg }> {
    const phone = phones.createLeg({ id: `${name}-phone` });
    const leg = server.createLeg({ id: name, choosePath: SWITCH_EVERY_PACKET, beside: workers === 1 ? beside : undefined });
    await phone.acceptAnswer(await leg.acceptOffer(await phone.createOffer()));
    while (phone.state !== "connected" || leg.state !== "connected") await sleep(10);
    return { phone, leg };
  }

  async function listen(phone: WebRtcLeg): Promise<number[]> {
    const samples: number[] = [];
    const stop = phones.clock.subscribe((tick) => samples.push(...phone.incoming.read(tick)));
    await sleep(500);
    stop();
    return samples;
  }

  beforeAll(async () => {
    const x = await pair("a");
    const y = await pair("b", x.leg);
    const mixer = server.mixer();
    a = { ...x, hears: mixer.join("a", x.leg.incoming) };
    b = { ...y, hears: mixer.join("b", y.leg.incoming) };
    a.leg.play(a.hears);
    b.leg.play(b.hears);
    a.phone.play(await phones.player("tone_stream://440"));
    b.phone.play(await phones.player("tone_stream://1000"));
    expect(server.forward({ media: a.leg, hears: a.hears }, { media: b.leg, hears: b.hears })).toBeDefined();
  });

  afterAll(async () => {
    await Promise.all([server.close(), phones.close()]);
  });

  it("each phone hears the other whole, through hundreds of switches", async () => {
    if (workers > 0) {
      const [ta, tb] = [a.leg, b.leg].map((leg) => (leg instanceof RemoteLeg ? leg.threadId : undefined));
      expect(ta).toBeDefined();
      expect(ta === tb, "legs in one worker").toBe(workers === 1);
    }
    const before = [a.phone.stats(), b.phone.stats()];
    const legsBefore = [a.leg.stats(), b.leg.stats()];
    for (const [phone, tone] of [
      [b.phone, 440],
      [a.phone, 1000],
    ] as const) {
      const { short } = await measureUntilHeard(
        () => listen(phone),
        (samples) => {
          const heard = heardTone(samples, tone);
          return heard.share > 0.8 && frameWiseShare(samples, tone) > 0.9 ? [] : [`${tone} Hz: share ${heard.share.toFixed(2)}, ${heard.silentFrames} silent of ${heard.frames}; ${JSON.stringify(phone.stats().fifo)}`];
        },
      );
      expect(short).toEqual([]);
    }
    // The counters cross from the workers with the next ticks.
    await sleep(100);
    // Each leg sends what the other receives: a switch to the ticks at every other packet of it, and back at the next.
    for (const [i, [leg, from]] of [
      [a.leg, b.leg],
      [b.leg, a.leg],
    ].entries()) {
      const s = leg.stats();
      const packets = from.stats().packetsReceived - legsBefore[1 - i].packetsReceived;
      expect(packets).toBeGreaterThan(20);
      expect(s.forwardToTicks - legsBefore[i].forwardToTicks, `switches to the ticks in ${packets} packets`).toBeGreaterThanOrEqual(Math.floor(packets / 2) - 1);
      expect(s.ticksToForward - legsBefore[i].ticksToForward, `switches back to arrival in ${packets} packets`).toBeGreaterThanOrEqual(Math.floor(packets / 2) - 2);
      expect(s.staleFramesSkipped).toBe(0);
    }
    for (const [i, phone] of [a.phone, b.phone].entries()) {
      expect(phone.stats().packetsLost - before[i].packetsLost, "sequence gaps").toBe(0);
      expect(phone.stats().packetsDiscarded - before[i].packetsDiscarded, "repeated or stale packets").toBe(0);
    }
  });
});
