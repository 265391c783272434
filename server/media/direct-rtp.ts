// A leg's RTP once ICE and DTLS are up: SRTP packets go between the leg and its UDP socket
// directly, past werift's per-packet layers (a STUN parse attempt, four event hops each starting a
// promise, a bit-string header parser, the router, receiver statistics and a packet clone on the
// way in; two promise chains on the way out), which cost about twice the SRTP itself (see
// docs/design-notes.md, "Media workers"), and past werift's SRTP too: our own contexts (srtp.ts)
// use the keys of werift's DTLS-SRTP session. The path also keeps ICE consent freshness (RFC 7675)
// itself, in place of werift's loop (OwnConsent below): the far end's binding requests on the
// nominated pair answered here, ours sent every 4-6 s and their answers matched here. Everything
// else on the socket (other STUN, DTLS, RTCP) still goes to werift.

import { createSecretKey, type KeyObject } from "node:crypto";
import type { Socket } from "node:dgram";
import type { RTCDtlsTransport, StunProtocol } from "werift";
import { systemRandom, type RandomSource } from "../clock.js";
import { performanceTime, type TimeSource } from "./frame-clock.js";
import { ATTR, BINDING_ERROR, BINDING_REQUEST, BINDING_SUCCESS, fingerprintOk, integrityOk, sameTransaction, STUN_HEADER, StunScan, StunWriter, stunType } from "./stun.js";
import { sendWithoutLookup } from "./udp-send.js";
import { werift } from "./werift.js";
import { rtpHeaderLength, SRTP_AEAD_AES_128_GCM, SRTP_AES128_CM_HMAC_SHA1_80, srtpPair, type RtpFields, type RtpOutFields, type SrtpPair } from "./srtp.js";

export type { RtpFields, RtpOutFields } from "./srtp.js";

type SrtpSession = RTCDtlsTransport["srtp"];

/**
 * Our contexts for each werift SRTP session (one per DTLS handshake), kept across the paths a
 * leg opens on it (after an ICE restart), so the packet indexes carry on.
 */
const contexts = new WeakMap<SrtpSession, SrtpPair | null>();

function contextsFor(session: SrtpSession): SrtpPair | undefined {
  let pair = contexts.get(session);
  if (pair === undefined) {
    const { profile, keys } = session.config;
    pair = profile === SRTP_AES128_CM_HMAC_SHA1_80 || profile === SRTP_AEAD_AES_128_GCM ? srtpPair(profile, keys) : null;
    contexts.set(session, pair);
  }
  return pair ?? undefined;
}

type Address = readonly [string, number];

/** RTP (not RTCP, RFC 5761 §4: payload types 64-95 with the marker are RTCP packet types 192-223). */
function isRtp(data: Buffer): boolean {
  return data.length >= 12 && (data[0] & 0xc0) === 0x80 && (data[1] < 192 || data[1] > 223);
}

/**
 * A decrypted packet's payload, its header fields written into `fields` (one object per path,
 * reused for every packet: handlers read it during the call); undefined when it is malformed.
 */
export function parseRtp(packet: Buffer, length: number, fields: RtpFields): Buffer | undefined {
  const at = rtpHeaderLength(packet, length);
  if (at < 0) return undefined;
  let end = length;
  if ((packet[0] ?? 0) & 0x20) end -= packet[length - 1] ?? 0;
  if (end < at) return undefined;
  fields.payloadType = packet[1] & 0x7f;
  fields.sequenceNumber = packet.readUInt16BE(2);
  fields.timestamp = packet.readUInt32BE(4);
  fields.ssrc = packet.readUInt32BE(8);
  return packet.subarray(at, end);
}

export interface DirectRtpHandlers {
  /** A packet's header fields (an object the path reuses: valid during the call) and payload. */
  packet(fields: RtpFields, payload: Buffer): void;
  /** A packet that failed SRTP authentication or did not parse. */
  bad(): void;
  /** A packet the socket could not send. */
  sendFailed(): void;
}

type IceConnection = RTCDtlsTransport["iceTransport"]["connection"];

/** RFC 7675 §5.1's basic interval (werift's CONSENT_INTERVAL): each request 0.8-1.2 times it after the last. */
const CONSENT_INTERVAL_MS = 5_000;
/** Consent expires this long after the last valid answer (RFC 7675, werift's CONSENT_TIMEOUT). */
export const CONSENT_TIMEOUT_MS = 30_000;

export interface ConsentOptions {
  /** Our own consent checks on the direct path (default: on, unless SWITCHBOARD_OWN_CONSENT=0); off: werift's. */
  own?: boolean;
  /** The checks' time and timers (default performance.now() and Node's timers: real, monotonic time). */
  time?: TimeSource;
  /**
   * Transaction ids and the cadence's jitter (default the system's, crypto-strength as RFC 5389
   * asks of transaction ids; not the server's injected source, whose sequence these draws, made at
   * moments the network sets, would make depend on timing).
   */
  random?: RandomSource;
}

/** SWITCHBOARD_OWN_CONSENT=0 keeps werift's consent loop on every leg (for A/B runs). */
export function ownConsentDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SWITCHBOARD_OWN_CONSENT !== "0";
}

/**
 * What our consent checks use of werift's ICE `Connection` beyond its typed surface: members
 * werift 0.25 declares private (its consent loop, the switch that lets werift's own sends through,
 * its state setter, the tie-breaker every check carries). Read at run time and checked when a path
 * opens (`weriftIce`): a werift without them keeps its own loop.
 */
interface WeriftIceInternals {
  readonly tieBreaker: bigint;
  /** werift sends DTLS and RTCP only while this is true (RFC 7675 §5.2). */
  consentFresh: boolean;
  /** Stops werift's consent loop, its expiry timer and its request in flight (sets consentFresh false). */
  stopConsentLifecycle(): void;
  /** Starts werift's consent loop afresh (its expiry 30 s from now). */
  queryConsent(): void;
  setState(state: IceConnection["state"]): void;
}

function weriftIce(connection: IceConnection): WeriftIceInternals | undefined {
  const c = connection as unknown as Record<keyof WeriftIceInternals, unknown>;
  const fits =
    typeof c.tieBreaker === "bigint" &&
    typeof c.consentFresh === "boolean" &&
    typeof c.stopConsentLifecycle === "function" &&
    typeof c.queryConsent === "function" &&
    typeof c.setState === "function";
  return fits ? (connection as unknown as WeriftIceInternals) : undefined;
}

/** A KeyObject for an ICE password, made again only when the password changes. */
class PasswordKey {
  #password: string | undefined;
  #key: KeyObject | undefined;

  of(password: string): KeyObject {
    if (password !== this.#password || this.#key === undefined) {
      this.#password = password;
      this.#key = createSecretKey(Buffer.from(password, "utf8"));
    }
    return this.#key;
  }
}

/**
 * ICE consent freshness (RFC 7675) on a direct path's nominated pair, in place of werift's loop,
 * whose every exchange cost ~2.4 ms of CPU (an AbortController, timers and an async chain per
 * request, attribute objects, the answer parsed twice: docs/design-notes.md, session 24, helper
 * cap2). The far end's binding requests are answered here (USERNAME and MESSAGE-INTEGRITY checked
 * with our ICE password; one that fails is dropped unanswered), ours go every 4-6 s, and consent
 * expires 30 s after the last valid answer: the ICE connection then fails as werift's expiry
 * makes it (state "failed", the leg's "ice failed"). Requests this does not take (other addresses,
 * other credentials, a role conflict, USE-CANDIDATE to a controlling agent, unknown
 * comprehension-required attributes) go to werift as before.
 */
class OwnConsent {
  readonly #connection: IceConnection;
  readonly #ice: WeriftIceInternals;
  readonly #socket: Socket;
  readonly #remote: Address;
  readonly #time: TimeSource;
  readonly #random: RandomSource;
  /** Whether the path is still on its pair (ICE has not restarted or renominated). */
  readonly #current: () => boolean;
  readonly #priority: number;
  readonly #scan = new StunScan();
  /** Answers and requests are written into a buffer of each writer's own, reused. */
  readonly #answers = new StunWriter(128);
  readonly #requests = new StunWriter(1024);
  readonly #localKey = new PasswordKey();
  readonly #remoteKey = new PasswordKey();
  /** Our last request's header (its transaction id at bytes 8-19), while no valid answer has come. */
  readonly #sent = Buffer.alloc(STUN_HEADER);
  #pending = false;
  #lastAnswer: number;
  #nextRequest: number;
  #cancel: (() => void) | undefined;
  #stopped = false;
  readonly #fire = (): void => this.#due();
  readonly #afterSend = (): void => undefined;
  /** Counters (tests, benches). */
  readonly counts = { requestsSent: 0, answersReceived: 0, requestsAnswered: 0, requestsRefused: 0 };

  constructor(connection: IceConnection, ice: WeriftIceInternals, socket: Socket, remote: Address, current: () => boolean, options: Required<Pick<ConsentOptions, "time" | "random">>) {
    this.#connection = connection;
    this.#ice = ice;
    this.#socket = socket;
    this.#remote = remote;
    this.#current = current;
    this.#time = options.time;
    this.#random = options.random;
    // werift's consent requests carry a peer-reflexive UDP candidate's priority (RFC 8445 §7.1.1).
    this.#priority = werift().candidatePriority("prflx", { transport: "udp" });
    // werift's loop stops; its own sends (DTLS, RTCP) go on while our consent is fresh.
    ice.stopConsentLifecycle();
    ice.consentFresh = true;
    // As werift counts it: the checks that connected the pair were the first valid answer.
    const now = this.#time.now();
    this.#lastAnswer = now;
    this.#nextRequest = now + this.#interval();
    this.#arm(now);
  }

  /** A datagram from the nominated far end that is not RTP: true when it was consent's (answered, matched or dropped). */
  datagram(data: Buffer, addr: Address): boolean {
    if (this.#stopped || !this.#current()) return false;
    const type = stunType(data);
    if (type === BINDING_REQUEST) return this.#answer(data, addr);
    if (type === BINDING_SUCCESS || type === BINDING_ERROR) return this.#answered(data, type);
    return false;
  }

  /** Stops our checks (their timer); werift's loop is the path's to start again (DirectRtpPath.close). */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #interval(): number {
    const jitter = this.#random.bytes(2).readUInt16BE(0) / 0x10000;
    return CONSENT_INTERVAL_MS * (0.8 + 0.4 * jitter);
  }

  #arm(now: number): void {
    const due = Math.min(this.#nextRequest, this.#lastAnswer + CONSENT_TIMEOUT_MS);
    this.#cancel = this.#time.schedule(this.#fire, Math.max(0, due - now));
  }

  #due(): void {
    this.#cancel = undefined;
    if (this.#stopped) return;
    // ICE moved on (a restart, a renomination): werift keeps consent on the new pair until a path opens there.
    if (!this.#current()) {
      this.stop();
      return;
    }
    const now = this.#time.now();
    if (now - this.#lastAnswer >= CONSENT_TIMEOUT_MS) {
      this.#expire();
      return;
    }
    if (now >= this.#nextRequest) {
      this.#request();
      // The cadence runs between requests' starts, as werift's does: an answer's wait does not stretch it.
      this.#nextRequest = now + this.#interval();
    }
    this.#arm(now);
  }

  /** As werift's expiry: no more sends, and the ICE connection fails (its leg closes "ice failed"). */
  #expire(): void {
    this.stop();
    const state = this.#connection.state;
    if (state === "closed" || state === "failed") return;
    this.#ice.consentFresh = false;
    this.#ice.setState("failed");
  }

  #request(): void {
    const c = this.#connection;
    const draw = this.#random.bytes(12);
    const w = this.#requests.start(BINDING_REQUEST, draw);
    w.attribute(ATTR.USERNAME, Buffer.from(`${c.remoteUsername}:${c.localUsername}`, "utf8"));
    w.u32(ATTR.PRIORITY, this.#priority);
    w.u64(c.iceControlling ? ATTR.ICE_CONTROLLING : ATTR.ICE_CONTROLLED, this.#ice.tieBreaker);
    const message = w.sign(this.#remoteKey.of(c.remotePassword));
    message.copy(this.#sent, 0, 0, STUN_HEADER);
    this.#pending = true;
    this.counts.requestsSent++;
    this.#socket.send(message, this.#remote[1], this.#remote[0], this.#afterSend);
  }

  /** An answer with our last request's transaction id: consent when it is a success signed with the far end's password. */
  #answered(data: Buffer, type: number): boolean {
    if (!this.#pending || !sameTransaction(data, this.#sent)) return false;
    // An error answer (a role conflict, say) gives no consent; werift's loop let it pass as well.
    if (type !== BINDING_SUCCESS) return true;
    const scan = this.#scan;
    if (!scan.scan(data) || scan.integrity < 0 || !integrityOk(data, scan.integrity, this.#remoteKey.of(this.#connection.remotePassword))) return true;
    if (scan.fingerprint >= 0 && !fingerprintOk(data, scan.fingerprint)) return true;
    this.#pending = false;
    this.#lastAnswer = this.#time.now();
    this.counts.answersReceived++;
    return true;
  }

  /** The far end's request on this pair: answered when its integrity holds, dropped when it does not. */
  #answer(data: Buffer, addr: Address): boolean {
    const scan = this.#scan;
    if (!scan.scan(data) || scan.unknownRequired || scan.username < 0) return false;
    const c = this.#connection;
    // A role conflict is werift's to repair (RFC 8445 §7.3.1.1). USE-CANDIDATE from a controlling
    // far end on the nominated pair (Chrome's pings carry it) changes nothing in werift: answered
    // here; to a controlling agent it makes no sense: werift's.
    if (c.iceControlling ? scan.controlling || scan.useCandidate : scan.controlled) return false;
    const username = `${c.localUsername}:${c.remoteUsername}`;
    if (data.toString("utf8", scan.username, scan.username + scan.usernameLength) !== username) return false;
    const key = this.#localKey.of(c.localPassword);
    // RFC 5389 §10.1.2: a request whose integrity (or fingerprint) fails is not answered.
    if (scan.integrity < 0 || !integrityOk(data, scan.integrity, key) || (scan.fingerprint >= 0 && !fingerprintOk(data, scan.fingerprint))) {
      this.counts.requestsRefused++;
      return true;
    }
    const w = this.#answers.start(BINDING_SUCCESS, data);
    if (!w.xorAddress(addr[0], addr[1])) return false;
    const answer = w.sign(key);
    this.counts.requestsAnswered++;
    this.#socket.send(answer, addr[1], addr[0], this.#afterSend);
    return true;
  }
}

export class DirectRtpPath {
  /** Kept, not looked up per packet: the chain of getters cost 2% of a worker's time at 50 legs. */
  readonly #connection: IceConnection;
  readonly #pair: object;
  readonly #socket: Socket;
  readonly #srtp: SrtpPair;
  readonly #remote: Address;
  readonly #restore: () => void;
  /** One callback for every send, not a closure per packet. */
  readonly #afterSend: (error: Error | null) => void;
  /** Our consent checks on this pair, in place of werift's (undefined: werift's). */
  #consent: OwnConsent | undefined;
  #closed = false;

  private constructor(dtls: RTCDtlsTransport, srtp: SrtpPair, pair: object, protocol: StunProtocol, remote: Address, handlers: DirectRtpHandlers, consent: ConsentOptions) {
    this.#srtp = srtp;
    this.#afterSend = (error) => {
      if (error) handlers.sendFailed();
    };
    this.#connection = dtls.iceTransport.connection;
    this.#pair = pair;
    this.#remote = remote;
    const transport = protocol.transport;
    const fields: RtpFields = { payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0 };
    this.#socket = transport.socket;
    // Our sends to the far end (RTP, consent) go to the kernel at once, past dgram's dns lookup
    // and its next-tick hop (udp-send.ts); the socket stays unconnected, so nothing else changes.
    sendWithoutLookup(this.#socket, remote[0]);
    const werift = transport.onData;
    transport.onData = (data, addr) => {
      if (!isRtp(data) || addr[0] !== remote[0] || addr[1] !== remote[1]) {
        const own = this.#consent;
        // STUN starts with two zero bits (RFC 7983); only the nominated far end's is consent's.
        if (own !== undefined && (data[0] & 0xc0) === 0 && addr[0] === remote[0] && addr[1] === remote[1] && own.datagram(data, addr)) return;
        werift(data, addr);
        return;
      }
      // Decrypted in place: the datagram's buffer is this path's alone.
      const length = srtp.remote.unprotect(data);
      const payload = length >= 0 ? parseRtp(data, length, fields) : undefined;
      if (payload) handlers.packet(fields, payload);
      else handlers.bad();
    };
    this.#restore = () => {
      transport.onData = werift;
    };
    const connection = this.#connection;
    const ice = (consent.own ?? ownConsentDefault()) ? weriftIce(connection) : undefined;
    // ICE-lite on either side keeps werift's handling (a lite agent checks no consent; a lite far end
    // wants USE-CANDIDATE on our checks).
    if (ice && !connection.iceLite && !connection.remoteIsLite) {
      const options = { time: consent.time ?? performanceTime, random: consent.random ?? systemRandom };
      this.#consent = new OwnConsent(connection, ice, this.#socket, remote, () => this.current, options);
    }
  }

  /** Our consent checks' counters (undefined while werift keeps consent). */
  get consentCounts(): Readonly<OwnConsent["counts"]> | undefined {
    return this.#consent?.counts;
  }

  /** The path for a connected DTLS transport's nominated pair; undefined when there is none yet. */
  static open(dtls: RTCDtlsTransport, handlers: DirectRtpHandlers, consent: ConsentOptions = {}): DirectRtpPath | undefined {
    const pair = dtls.iceTransport.connection.nominated;
    const protocol = pair?.protocol;
    if (!pair || !(protocol instanceof werift().StunProtocol) || !dtls.srtpStarted) return undefined;
    const srtp = contextsFor(dtls.srtp);
    if (!srtp) return undefined;
    return new DirectRtpPath(dtls, srtp, pair, protocol, pair.remoteAddr, handlers, consent);
  }

  /** False once ICE has moved to another pair (a restart): open a new path then. */
  get current(): boolean {
    // An ICE restart clears and renews `nominated` on the same connection object.
    return !this.#closed && this.#connection.nominated === this.#pair;
  }

  /** Encrypts and sends one packet; false when it could not be sent (the socket is closing). */
  send(payload: Buffer, header: RtpOutFields): boolean {
    if (this.#closed) return false;
    try {
      const packet = this.#srtp.local.protect(header, payload);
      this.#socket.send(packet, this.#remote[1], this.#remote[0], this.#afterSend);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Hands the socket back to werift alone, and consent with it: werift's loop starts again if the
   * pair is still nominated and connected, unless `ending` (the leg is closing its connection).
   */
  close(ending = false): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#restore();
    const consent = this.#consent;
    this.#consent = undefined;
    if (!consent) return;
    consent.stop();
    // Still on this pair and connected (the path closed under a live connection): werift's loop
    // again. After an ICE restart or a renomination werift has started its own on the new pair.
    const state = this.#connection.state;
    if (!ending && this.#connection.nominated === this.#pair && (state === "connected" || state === "completed")) weriftIce(this.#connection)?.queryConsent();
  }
}
