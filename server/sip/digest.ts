// Digest authentication of SIP requests (RFC 2617 as RFC 3261 §22 uses it: MD5, qop "auth" or
// none): the challenge, the Authorization header's parameters, the expected response, nonces.
import { createHash, timingSafeEqual } from "node:crypto";
import type { TimeReader, RandomSource } from "../clock.js";

export interface DigestCredentials {
  username: string;
  realm: string;
  nonce: string;
  uri: string;
  response: string;
  algorithm?: string;
  qop?: string;
  nc?: string;
  cnonce?: string;
  opaque?: string;
}

export interface DigestInput {
  username: string;
  realm: string;
  password: string;
  method: string;
  uri: string;
  nonce: string;
  qop?: string;
  nc?: string;
  cnonce?: string;
}

const md5 = (text: string): string => createHash("md5").update(text, "utf8").digest("hex");

/** The `response` a client with the right password computes (RFC 2617 §3.2.2.1). */
export function digestResponse(input: DigestInput): string {
  const ha1 = md5(`${input.username}:${input.realm}:${input.password}`);
  const ha2 = md5(`${input.method}:${input.uri}`);
  if (input.qop === undefined) return md5(`${ha1}:${input.nonce}:${ha2}`);
  return md5(`${ha1}:${input.nonce}:${input.nc ?? ""}:${input.cnonce ?? ""}:${input.qop}:${ha2}`);
}

/** True when the credentials' response is the one `password` gives for this method. */
export function digestMatches(credentials: DigestCredentials, method: string, password: string): boolean {
  const expected = digestResponse({ ...credentials, method, password });
  const given = credentials.response.toLowerCase();
  // Equal lengths first: timingSafeEqual throws on a length mismatch.
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/**
 * The parameters of `Digest k=v, k="v", ...`, or null when the header is not a well-formed digest
 * (another scheme, a broken quoted string, a missing parameter).
 */
export function parseAuthorization(header: string): DigestCredentials | null {
  const scheme = /^\s*Digest\s+/i.exec(header);
  if (!scheme) return null;
  const params = new Map<string, string>();
  let i = scheme[0].length;
  while (i < header.length) {
    while (i < header.length && /[\s,]/.test(header.charAt(i))) i++;
    if (i >= header.length) break;
    const name = /^[A-Za-z0-9_-]+/.exec(header.slice(i))?.[0];
    if (!name) return null;
    i += name.length;
    while (header.charAt(i) === " ") i++;
    if (header.charAt(i) !== "=") return null;
    i++;
    while (header.charAt(i) === " ") i++;
    let value = "";
    if (header.charAt(i) === '"') {
      i++;
      for (;;) {
        if (i >= header.length) return null;
        const c = header.charAt(i++);
        if (c === '"') break;
        value += c === "\\" ? header.charAt(i++) : c;
      }
    } else {
      const end = header.slice(i).search(/[\s,]/);
      value = end === -1 ? header.slice(i) : header.slice(i, i + end);
      i += value.length;
    }
    const key = name.toLowerCase();
    if (params.has(key)) return null;
    params.set(key, value);
  }
  const required = (key: string): string | undefined => params.get(key);
  const username = required("username");
  const realm = required("realm");
  const nonce = required("nonce");
  const uri = required("uri");
  const response = required("response");
  if (username === undefined || realm === undefined || nonce === undefined || uri === undefined || response === undefined) return null;
  const qop = params.get("qop");
  // With qop, the nonce count and client nonce are part of the hash: without them it cannot match.
  if (qop !== undefined && (params.get("nc") === undefined || params.get("cnonce") === undefined)) return null;
  return {
    username,
    realm,
    nonce,
    uri,
    response,
    algorithm: params.get("algorithm"),
    qop,
    nc: params.get("nc"),
    cnonce: params.get("cnonce"),
    opaque: params.get("opaque"),
  };
}

/** The value of WWW-Authenticate for a challenge in `realm`. */
export function challenge(realm: string, nonce: string, stale = false): string {
  return `Digest realm="${quote(realm)}", nonce="${nonce}", algorithm=MD5, qop="auth"${stale ? ", stale=true" : ""}`;
}

function quote(text: string): string {
  return text.replace(/["\\]/g, "\\$&");
}

export type NonceState = "fresh" | "stale";

export interface NonceOptions {
  clock: TimeReader;
  random: RandomSource;
  /** How long a nonce may be used. */
  ttlMs?: number;
  /** Most nonces remembered; the oldest go first, so a flood of challenges stays bounded. */
  max?: number;
}

const DEFAULT_NONCE_TTL_MS = 5 * 60_000;
const DEFAULT_MAX_NONCES = 10_000;

/**
 * The nonces this server handed out, each with its issue time and the highest nonce count used,
 * so an expired nonce or a replayed count asks the client to retry with a new one (stale=true).
 * A response without qop carries no count, so nothing but the nonce tells a replay from a new
 * request: such a nonce is good for one request only (RFC 2617 §4.5's one-time nonce).
 */
export class NonceBook {
  readonly #clock: TimeReader;
  readonly #random: RandomSource;
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #issued = new Map<string, { issuedAt: number; lastNc: number }>();

  constructor(options: NonceOptions) {
    this.#clock = options.clock;
    this.#random = options.random;
    this.#ttlMs = options.ttlMs ?? DEFAULT_NONCE_TTL_MS;
    this.#max = options.max ?? DEFAULT_MAX_NONCES;
  }

  issue(): string {
    const nonce = this.#random.bytes(16).toString("hex");
    this.#issued.set(nonce, { issuedAt: this.#clock.now(), lastNc: 0 });
    for (const oldest of this.#issued.keys()) {
      if (this.#issued.size <= this.#max) break;
      this.#issued.delete(oldest);
    }
    return nonce;
  }

  /**
   * Uses a nonce once more. Unknown (from before a restart, used up, or forgotten), expired, or
   * with a nonce count not above the last one: stale. Without a count (no qop) it is used up.
   */
  use(nonce: string, nc?: string): NonceState {
    const entry = this.#issued.get(nonce);
    if (!entry || this.#clock.now() - entry.issuedAt >= this.#ttlMs) return "stale";
    if (nc === undefined) {
      this.#issued.delete(nonce);
      // A nonce already answered with qop was seen on the wire with its counts: not one-time any more.
      return entry.lastNc === 0 ? "fresh" : "stale";
    }
    const count = /^[0-9a-fA-F]{8}$/.test(nc) ? parseInt(nc, 16) : 0;
    if (count <= entry.lastNc) return "stale";
    entry.lastNc = count;
    return "fresh";
  }

  /** Forgets expired nonces. */
  prune(): void {
    const now = this.#clock.now();
    for (const [nonce, entry] of this.#issued) {
      if (now - entry.issuedAt >= this.#ttlMs) this.#issued.delete(nonce);
    }
  }

  get size(): number {
    return this.#issued.size;
  }
}
