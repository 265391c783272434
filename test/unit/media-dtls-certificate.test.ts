// A media thread's DTLS certificate made with node:crypto (server/media/dtls-certificate.ts), in
// place of werift's own (@peculiar/x509): a well-formed X.509 v3 certificate that node and openssl
// read, self-signed with ECDSA P-256 and SHA-256 by the key handed over with it, the subject and
// issuer werift gives its own, a positive 64-bit serial, ten years from the moment given; werift
// takes it (its RTCCertificate parses both PEMs with @fidm/x509) and advertises its SHA-256
// fingerprint. Its DTLS handshakes run in the media tests (worker-legs, worker-serve).
import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import type * as Werift from "werift";
import { makeDtlsCertificate } from "../../server/media/dtls-certificate.js";

const werift = createRequire(import.meta.url)("werift") as typeof Werift;

describe("makeDtlsCertificate", () => {
  it("makes a self-signed ECDSA P-256 / SHA-256 certificate of the key it returns", () => {
    const { certPem, keyPem, signatureHash } = makeDtlsCertificate({ now: () => Date.parse("2026-11-28T23:45:07.250Z") });
    expect(signatureHash).toEqual({ signature: 3, hash: 4 });
    expect(keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const cert = new X509Certificate(certPem);
    expect(cert.subject).toBe("C=AU\nST=Some-State\nO=Internet Widgits Pty Ltd");
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.verify(cert.publicKey)).toBe(true);
    const key = createPrivateKey(keyPem);
    expect(cert.checkPrivateKey(key)).toBe(true);
    expect(key.asymmetricKeyType).toBe("ec");
    expect(key.asymmetricKeyDetails).toEqual({ namedCurve: "prime256v1" });
    expect(createPublicKey(key).export({ type: "spki", format: "der" }).equals(cert.publicKey.export({ type: "spki", format: "der" }))).toBe(true);
    expect(new Date(cert.validFrom).toISOString()).toBe("2026-11-28T23:45:07.000Z");
    expect(new Date(cert.validTo).toISOString()).toBe("2036-11-25T23:45:07.000Z");
    expect(cert.serialNumber).toMatch(/^[0-7][0-9A-F]{15}$/);
    expect(cert.ca).toBe(false);
    // The signature algorithm is ecdsa-with-SHA256 (OID 1.2.840.10045.4.3.2), in the certificate's DER.
    expect(cert.raw.includes(Buffer.from("06082a8648ce3d040302", "hex"))).toBe(true);
  });

  it("takes its serial from the random source, made positive", () => {
    const clock = { now: () => Date.parse("2030-01-01T00:00:00Z") };
    expect(new X509Certificate(makeDtlsCertificate(clock, { bytes: (n) => Buffer.alloc(n, 0xff) }).certPem).serialNumber).toBe("7FFFFFFFFFFFFFFF");
    expect(new X509Certificate(makeDtlsCertificate(clock, { bytes: (n) => Buffer.alloc(n, 0) }).certPem).serialNumber).toBe("0100000000000000");
  });

  it("makes a new key and serial every time", () => {
    const a = makeDtlsCertificate();
    const b = makeDtlsCertificate();
    expect(a.keyPem).not.toBe(b.keyPem);
    expect(new X509Certificate(a.certPem).serialNumber).not.toBe(new X509Certificate(b.certPem).serialNumber);
  });

  it("writes validity as UTCTime before 2050 and GeneralizedTime from then", () => {
    const late = new X509Certificate(makeDtlsCertificate({ now: () => Date.parse("2045-01-02T03:04:05Z") }).certPem);
    expect(new Date(late.validFrom).toISOString()).toBe("2045-01-02T03:04:05.000Z");
    expect(new Date(late.validTo).toISOString()).toBe("2054-12-31T03:04:05.000Z");
    // Tag 0x17 (UTCTime, 13 characters) for the start, 0x18 (GeneralizedTime, 15) for the end.
    expect(late.raw.includes(Buffer.from("\x17\x0d450102030405Z", "latin1"))).toBe(true);
    expect(late.raw.includes(Buffer.from("\x18\x0f20541231030405Z", "latin1"))).toBe(true);
  });

  it("is taken by werift, which advertises its SHA-256 fingerprint", () => {
    const { certPem, keyPem, signatureHash } = makeDtlsCertificate();
    const certificate = new werift.RTCCertificate(keyPem, certPem, signatureHash);
    const [fingerprint] = certificate.getFingerprints();
    expect(fingerprint?.algorithm).toBe("sha-256");
    expect(fingerprint?.value).toBe(new X509Certificate(certPem).fingerprint256);
  });
});
