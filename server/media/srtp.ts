// SRTP for the direct RTP path (RFC 3711, RFC 7714): one context per direction of a DTLS-SRTP
// session, for the two profiles werift and browsers negotiate, AES_CM_128_HMAC_SHA1_80 and
// AEAD_AES_128_GCM. werift's own SRTP makes a new OpenSSL cipher (and, for AES-CM, an HMAC) for
// every packet, which cost about as much as the rest of a leg's media work together. Here each
// context keeps one AES-128-ECB cipher for its session key and feeds it every packet's counter
// blocks in one call (AES in counter mode, and GCM's J0 block); the HMAC-SHA1 (from the keyed
// states, precomputed) and GCM's GHASH (8-bit tables per key) run in JavaScript with no
// allocation. Keys come from the DTLS handshake's master keys (werift's session config).
// Receivers estimate the packet index (RFC 3711 §3.3.1); replays are dropped by the leg, which
// discards any packet not ahead of the last one.

import { createCipheriv, type Cipher } from "node:crypto";

export const SRTP_AES128_CM_HMAC_SHA1_80 = 1;
export const SRTP_AEAD_AES_128_GCM = 7;
export type SrtpProfileId = typeof SRTP_AES128_CM_HMAC_SHA1_80 | typeof SRTP_AEAD_AES_128_GCM;

/** The RTP header fields the path writes and reads. */
export interface RtpFields {
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
}

export interface RtpOutFields extends RtpFields {
  marker?: boolean;
}

const CM_TAG = 10;
const GCM_TAG = 16;
/** Packets per batch of keystream (SrtpContext's #keystream): 32 packets, 5.5 KiB of AES output for GCM. */
export const KEYSTREAM_BATCH = 32;
/** The longest payload a batched keystream covers: one G.711 frame of 20 ms. */
const BATCH_PAYLOAD = 160;

function ecb(key: Buffer): Cipher {
  const cipher = createCipheriv("aes-128-ecb", key, null);
  cipher.setAutoPadding(false);
  return cipher;
}

/** RFC 3711 §4.3.1 with a key derivation rate of 0: AES-CM over (label XOR master salt) · 2^16. */
export function deriveKey(masterKey: Buffer, masterSalt: Buffer, label: number, length: number): Buffer {
  const x = Buffer.alloc(16);
  masterSalt.copy(x, 0, 0, Math.min(14, masterSalt.length));
  x[7] = (x[7] ?? 0) ^ label;
  const blocks = Math.ceil(length / 16);
  const input = Buffer.alloc(blocks * 16);
  for (let j = 0; j < blocks; j++) {
    x.copy(input, j * 16, 0, 14);
    input.writeUInt16BE(j, j * 16 + 14);
  }
  return ecb(masterKey).update(input).subarray(0, length);
}

// ---- SHA-1 and HMAC-SHA1 (FIPS 180-4, RFC 2104) --------------------------------------------

const W = new Int32Array(80);

/** One SHA-1 compression of the 64 bytes at `at` into `h` (five words). */
function sha1Block(h: Int32Array, m: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++) {
    const j = at + 4 * i;
    W[i] = ((m[j] ?? 0) << 24) | ((m[j + 1] ?? 0) << 16) | ((m[j + 2] ?? 0) << 8) | (m[j + 3] ?? 0);
  }
  for (let i = 16; i < 80; i++) {
    const x = (W[i - 3] ?? 0) ^ (W[i - 8] ?? 0) ^ (W[i - 14] ?? 0) ^ (W[i - 16] ?? 0);
    W[i] = (x << 1) | (x >>> 31);
  }
  let a = h[0] ?? 0;
  let b = h[1] ?? 0;
  let c = h[2] ?? 0;
  let d = h[3] ?? 0;
  let e = h[4] ?? 0;
  // The four kinds of round in loops of their own: one loop choosing among them per round took a
  // fifth longer (an HMAC of a 172-byte packet, 2.84 against 2.34 µs in a micro A/B).
  for (let i = 0; i < 20; i++) {
    const t = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + (W[i] ?? 0)) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  for (let i = 20; i < 40; i++) {
    const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + (W[i] ?? 0)) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  for (let i = 40; i < 60; i++) {
    const t = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + (W[i] ?? 0)) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  for (let i = 60; i < 80; i++) {
    const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0xca62c1d6 + (W[i] ?? 0)) | 0;
    e = d;
    d = c;
    c = (b << 30) | (b >>> 2);
    b = a;
    a = t;
  }
  h[0] = ((h[0] ?? 0) + a) | 0;
  h[1] = ((h[1] ?? 0) + b) | 0;
  h[2] = ((h[2] ?? 0) + c) | 0;
  h[3] = ((h[3] ?? 0) + d) | 0;
  h[4] = ((h[4] ?? 0) + e) | 0;
}

const SHA1_INIT = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];

/** HMAC-SHA1 with the key's inner and outer states computed once. */
export class HmacSha1 {
  readonly #inner = new Int32Array(5);
  readonly #outer = new Int32Array(5);
  readonly #h = new Int32Array(5);
  #scratch = new Uint8Array(256);

  constructor(key: Buffer) {
    const pad = new Uint8Array(64);
    for (const [state, byte] of [
      [this.#inner, 0x36],
      [this.#outer, 0x5c],
    ] as const) {
      for (let i = 0; i < 64; i++) pad[i] = (key[i] ?? 0) ^ byte;
      state.set(SHA1_INIT);
      sha1Block(state, pad, 0);
    }
  }

  /** HMAC over `data[start, end)` followed by the 4-byte `suffix`; the first `length` bytes go to `out[at..]`. */
  sign(data: Uint8Array, start: number, end: number, suffix: number, out: Uint8Array, at: number, length: number): void {
    const n = end - start;
    // The inner hash: n + 4 message bytes after the 64-byte keyed block, then padding and length.
    const total = n + 4;
    const padded = (total + 9 + 63) & ~63;
    if (this.#scratch.length < padded) this.#scratch = new Uint8Array(padded * 2);
    const m = this.#scratch;
    m.set(data.subarray(start, end), 0);
    m[n] = suffix >>> 24;
    m[n + 1] = (suffix >>> 16) & 0xff;
    m[n + 2] = (suffix >>> 8) & 0xff;
    m[n + 3] = suffix & 0xff;
    m[total] = 0x80;
    m.fill(0, total + 1, padded);
    const bits = (64 + total) * 8;
    m[padded - 4] = bits >>> 24;
    m[padded - 3] = (bits >>> 16) & 0xff;
    m[padded - 2] = (bits >>> 8) & 0xff;
    m[padded - 1] = bits & 0xff;
    const h = this.#h;
    h.set(this.#inner);
    for (let at2 = 0; at2 < padded; at2 += 64) sha1Block(h, m, at2);
    // The outer hash: the inner digest (20 bytes) after the keyed block.
    for (let i = 0; i < 5; i++) {
      const w = h[i] ?? 0;
      m[4 * i] = w >>> 24;
      m[4 * i + 1] = (w >>> 16) & 0xff;
      m[4 * i + 2] = (w >>> 8) & 0xff;
      m[4 * i + 3] = w & 0xff;
    }
    m[20] = 0x80;
    m.fill(0, 21, 62);
    m[62] = ((64 + 20) * 8) >>> 8;
    m[63] = ((64 + 20) * 8) & 0xff;
    h.set(this.#outer);
    sha1Block(h, m, 0);
    for (let i = 0; i < length; i++) out[at + i] = ((h[i >> 2] ?? 0) >>> (24 - 8 * (i & 3))) & 0xff;
  }
}

// ---- GHASH (NIST SP 800-38D) -----------------------------------------------------------------

/** The reduction of the 8 bits shifted out by a multiplication by x^8, for the top word. */
const GHASH_REM = (() => {
  const rem = new Uint32Array(256);
  for (let r = 0; r < 256; r++) {
    // r's bits are the coefficients of x^120..x^127; multiply by x^8 and reduce (x^128 = 1 + x + x^2 + x^7).
    let z0 = 0;
    let low = r;
    for (let i = 0; i < 8; i++) {
      // One multiplication by x: the lowest bit of `low` is x^127's coefficient (shifted out first).
      const out = low & 1;
      low >>>= 1;
      z0 >>>= 1;
      if (out) z0 ^= 0xe1000000;
    }
    rem[r] = z0 >>> 0;
  }
  return rem;
})();

/** GHASH with one key's 8-bit multiplication table (4 KiB). */
export class Ghash {
  readonly #table = new Uint32Array(256 * 4);
  #z0 = 0;
  #z1 = 0;
  #z2 = 0;
  #z3 = 0;

  constructor(h: Buffer) {
    const t = this.#table;
    // table[128] = H; table[128 >> i] = H · x^i; the others by XOR.
    let v0 = h.readUInt32BE(0);
    let v1 = h.readUInt32BE(4);
    let v2 = h.readUInt32BE(8);
    let v3 = h.readUInt32BE(12);
    for (let bit = 128; bit >= 1; bit >>= 1) {
      t[bit * 4] = v0;
      t[bit * 4 + 1] = v1;
      t[bit * 4 + 2] = v2;
      t[bit * 4 + 3] = v3;
      const lsb = v3 & 1;
      v3 = ((v3 >>> 1) | (v2 << 31)) >>> 0;
      v2 = ((v2 >>> 1) | (v1 << 31)) >>> 0;
      v1 = ((v1 >>> 1) | (v0 << 31)) >>> 0;
      v0 = (v0 >>> 1) ^ (lsb ? 0xe1000000 : 0);
    }
    for (let i = 2; i < 256; i <<= 1) {
      for (let j = 1; j < i; j++) {
        for (let w = 0; w < 4; w++) t[(i + j) * 4 + w] = (t[i * 4 + w] ?? 0) ^ (t[j * 4 + w] ?? 0);
      }
    }
  }

  reset(): void {
    this.#z0 = this.#z1 = this.#z2 = this.#z3 = 0;
  }

  /** Absorbs `data[start, end)`, zero-padded to a whole number of 16-byte blocks. */
  update(data: Uint8Array, start: number, end: number): void {
    for (let at = start; at < end; at += 16) {
      this.#mul(word(data, at, end), word(data, at + 4, end), word(data, at + 8, end), word(data, at + 12, end));
    }
  }

  /** Absorbs the lengths block and writes the hash (16 bytes) to `out[at..]`. */
  finish(aadBytes: number, textBytes: number, out: Uint8Array, at: number): void {
    this.#mul(0, aadBytes * 8, 0, textBytes * 8);
    putWord(out, at, this.#z0);
    putWord(out, at + 4, this.#z1);
    putWord(out, at + 8, this.#z2);
    putWord(out, at + 12, this.#z3);
  }

  /**
   * Z = (Z XOR X) · H, by X's bytes from the last (Horner's rule in x^8), written out: a loop over
   * the sixteen bytes, with its choice of word and its first-step test, took 1.4 times as long (a
   * packet's GHASH, 1.93 against 1.36 µs in a micro A/B). Tables per nibble position (8 KiB, no
   * shifts) were slower still.
   */
  #mul(x0: number, x1: number, x2: number, x3: number): void {
    x0 ^= this.#z0;
    x1 ^= this.#z1;
    x2 ^= this.#z2;
    x3 ^= this.#z3;
    const t = this.#table;
    let k = (x3 & 0xff) << 2;
    let z0 = t[k] ?? 0;
    let z1 = t[k + 1] ?? 0;
    let z2 = t[k + 2] ?? 0;
    let z3 = t[k + 3] ?? 0;
    let out: number;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x3 >>> 8) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x3 >>> 16) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = (x3 >>> 24) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = (x2 & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x2 >>> 8) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x2 >>> 16) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = (x2 >>> 24) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = (x1 & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x1 >>> 8) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x1 >>> 16) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = (x1 >>> 24) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = (x0 & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x0 >>> 8) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = ((x0 >>> 16) & 0xff) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    out = z3 & 0xff;
    z3 = (z3 >>> 8) | (z2 << 24);
    z2 = (z2 >>> 8) | (z1 << 24);
    z1 = (z1 >>> 8) | (z0 << 24);
    z0 = (z0 >>> 8) ^ (GHASH_REM[out] ?? 0);
    k = (x0 >>> 24) << 2;
    z0 ^= t[k] ?? 0;
    z1 ^= t[k + 1] ?? 0;
    z2 ^= t[k + 2] ?? 0;
    z3 ^= t[k + 3] ?? 0;
    this.#z0 = z0;
    this.#z1 = z1;
    this.#z2 = z2;
    this.#z3 = z3;
  }
}

/** The big-endian word at `at`, zero past `end`. */
function word(d: Uint8Array, at: number, end: number): number {
  if (at + 4 <= end) return ((d[at] ?? 0) << 24) | ((d[at + 1] ?? 0) << 16) | ((d[at + 2] ?? 0) << 8) | (d[at + 3] ?? 0);
  let w = 0;
  for (let i = 0; i < 4; i++) w |= (at + i < end ? (d[at + i] ?? 0) : 0) << (24 - 8 * i);
  return w;
}

function putWord(d: Uint8Array, at: number, w: number): void {
  d[at] = w >>> 24;
  d[at + 1] = (w >>> 16) & 0xff;
  d[at + 2] = (w >>> 8) & 0xff;
  d[at + 3] = w & 0xff;
}

/** Whether this machine stores words least significant byte first. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** A big-endian word as the machine stores it (a Uint32Array's element gives these bytes in memory). */
function toMachine(w: number): number {
  return LITTLE_ENDIAN ? (((w & 0xff) << 24) | ((w & 0xff00) << 8) | ((w >>> 8) & 0xff00) | (w >>> 24)) >>> 0 : w >>> 0;
}

/** The words of a buffer of its own (Buffer.alloc: not from the pool, so aligned at byte 0). */
function words(b: Buffer): Uint32Array {
  if (b.byteOffset % 4 !== 0) throw new Error("counter blocks must be word-aligned");
  return new Uint32Array(b.buffer, b.byteOffset, b.length >> 2);
}

// ---- SRTP contexts ---------------------------------------------------------------------------

/** An RTP packet's header length (fixed part, CSRCs and extension), or -1 when it does not fit in `end` bytes. */
export function rtpHeaderLength(packet: Uint8Array, end: number): number {
  if (end < 12) return -1;
  let at = 12 + 4 * ((packet[0] ?? 0) & 0x0f);
  if ((packet[0] ?? 0) & 0x10) {
    if (end < at + 4) return -1;
    at += 4 + 4 * (((packet[at + 2] ?? 0) << 8) | (packet[at + 3] ?? 0));
  }
  return at <= end ? at : -1;
}

/** A direction's session keys (RFC 3711 §4.3): the cipher key, the salt, and for AES-CM the authentication key. */
export interface SessionKeys {
  key: Buffer;
  salt: Buffer;
  auth: Buffer;
}

/** The session keys a master key and salt give (key derivation rate 0). */
export function sessionKeys(profile: SrtpProfileId, masterKey: Buffer, masterSalt: Buffer): SessionKeys {
  const gcm = profile === SRTP_AEAD_AES_128_GCM;
  return {
    key: deriveKey(masterKey, masterSalt, 0, 16),
    salt: deriveKey(masterKey, masterSalt, 2, gcm ? 12 : 14),
    auth: gcm ? Buffer.alloc(0) : deriveKey(masterKey, masterSalt, 1, 20),
  };
}

/** One direction's SRTP: protects what this side sends, or checks and decrypts what it receives. */
export class SrtpContext {
  readonly #gcm: boolean;
  readonly #tagLength: number;
  readonly #aes: Cipher;
  readonly #salt: Buffer;
  readonly #hmac: HmacSha1 | undefined;
  readonly #ghash: Ghash | undefined;
  /** Counter blocks for one packet whose keystream is not in the batch (a longer payload, a packet out of the window). */
  #counters = Buffer.alloc(16 * 16);
  /** The counters' first blocks as last used: a packet's length is the same as the last one's. */
  #countersView = this.#counters.subarray(0, 0);
  #countersWords = words(this.#counters);
  /** Bytes of AES output per packet in the batch: a frame's keystream (and for GCM, E(J0) first). */
  readonly #slotBytes: number;
  /** The counter blocks of a batch of KEYSTREAM_BATCH consecutive packet indexes, and their AES output. */
  readonly #batchCounters: Buffer;
  readonly #batchWords: Uint32Array;
  #batch: Buffer | undefined;
  #batchSsrc = 0;
  /** The packet index (ROC · 2^16 + SEQ) of the batch's first slot. */
  #batchBase = 0;
  /** Packets in a row whose keystream was not in the batch. */
  #misses = 0;
  /** Where the last #keystream call left its output: in `#ks` from byte `#ksAt`. */
  #ks: Buffer = Buffer.alloc(0);
  #ksAt = 0;
  /** The tag a received packet should carry. */
  readonly #expected = Buffer.alloc(16);
  // The packet index: rollover counter and highest sequence number seen (s_l), per RFC 3711.
  #roc = 0;
  #highest = -1;

  constructor(profile: SrtpProfileId, session: SessionKeys) {
    this.#gcm = profile === SRTP_AEAD_AES_128_GCM;
    this.#tagLength = this.#gcm ? GCM_TAG : CM_TAG;
    const key = session.key;
    this.#aes = ecb(key);
    this.#slotBytes = (Math.ceil(BATCH_PAYLOAD / 16) + (this.#gcm ? 1 : 0)) * 16;
    this.#batchCounters = Buffer.alloc(KEYSTREAM_BATCH * this.#slotBytes);
    this.#batchWords = words(this.#batchCounters);
    this.#salt = session.salt;
    if (this.#gcm) {
      this.#ghash = new Ghash(ecb(key).update(Buffer.alloc(16)));
    } else {
      this.#hmac = new HmacSha1(session.auth);
    }
  }

  /** A whole SRTP packet for `payload` under a 12-byte header with these fields. */
  protect(fields: RtpOutFields, payload: Uint8Array): Buffer {
    const { sequenceNumber: seq, ssrc } = fields;
    // The sender's own index: the rollover counter steps when its sequence number wraps.
    if (this.#highest >= 0 && seq < this.#highest && ((seq - this.#highest) & 0xffff) < 0x8000) this.#roc = (this.#roc + 1) >>> 0;
    if (this.#highest < 0 || ((seq - this.#highest) & 0xffff) < 0x8000) this.#highest = seq;
    const roc = this.#roc;
    const n = payload.length;
    const packet = Buffer.allocUnsafe(12 + n + this.#tagLength);
    packet[0] = 0x80;
    packet[1] = (fields.marker ? 0x80 : 0) | (fields.payloadType & 0x7f);
    packet.writeUInt16BE(seq, 2);
    packet.writeUInt32BE(fields.timestamp >>> 0, 4);
    packet.writeUInt32BE(ssrc >>> 0, 8);
    this.#keystream(ssrc, roc, seq, n);
    const keystream = this.#ks;
    const k0 = this.#ksAt + (this.#gcm ? 16 : 0);
    for (let i = 0; i < n; i++) packet[12 + i] = (payload[i] ?? 0) ^ (keystream[k0 + i] ?? 0);
    this.#tag(packet, 12, 12 + n, roc, keystream, this.#ksAt, packet, 12 + n);
    return packet;
  }

  /**
   * Checks and decrypts `packet` in place: the length of the RTP packet now at its start (header
   * and payload, the tag after it), or -1 when it fails to authenticate (the packet unchanged).
   */
  unprotect(packet: Buffer): number {
    const end = packet.length - this.#tagLength;
    const headerEnd = rtpHeaderLength(packet, end);
    if (headerEnd < 0) return -1;
    const seq = packet.readUInt16BE(2);
    const ssrc = packet.readUInt32BE(8);
    const first = this.#highest < 0;
    const guess = first ? this.#roc : this.#estimate(seq);
    // A context that has seen nothing yet tries the next rollover too: the stream may have
    // wrapped while werift's own path carried it.
    if (this.#open(packet, headerEnd, end, seq, ssrc, guess)) return end;
    if (first && this.#open(packet, headerEnd, end, seq, ssrc, (guess + 1) >>> 0)) return end;
    return -1;
  }

  #open(packet: Buffer, headerEnd: number, end: number, seq: number, ssrc: number, roc: number): boolean {
    const n = end - headerEnd;
    this.#keystream(ssrc, roc, seq, n);
    const keystream = this.#ks;
    const tag = this.#expected;
    this.#tag(packet, headerEnd, end, roc, keystream, this.#ksAt, tag, 0);
    let diff = 0;
    for (let i = 0; i < this.#tagLength; i++) diff |= (tag[i] ?? 0) ^ (packet[end + i] ?? 0);
    if (diff !== 0) return false;
    this.#accept(seq, roc);
    const k0 = this.#ksAt + (this.#gcm ? 16 : 0);
    for (let i = 0; i < n; i++) packet[headerEnd + i] = (packet[headerEnd + i] ?? 0) ^ (keystream[k0 + i] ?? 0);
    return true;
  }


  /** RFC 3711 §3.3.1: the rollover counter a received sequence number most likely belongs to. */
  #estimate(seq: number): number {
    const sl = this.#highest;
    if (sl < 0x8000) return seq - sl > 0x8000 ? (this.#roc - 1) >>> 0 : this.#roc;
    return sl - 0x8000 > seq ? (this.#roc + 1) >>> 0 : this.#roc;
  }

  /** After authentication: the index moves on when the packet is ahead of the highest seen. */
  #accept(seq: number, roc: number): void {
    if (this.#highest < 0 || roc === ((this.#roc + 1) >>> 0)) {
      this.#roc = roc;
      this.#highest = seq;
    } else if (roc === this.#roc && seq > this.#highest) {
      this.#highest = seq;
    }
  }

  /**
   * The AES output for one packet, left in `#ks` from `#ksAt`: for AES-CM the keystream (RFC 3711
   * §4.1.1), for GCM E(J0) (16 bytes, for the tag) followed by the keystream from inc32(J0) (RFC
   * 7714 §8.1). A frame's worth or less comes from a batch made for KEYSTREAM_BATCH consecutive
   * packet indexes in one AES call: a call costs about 3 µs of Node's own work whatever its length
   * (its checks, a new output buffer), half of a packet's SRTP when made per packet. The batch is
   * made again when a packet is past it (the stream moved on), or after two packets in a row
   * outside it (a jump, another SSRC); a single packet outside it (reordered, a guess at the
   * rollover counter) gets a call of its own.
   */
  #keystream(ssrc: number, roc: number, seq: number, n: number): void {
    if (n <= BATCH_PAYLOAD) {
      const index = roc * 0x10000 + seq;
      const d = index - this.#batchBase;
      const batch = this.#batch;
      if (batch !== undefined && ssrc === this.#batchSsrc && d >= 0 && d < KEYSTREAM_BATCH) {
        this.#misses = 0;
        this.#ks = batch;
        this.#ksAt = d * this.#slotBytes;
        return;
      }
      const onward = batch !== undefined && ssrc === this.#batchSsrc && d >= KEYSTREAM_BATCH && d < 4 * KEYSTREAM_BATCH;
      if (batch === undefined || onward || ++this.#misses >= 2) {
        this.#misses = 0;
        this.#fillBatch(ssrc, index);
        this.#ks = this.#batch as Buffer;
        this.#ksAt = 0;
        return;
      }
    }
    const blocks = Math.ceil(n / 16) + (this.#gcm ? 1 : 0);
    if (this.#counters.length < blocks * 16) {
      this.#counters = Buffer.alloc(blocks * 32);
      this.#countersWords = words(this.#counters);
    }
    if (this.#countersView.buffer !== this.#counters.buffer || this.#countersView.length !== blocks * 16) this.#countersView = this.#counters.subarray(0, blocks * 16);
    this.#writeCounters(this.#countersWords, 0, ssrc, roc, seq, blocks);
    this.#ks = this.#aes.update(this.#countersView);
    this.#ksAt = 0;
  }

  /** The batch for the KEYSTREAM_BATCH packet indexes from `index` (ROC · 2^16 + SEQ) of `ssrc`. */
  #fillBatch(ssrc: number, index: number): void {
    const c = this.#batchWords;
    const slot = this.#slotBytes;
    const blocks = slot / 16;
    for (let p = 0; p < KEYSTREAM_BATCH; p++) {
      const i = index + p;
      this.#writeCounters(c, p * slot, ssrc, Math.floor(i / 0x10000) >>> 0, i % 0x10000, blocks);
    }
    this.#batch = this.#aes.update(this.#batchCounters);
    this.#batchSsrc = ssrc;
    this.#batchBase = index;
  }

  /**
   * One packet's `blocks` counter blocks at byte `at` (a multiple of 16) of `c`: the IV, salt XOR
   * (SSRC, ROC, SEQ) where each profile puts them, then a block counter. Written as words in the
   * machine's order (the big-endian words byte-swapped on a little-endian machine), not through
   * Buffer's writers: a call per word was most of a batch's cost.
   */
  #writeCounters(c: Uint32Array, at: number, ssrc: number, roc: number, seq: number, blocks: number): void {
    const salt = this.#salt;
    let iv0: number;
    let iv1: number;
    let iv2: number;
    let iv3: number;
    if (this.#gcm) {
      // 00 00 | SSRC | ROC | SEQ (12 bytes), then a 32-bit block counter from 1.
      iv0 = salt.readUInt32BE(0) ^ (ssrc >>> 16);
      iv1 = salt.readUInt32BE(4) ^ (((ssrc & 0xffff) << 16) | (roc >>> 16));
      iv2 = salt.readUInt32BE(8) ^ (((roc & 0xffff) << 16) | seq);
      iv3 = 1;
    } else {
      // (salt · 2^16) XOR (SSRC · 2^64) XOR (index · 2^16), then a 16-bit block counter from 0.
      iv0 = salt.readUInt32BE(0);
      iv1 = salt.readUInt32BE(4) ^ ssrc;
      iv2 = salt.readUInt32BE(8) ^ roc;
      iv3 = ((salt.readUInt16BE(12) ^ seq) << 16) >>> 0;
    }
    const w0 = toMachine(iv0);
    const w1 = toMachine(iv1);
    const w2 = toMachine(iv2);
    for (let b = 0, w = at >> 2; b < blocks; b++, w += 4) {
      c[w] = w0;
      c[w + 1] = w1;
      c[w + 2] = w2;
      c[w + 3] = toMachine((iv3 + b) >>> 0);
    }
  }

  /** The tag of `data[start, end)` (authenticated: header then payload from 0) into `out[at..]`; the AES output for the packet at `keystream[k..]`. */
  #tag(packet: Uint8Array, headerEnd: number, end: number, roc: number, keystream: Buffer, k: number, out: Uint8Array, at: number): void {
    if (this.#hmac) {
      this.#hmac.sign(packet, 0, end, roc, out, at, CM_TAG);
      return;
    }
    const ghash = this.#ghash;
    if (!ghash) return;
    ghash.reset();
    ghash.update(packet, 0, headerEnd);
    ghash.update(packet, headerEnd, end);
    ghash.finish(headerEnd, end - headerEnd, out, at);
    for (let i = 0; i < GCM_TAG; i++) out[at + i] = (out[at + i] ?? 0) ^ (keystream[k + i] ?? 0);
  }
}

/** Both directions of one DTLS-SRTP session. */
export interface SrtpPair {
  local: SrtpContext;
  remote: SrtpContext;
}

export function srtpPair(profile: SrtpProfileId, keys: { localMasterKey: Buffer; localMasterSalt: Buffer; remoteMasterKey: Buffer; remoteMasterSalt: Buffer }): SrtpPair {
  return {
    local: new SrtpContext(profile, sessionKeys(profile, keys.localMasterKey, keys.localMasterSalt)),
    remote: new SrtpContext(profile, sessionKeys(profile, keys.remoteMasterKey, keys.remoteMasterSalt)),
  };
}
