// The forward path's per-direction choice (path-choice.ts, PeerLeg's choosePath): a direction whose
// packets the server gets to late goes through a receive buffer of the sending leg, played on the
// frame clock's ticks, and back to forwarding on arrival once its packets come on time again; the
// other direction is not moved. Two server legs (in this thread) paired to forward over real werift
// legs on 127.0.0.1; each server leg reads arrivals on a time of its own moved by hand: held still,
// every packet comes earlier than the last against the stream (none late, whatever the machine's
// load); moved 55 ms at once, the next packet reads 35 ms late. The frame clock's time follows the
// real time in steps (its ticks fire at their due time on it: never late).
import { afterAll, describe, expect, it } from "vitest";
import { PeerLeg, type WebRtcLeg } from "../../server/media/index.js";
import { frameWiseShare, heardTone, measureUntilHeard } from "../helpers/tone-windows.js";
import { HandTime } from "../helpers/hand-time.js";
import { mediaForwardRig, received, sleep, until } from "../helpers/media-forward-rig.js";

describe("a forwarding pair whose legs choose each direction's path from its lateness", () => {
  const clockTime = new HandTime();
  // What each server leg reads the arrival of the packets it is forwarded on.
  const arrivalA = new HandTime();
  const arrivalB = new HandTime();
  // The frame clock's time follows the real time (so its ticks keep the phones' pace) in steps: each
  // tick fires at its due time on it, never late, however late the step came.
  const start = performance.now();
  const pump = setInterval(() => clockTime.advanceTo(Math.floor(performance.now() - start)), 5);
  // The server legs are made outside the engine (each on its arrival time); the rig closes them.
  const { a, b, phones, listen } = mediaForwardRig({
    server: { frameClock: { time: clockTime }, forwardBridge: true },
    leg: (server, name) => new PeerLeg({ id: name, clock: server.clock, time: name === "a" ? arrivalA : arrivalB, choosePath: true }),
  });

  /** Whether `phone` hears `tone` whole: phase-coherent over the frames played (a lost or repeated frame breaks it). */
  async function hearsWhole(phone: WebRtcLeg, tone: number): Promise<string[]> {
    const { short } = await measureUntilHeard(
      () => listen(phone, 400),
      (samples) => {
        const heard = heardTone(samples, tone);
        return heard.share > 0.8 && frameWiseShare(samples, tone) > 0.8 ? [] : [`${tone} Hz: share ${heard.share.toFixed(2)}, ${heard.silentFrames} silent of ${heard.frames}`];
      },
    );
    return short;
  }

  afterAll(() => {
    clearInterval(pump);
  });

  it("forwards both directions on arrival while the packets come on time", async () => {
    const [sa, sb] = [a.leg.stats(), b.leg.stats()];
    // Past the streams' first 50 packets (a call's set-up), which count no late event.
    await Promise.all([received(a.leg, sa, 60), received(b.leg, sb, 60)]);
    for (const leg of [a.leg, b.leg]) {
      expect(leg.stats().forwardToTicks).toBe(0);
      expect(leg.stats().staleFramesSkipped).toBe(0);
    }
    expect(await hearsWhole(b.phone, 440)).toEqual([]);
  });

  it("a direction whose packets run late goes to the ticks, the other stays; back on arrival once on time; the audio is whole through both switches", async () => {
    const [sa, sb] = [a.leg.stats(), b.leg.stats()];
    const phoneB = b.phone.stats();
    // Leg b sends what leg a receives (phone A's 440 Hz to phone B): three packets late within a
    // second, each 35 ms, on b's arrival time only.
    for (let i = 0; i < 3; i++) {
      const before = a.leg.stats();
      arrivalB.advanceTo(arrivalB.t + 55);
      await received(a.leg, before, 3);
    }
    await received(a.leg, a.leg.stats(), 5);
    expect(b.leg.stats().forwardToTicks - sb.forwardToTicks, "direction A to B on the ticks").toBe(1);
    expect(a.leg.stats().forwardToTicks - sa.forwardToTicks, "direction B to A stays on arrival").toBe(0);
    // Phone B hears phone A through b's receive buffer on the ticks; phone A hears B forwarded.
    expect(await hearsWhole(b.phone, 440)).toEqual([]);
    expect(await hearsWhole(a.phone, 1000)).toEqual([]);
    expect(b.leg.stats().ticksToForward - sb.ticksToForward, "still on the ticks").toBe(0);

    // On time again (b's arrival time held still): after 150 packets in a row, arrival again.
    // Phone B's audio across the switch back, recorded whole.
    const span: number[] = [];
    const stop = phones.clock.subscribe((tick) => span.push(...b.phone.incoming.read(tick)));
    await until(() => b.leg.stats().ticksToForward > sb.ticksToForward);
    await sleep(400);
    stop();
    // What phone B heard across the switch back is phone A's tone and nothing else (frame by frame:
    // the ticks' frames, those sent at the switch, then the forwarded ones).
    expect(frameWiseShare(span, 440), "440 Hz across the switch back").toBeGreaterThan(0.9);
    expect(b.leg.stats().ticksToForward - sb.ticksToForward).toBe(1);
    expect(b.leg.stats().forwardToTicks - sb.forwardToTicks, "no flapping").toBe(1);
    expect(await hearsWhole(b.phone, 440)).toEqual([]);
    // No packet not sent at either switch: every sequence number reached phone B, none repeated.
    await received(b.phone, b.phone.stats(), 5);
    const after = b.phone.stats();
    expect(after.packetsLost - phoneB.packetsLost, "sequence gaps at phone B").toBe(0);
    expect(after.packetsDiscarded - phoneB.packetsDiscarded, "repeated or stale packets at phone B").toBe(0);
    expect(b.leg.stats().staleFramesSkipped - sb.staleFramesSkipped, "frames not sent").toBe(0);
  }, 60_000);
});
