// ICE consent freshness (RFC 7675) as werift kept it for our legs, written before any change to
// it (session 24, helper cap2: werift's consent checks cost ~4.8 µs of CPU per RTP packet), and
// kept by our own checks on the direct path since (session 25, direct-rtp.ts): two legs talk
// through a relay on 127.0.0.1 that can drop the binding answers one leg sends. A leg whose far
// end stops answering its consent requests is closed ("ice failed"), though the far end's media
// and its own requests still come; the far end, whose requests are still answered, stays
// connected. Then our checks' own cases: legs that answer each other stay up past 30 s (consent on
// hand-moved time), with a far end on werift's checks too, a request with a bad MESSAGE-INTEGRITY
// gets no answer, and werift's loop takes over again when the direct path closes.
import { createSocket, type Socket } from "node:dgram";
import { afterAll, describe, expect, it } from "vitest";
import { DirectRtpPath } from "../../server/media/direct-rtp.js";
import { MediaEngine, type WebRtcLeg } from "../../server/media/index.js";
import { werift } from "../../server/media/werift.js";
import { HandTime } from "../helpers/hand-time.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("timed out");
    await sleep(20);
  }
}

const bound = (): Promise<Socket> =>
  new Promise((resolve) => {
    const socket = createSocket("udp4");
    socket.bind(0, "127.0.0.1", () => resolve(socket));
  });

/** A STUN binding success response (RFC 5389: type 0x0101, the magic cookie). */
const isBindingAnswer = (data: Buffer) => data.length >= 20 && data.readUInt16BE(0) === 0x0101 && data.readUInt32BE(4) === 0x2112a442;
const isBindingRequest = (data: Buffer) => data.length >= 20 && data.readUInt16BE(0) === 0x0001 && data.readUInt32BE(4) === 0x2112a442;

const hostPort = (sdp: string): number => {
  const match = / 127\.0\.0\.1 (\d+) typ host/.exec(sdp);
  if (!match) throw new Error("no host candidate on 127.0.0.1");
  return Number(match[1]);
};
const withPort = (sdp: string, port: number) => sdp.replace(/ 127\.0\.0\.1 \d+ typ host/g, ` 127.0.0.1 ${port} typ host`);

/**
 * Two sockets between the legs: A sends to `towardB` (B's address in A's eyes), B to `towardA`.
 * With `dropAnswersFromB` set, B's binding answers to A's requests are dropped; all else passes.
 */
class Relay {
  dropAnswersFromB = false;
  dropped = 0;
  /** Binding requests and answers passed each way. */
  requestsFromA = 0;
  requestsFromB = 0;
  /** A's answers (to B's requests), B's (to A's). */
  readonly answersFromA: Buffer[] = [];
  readonly answersFromB: Buffer[] = [];
  private constructor(
    readonly towardB: Socket,
    readonly towardA: Socket,
  ) {}

  static async open(): Promise<Relay> {
    return new Relay(await bound(), await bound());
  }

  connect(aPort: number, bPort: number): void {
    this.towardB.on("message", (data) => {
      if (isBindingRequest(data)) this.requestsFromA++;
      if (isBindingAnswer(data)) this.answersFromA.push(Buffer.from(data));
      this.towardA.send(data, bPort, "127.0.0.1");
    });
    this.towardA.on("message", (data) => {
      if (isBindingRequest(data)) this.requestsFromB++;
      if (isBindingAnswer(data)) {
        if (this.dropAnswersFromB) {
          this.dropped++;
          return;
        }
        this.answersFromB.push(Buffer.from(data));
      }
      this.towardB.send(data, aPort, "127.0.0.1");
    });
  }

  close(): void {
    this.towardB.close();
    this.towardA.close();
  }
}

/**
 * A and B connected through a fresh relay; their SDPs' ICE credentials kept. `keep` is handed the
 * relay as soon as it is open, so that a case's afterAll closes it even if the legs never connect.
 */
async function connectThrough(
  engine: MediaEngine,
  a: WebRtcLeg,
  b: WebRtcLeg,
  keep: (relay: Relay) => void,
): Promise<{ relay: Relay; offer: string; answer: string }> {
  const relay = await Relay.open();
  keep(relay);
  a.play(await engine.player("tone_stream://440"));
  b.play(await engine.player("tone_stream://1000"));
  // A sends to the relay's towardB port (B's candidate rewritten), B to its towardA port.
  const offer = await a.createOffer();
  const answer = await b.acceptOffer(withPort(offer, relay.towardA.address().port));
  relay.connect(hostPort(offer), hostPort(answer));
  await a.acceptAnswer(withPort(answer, relay.towardB.address().port));
  await until(() => a.state === "connected" && b.state === "connected", 15_000);
  return { relay, offer, answer };
}

describe("ICE consent freshness: a far end that stops answering", () => {
  const engine = new MediaEngine({ workers: 0 });
  let kept: Relay | undefined;
  afterAll(async () => {
    kept?.close();
    await engine.close();
  });

  // A's consent time is moved by hand (it waited a real 30 s before session 26): the same checks,
  // the same 30 s, without the wait. A runs our checks whatever SWITCHBOARD_OWN_CONSENT says (with
  // werift's loop, its real-time expiry, this case could not move its time).
  it("closes a leg 30 s after its far end's last consent answer; the far end, still answered, stays up", async () => {
    const timeA = new HandTime();
    const a = engine.createLeg({ id: "A", consent: { own: true, time: timeA } });
    const b = engine.createLeg({ id: "B" });
    const { relay } = await connectThrough(engine, a, b, (opened) => (kept = opened));
    relay.dropAnswersFromB = true;
    const received = a.stats().packetsReceived;
    // RFC 7675's 30 s from the last valid answer (the checks that connected the pair, at hand
    // time 0); a request goes every 4-6 s, each answer dropped.
    const CONSENT_S = 30;
    for (let s = 1; s < CONSENT_S; s++) {
      timeA.advanceTo(s * 1000);
      await sleep(20);
    }
    expect(relay.dropped).toBeGreaterThan(0);
    // A hears B all along: only consent is missing, and a second short of 30 it still holds.
    await until(() => a.stats().packetsReceived > received + 50, 10_000);
    timeA.advanceTo(CONSENT_S * 1000 - 1);
    expect(a.state).toBe("connected");
    timeA.advanceTo(CONSENT_S * 1000);
    await until(() => a.state === "closed", 10_000);
    expect(a.closeReason).toBe("ice failed");
    // B's own requests were answered by A until A closed: B was still up then.
    expect(b.state).toBe("connected");
  }, 60_000);
});

const sdpValue = (sdp: string, name: string): string => {
  const match = new RegExp(`a=${name}:(\\S+)`).exec(sdp);
  if (!match?.[1]) throw new Error(`no a=${name} in the SDP`);
  return match[1];
};

/**
 * Moves hand-moved consent times to `toMs` a second at a time; after each step, waits for every
 * request the relay has seen to be answered (each answer reaches its leg long before its next
 * request, 4-6 s of hand time later).
 */
async function stepTo(relay: Relay, times: HandTime[], toMs: number): Promise<void> {
  // Counted from here: the connectivity checks before are none of consent's.
  await sleep(200);
  const [fromA, answeredB, fromB, answeredA] = [relay.requestsFromA, relay.answersFromB.length, relay.requestsFromB, relay.answersFromA.length];
  for (let t = 1000; t <= toMs; t += 1000) {
    for (const time of times) time.advanceTo(t);
    await sleep(20);
    await until(
      () => relay.answersFromB.length - answeredB >= relay.requestsFromA - fromA && relay.answersFromA.length - answeredA >= relay.requestsFromB - fromB,
      10_000,
    );
  }
}

describe("our own consent checks on the direct path", () => {
  const engine = new MediaEngine({ workers: 0 });
  const relays: Relay[] = [];
  afterAll(async () => {
    for (const relay of relays) relay.close();
    await engine.close();
  });

  it("keeps two legs that answer each other past 30 s, each one's consent to the other kept", async () => {
    const [timeA, timeB] = [new HandTime(), new HandTime()];
    const a = engine.createLeg({ id: "keep-A", consent: { time: timeA } });
    const b = engine.createLeg({ id: "keep-B", consent: { time: timeB } });
    const { relay } = await connectThrough(engine, a, b, (opened) => relays.push(opened));
    await stepTo(relay, [timeA, timeB], 70_000);
    // 70 s of consent time: more than 11 requests each way (every 4-6 s), every one answered.
    expect(relay.requestsFromA).toBeGreaterThanOrEqual(11);
    expect(relay.requestsFromB).toBeGreaterThanOrEqual(11);
    expect([a.state, b.state]).toEqual(["connected", "connected"]);
    await Promise.all([a.close(), b.close()]);
  }, 60_000);

  it("keeps consent both ways with a far end on werift's own checks", async () => {
    const timeA = new HandTime();
    const a = engine.createLeg({ id: "werift-A", consent: { time: timeA } });
    const b = engine.createLeg({ id: "werift-B", consent: { own: false } });
    const { relay, offer } = await connectThrough(engine, a, b, (opened) => relays.push(opened));
    // A's answers from here on are our path's (werift answered the connectivity checks before).
    await sleep(200);
    const werifts = relay.answersFromA.length;
    // werift's answers to our requests are taken: A stays up past its 30 s.
    await stepTo(relay, [timeA], 70_000);
    expect(relay.answersFromB.length).toBeGreaterThanOrEqual(11);
    expect(a.state).toBe("connected");
    // Our answers to werift's requests (every 4-6 s of real time) pass werift's own check of them.
    await until(() => relay.answersFromA.length > werifts, 15_000);
    const { parseMessage } = werift();
    const key = Buffer.from(sdpValue(offer, "ice-pwd"), "utf8");
    const ours = relay.answersFromA.slice(werifts);
    for (const answer of ours) expect(parseMessage(answer, key)).toBeDefined();
    // A wrong key fails werift's check: the check above is one.
    expect(parseMessage(ours[0] as Buffer, Buffer.from("wrong"))).toBeUndefined();
    expect(b.state).toBe("connected");
    await Promise.all([a.close(), b.close()]);
  }, 60_000);

  it("does not answer a binding request with a bad MESSAGE-INTEGRITY", async () => {
    const a = engine.createLeg({ id: "integrity-A" });
    const b = engine.createLeg({ id: "integrity-B" });
    const { relay, offer, answer } = await connectThrough(engine, a, b, (opened) => relays.push(opened));
    const { Message, methods, classes } = werift();
    const request = (password: string) =>
      new Message(methods.BINDING, classes.REQUEST)
        .setAttribute("USERNAME", `${sdpValue(offer, "ice-ufrag")}:${sdpValue(answer, "ice-ufrag")}`)
        .setAttribute("PRIORITY", 1853824767)
        .addMessageIntegrity(Buffer.from(password, "utf8"))
        .addFingerprint();
    const bad = request(`${sdpValue(offer, "ice-pwd")}x`);
    const good = request(sdpValue(offer, "ice-pwd"));
    // From B's address in A's eyes (the relay's socket towards A), the bad one first: answers go
    // out in order, so once the good one's answer is back, the bad one's would have been too.
    const aPort = hostPort(offer);
    relay.towardB.send(bad.bytes, aPort, "127.0.0.1");
    relay.towardB.send(good.bytes, aPort, "127.0.0.1");
    const answeredIds = () => relay.answersFromA.map((d) => d.subarray(8, 20).toString("hex"));
    await until(() => answeredIds().includes(good.transactionIdHex), 10_000);
    expect(answeredIds()).not.toContain(bad.transactionIdHex);
    expect([a.state, b.state]).toEqual(["connected", "connected"]);
    await Promise.all([a.close(), b.close()]);
  }, 30_000);
});

describe("werift's consent loop around a direct path", () => {
  it("stops while the path is open and starts again when it closes on a live connection", async () => {
    const { RTCPeerConnection, RTCRtpCodecParameters } = werift();
    const peer = () =>
      new RTCPeerConnection({
        codecs: { audio: [new RTCRtpCodecParameters({ mimeType: "audio/PCMU", clockRate: 8000, channels: 1, payloadType: 0 })], video: [] },
        iceServers: [],
        iceUseIpv4: false,
        iceUseIpv6: false,
        iceAdditionalHostAddresses: ["127.0.0.1"],
        iceInterfaceAddresses: { udp4: "127.0.0.1" },
      });
    const [a, b] = [peer(), peer()];
    try {
      const transceiver = a.addTransceiver("audio", { direction: "sendrecv" });
      await a.setLocalDescription(await a.createOffer());
      await b.setRemoteDescription(a.localDescription as NonNullable<typeof a.localDescription>);
      await b.setLocalDescription(await b.createAnswer());
      await a.setRemoteDescription(b.localDescription as NonNullable<typeof b.localDescription>);
      await until(() => a.connectionState === "connected" && b.connectionState === "connected", 15_000);
      const dtls = transceiver.dtlsTransport;
      await until(() => dtls.srtpStarted, 5_000);
      // werift's loop, seen through its handle (a private member of werift 0.25's Connection).
      const loop = () => (dtls.iceTransport.connection as unknown as { queryConsentHandle?: unknown }).queryConsentHandle;
      expect(loop()).toBeDefined();
      const path = DirectRtpPath.open(dtls, { packet: () => undefined, bad: () => undefined, sendFailed: () => undefined }, { own: true });
      expect(path?.consentCounts).toBeDefined();
      expect(loop()).toBeUndefined();
      path?.close();
      expect(loop()).toBeDefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 30_000);
});
