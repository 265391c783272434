// A leg's RTP once ICE and DTLS are up: SRTP packets go between the leg and its UDP socket
// directly, past werift's per-packet layers (a STUN parse attempt, four event hops each starting a
// promise, a bit-string header parser, the router, receiver statistics and a packet clone on the
// way in; two promise chains on the way out), which cost about twice the SRTP itself (see
// docs/design-notes.md, "Media workers"), and past werift's SRTP too: our own contexts (srtp.ts)
// use the keys of werift's DTLS-SRTP session. Everything else on the socket (STUN, DTLS, RTCP)
// still goes to werift.

import type { Socket } from "node:dgram";
import type { RTCDtlsTransport, StunProtocol } from "werift";
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
  #closed = false;

  private constructor(dtls: RTCDtlsTransport, srtp: SrtpPair, pair: object, protocol: StunProtocol, remote: Address, handlers: DirectRtpHandlers) {
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
    const werift = transport.onData;
    transport.onData = (data, addr) => {
      if (!isRtp(data) || addr[0] !== remote[0] || addr[1] !== remote[1]) {
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
  }

  /** The path for a connected DTLS transport's nominated pair; undefined when there is none yet. */
  static open(dtls: RTCDtlsTransport, handlers: DirectRtpHandlers): DirectRtpPath | undefined {
    const pair = dtls.iceTransport.connection.nominated;
    const protocol = pair?.protocol;
    if (!pair || !(protocol instanceof werift().StunProtocol) || !dtls.srtpStarted) return undefined;
    const srtp = contextsFor(dtls.srtp);
    if (!srtp) return undefined;
    return new DirectRtpPath(dtls, srtp, pair, protocol, pair.remoteAddr, handlers);
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

  /** Hands the socket back to werift alone. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#restore();
  }
}
