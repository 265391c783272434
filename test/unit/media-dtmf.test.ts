import { describe, expect, it } from "vitest";
import { buildTelephoneEvent, DtmfDetector, DtmfSender, parseTelephoneEvent, type DtmfPacket } from "../../server/media/dtmf.js";

const packet = (event: number, end: boolean, duration: number) => buildTelephoneEvent({ event, end, volume: 10, duration });

describe("RFC 4733 payload", () => {
  it("lays out event, E bit, volume and duration as the RFC draws them", () => {
    const bytes = packet(11, true, 800);
    expect([...bytes]).toEqual([11, 0x80 | 10, 0x03, 0x20]);
    expect(parseTelephoneEvent(bytes)).toEqual({ event: 11, end: true, volume: 10, duration: 800 });
    expect(parseTelephoneEvent(new Uint8Array([1, 2]))).toBeUndefined();
  });
});

describe("DtmfDetector", () => {
  it("reports a digit once, at its first end packet, however often the end repeats", () => {
    const detector = new DtmfDetector();
    const ts = 123456;
    const seen = [
      packet(5, false, 160),
      packet(5, false, 320),
      packet(5, false, 480),
      packet(5, true, 640),
      packet(5, true, 640),
      packet(5, true, 640),
    ].map((p) => detector.accept(ts, p));
    expect(seen.filter((d) => d !== undefined)).toEqual([{ digit: "5", durationMs: 80 }]);
    expect(seen[3]).toEqual({ digit: "5", durationMs: 80 });
  });

  it("tells the same digit pressed twice apart by its timestamp", () => {
    const detector = new DtmfDetector();
    const digits = [1000, 1000, 3000, 3000].map((ts) => detector.accept(ts, packet(1, true, 800))?.digit);
    expect(digits).toEqual(["1", undefined, "1", undefined]);
  });

  it("still reports a digit whose start packets were lost, and maps * # A-D", () => {
    const detector = new DtmfDetector();
    const digits = [10, 11, 12, 15].map((event, i) => detector.accept(i * 2000, packet(event, true, 800))?.digit);
    expect(digits).toEqual(["*", "#", "A", "D"]);
  });

  it("ignores non-digit events such as flash (16) and truncated payloads", () => {
    const detector = new DtmfDetector();
    expect(detector.accept(1, packet(16, true, 800))).toBeUndefined();
    expect(detector.accept(2, new Uint8Array([1]))).toBeUndefined();
  });
});

describe("DtmfSender", () => {
  /** Runs the sender tick by tick until idle, as a leg would. */
  function drain(sender: DtmfSender): (DtmfPacket | "gap")[] {
    const out: (DtmfPacket | "gap")[] = [];
    for (let step = sender.next(); step !== undefined; step = sender.next()) out.push(step);
    return out;
  }

  it("sends a 100 ms digit as five growing packets, three end packets, then a gap", async () => {
    const sender = new DtmfSender();
    const sent = sender.enqueue("7");
    const steps = drain(sender);
    const packets = steps.filter((s): s is DtmfPacket => s !== "gap");
    expect(packets.map((p) => parseTelephoneEvent(p.payload))).toEqual([
      ...[160, 320, 480, 640, 800].map((duration) => ({ event: 7, end: false, volume: 10, duration })),
      ...[1, 2, 3].map(() => ({ event: 7, end: true, volume: 10, duration: 800 })),
    ]);
    expect(packets.map((p) => p.start)).toEqual([true, false, false, false, false, false, false, false]);
    expect(steps.slice(8)).toEqual(["gap", "gap", "gap"]);
    await expect(sent).resolves.toBeUndefined();
    expect(sender.busy).toBe(false);
  });

  it("round-trips a string of digits through the detector", () => {
    const sender = new DtmfSender();
    void sender.enqueue("0123456789*#ABCD", { durationMs: 60, gapMs: 40 });
    const detector = new DtmfDetector();
    let timestamp = 0;
    let eventTimestamp = 0;
    const digits: string[] = [];
    for (let step = sender.next(); step !== undefined; step = sender.next(), timestamp += 160) {
      if (step === "gap") continue;
      if (step.start) eventTimestamp = timestamp;
      const digit = detector.accept(eventTimestamp, step.payload);
      if (digit) digits.push(digit.digit);
    }
    expect(digits.join("")).toBe("0123456789*#ABCD");
  });

  it("refuses anything but DTMF digits, and releases waiters on cancel", async () => {
    const sender = new DtmfSender();
    expect(() => sender.enqueue("12x")).toThrow(RangeError);
    const pending = sender.enqueue("99");
    sender.next();
    sender.cancel();
    await expect(pending).resolves.toBeUndefined();
    expect(sender.next()).toBeUndefined();
  });
});
