// ICE consent freshness (RFC 7675) as werift keeps it for our legs today, written before any
// change to it (session 24, helper cap2: werift's consent checks cost ~4.8 µs of CPU per RTP
// packet, and our own on the direct path is the cut left): two legs talk through a relay on
// 127.0.0.1 that can drop the binding answers one leg sends. A leg whose far end stops
// answering its consent requests is closed ("ice failed"), though the far end's media and its
// own requests still come; the far end, whose requests are still answered, stays connected.
import { createSocket, type Socket } from "node:dgram";
import { afterAll, describe, expect, it } from "vitest";
import { MediaEngine } from "../../server/media/index.js";

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
  private constructor(
    readonly towardB: Socket,
    readonly towardA: Socket,
  ) {}

  static async open(): Promise<Relay> {
    return new Relay(await bound(), await bound());
  }

  connect(aPort: number, bPort: number): void {
    this.towardB.on("message", (data) => this.towardA.send(data, bPort, "127.0.0.1"));
    this.towardA.on("message", (data) => {
      if (this.dropAnswersFromB && isBindingAnswer(data)) {
        this.dropped++;
        return;
      }
      this.towardB.send(data, aPort, "127.0.0.1");
    });
  }

  close(): void {
    this.towardB.close();
    this.towardA.close();
  }
}

describe("ICE consent freshness (werift's, as it is today)", () => {
  const engine = new MediaEngine({ workers: 0 });
  const a = engine.createLeg({ id: "A" });
  const b = engine.createLeg({ id: "B" });
  let relay: Relay | undefined;
  afterAll(async () => {
    relay?.close();
    await engine.close();
  });

  it("closes a leg whose far end stops answering its consent requests; the far end, still answered, stays up", async () => {
    relay = await Relay.open();
    a.play(await engine.player("tone_stream://440"));
    b.play(await engine.player("tone_stream://1000"));
    // A sends to the relay's towardB port (B's candidate rewritten), B to its towardA port.
    const offer = await a.createOffer();
    const answer = await b.acceptOffer(withPort(offer, relay.towardA.address().port));
    relay.connect(hostPort(offer), hostPort(answer));
    await a.acceptAnswer(withPort(answer, relay.towardB.address().port));
    await until(() => a.state === "connected" && b.state === "connected", 15_000);

    relay.dropAnswersFromB = true;
    const received = a.stats().packetsReceived;
    // werift's consent expires 30 s after the last valid answer (CONSENT_TIMEOUT); a request goes every 4-6 s.
    await until(() => a.state === "closed", 60_000);
    expect(a.closeReason).toBe("ice failed");
    expect(relay.dropped).toBeGreaterThan(0);
    // A heard B all along: only consent was missing.
    expect(a.stats().packetsReceived).toBeGreaterThan(received + 50);
    // B's own requests were answered by A until A closed: B was still up then.
    expect(b.state).toBe("connected");
  }, 90_000);
});
