// The STUN reader and writer of our own ICE consent checks (server/media/stun.ts) against RFC
// 5769's test vectors: the sample request (short-term credentials, ICE attributes) is read and its
// MESSAGE-INTEGRITY and FINGERPRINT checked, and the request and both sample responses are
// written again byte for byte.
import { describe, expect, it } from "vitest";
import { addressBytes, ATTR, BINDING_REQUEST, BINDING_SUCCESS, crc32, fingerprintOk, integrityOk, StunScan, StunWriter, stunType } from "../../server/media/stun.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");
const PASSWORD = Buffer.from("VOkJxbRl1RmTxUk/WvJxBt", "utf8");
const TRANSACTION = hex("b7 e7 a7 01 bc 34 d6 86 fa 87 df ae");

// RFC 5769 §2.1-2.3 (SOFTWARE and USERNAME padded with spaces, as the RFC prints them).
const REQUEST = hex(`
  00 01 00 58 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 10 53 54 55 4e 20 74 65 73 74 20 63 6c 69 65 6e 74
  00 24 00 04 6e 00 01 ff
  80 29 00 08 93 2f f9 b1 51 26 3b 36
  00 06 00 09 65 76 74 6a 3a 68 36 76 59 20 20 20
  00 08 00 14 9a ea a7 0c bf d8 cb 56 78 1e f2 b5 b2 d3 f2 49 c1 b5 71 a2
  80 28 00 04 e5 7a 3b cf`);
const IPV4_RESPONSE = hex(`
  01 01 00 3c 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
  00 20 00 08 00 01 a1 47 e1 12 a6 43
  00 08 00 14 2b 91 f5 99 fd 9e 90 c3 8c 74 89 f9 2a f9 ba 53 f0 6b e7 d7
  80 28 00 04 c0 7d 4c 96`);
const IPV6_RESPONSE = hex(`
  01 01 00 48 21 12 a4 42 b7 e7 a7 01 bc 34 d6 86 fa 87 df ae
  80 22 00 0b 74 65 73 74 20 76 65 63 74 6f 72 20
  00 20 00 14 00 02 a1 47 01 13 a9 fa a5 d3 f1 79 bc 25 f4 b5 be d2 b9 d9
  00 08 00 14 a3 82 95 4e 4b e6 7b f1 17 84 c9 7c 82 92 c2 75 bf e3 ed 41
  80 28 00 04 c8 fb 0b 4c`);

describe("STUN against RFC 5769's test vectors", () => {
  it("reads the sample request and checks its MESSAGE-INTEGRITY and FINGERPRINT", () => {
    const data = Buffer.from(REQUEST);
    expect(stunType(data)).toBe(BINDING_REQUEST);
    const scan = new StunScan();
    expect(scan.scan(data)).toBe(true);
    expect(data.toString("utf8", scan.username, scan.username + scan.usernameLength)).toBe("evtj:h6vY");
    expect([scan.controlled, scan.controlling, scan.useCandidate, scan.unknownRequired]).toEqual([true, false, false, false]);
    expect(integrityOk(data, scan.integrity, PASSWORD)).toBe(true);
    expect(integrityOk(data, scan.integrity, Buffer.from("VOkJxbRl1RmTxUk/WvJxBT"))).toBe(false);
    expect(fingerprintOk(data, scan.fingerprint)).toBe(true);
    // The checks put the length field back as it was.
    expect(data.equals(REQUEST)).toBe(true);
    // One bit changed before the integrity: both fail.
    data[30] ^= 1;
    expect(integrityOk(data, scan.integrity, PASSWORD)).toBe(false);
    expect(fingerprintOk(data, scan.fingerprint)).toBe(false);
  });

  it("writes the sample request again, signed", () => {
    const software = Buffer.from("STUN test client");
    const priority = hex("6e 00 01 ff").readUInt32BE(0);
    const message = new StunWriter()
      .start(BINDING_REQUEST, TRANSACTION)
      .attribute(ATTR.SOFTWARE, software)
      .u32(ATTR.PRIORITY, priority)
      .u64(ATTR.ICE_CONTROLLED, 0x932ff9b151263b36n)
      .attribute(ATTR.USERNAME, Buffer.from("evtj:h6vY"), 0x20)
      .sign(PASSWORD);
    expect(message.toString("hex")).toBe(REQUEST.toString("hex"));
  });

  it("writes the sample IPv4 and IPv6 responses again (XOR-MAPPED-ADDRESS, integrity, fingerprint)", () => {
    const writer = new StunWriter();
    for (const [host, expected] of [
      ["192.0.2.1", IPV4_RESPONSE],
      ["2001:db8:1234:5678:11:2233:4455:6677", IPV6_RESPONSE],
    ] as const) {
      writer.start(BINDING_SUCCESS, TRANSACTION).attribute(ATTR.SOFTWARE, Buffer.from("test vector"), 0x20);
      expect(writer.xorAddress(host, 32853)).toBe(true);
      expect(writer.sign(PASSWORD).toString("hex")).toBe(expected.toString("hex"));
      // And read back: integrity and fingerprint hold.
      const scan = new StunScan();
      expect(scan.scan(expected)).toBe(true);
      expect(integrityOk(expected, scan.integrity, PASSWORD)).toBe(true);
      expect(fingerprintOk(expected, scan.fingerprint)).toBe(true);
    }
  });

  it("reads addresses and refuses what is not STUN", () => {
    expect(addressBytes("2001:db8::1")?.toString("hex")).toBe("20010db8000000000000000000000001");
    expect(addressBytes("::ffff:127.0.0.1")?.toString("hex")).toBe("00000000000000000000ffff7f000001");
    expect(addressBytes("fe80::1%eth0")?.toString("hex")).toBe("fe800000000000000000000000000001");
    expect(addressBytes("1.2.3")).toBeUndefined();
    expect(addressBytes("1::2::3")).toBeUndefined();
    // RTP, a truncated message, a wrong cookie.
    expect(stunType(hex("80 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"))).toBe(-1);
    expect(stunType(REQUEST.subarray(0, REQUEST.length - 4))).toBe(-1);
    const cookie = Buffer.from(REQUEST);
    cookie[4] ^= 1;
    expect(stunType(cookie)).toBe(-1);
    // An attribute running past the end.
    const long = Buffer.from(REQUEST);
    long.writeUInt16BE(0x100, 22);
    expect(new StunScan().scan(long)).toBe(false);
  });

  it("computes CRC-32 as IEEE's", () => {
    expect(crc32(Buffer.from("123456789"))).toBe(0xcbf43926);
  });
});
