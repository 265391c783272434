// The forward path's late rule (media/leg.ts, maxForwardLatenessMs): a packet the server itself got
// to later than the bound (20 ms here, 60 ms by default) after the stream's earliest, relative to
// their RTP timestamps, is not forwarded, and counted; a run of late packets steps the timeline. Two server legs paired to forward on arrival over real werift legs on
// 127.0.0.1, in this thread (the legs read arrival times on the server's hand-moved time): with that
// time held still every packet comes earlier than the last against the stream, so none is late
// whatever the machine's load; moving it 55 ms at once stands for a server that got to the next
// packet 35 ms late (55 ms less the packet's own 20 ms): dropped under a 20 ms bound, sent under 60.
import { describe, expect, it } from "vitest";
import { frameWiseShare } from "../helpers/tone-windows.js";
import { HandTime } from "../helpers/hand-time.js";
import { mediaForwardRig, received, until } from "../helpers/media-forward-rig.js";

describe.each([
  { name: "a bound of one frame (20 ms)", maxForwardLatenessMs: 20, dropped: 1 },
  { name: "the default bound (60 ms)", maxForwardLatenessMs: undefined, dropped: 0 },
])("a forwarding leg's late rule, $name", ({ maxForwardLatenessMs, dropped }) => {
  const time = new HandTime();
  // The server's legs have the tick path's default bound; the phones, in this process, have none.
  const { a, b, listen } = mediaForwardRig({ server: { forwardBridge: true, maxForwardLatenessMs }, handTime: time });

  it("forwards every packet while the server's time stands still against the stream", async () => {
    const [sa, sb] = [a.leg.stats(), b.leg.stats()];
    await Promise.all([received(a.leg, sa, 10), received(b.leg, sb, 10)]);
    expect(a.leg.stats().staleFramesSkipped - sa.staleFramesSkipped).toBe(0);
    expect(b.leg.stats().staleFramesSkipped - sb.staleFramesSkipped).toBe(0);
    expect(a.leg.stats().packetsSent - sa.packetsSent).toBeGreaterThanOrEqual(10);
  });

  it(`a packet the server got to 35 ms late is ${dropped ? "not forwarded, and counted" : "forwarded"}; the next ones are`, async () => {
    const [sa, sb] = [a.leg.stats(), b.leg.stats()];
    // The server's time moves 55 ms while the stream's moves a frame: the next packet each leg
    // forwards is 35 ms late against the one before it; the one after that, 15 ms (a frame less).
    time.advanceTo(time.t + 55);
    await Promise.all([received(a.leg, sa, 5), received(b.leg, sb, 5)]);
    // Each leg sends the other's packets: a's late packet is dropped (or sent) by b, and b's by a.
    for (const [leg, before] of [[a.leg, sa], [b.leg, sb]] as const) {
      const after = leg.stats();
      expect(after.forwardLateOver20Ms - before.forwardLateOver20Ms, "packets more than 20 ms late").toBe(1);
      expect(after.forwardLateOver10Ms - before.forwardLateOver10Ms, "packets more than 10 ms late").toBe(2);
      expect(after.forwardLateOver40Ms - before.forwardLateOver40Ms).toBe(0);
      expect(after.staleFramesSkipped - before.staleFramesSkipped, "late packets not forwarded").toBe(dropped);
    }
    // The phones hear each other on: what the legs forward after the late packet.
    expect(frameWiseShare(await listen(a.phone, 300), 1000)).toBeGreaterThan(0.5);
  });

  it("a run of ten late packets is a new delay of the path: the outgoing timeline steps forward, the phone sees lost packets", async () => {
    const [sa, sb] = [a.leg.stats(), b.leg.stats()];
    const [pa, pb] = [a.phone.stats(), b.phone.stats()];
    // 300 ms at once: the k-th packet after it comes 300 - 20k ms late against the one before the
    // jump; the first nine (280-120 ms late) are not forwarded, the tenth (100 ms late) ends the
    // run: the path's new floor, forwarded with the leg's timeline 5 frames (100 ms) further on.
    time.advanceTo(time.t + 300);
    await Promise.all([received(a.leg, sa, 15), received(b.leg, sb, 15)]);
    for (const [leg, before] of [[a.leg, sa], [b.leg, sb]] as const) {
      const after = leg.stats();
      expect(after.staleFramesSkipped - before.staleFramesSkipped, "late packets not forwarded").toBe(9);
      expect(after.forwardSteps - before.forwardSteps, "steps of the outgoing timeline").toBe(1);
    }
    // Each phone: nine packets not sent and five frames stepped over, each a sequence number: 14 lost.
    await until(() => a.phone.stats().packetsReceived >= pa.packetsReceived + 15 && b.phone.stats().packetsReceived >= pb.packetsReceived + 15);
    expect(a.phone.stats().packetsLost - pa.packetsLost).toBe(14);
    expect(b.phone.stats().packetsLost - pb.packetsLost).toBe(14);
  });
});
