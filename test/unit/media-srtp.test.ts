// Our SRTP contexts against werift's (the reference our far ends use) and Node's own HMAC: the
// same keys give byte-identical packets both ways, for both profiles, across a sequence wrap;
// a tampered packet or a wrong key is refused.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RtpHeader, SrtpSession } from "werift";
import { HmacSha1, SRTP_AEAD_AES_128_GCM, SRTP_AES128_CM_HMAC_SHA1_80, srtpPair, type SrtpProfileId } from "../../server/media/srtp.js";

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
