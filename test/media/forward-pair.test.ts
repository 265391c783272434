// Two server legs paired to forward on arrival (media/forward.ts) over real werift legs on
// 127.0.0.1: one phone speaks PCMU, the other PCMA, so each packet is transcoded on its way; the
// server's frame clock is moved by hand and held still while the phones hear each other. A leg
// told to play anything else (hold music) takes that direction back to its ticks at once, and
// back again when it plays its mix; RFC 4733 digits are still detected on a forwarding leg.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MediaEngine, type AudioSource, type DtmfDigit, type Forwarding, type WebRtcLeg } from "../../server/media/index.js";
import { frameWiseShare } from "../helpers/tone-windows.js";
import { HandTime } from "../helpers/hand-time.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TONES = [440, 1000, 2000] as const;

describe.each([0, 2])("two legs forwarding on arrival, %i media workers", (workers) => {
  const time = new HandTime();
  let pump: ReturnType<typeof setInterval> | undefined;
  const runClock = (on: boolean): void => {
    if (pump) clearInterval(pump);
    pump = on ? setInterval(() => time.advanceTo(time.t + 20), 20) : undefined;
  };
  const server = new MediaEngine({ maxSendLatenessMs: Infinity, frameClock: { time }, forwardBridge: true, workers });
  const phones = new MediaEngine({ maxSendLatenessMs: Infinity });
  let a: { phone: WebRtcLeg; leg: WebRtcLeg; hears: AudioSource };
  let b: { phone: WebRtcLeg; leg: WebRtcLeg; hears: AudioSource };
  let forwarding: Forwarding | undefined;
  const digits: DtmfDigit[] = [];

  async function pair(name: string, codec: "PCMU" | "PCMA"): Promise<{ phone: WebRtcLeg; leg: WebRtcLeg }> {
    const phone = phones.createLeg({ id: `${name}-phone`, codecs: [codec] });
    const leg = server.createLeg({ id: name });
    await phone.acceptAnswer(await leg.acceptOffer(await phone.createOffer()));
    while (phone.state !== "connected" || leg.state !== "connected") await sleep(10);
    return { phone, leg };
  }

  /** Share of each tone in what `phone` hears over `ms`, after 120 ms for audio in flight. */
  async function hears(phone: WebRtcLeg, ms = 500): Promise<Record<number, number>> {
    await sleep(120);
    const samples: number[] = [];
    const stop = phones.clock.subscribe((tick) => samples.push(...phone.incoming.read(tick)));
    await sleep(ms);
    stop();
    return Object.fromEntries(TONES.map((f) => [f, frameWiseShare(samples, f)]));
  }

  beforeAll(async () => {
    runClock(true);
    const [x, y] = await Promise.all([pair("a", "PCMU"), pair("b", "PCMA")]);
    const mixer = server.mixer();
    a = { ...x, hears: mixer.join("a", x.leg.incoming) };
    b = { ...y, hears: mixer.join("b", y.leg.incoming) };
    a.leg.play(a.hears);
    b.leg.play(b.hears);
    a.phone.play(await phones.player("tone_stream://440"));
    b.phone.play(await phones.player("tone_stream://1000"));
    a.leg.on("dtmf", (d) => digits.push(d));
    forwarding = server.forward({ media: a.leg, hears: a.hears }, { media: b.leg, hears: b.hears });
    runClock(false);
  });

  afterAll(async () => {
    runClock(false);
    forwarding?.end();
    await Promise.all([server.close(), phones.close()]);
  });

  it("pairs the legs, and each phone hears the other through PCMU<->PCMA with the server's clock still", async () => {
    expect(forwarding).toBeDefined();
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
