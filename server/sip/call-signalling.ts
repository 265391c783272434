// The contract between SIP call signalling (sip/) and the call engine (calls/): an inbound call
// is an authenticated INVITE from a registered device; an outbound call is an INVITE the server
// sends to a device's registered contacts. SDP travels as text; media is the engine's business.
import type { EventEmitter } from "node:events";
import type { CallMedia } from "../media/index.js";

/** A name and user part as they appear in From/To (`"Alex Agent" <sip:1002@realm>`). */
export interface CallParty {
  user: string;
  display?: string;
}

/** `device`: a digest-authenticated registration; `sim`: the server's own simulated caller (sim/). */
export type AuthorizingType = "device" | "sim";

export interface DeviceRef {
  accountId: string;
  deviceId: string;
}

/** A digit from SIP INFO (application/dtmf-relay or application/dtmf). */
export interface InfoDtmf {
  digit: string;
  durationMs?: number;
}

/** Events common to both directions once a dialog exists. */
export interface DialogEvents {
  /** The far end hung up (BYE received; already answered 200 by sip/). */
  bye: [];
  /**
   * The far end sent a re-INVITE (hold, unhold, new media): the engine answers with its SDP
   * (`answer`) or refuses (`reject`, e.g. 488); sip/ sends the response and handles the ACK.
   */
  reinvite: [offer: string, respond: { answer(sdp: string): void; reject(code: number): void }];
  dtmf: [InfoDtmf];
  /**
   * The far end sent a REFER in the dialog (RFC 3515: a phone's transfer key), already read and
   * checked by sip/: the engine accepts it (202, then NOTIFYs of the outcome) or refuses it. With
   * no listener it is refused 603.
   */
  refer: [ReferRequest];
}

/**
 * A transfer a device asked for by REFER inside a call's dialog, on that call's own connection.
 * Exactly one of `accept` and `reject` answers it; after `accept`, `done` reports the outcome.
 */
export interface ReferRequest {
  /** The Refer-To URI as sent. */
  readonly uri: string;
  /** Blind transfer: the Refer-To URI's user part, as the device would dial it ("" when none). */
  readonly target: string;
  /**
   * Attended transfer: the Call-ID of the other call of this server the Refer-To's Replaces names
   * (a live, answered dialog; sip/ refuses a Replaces that names none). Who owns it is the engine's check.
   */
  readonly replaces?: string;
  /** The Referred-By header as sent, for the records. */
  readonly referredBy?: string;
  /** True once accepted or refused. */
  readonly answered: boolean;
  /** 202 Accepted, then NOTIFY `SIP/2.0 100 Trying` (the subscription active). */
  accept(): void;
  /** After accept: the final NOTIFY, `SIP/2.0 <code> <reason>`, the subscription terminated. */
  done(code: number, reason?: string): void;
  /** Instead of accept: a final error response to the REFER (nothing changed). */
  reject(code: number, reason?: string): void;
}

export interface InboundCallEvents extends DialogEvents {
  /** The caller gave up before an answer (CANCEL; sip/ answers 200 and 487). */
  cancel: [];
}

/**
 * An INVITE from a registered device, already digest-authenticated (407 challenge handled by
 * sip/) and answered 100 Trying.
 */
export interface InboundCall extends EventEmitter<InboundCallEvents> {
  /** The SIP Call-ID of this leg. */
  readonly callId: string;
  /** The authenticated device that placed the call. */
  readonly device: DeviceRef;
  readonly from: CallParty;
  readonly to: CallParty;
  /** The Request-URI's user part: the number or extension dialled. */
  readonly dialled: string;
  /** The SDP offer of the INVITE (an INVITE without one is refused 488 by sip/). */
  readonly offer: string;
  /** Every header of the INVITE, lower-cased names, for the engine's records. */
  readonly headers: ReadonlyMap<string, string[]>;
  /** Who vouched for the caller, for the records: a registered device unless said otherwise. */
  readonly authorizingType?: AuthorizingType;
  /**
   * The server's side of the call's media when the caller is inside the server (a simulated
   * caller with direct media, `offer` then empty): the engine uses it instead of making a leg.
   */
  readonly media?: CallMedia;
  /** 180 Ringing (idempotent). */
  ringing(): void;
  /** 200 OK with this SDP; resolves once the ACK arrives (rejects if it never does). */
  answer(sdp: string): Promise<void>;
  /**
   * A final error response before an answer (404, 480, 486, 603, 433 ...); `retryAfterS` adds
   * Retry-After (a 503 for an overloaded server: RFC 3261 §21.5.4).
   */
  reject(code: number, reason?: string, retryAfterS?: number): void;
  /** BYE after an answer; resolves when the far end answered it or gave up. */
  hangup(): Promise<void>;
  /** Server-side re-INVITE (hold with music, new media); resolves with the far end's answer SDP. */
  reinvite(offer: string): Promise<string>;
}

export interface OutboundCallEvents extends DialogEvents {
  /** 180/183 from the device. */
  ringing: [];
  /** 2xx with the device's answer SDP; sip/ has sent the ACK. */
  answered: [answer: string];
  /** A final error from every contact tried (e.g. 486 busy, 603 declined, 408 no answer). */
  rejected: [code: number, reason: string];
}

export interface OutboundCall extends EventEmitter<OutboundCallEvents> {
  readonly callId: string;
  readonly device: DeviceRef;
  /** CANCEL every fork before an answer (idempotent; no event follows). */
  cancel(): void;
  /** BYE after an answer. */
  hangup(): Promise<void>;
  reinvite(offer: string): Promise<string>;
}

export interface InviteOptions {
  /** The server's SDP offer (from the media engine: the server offers to agents). */
  offer: string;
  /** Caller id shown on the device. */
  from: CallParty;
  to: CallParty;
  /** Extra headers (e.g. X-Queue-Name for queue offers). */
  headers?: [string, string][];
  /**
   * Direct media (a device whose phone is inside the server: `directMedia`): the phone's side of an
   * in-memory pair whose other side is the call's media; `offer` is then empty.
   */
  media?: CallMedia;
}

export interface CallSignalling {
  /** Called for every authenticated INVITE that opens a new dialog. */
  onInbound(handler: (call: InboundCall) => void): void;
  /**
   * INVITE every registered contact of a device at once (first 2xx wins, the other forks are
   * CANCELled); null when the device has no registration.
   */
  invite(target: DeviceRef, options: InviteOptions): OutboundCall | null;
  /**
   * Whether the device's phone is inside the server (a simulated agent's bot phone with direct
   * media): the engine then invites it with one side of an in-memory pair instead of an SDP offer.
   */
  directMedia?(target: DeviceRef): boolean;
  /**
   * A call to a number outside the account (a carrier's work): null when nothing carries calls to
   * that number. The server has no carrier of its own; the simulator carries calls to the numbers
   * its simulated callers call from (sim/phones.ts).
   */
  dialOut?(target: NumberRef, options: InviteOptions): OutboundCall | null;
}

/** An outside number called for an account. */
export interface NumberRef {
  accountId: string;
  number: string;
}
