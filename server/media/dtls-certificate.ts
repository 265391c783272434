// A media thread's DTLS certificate, made with node:crypto (issue 17, "Start"). werift makes its
// own with @peculiar/x509 (WebCrypto's key, then an X.509 encoder built on asn1js, tsyringe and
// reflect-metadata, all evaluated at the thread's start), which was a large part of a media worker's
// start and so of the first call's wait. The same certificate, made here: an ECDSA P-256 key,
// self-signed with SHA-256, the subject and issuer werift gives its own (C=AU, ST=Some-State,
// O=Internet Widgits Pty Ltd), a random 64-bit serial, valid from now for ten years, no
// extensions. Only the fingerprint of it reaches a peer's SDP; the key stays in this thread's
// memory (it is never written anywhere, nor sent to another thread).
import { generateKeyPairSync, sign } from "node:crypto";
import { systemClock, systemRandom, type RandomSource, type TimeReader } from "../clock.js";

/** werift's names for the one signature it makes: ECDSA (3) with SHA-256 (4). */
export const ECDSA_SHA256 = { signature: 3, hash: 4 } as const;

export interface DtlsCertificatePem {
  certPem: string;
  /** PKCS #8, as werift's own. */
  keyPem: string;
  signatureHash: typeof ECDSA_SHA256;
}

const SUBJECT: readonly [oid: string, value: string][] = [
  ["2.5.4.6", "AU"],
  ["2.5.4.8", "Some-State"],
  ["2.5.4.10", "Internet Widgits Pty Ltd"],
];
const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const VALID_MS = 10 * 365 * 24 * 60 * 60 * 1000;

/** DER: a tag, the length (short or long form) and the contents. */
function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  if (n > 0xffff) throw new RangeError("a DER value over 64 KiB");
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** A Name: one attribute per RDN, in order; the country as PrintableString, the rest UTF8String. */
function name(attributes: readonly [string, string][]): Buffer {
  return sequence(...attributes.map(([type, value]) => tlv(0x31, sequence(oid(type), tlv(type === "2.5.4.6" ? 0x13 : 0x0c, Buffer.from(value, "utf8"))))));
}

/** UTCTime before 2050, GeneralizedTime from then (RFC 5280, 4.1.2.5), to the second. */
function time(at: Date): Buffer {
  const iso = at.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return at.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), "ascii")) : tlv(0x18, Buffer.from(digits, "ascii"));
}

/** A positive INTEGER of these bytes (a leading zero byte when the first has its top bit set). */
function positiveInteger(bytes: Buffer): Buffer {
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/**
 * A new key and its self-signed certificate, as werift's `RTCCertificate` takes them: valid from
 * `clock`'s now, its serial from `random` (the key is node's own draw).
 */
export function makeDtlsCertificate(clock: TimeReader = systemClock, random: RandomSource = systemRandom): DtlsCertificatePem {
  const now = new Date(clock.now());
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const algorithm = sequence(oid(ECDSA_WITH_SHA256));
  const serial = Buffer.from(random.bytes(8));
  serial[0] = (serial[0] ?? 0) & 0x7f || 0x01; // positive, no leading zero byte
  const subject = name(SUBJECT);
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // v3
    positiveInteger(serial),
    algorithm,
    subject,
    sequence(time(now), time(new Date(now.getTime() + VALID_MS))),
    subject,
    publicKey.export({ type: "spki", format: "der" }),
  );
  const signature = sign("sha256", tbs, privateKey); // DER ECDSA-Sig-Value
  const certificate = sequence(tbs, algorithm, tlv(0x03, Buffer.from([0]), signature));
  return {
    certPem: pem("CERTIFICATE", certificate),
    keyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    signatureHash: ECDSA_SHA256,
  };
}
