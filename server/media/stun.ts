// The few STUN messages (RFC 5389) our own ICE consent checks (RFC 7675) need on a leg's direct
// path (direct-rtp.ts): a binding request read and its integrity and fingerprint checked, a binding
// success answer or request written into a buffer its writer reuses, signed in place. Only what
// ICE's connectivity checks carry is read (USERNAME, MESSAGE-INTEGRITY, FINGERPRINT, USE-CANDIDATE,
// the role attributes); werift still reads everything else. Checked against RFC 5769's test vectors
// (test/unit/stun.test.ts).

import { createHmac, type KeyObject } from "node:crypto";
import * as zlib from "node:zlib";

export const STUN_HEADER = 20;
export const MAGIC_COOKIE = 0x2112a442;
export const BINDING_REQUEST = 0x0001;
export const BINDING_SUCCESS = 0x0101;
export const BINDING_ERROR = 0x0111;

export const ATTR = {
  USERNAME: 0x0006,
  MESSAGE_INTEGRITY: 0x0008,
  XOR_MAPPED_ADDRESS: 0x0020,
  PRIORITY: 0x0024,
  USE_CANDIDATE: 0x0025,
  SOFTWARE: 0x8022,
  FINGERPRINT: 0x8028,
  ICE_CONTROLLED: 0x8029,
  ICE_CONTROLLING: 0x802a,
} as const;

/** Attributes below 0x8000 that this reader knows (the rest of that range: comprehension required). */
const KNOWN_REQUIRED = new Set<number>([ATTR.USERNAME, ATTR.MESSAGE_INTEGRITY, ATTR.XOR_MAPPED_ADDRESS, ATTR.PRIORITY, ATTR.USE_CANDIDATE]);
const INTEGRITY_LENGTH = 20;
const FINGERPRINT_XOR = 0x5354554e;

/** A table CRC-32 (IEEE), for a Node without zlib.crc32 (added in 20.15). */
function tableCrc32(): (data: Uint8Array) => number {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return (data) => {
    let crc = -1;
    for (let i = 0; i < data.length; i++) crc = (table[(crc ^ (data[i] ?? 0)) & 0xff] ?? 0) ^ (crc >>> 8);
    return (crc ^ -1) >>> 0;
  };
}

/** zlib's when Node has it (one native call), else a table's. */
export const crc32: (data: Uint8Array) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === "function" ? (data) => zlib.crc32(data) : tableCrc32();

/**
 * The message type of a STUN datagram whose header holds (two zero bits first, the magic cookie,
 * a length of whole words that is the datagram's own), else -1.
 */
export function stunType(data: Buffer): number {
  if (data.length < STUN_HEADER || (data[0] & 0xc0) !== 0) return -1;
  const length = data.readUInt16BE(2);
  if (length + STUN_HEADER !== data.length || (length & 3) !== 0 || data.readUInt32BE(4) !== MAGIC_COOKIE) return -1;
  return data.readUInt16BE(0);
}

/** Whether two transaction ids (bytes 8-19 of a message) are the same. */
export function sameTransaction(a: Buffer, b: Buffer): boolean {
  for (let i = 8; i < STUN_HEADER; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Where a message's attributes of interest are: offsets of their values (-1: absent); reused per message. */
export class StunScan {
  username = -1;
  usernameLength = 0;
  /** Offset of the MESSAGE-INTEGRITY attribute itself (its header), -1 if absent. */
  integrity = -1;
  /** Offset of the FINGERPRINT attribute itself, -1 if absent. */
  fingerprint = -1;
  useCandidate = false;
  controlling = false;
  controlled = false;
  /** A comprehension-required attribute this reader does not know (RFC 5389 §7.3.1: werift decides). */
  unknownRequired = false;

  /** Reads `data`'s attributes (a message stunType accepted); false when they do not fit its length. */
  scan(data: Buffer): boolean {
    this.username = -1;
    this.usernameLength = 0;
    this.integrity = -1;
    this.fingerprint = -1;
    this.useCandidate = this.controlling = this.controlled = this.unknownRequired = false;
    let at = STUN_HEADER;
    while (at < data.length) {
      if (at + 4 > data.length) return false;
      const type = data.readUInt16BE(at);
      const length = data.readUInt16BE(at + 2);
      const end = at + 4 + length;
      if (end > data.length) return false;
      // RFC 5389 §15.4/15.5: after MESSAGE-INTEGRITY only FINGERPRINT counts; FINGERPRINT is last.
      if (this.fingerprint >= 0) return false;
      if (type === ATTR.FINGERPRINT) {
        if (length !== 4) return false;
        this.fingerprint = at;
      } else if (this.integrity < 0) {
        if (type === ATTR.MESSAGE_INTEGRITY) {
          if (length !== INTEGRITY_LENGTH) return false;
          this.integrity = at;
        } else if (type === ATTR.USERNAME) {
          this.username = at + 4;
          this.usernameLength = length;
        } else if (type === ATTR.USE_CANDIDATE) this.useCandidate = true;
        else if (type === ATTR.ICE_CONTROLLING) this.controlling = true;
        else if (type === ATTR.ICE_CONTROLLED) this.controlled = true;
        else if (type < 0x8000 && !KNOWN_REQUIRED.has(type)) this.unknownRequired = true;
      }
      at = end + ((4 - (length & 3)) & 3);
    }
    return at === data.length;
  }
}

/**
 * `data`'s length field set to `length` while `fn` reads it (the checks cover the message as it
 * stood when each attribute was added, RFC 5389 §15.4-15.5), then put back.
 */
function withLength<T>(data: Buffer, length: number, fn: () => T): T {
  const was = data.readUInt16BE(2);
  data.writeUInt16BE(length, 2);
  try {
    return fn();
  } finally {
    data.writeUInt16BE(was, 2);
  }
}

/** HMAC-SHA1 of `data` up to `at` with the length field as MESSAGE-INTEGRITY at `at` makes it. */
function integrityOf(data: Buffer, at: number, key: KeyObject | Buffer): Buffer {
  return withLength(data, at + 4 + INTEGRITY_LENGTH - STUN_HEADER, () => createHmac("sha1", key).update(data.subarray(0, at)).digest());
}

/** Whether the MESSAGE-INTEGRITY attribute at `at` (its header's offset) is right for `key`. */
export function integrityOk(data: Buffer, at: number, key: KeyObject | Buffer): boolean {
  const expected = integrityOf(data, at, key);
  let diff = 0;
  for (let i = 0; i < INTEGRITY_LENGTH; i++) diff |= (expected[i] ?? 0) ^ (data[at + 4 + i] ?? 0);
  return diff === 0;
}

function fingerprintOf(data: Buffer, at: number): number {
  return (withLength(data, at + 8 - STUN_HEADER, () => crc32(data.subarray(0, at))) ^ FINGERPRINT_XOR) >>> 0;
}

/** Whether the FINGERPRINT attribute at `at` (its header's offset) is right. */
export function fingerprintOk(data: Buffer, at: number): boolean {
  return fingerprintOf(data, at) === data.readUInt32BE(at + 4);
}

/** An IPv4 or IPv6 address's bytes (4 or 16), or undefined. */
export function addressBytes(host: string): Buffer | undefined {
  const zone = host.indexOf("%");
  const h = zone >= 0 ? host.slice(0, zone) : host;
  if (!h.includes(":")) {
    const parts = h.split(".");
    if (parts.length !== 4) return undefined;
    const out = Buffer.alloc(4);
    for (let i = 0; i < 4; i++) {
      const n = Number(parts[i]);
      if (!Number.isInteger(n) || n < 0 || n > 255) return undefined;
      out[i] = n;
    }
    return out;
  }
  // IPv6: "::" once at most, an IPv4 tail allowed.
  const [head = "", tail, ...more] = h.split("::");
  if (more.length > 0) return undefined;
  const words = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    for (const group of part.split(":")) {
      if (group.includes(".")) {
        const v4 = addressBytes(group);
        if (!v4) return undefined;
        out.push(v4.readUInt16BE(0), v4.readUInt16BE(2));
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(group)) return undefined;
        out.push(parseInt(group, 16));
      }
    }
    return out;
  };
  const first = words(head);
  const last = tail === undefined ? [] : words(tail);
  if (!first || !last) return undefined;
  const fill = 8 - first.length - last.length;
  if (tail === undefined ? fill !== 0 : fill < 1) return undefined;
  const all = [...first, ...new Array<number>(fill).fill(0), ...last];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, 2 * i));
  return out;
}

/**
 * Writes STUN messages into one buffer of its own, reused for each (what `sign` returns is a view
 * of it, valid until the next `start`).
 */
export class StunWriter {
  readonly #buffer: Buffer;
  #at = STUN_HEADER;

  constructor(capacity = 512) {
    this.#buffer = Buffer.alloc(capacity);
  }

  /** Starts a message of `type` with the transaction id at bytes 8-19 of `transaction` (or, 12 bytes long, the id itself). */
  start(type: number, transaction: Uint8Array): this {
    const b = this.#buffer;
    b.writeUInt16BE(type, 0);
    b.writeUInt32BE(MAGIC_COOKIE, 4);
    const from = transaction.length === 12 ? 0 : 8;
    for (let i = 0; i < 12; i++) b[8 + i] = transaction[from + i] ?? 0;
    this.#at = STUN_HEADER;
    return this;
  }

  /** The message's header as written so far (its transaction id at bytes 8-19). */
  get header(): Buffer {
    return this.#buffer.subarray(0, STUN_HEADER);
  }

  /** An attribute with `value`, padded to a whole word with `pad` (zero; RFC 5769's vectors pad with spaces). */
  attribute(type: number, value: Uint8Array, pad = 0): this {
    const b = this.#buffer;
    const at = this.#at;
    b.writeUInt16BE(type, at);
    b.writeUInt16BE(value.length, at + 2);
    b.set(value, at + 4);
    let end = at + 4 + value.length;
    while (end & 3) b[end++] = pad;
    this.#at = end;
    return this;
  }

  u32(type: number, value: number): this {
    const v = Buffer.alloc(4);
    v.writeUInt32BE(value >>> 0, 0);
    return this.attribute(type, v);
  }

  u64(type: number, value: bigint): this {
    const v = Buffer.alloc(8);
    v.writeBigUInt64BE(BigInt.asUintN(64, value), 0);
    return this.attribute(type, v);
  }

  flag(type: number): this {
    return this.attribute(type, Buffer.alloc(0));
  }

  /** XOR-MAPPED-ADDRESS of `host` and `port` (RFC 5389 §15.2); false for an address it cannot read. */
  xorAddress(host: string, port: number): boolean {
    const ip = addressBytes(host);
    if (!ip) return false;
    const b = this.#buffer;
    const at = this.#at;
    b.writeUInt16BE(ATTR.XOR_MAPPED_ADDRESS, at);
    b.writeUInt16BE(4 + ip.length, at + 2);
    b[at + 4] = 0;
    b[at + 5] = ip.length === 4 ? 1 : 2;
    b.writeUInt16BE((port ^ (MAGIC_COOKIE >>> 16)) & 0xffff, at + 6);
    // The address XORed with the cookie and then the transaction id (bytes 4-19 of the header).
    for (let i = 0; i < ip.length; i++) b[at + 8 + i] = (ip[i] ?? 0) ^ (b[4 + i] ?? 0);
    this.#at = at + 8 + ip.length;
    return true;
  }

  /** MESSAGE-INTEGRITY with `key` (omitted: none) and FINGERPRINT added; the message, a view of the buffer. */
  sign(key?: KeyObject | Buffer): Buffer {
    const b = this.#buffer;
    if (key !== undefined) {
      const at = this.#at;
      b.writeUInt16BE(at - STUN_HEADER, 2);
      const mac = integrityOf(b, at, key);
      b.writeUInt16BE(ATTR.MESSAGE_INTEGRITY, at);
      b.writeUInt16BE(INTEGRITY_LENGTH, at + 2);
      mac.copy(b, at + 4);
      this.#at = at + 4 + INTEGRITY_LENGTH;
    }
    const at = this.#at;
    b.writeUInt16BE(at - STUN_HEADER, 2);
    const fingerprint = fingerprintOf(b, at);
    b.writeUInt16BE(ATTR.FINGERPRINT, at);
    b.writeUInt16BE(4, at + 2);
    b.writeUInt32BE(fingerprint, at + 4);
    this.#at = at + 8;
    b.writeUInt16BE(this.#at - STUN_HEADER, 2);
    return b.subarray(0, this.#at);
  }
}
