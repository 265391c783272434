// Two server legs paired to forward on arrival (media/forward.ts) over real werift legs on
// 127.0.0.1: one phone speaks PCMU, the other PCMA, so each packet is transcoded on its way; the
// server's frame clock is moved by hand and held still while the phones hear each other. A leg
// told to play anything else (hold music) takes that direction back to its ticks at once, and
// back again when it plays its mix; RFC 4733 digits are still detected on a forwarding leg.
import { beforeAll, describe, expect, it } from "vitest";
import type { DtmfDigit, WebRtcLeg } from "../../server/media/index.js";
import { frameWiseShare } from "../helpers/tone-windows.js";
import { HandTime } from "../helpers/hand-time.js";
import { mediaForwardRig, sleep } from "../helpers/media-forward-rig.js";

const TONES = [440, 1000, 2000] as const;

describe.each([0, 2])("two legs forwarding on arrival, %i media workers", (workers) => {
  const time = new HandTime();
  const rig = mediaForwardRig({
    server: { maxSendLatenessMs: Infinity, forwardBridge: true, workers },
    handTime: time,
    codecs: { a: "PCMU", b: "PCMA" },
  });
  const { server, a, b, runClock } = rig;
  const digits: DtmfDigit[] = [];

  /** Share of each tone in what `phone` hears over `ms`, after 120 ms for audio in flight. */
  async function hears(phone: WebRtcLeg, ms = 500): Promise<Record<number, number>> {
    await sleep(120);
    const samples = await rig.listen(phone, ms);
    return Object.fromEntries(TONES.map((f) => [f, frameWiseShare(samples, f)]));
  }

  beforeAll(() => {
    a.leg.on("dtmf", (d) => digits.push(d));
  });

  it("pairs the legs, and each phone hears the other through PCMU<->PCMA with the server's clock still", async () => {
    expect(rig.forwarding).toBeDefined();
    expect([a.leg.codec, b.leg.codec]).toEqual(["PCMU", "PCMA"]);
    const still = time.t;
    const [atA, atB] = await Promise.all([hears(a.phone), hears(b.phone)]);
    expect(time.t).toBe(still);
    expect(atA[1000]).toBeGreaterThan(0.9);
    expect(atB[440]).toBeGreaterThan(0.9);
    expect(atA[440] + atB[1000]).toBeLessThan(0.05);
  });

  it("a leg playing something else sends it on its ticks; playing its mix again, it forwards again", async () => {
    runClock(true);
    b.leg.play(await server.player("tone_stream://2000"));
    const [atA, atB] = await Promise.all([hears(a.phone), hears(b.phone)]);
    expect(atB[2000]).toBeGreaterThan(0.9);
    expect(atB[440]).toBeLessThan(0.05);
    // The other direction forwards on.
    expect(atA[1000]).toBeGreaterThan(0.9);
    b.leg.play(b.hears);
    runClock(false);
    const again = await hears(b.phone);
    expect(again[440]).toBeGreaterThan(0.9);
    expect(again[2000]).toBeLessThan(0.05);
    for (const phone of [a.phone, b.phone]) {
      expect(phone.stats().packetsLost).toBe(0);
      expect(phone.stats().packetsDiscarded).toBe(0);
    }
  });

  it("a forwarding leg still detects the digits its phone sends", async () => {
    await a.phone.sendDtmf("5");
    for (let i = 0; i < 100 && digits.length === 0; i++) await sleep(20);
    expect(digits.map((d) => d.digit)).toEqual(["5"]);
  });
});
