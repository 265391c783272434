// The switch between a forwarded direction's two paths (path-choice.ts, PeerLeg's choosePath), made
// at every packet: thresholds that read every packet as late and one packet as calm enough move each
// direction to the sending leg's ticks at one packet and back to arrival at the next, hundreds of
// times a call. What the phones hear must stay whole through it: every sequence number, none twice,
// the tone phase-coherent over the frames played (a lost or repeated frame breaks the phase). Legs
// in this thread, both in one media worker (forwarded within the worker), and in two workers
// (forwarded across a MessageChannel); the server's clock is real and never drops a late frame.
import { describe, expect, it } from "vitest";
import { RemoteLeg, type PathChoiceOptions } from "../../server/media/index.js";
import { frameWiseShare, heardTone, measureUntilHeard } from "../helpers/tone-windows.js";
import { mediaForwardRig } from "../helpers/media-forward-rig.js";

/** Every packet a late event (lateness >= 0 > -1 ms, from the first), every packet calm (never > 1e6 ms): a switch at each packet. */
const SWITCH_EVERY_PACKET: PathChoiceOptions = { enter: 1, lateMs: -1, calm: 1, calmMs: 1e6, setup: 0 };

describe.each([0, 1, 2])("a forwarded direction switching path at every packet, %i media workers", (workers) => {
  // b's leg is made once a's is connected, beside it with one media worker; with two, the pool puts it on the other.
  const { a, b, listen } = mediaForwardRig({
    server: { maxSendLatenessMs: Infinity, forwardBridge: true, workers },
    leg: (server, name, beside) => server.createLeg({ id: name, choosePath: SWITCH_EVERY_PACKET, beside: workers === 1 ? beside : undefined }),
    inTurn: true,
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
        () => listen(phone, 500),
        (samples) => {
          const heard = heardTone(samples, tone);
          return heard.share > 0.8 && frameWiseShare(samples, tone) > 0.9 ? [] : [`${tone} Hz: share ${heard.share.toFixed(2)}, ${heard.silentFrames} silent of ${heard.frames}; ${JSON.stringify(phone.stats().fifo)}`];
        },
      );
      expect(short).toEqual([]);
    }
    // Each leg sends on what the other receives: a switch to the ticks at every other packet it
    // sends, and back at the next. The packets are counted by the sending leg itself, in the same
    // reading as its switches: with two workers the other leg's counters come from another thread,
    // written at its own ticks, and on a busy machine they ran up to a few hundred ms apart.
    for (const [i, leg] of [a.leg, b.leg].entries()) {
      const s = leg.stats();
      const packets = s.packetsSent - legsBefore[i].packetsSent;
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
