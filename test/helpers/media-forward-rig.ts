// The rig of the media forwarding tests (test/media/forward-*.test.ts): two server legs, each
// connected over real werift legs on 127.0.0.1 to a phone on a media engine of its own (a real frame
// clock, no send bound), joined in one mixer and each playing its mix, phone A saying 440 Hz and
// phone B 1000 Hz, then paired by the server's engine to forward on arrival. Registers its own
// beforeAll/afterAll in the calling describe block; the calls-level rig (a call engine, fake
// signalling, a seeded store) is test/helpers/forward-bridge-rig.ts.
import { afterAll, beforeAll, expect } from "vitest";
import { MediaEngine, type AudioSource, type Forwarding, type G711Codec, type LegStats, type MediaEngineOptions, type WebRtcLeg } from "../../server/media/index.js";
import type { HandTime } from "./hand-time.js";

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits, with no bound on the time it takes, until `done`. */
export async function until(done: () => boolean): Promise<void> {
  while (!done()) await sleep(10);
}

/** Waits (no bound on the time it takes) until `leg` has received `more` packets after `from`. */
export async function received(leg: WebRtcLeg, from: LegStats, more: number): Promise<void> {
  while (leg.stats().packetsReceived < from.packetsReceived + more) await sleep(10);
}

/** One party of the pair: its phone, the server's leg to it, and what that leg hears (its mix). */
export interface ForwardParty {
  readonly phone: WebRtcLeg;
  readonly leg: WebRtcLeg;
  readonly hears: AudioSource;
}

export interface MediaForwardRigOptions {
  /** The server's media engine (`frameClock` is the rig's when `handTime` is given). */
  server: MediaEngineOptions;
  /**
   * The server's frame clock's time, moved by hand: a frame every 20 ms while the rig sets up, then
   * held still until `runClock(true)`.
   */
  handTime?: HandTime;
  /** The one codec each phone offers (default: both, PCMU first). */
  codecs?: { a: G711Codec; b: G711Codec };
  /**
   * Makes each party's server leg (default: `server.createLeg({ id: name })`). A leg the server's
   * engine did not make is closed by the rig before the engines.
   */
  leg?(server: MediaEngine, name: "a" | "b", beside: WebRtcLeg | undefined): WebRtcLeg;
  /** b's leg made once a's is connected, `beside` it (default: both at once, beside nothing). */
  inTurn?: boolean;
}

export interface MediaForwardRig {
  readonly server: MediaEngine;
  /** The phones' engine, with a real frame clock. */
  readonly phones: MediaEngine;
  /** Phone A says 440 Hz; set by the rig's beforeAll. */
  readonly a: ForwardParty;
  /** Phone B says 1000 Hz; set by the rig's beforeAll. */
  readonly b: ForwardParty;
  /** The pairing of the two server legs (the rig's beforeAll fails when the engine made none). */
  readonly forwarding: Forwarding;
  /** Moves the hand time a frame every 20 ms (on), or holds it still (off); with `handTime` only. */
  readonly runClock: (on: boolean) => void;
  /** What `phone` hears over the next `ms`, frame by frame on the phones' clock. */
  readonly listen: (phone: WebRtcLeg, ms: number) => Promise<number[]>;
}

export function mediaForwardRig(options: MediaForwardRigOptions): MediaForwardRig {
  const { handTime, codecs, inTurn = false } = options;
  let pump: ReturnType<typeof setInterval> | undefined;
  const runClock = (on: boolean): void => {
    if (!handTime) throw new Error("runClock needs the rig's handTime");
    if (pump) clearInterval(pump);
    pump = on ? setInterval(() => handTime.advanceTo(handTime.t + 20), 20) : undefined;
  };
  const server = new MediaEngine(handTime ? { ...options.server, frameClock: { time: handTime } } : options.server);
  const phones = new MediaEngine({ maxSendLatenessMs: Infinity });
  const makeLeg = options.leg ?? ((engine: MediaEngine, name: string) => engine.createLeg({ id: name }));
  const parties: Partial<Record<"a" | "b", ForwardParty>> = {};
  let forwarding: Forwarding | undefined;
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`the rig's ${name} is not set up (used outside the describe block's tests?)`);
    return value;
  };
  const party = (name: "a" | "b"): ForwardParty => ({
    get phone() {
      return ready(parties[name], name).phone;
    },
    get leg() {
      return ready(parties[name], name).leg;
    },
    get hears() {
      return ready(parties[name], name).hears;
    },
  });

  async function pair(name: "a" | "b", beside?: WebRtcLeg): Promise<{ phone: WebRtcLeg; leg: WebRtcLeg }> {
    const phone = phones.createLeg(codecs ? { id: `${name}-phone`, codecs: [codecs[name]] } : { id: `${name}-phone` });
    const leg = makeLeg(server, name, beside);
    await phone.acceptAnswer(await leg.acceptOffer(await phone.createOffer()));
    while (phone.state !== "connected" || leg.state !== "connected") await sleep(10);
    return { phone, leg };
  }

  beforeAll(async () => {
    if (handTime) runClock(true);
    let x: { phone: WebRtcLeg; leg: WebRtcLeg };
    let y: { phone: WebRtcLeg; leg: WebRtcLeg };
    if (inTurn) {
      x = await pair("a");
      y = await pair("b", x.leg);
    } else {
      [x, y] = await Promise.all([pair("a"), pair("b")]);
    }
    const mixer = server.mixer();
    const a = { ...x, hears: mixer.join("a", x.leg.incoming) };
    const b = { ...y, hears: mixer.join("b", y.leg.incoming) };
    parties.a = a;
    parties.b = b;
    a.leg.play(a.hears);
    b.leg.play(b.hears);
    a.phone.play(await phones.player("tone_stream://440"));
    b.phone.play(await phones.player("tone_stream://1000"));
    forwarding = server.forward({ media: a.leg, hears: a.hears }, { media: b.leg, hears: b.hears });
    expect(forwarding, "the server's engine paired the legs").toBeDefined();
    if (handTime) runClock(false);
  });

  afterAll(async () => {
    if (pump) clearInterval(pump);
    forwarding?.end();
    const own = [parties.a?.leg, parties.b?.leg].filter((leg): leg is WebRtcLeg => leg !== undefined && !server.legs.has(leg));
    await Promise.all(own.map((leg) => leg.close("test over")));
    await Promise.all([server.close(), phones.close()]);
  });

  return {
    server,
    phones,
    a: party("a"),
    b: party("b"),
    get forwarding() {
      return ready(forwarding, "forwarding");
    },
    runClock,
    listen: async (phone, ms) => {
      const samples: number[] = [];
      const stop = phones.clock.subscribe((tick) => samples.push(...phone.incoming.read(tick)));
      await sleep(ms);
      stop();
      return samples;
    },
  };
}
