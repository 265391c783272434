// Two real werift legs whose packets cross a UDP relay on 127.0.0.1 that holds what the answerer
// (the DTLS client) sends for 700 ms from its first DTLS datagram on, then passes it on in order,
// as the socket of a DTLS server not scheduled for that long would: the client repeats its ClientHello after 500 ms, the server answers both with a
// HelloVerifyRequest, and werift's client used to fail its handshake on the second one ("dtls
// failed", which calls/ reports as MEDIA_TIMEOUT). The legs must connect and carry audio, in this
// thread and in a media worker (where serve mode and the app run them).
import { createSocket, type Socket } from "node:dgram";
import { afterAll, describe, expect, it } from "vitest";
import { MediaEngine, toneShare, type WebRtcLeg } from "../../server/media/index.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** RFC 7983: a first byte of 20-63 is DTLS. */
const isDtls = (data: Buffer) => data.length > 0 && data[0] >= 20 && data[0] <= 63;

const candidatePort = (sdp: string): number => {
  const match = /^a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 (\d+) typ host/im.exec(sdp);
  if (!match) throw new Error(`no loopback host candidate in\n${sdp}`);
  return Number(match[1]);
};

const withCandidatePort = (sdp: string, port: number) => sdp.replace(/^(a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 )\d+/gim, `$1${port}`);

async function bound(): Promise<Socket> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return socket;
}

/**
 * Stands between offerer A and answerer B: B is told A is at `towardA`, A that B is at `towardB`;
 * each datagram goes on from the other socket, so each side sees only the relay's addresses.
 */
class Relay {
  /** DTLS datagrams from B that were held, then passed on together. */
  heldDtls = 0;
  #holding: Buffer[] | undefined;
  #held = false;

  constructor(
    readonly towardA: Socket,
    readonly towardB: Socket,
    portA: number,
    portB: number,
    holdDtlsFromBMs: number,
  ) {
    const toA = (data: Buffer) => towardB.send(data, portA, "127.0.0.1");
    towardA.on("message", (data) => {
      if (isDtls(data) && !this.#held) {
        // As a socket buffer fills while its thread is not scheduled: in order, all at once.
        this.#held = true;
        this.#holding = [];
        setTimeout(() => {
          const held = this.#holding ?? [];
          this.#holding = undefined;
          this.heldDtls = held.length;
          for (const datagram of held) toA(datagram);
        }, holdDtlsFromBMs);
      }
      if (this.#holding) this.#holding.push(data);
      else toA(data);
    });
    towardB.on("message", (data) => towardA.send(data, portB, "127.0.0.1"));
  }

  close(): void {
    this.towardA.close();
    this.towardB.close();
  }
}

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check() && performance.now() < deadline) await sleep(20);
}

async function heard(engine: MediaEngine, leg: WebRtcLeg, ms: number): Promise<Int16Array> {
  const frames: Int16Array[] = [];
  const stop = engine.clock.subscribe((tick) => frames.push(Int16Array.from(leg.incoming.read(tick))));
  await sleep(ms);
  stop();
  const out = new Int16Array(frames.length * 160);
  frames.forEach((frame, i) => out.set(frame, i * 160));
  return out;
}

describe.each([
  { where: "in this thread", workers: 0 },
  { where: "in a media worker", workers: 1 },
])("a DTLS server slower than the client's 500 ms ClientHello retransmission, legs $where", ({ workers }) => {
  const engine = new MediaEngine({ workers });
  let relay: Relay | undefined;
  afterAll(async () => {
    await engine.close();
    relay?.close();
  });

  it("connects both legs (no 'dtls failed' on the second HelloVerifyRequest) and carries audio", async () => {
    const a = engine.createLeg({ id: "offerer" });
    const b = engine.createLeg({ id: "answerer" });
    a.play(await engine.player("tone_stream://440"));
    const closed: string[] = [];
    for (const leg of [a, b]) leg.on("state", (change) => change.to === "closed" && closed.push(`${leg.id}: ${change.reason}`));

    const towardA = await bound();
    const towardB = await bound();
    const offer = await a.createOffer();
    const answer = await b.acceptOffer(withCandidatePort(offer, towardA.address().port));
    // The answerer takes the DTLS client's part: its ClientHello is the datagram held.
    expect(answer).toMatch(/^a=setup:active\r?$/m);
    relay = new Relay(towardA, towardB, candidatePort(offer), candidatePort(answer), 700);
    await a.acceptAnswer(withCandidatePort(answer, towardB.address().port));

    await until(() => (a.state === "connected" && b.state === "connected") || closed.length > 0, 10_000);
    // The ClientHello and its repeat 500 ms later, at least.
    expect(relay.heldDtls).toBeGreaterThanOrEqual(2);
    expect(closed).toEqual([]);
    expect([a.state, b.state]).toEqual(["connected", "connected"]);
    // The audio carried: a 300 ms stretch at B that is the tone. How soon it came is not this
    // test's (a busy machine delays it, or puts a gap in one stretch): up to ten stretches are heard.
    const shares: number[] = [];
    for (let look = 0; look < 10 && (shares.at(-1) ?? 0) <= 0.8; look++) shares.push(toneShare((await heard(engine, b, 600)).subarray(-2400), 440));
    expect(Math.max(...shares), `the tone's share of each stretch heard at B: ${shares.map((x) => x.toFixed(2)).join(", ")}`).toBeGreaterThan(0.8);
  });
});
