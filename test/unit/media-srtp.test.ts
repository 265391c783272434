// Our SRTP contexts against werift's (the reference our far ends use) and Node's own HMAC: the
// same keys give byte-identical packets both ways, for both profiles, across a sequence wrap;
// a tampered packet or a wrong key is refused.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RtpHeader, SrtpSession } from "werift";
import {
  HmacSha1,
  KEYSTREAM_BATCH,
  sessionKeys,
  SRTP_AEAD_AES_128_GCM,
  SRTP_AES128_CM_HMAC_SHA1_80,
  SrtpContext,
  srtpPair,
  type SrtpProfileId,
} from "../../server/media/srtp.js";

function keys(profile: SrtpProfileId) {
  const salt = profile === SRTP_AEAD_AES_128_GCM ? 12 : 14;
  return { localMasterKey: randomBytes(16), localMasterSalt: randomBytes(salt), remoteMasterKey: randomBytes(16), remoteMasterSalt: randomBytes(salt) };
}

/** werift's session for the far end: its local keys are our remote ones and the other way round. */
function farEnd(profile: SrtpProfileId, k: ReturnType<typeof keys>): SrtpSession {
  return new SrtpSession({
    profile,
    keys: { localMasterKey: k.remoteMasterKey, localMasterSalt: k.remoteMasterSalt, remoteMasterKey: k.localMasterKey, remoteMasterSalt: k.localMasterSalt },
  });
}

const profiles: [string, SrtpProfileId][] = [
  ["AES_CM_128_HMAC_SHA1_80", SRTP_AES128_CM_HMAC_SHA1_80],
  ["AEAD_AES_128_GCM", SRTP_AEAD_AES_128_GCM],
];

describe.each(profiles)("SRTP %s", (_name, profile) => {
  const tag = profile === SRTP_AEAD_AES_128_GCM ? 16 : 10;
  it("protects packets exactly as werift does, and werift reads them, across a sequence wrap", () => {
    const k = keys(profile);
    const ours = srtpPair(profile, k);
    // werift's session with our own local keys, to compare the bytes.
    const same = new SrtpSession({ profile, keys: k });
    const far = farEnd(profile, k);
    for (let i = 0; i < 40; i++) {
      const seq = (65_520 + i) & 0xffff;
      const fields = { payloadType: i % 2 ? 0 : 101, sequenceNumber: seq, timestamp: 1_000 + 160 * i, ssrc: 0xdeadbeef, marker: i === 0 };
      const payload = randomBytes(i % 2 ? 160 : 4 + i);
      const packet = ours.local.protect(fields, payload);
      expect(packet.equals(same.encrypt(payload, new RtpHeader(fields)))).toBe(true);
      const plain = far.decrypt(packet);
      expect(plain.subarray(12).equals(payload)).toBe(true);
      expect(plain.readUInt16BE(2)).toBe(seq);
    }
  });

  it("reads werift's packets across a sequence wrap, with reordering", () => {
    const k = keys(profile);
    const ours = srtpPair(profile, k);
    const far = farEnd(profile, k);
    const packets: { seq: number; payload: Buffer; packet: Buffer }[] = [];
    for (let i = 0; i < 40; i++) {
      const seq = (65_510 + i) & 0xffff;
      const payload = randomBytes(160);
      packets.push({ seq, payload, packet: far.encrypt(payload, new RtpHeader({ payloadType: 8, sequenceNumber: seq, timestamp: 160 * i, ssrc: 42 })) });
    }
    // Swap neighbours on either side of the wrap.
    const order = packets.map((_, i) => i);
    [order[24], order[26]] = [order[26] ?? 0, order[24] ?? 0];
    for (const i of order) {
      const p = packets[i];
      if (!p) throw new Error("no packet");
      const length = ours.remote.unprotect(p.packet);
      expect(length, `packet ${p.seq}`).toBe(p.packet.length - tag);
      expect(p.packet.subarray(12, length).equals(p.payload), `packet ${p.seq}`).toBe(true);
    }
  });

  it("refuses a tampered packet, a truncated one and one under another key", () => {
    const k = keys(profile);
    const ours = srtpPair(profile, k);
    const far = farEnd(profile, k);
    const packet = far.encrypt(randomBytes(160), new RtpHeader({ payloadType: 0, sequenceNumber: 7, timestamp: 0, ssrc: 1 }));
    const flipped = Buffer.from(packet);
    flipped[40] = (flipped[40] ?? 0) ^ 1;
    expect(ours.remote.unprotect(flipped)).toBe(-1);
    const header = Buffer.from(packet);
    header[1] = (header[1] ?? 0) ^ 1;
    expect(ours.remote.unprotect(header)).toBe(-1);
    expect(ours.remote.unprotect(packet.subarray(0, 14))).toBe(-1);
    const copy = Buffer.from(packet);
    expect(srtpPair(profile, keys(profile)).remote.unprotect(packet)).toBe(-1);
    // A refused packet is left as it came.
    expect(packet.equals(copy)).toBe(true);
    expect(ours.remote.unprotect(packet)).toBe(packet.length - tag);
  });

  it("starts on a stream that wrapped before its first packet (rollover counter 1)", () => {
    const k = keys(profile);
    const ours = srtpPair(profile, k);
    const far = farEnd(profile, k);
    const send = (seq: number) => far.encrypt(Buffer.alloc(160, seq & 0xff), new RtpHeader({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 9 }));
    // werift's path carried these (the wrap) before ours took over.
    for (const seq of [65_534, 65_535, 0, 1]) send(seq);
    for (const seq of [2, 3]) {
      const packet = send(seq);
      expect(ours.remote.unprotect(packet)).toBe(packet.length - tag);
      expect(packet[20]).toBe(seq);
    }
  });

  it("reads packets with CSRCs and a header extension", () => {
    const k = keys(profile);
    const ours = srtpPair(profile, k);
    const far = farEnd(profile, k);
    const payload = randomBytes(160);
    const header = new RtpHeader({ payloadType: 0, sequenceNumber: 100, timestamp: 5, ssrc: 3, csrc: [11, 12], extension: true, extensionProfile: 0xbede, extensions: [{ id: 1, payload: Buffer.from([0x30]) }] });
    const packet = far.encrypt(payload, header);
    const length = ours.remote.unprotect(packet);
    expect(packet.subarray(length - 160, length).equals(payload)).toBe(true);
  });
});

describe("HMAC-SHA1", () => {
  it("equals Node's for every message length around the block boundaries", () => {
    for (const keyLength of [16, 20, 64]) {
      const key = randomBytes(keyLength);
      const hmac = new HmacSha1(key);
      for (let n = 0; n < 200; n++) {
        const data = randomBytes(n + 3);
        const out = Buffer.alloc(20);
        hmac.sign(data, 3, n + 3, 0x01020304, out, 0, 20);
        const expected = createHmac("sha1", key).update(data.subarray(3)).update(Buffer.from([1, 2, 3, 4])).digest();
        expect(out.equals(expected), `key ${keyLength}, ${n} bytes`).toBe(true);
      }
    }
  });
});

describe("SRTP against RFC 3711's test vectors", () => {
  const hex = (h: string) => Buffer.from(h, "hex");

  it("derives the session keys of appendix B.3", () => {
    const keys = sessionKeys(SRTP_AES128_CM_HMAC_SHA1_80, hex("E1F97A0D3E018BE0D64FA32C06DE4139"), hex("0EC675AD498AFEEBB6960B3AABE6"));
    expect(keys.key.toString("hex").toUpperCase()).toBe("C61E7A93744F39EE10734AFE3FF7A087");
    expect(keys.salt.toString("hex").toUpperCase()).toBe("30CBBC08863D8C85D49DB34A9AE1");
    expect(keys.auth.toString("hex").toUpperCase()).toBe("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4");
  });

  it("encrypts with appendix B.2's AES-CM keystream (SSRC, rollover counter and sequence number 0)", () => {
    const context = new SrtpContext(SRTP_AES128_CM_HMAC_SHA1_80, { key: hex("2B7E151628AED2A6ABF7158809CF4F3C"), salt: hex("F0F1F2F3F4F5F6F7F8F9FAFBFCFD"), auth: Buffer.alloc(20) });
    // A payload of zeros encrypts to the keystream itself.
    const packet = context.protect({ payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0 }, Buffer.alloc(48));
    expect(packet.subarray(12, 60).toString("hex").toUpperCase()).toBe("E03EAD0935C95E80E166B16DD92B4EB4" + "D23513162B02D0F72A43A2FE4A5F97AB" + "41E95B3BB0A2E8DD477901E4FCA894C0");
  });
});

// The keystream comes in batches of KEYSTREAM_BATCH consecutive packet indexes (one AES call for
// all of them): every way a stream can leave its batch gives werift's bytes.
describe.each(profiles)("SRTP %s keystream batches", (_name, profile) => {
  it("protects as werift does through batch edges, a wrap, jumps, another SSRC and long payloads", () => {
    const k = keys(profile);
    const ours = srtpPair(profile, k);
    const same = new SrtpSession({ profile, keys: k });
    const steps: { seq: number; ssrc: number; length: number }[] = [];
    let seq = 1_000;
    const step = (by: number, ssrc = 0x1234, length = 160) => {
      seq = (seq + by) & 0xffff;
      steps.push({ seq, ssrc, length });
    };
    // Across two batch edges.
    for (let i = 0; i < 3 * KEYSTREAM_BATCH; i++) step(1);
    // Another SSRC between packets of the first, then it alone, then the first again (a context
    // keeps one rollover counter: both streams before the wrap).
    step(0, 0x9999);
    step(1);
    step(0, 0x9999);
    for (let i = 0; i < 5; i++) step(1, 0x9999);
    step(1);
    // Forward steps of a few frames (forward.ts), a jump past the next batches, short and long payloads.
    step(3);
    step(5);
    step(4 * KEYSTREAM_BATCH + 9);
    step(1, 0x1234, 4);
    step(1, 0x1234, 161);
    step(1, 0x1234, 320);
    step(1);
    // On to half a batch before the wrap, and across it (the rollover counter steps inside a batch).
    // (Hops of less than half the sequence space: a longer one reads as a packet from the past.)
    step(20_000);
    step(20_000);
    step(65_536 - KEYSTREAM_BATCH / 2 - seq);
    for (let i = 0; i < 2 * KEYSTREAM_BATCH; i++) step(1);
    for (const [i, s] of steps.entries()) {
      const fields = { payloadType: 0, sequenceNumber: s.seq, timestamp: 160 * i, ssrc: s.ssrc, marker: false };
      const payload = randomBytes(s.length);
      const packet = ours.local.protect(fields, payload);
      expect(packet.equals(same.encrypt(payload, new RtpHeader(fields))), `step ${i}: seq ${s.seq}, ssrc ${s.ssrc}, ${s.length} bytes`).toBe(true);
    }
  });

  it("reads werift's packets late, early, far ahead and from two SSRCs at once", () => {
    const k = keys(profile);
    const ours = srtpPair(profile, k);
    const far = farEnd(profile, k);
    const make = (seq: number, ssrc: number, length = 160) => {
      const payload = randomBytes(length);
      return { seq, payload, packet: far.encrypt(payload, new RtpHeader({ payloadType: 0, sequenceNumber: seq & 0xffff, timestamp: seq * 160, ssrc })) };
    };
    // A context keeps one rollover counter for all SSRCs: both streams short of a wrap (the wrap's
    // own tests are above).
    const a = Array.from({ length: 300 }, (_, i) => make(1_000 + i, 7));
    const b = Array.from({ length: 10 }, (_, i) => make(1_205 + i, 8, i === 3 ? 320 : 160));
    const order = [
      ...a.slice(0, 40),
      a[45],
      ...a.slice(40, 45),
      // Late by more than a batch, then far ahead (one packet alone, then the stream moved on).
      a[2],
      a[200],
      ...a.slice(201, 210),
      a[150],
      // Two streams interleaved.
      ...b.flatMap((p, i) => [p, a[210 + i]]),
      ...a.slice(220, 300),
    ];
    for (const p of order) {
      if (!p) throw new Error("no packet");
      const copy = Buffer.from(p.packet);
      const length = ours.remote.unprotect(copy);
      expect(length, `packet ${p.seq}`).toBeGreaterThan(0);
      expect(copy.subarray(12, length).equals(p.payload), `packet ${p.seq}`).toBe(true);
    }
  });
});
