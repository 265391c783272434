// A channel: one call leg as the engine sees it (an INVITE a device sent, or one the server sent
// to a device), with its SIP side, its media leg, who it speaks for, its times and its states.
import { EventEmitter } from "node:events";
import { toGregorianSeconds, type TimeReader } from "../clock.js";
import type { EventSink } from "./event-sink.js";
import { SdpError, type CallMedia, type DtmfDigit, type LegStateChange } from "../media/index.js";
import type { AuthorizingType, InboundCall, InfoDtmf, OutboundCall, ReferRequest } from "../sip/call-signalling.js";
import { causeOfSipCode, hangupCodeText, reasonPhraseOf, sipCodeOf, type HangupCause } from "./hangup-cause.js";

/**
 * ```
 *   new ──ring──> ringing ──answer──> answered ──bridge──> bridged ──hold──> held
 *    │               │                  ▲ ▲  ▲                │  ▲             │
 *    └─────answer────┼──────────────────┘ │  └──unbridge──────┘  └───unhold───┘
 *                    │                    └───────────unbridge─────────────────┘
 *   every state but hungup ──hangup, CANCEL, BYE, rejection──> hungup
 * ```
 * `held` means this leg's device put its party on hold (a sendonly/inactive re-INVITE); the
 * party then hears music. `hungup` is final. Each arrow publishes one `call.<EVENT>.<call_id>`.
 */
export type ChannelState = "new" | "ringing" | "answered" | "bridged" | "held" | "hungup";

const ALLOWED: Record<ChannelState, readonly ChannelState[]> = {
  new: ["ringing", "answered", "hungup"],
  ringing: ["answered", "hungup"],
  answered: ["bridged", "hungup"],
  bridged: ["held", "answered", "hungup"],
  held: ["bridged", "answered", "hungup"],
  hungup: [],
};

/** The bus event of an arrow; FreeSWITCH's names where the hosted service has none of its own. */
function eventOf(from: ChannelState, to: ChannelState): string {
  switch (to) {
    case "ringing":
      return "CHANNEL_PROGRESS";
    case "answered":
      return from === "bridged" || from === "held" ? "CHANNEL_UNBRIDGE" : "CHANNEL_ANSWER";
    case "bridged":
      return from === "held" ? "CHANNEL_UNHOLD" : "CHANNEL_BRIDGE";
    case "held":
      return "CHANNEL_HOLD";
    case "hungup":
      return "CHANNEL_DESTROY";
    case "new":
      return "CHANNEL_CREATE";
  }
}

export class IllegalChannelTransition extends Error {
  override name = "IllegalChannelTransition";
}

export interface ChannelParty {
  name: string;
  number: string;
}

/** Who a leg speaks for and how it was addressed: fixed when the leg is made, callee aside. */
export interface ChannelIdentity {
  accountId: string;
  realm: string;
  /** The device: the caller's for an inbound leg, the rung one's for an outbound leg. */
  deviceId: string;
  /** That device's SIP username. */
  username: string;
  /** What `deviceId` is: a device unless the simulator placed the call. */
  authorizingType?: AuthorizingType;
  ownerId?: string;
  /** `<user presence id or username>@realm`. */
  presenceId: string;
  caller: ChannelParty;
  callee: ChannelParty;
  /** What was dialled (inbound) or the username rung (outbound). */
  destination: string;
  /** SIP Request-URI, From and To as `user@realm`. */
  request: string;
  from: string;
  to: string;
}

/** What a channel uses of its media leg: a WebRtcLeg, a MemoryMedia (unit tests give a stand-in). */
export type ChannelMedia = CallMedia;

export type ChannelSip = { direction: "inbound"; call: InboundCall } | { direction: "outbound"; call: OutboundCall };

export interface ChannelChange {
  from: ChannelState;
  to: ChannelState;
  /** Unix ms from the injected clock. */
  at: number;
  /** The bus event published for it. */
  event: string;
}

export interface ChannelDtmf {
  digit: string;
  /** RFC 4733 events on the media leg, or SIP INFO. */
  via: "rfc4733" | "info";
  durationMs?: number;
}

interface ChannelEvents {
  state: [ChannelChange];
  dtmf: [ChannelDtmf];
  /** The far end asked to hold (true) or to resume (false) by re-INVITE. */
  hold: [boolean];
  /** The leg's device asked for a transfer by REFER (calls/refer.ts answers it). */
  refer: [ReferRequest];
}

export interface ChannelOptions {
  sip: ChannelSip;
  media: ChannelMedia;
  identity: ChannelIdentity;
  clock: TimeReader;
  bus: EventSink;
  /** For a leg the server rings: the channel it rings for. */
  originId?: string;
  /** Failures of background SIP work (a BYE nobody answered); never thrown. */
  onError?(err: unknown, what: string): void;
}

const HOLD_OFFER = /^a=(sendonly|inactive)\s*$/m;

export class Channel extends EventEmitter<ChannelEvents> {
  /** The SIP Call-ID of the leg: the channel's uuid in the API. */
  readonly id: string;
  readonly direction: "inbound" | "outbound";
  readonly sip: ChannelSip;
  readonly media: ChannelMedia;
  readonly originId: string | undefined;
  readonly createdAt: number;
  readonly #identity: ChannelIdentity;
  readonly #clock: TimeReader;
  readonly #bus: EventSink;
  readonly #onError: (err: unknown, what: string) => void;
  #state: ChannelState = "new";
  #ringingAt: number | undefined;
  #answeredAt: number | undefined;
  #hungupAt: number | undefined;
  #hangupCause: HangupCause | undefined;
  #hangupCode: number | undefined;
  #otherLeg: string | undefined;
  #everBridged = false;
  #farEndHolding = false;
  #answerSent = false;
  #answering: Promise<boolean> | undefined;
  #control = new AbortController();
  /**
   * Kazoo's custom channel variables: what call logic above calls/ attaches to a leg (the queue a
   * caller came through), copied into what the leg leaves behind, such as its recording.
   */
  readonly customVars = new Map<string, string>();

  constructor(options: ChannelOptions) {
    super();
    this.sip = options.sip;
    this.id = options.sip.call.callId;
    this.direction = options.sip.direction;
    this.media = options.media;
    this.originId = options.originId;
    this.#identity = { ...options.identity };
    this.#clock = options.clock;
    this.#bus = options.bus;
    this.#onError = options.onError ?? (() => undefined);
    this.createdAt = this.#clock.now();
    this.#publish("CHANNEL_CREATE");
    this.#listen();
  }

  get state(): ChannelState {
    return this.#state;
  }

  get accountId(): string {
    return this.#identity.accountId;
  }

  get identity(): Readonly<ChannelIdentity> {
    return this.#identity;
  }

  /** The party this leg's own device is: the caller of an inbound leg, the callee of an outbound one. */
  get self(): ChannelParty {
    return this.direction === "inbound" ? this.#identity.caller : this.#identity.callee;
  }

  /** Hung up: read anew after every await, as the far end may end the call meanwhile. */
  get over(): boolean {
    return this.#state === "hungup";
  }

  get answered(): boolean {
    return this.#state === "answered" || this.#state === "bridged" || this.#state === "held";
  }

  get bridged(): boolean {
    return this.#state === "bridged" || this.#state === "held";
  }

  get everBridged(): boolean {
    return this.#everBridged;
  }

  get otherLeg(): string | undefined {
    return this.#otherLeg;
  }

  get ringingAt(): number | undefined {
    return this.#ringingAt;
  }

  get answeredAt(): number | undefined {
    return this.#answeredAt;
  }

  get hungupAt(): number | undefined {
    return this.#hungupAt;
  }

  get hangupCause(): HangupCause | undefined {
    return this.#hangupCause;
  }

  get hangupCode(): number | undefined {
    return this.#hangupCode;
  }

  /** The far end has asked for hold and not yet resumed. */
  get farEndHolding(): boolean {
    return this.#farEndHolding;
  }

  /** Aborts when another piece of call logic takes the channel over, or when it hangs up. */
  get control(): AbortSignal {
    return this.#control.signal;
  }

  /**
   * Hands the channel's call logic to a new owner (a transfer, a new callflow): the previous
   * owner's signal aborts so it lets go without touching the call. Returns the new signal.
   */
  claim(reason = "taken over"): AbortSignal {
    this.#control.abort(reason);
    this.#control = new AbortController();
    if (this.#state === "hungup") this.#control.abort("hangup");
    return this.#control.signal;
  }

  /** The callee as the caller should see it once someone answered. */
  setCallee(callee: ChannelParty): void {
    this.#identity.callee = { ...callee };
  }

  /**
   * The caller as this leg's device should see it from now on (a completed transfer hands the
   * leg to another party). Published as `call.CALL_UPDATE.<call_id>`, FreeSWITCH's event for a
   * changed display, so a console can follow: the SIP dialog's From cannot change mid-call.
   */
  setCaller(caller: ChannelParty): void {
    const before = this.#identity.caller;
    if (before.name === caller.name && before.number === caller.number) return;
    this.#identity.caller = { ...caller };
    if (this.#state !== "hungup") this.#publish("CALL_UPDATE");
  }

  /** 180 Ringing to the caller of an inbound leg (idempotent); a no-op once answered. */
  ring(): void {
    if (this.sip.direction !== "inbound" || this.#state !== "new") return;
    this.sip.call.ringing();
    this.#transition("ringing");
  }

  /**
   * Answers an inbound leg: the media answer to its offer in a 200 OK. True once the caller's ACK
   * is in; false when the call ended first or could not be answered (it is then hung up).
   */
  answer(): Promise<boolean> {
    if (this.answered) return Promise.resolve(true);
    const sip = this.sip;
    if (sip.direction !== "inbound") return Promise.resolve(false);
    this.#answering ??= this.#answer(sip.call);
    return this.#answering;
  }

  async #answer(call: InboundCall): Promise<boolean> {
    if (this.#state === "hungup") return false;
    let sdp: string;
    try {
      sdp = await this.media.acceptOffer(call.offer);
    } catch (err) {
      this.hangup(err instanceof SdpError ? "INCOMPATIBLE_DESTINATION" : "NORMAL_TEMPORARY_FAILURE");
      return false;
    }
    if (this.over) return false;
    this.#answerSent = true;
    try {
      await call.answer(sdp);
    } catch {
      // No ACK: the caller is gone.
      this.hangup("RECOVERY_ON_TIMER_EXPIRE");
      return false;
    }
    if (this.over) return false;
    this.#transition("answered");
    return true;
  }

  /**
   * Ends the leg however far it got: a final error response, a CANCEL or a BYE. Idempotent.
   * `code` is what an unanswered caller is sent (a 2xx cannot refuse a call: 480 then).
   */
  hangup(cause: HangupCause = "NORMAL_CLEARING", code = sipCodeOf(cause)): void {
    if (this.#state === "hungup") return;
    const sip = this.sip;
    let sent = code;
    if (this.answered || this.#answerSent) {
      this.#background(sip.call.hangup(), "BYE");
    } else if (sip.direction === "inbound") {
      sent = code < 300 ? 480 : code;
      sip.call.reject(sent, reasonPhraseOf(cause));
    } else {
      sip.call.cancel();
    }
    this.#ended(cause, sent);
  }

  /** Bridge only: the leg now talks with `otherId`. */
  joined(otherId: string): void {
    this.#otherLeg = otherId;
    this.#everBridged = true;
    this.#transition("bridged");
  }

  /** Bridge only: the leg left its bridge and is still up. */
  left(): void {
    if (this.bridged) this.#transition("answered");
  }

  /** Bridge only: this leg's device holds its party (true) or resumes (false). */
  holding(on: boolean): void {
    if (on && this.#state === "bridged") this.#transition("held");
    else if (!on && this.#state === "held") this.#transition("bridged");
  }

  /** The fields every call event and the channel views share, snake_case as on the bus. */
  eventData(): Record<string, unknown> {
    const id = this.#identity;
    const data: Record<string, unknown> = {
      call_id: this.id,
      call_direction: this.direction,
      caller_id_name: id.caller.name,
      caller_id_number: id.caller.number,
      callee_id_name: id.callee.name,
      callee_id_number: id.callee.number,
      request: id.request,
      to: id.to,
      from: id.from,
      account_id: id.accountId,
      authorizing_id: id.deviceId,
      authorizing_type: id.authorizingType ?? "device",
      presence_id: id.presenceId,
      timestamp: toGregorianSeconds(this.createdAt),
    };
    if (this.#otherLeg !== undefined) data.other_leg_call_id = this.#otherLeg;
    if (id.ownerId !== undefined) data.owner_id = id.ownerId;
    if (this.#state === "hungup") Object.assign(data, this.#hangupData());
    return data;
  }

  #hangupData(): Record<string, unknown> {
    const end = this.#hungupAt ?? this.#clock.now();
    const seconds = (from: number | undefined, to: number) => (from === undefined ? 0 : Math.max(0, Math.floor((to - from) / 1000)));
    return {
      hangup_cause: this.#hangupCause,
      hangup_code: this.#hangupCode === undefined ? undefined : hangupCodeText(this.#hangupCode),
      duration_seconds: seconds(this.createdAt, end),
      billing_seconds: seconds(this.#answeredAt, end),
      ringing_seconds: seconds(this.#ringingAt, this.#answeredAt ?? end),
    };
  }

  #listen(): void {
    const sip = this.sip;
    const reinvite = (offer: string, respond: { answer(sdp: string): void; reject(code: number): void }) => {
      void this.#reinvite(offer, respond);
    };
    const infoDtmf = (dtmf: InfoDtmf) => this.emit("dtmf", { digit: dtmf.digit, via: "info", durationMs: dtmf.durationMs });
    const bye = () => this.#ended("NORMAL_CLEARING", 200);
    const refer = (request: ReferRequest) => {
      if (!this.emit("refer", request)) request.reject(603, "Transfer Not Available");
    };
    if (sip.direction === "inbound") {
      sip.call.on("cancel", () => this.#ended("ORIGINATOR_CANCEL", 487));
      sip.call.on("bye", bye);
      sip.call.on("reinvite", reinvite);
      sip.call.on("dtmf", infoDtmf);
      sip.call.on("refer", refer);
    } else {
      sip.call.on("ringing", () => {
        if (this.#state === "new") this.#transition("ringing");
      });
      sip.call.on("answered", (sdp) => void this.#farEndAnswered(sdp));
      sip.call.on("rejected", (code) => this.#ended(causeOfSipCode(code), code));
      sip.call.on("bye", bye);
      sip.call.on("reinvite", reinvite);
      sip.call.on("dtmf", infoDtmf);
      sip.call.on("refer", refer);
    }
    this.media.on("dtmf", (digit: DtmfDigit) => this.emit("dtmf", { digit: digit.digit, via: "rfc4733", durationMs: digit.durationMs }));
    this.media.on("state", (change: LegStateChange) => {
      if (change.to !== "closed" || this.#state === "hungup") return;
      // The media died under a live call (ICE failed, never connected, shutdown).
      this.hangup(change.reason === "shutdown" ? "SYSTEM_SHUTDOWN" : "MEDIA_TIMEOUT");
    });
  }

  async #farEndAnswered(sdp: string): Promise<void> {
    if (this.#state !== "new" && this.#state !== "ringing") return;
    try {
      await this.media.acceptAnswer(sdp);
    } catch (err) {
      this.#onError(err, "the device's answer SDP");
      this.hangup(err instanceof SdpError ? "INCOMPATIBLE_DESTINATION" : "NORMAL_TEMPORARY_FAILURE");
      return;
    }
    if (this.#state === "new" || this.#state === "ringing") this.#transition("answered");
  }

  async #reinvite(offer: string, respond: { answer(sdp: string): void; reject(code: number): void }): Promise<void> {
    if (this.#state === "hungup") {
      respond.reject(481);
      return;
    }
    let answer: string;
    try {
      answer = await this.media.acceptOffer(offer);
    } catch {
      respond.reject(488);
      return;
    }
    respond.answer(answer);
    const holding = HOLD_OFFER.test(offer);
    if (holding === this.#farEndHolding) return;
    this.#farEndHolding = holding;
    this.emit("hold", holding);
  }

  /** The leg is over (our hangup or the far end's): stamp, publish, release the media. */
  #ended(cause: HangupCause, code: number): void {
    if (this.#state === "hungup") return;
    this.#hangupCause = cause;
    this.#hangupCode = code;
    this.#transition("hungup");
    this.#control.abort("hangup");
    this.#background(this.media.close("hangup"), "closing the media leg");
  }

  /** The one way the state changes: checked against the diagram, stamped, published once. */
  #transition(to: ChannelState): ChannelChange {
    const from = this.#state;
    if (!ALLOWED[from].includes(to)) throw new IllegalChannelTransition(`channel ${this.id} cannot go from ${from} to ${to}`);
    const at = this.#clock.now();
    this.#state = to;
    if (to === "ringing") this.#ringingAt = at;
    if (to === "answered") this.#answeredAt ??= at;
    if (to === "hungup") this.#hungupAt = at;
    const event = eventOf(from, to);
    this.#publish(event);
    const change: ChannelChange = { from, to, at, event };
    this.emit("state", change);
    return change;
  }

  #publish(event: string): void {
    this.#bus.publish({
      account_id: this.#identity.accountId,
      routing_key: `call.${event}.${this.id}`,
      name: event,
      data: this.eventData(),
    });
  }

  #background(work: Promise<unknown>, what: string): void {
    work.catch((err: unknown) => this.#onError(err, what));
  }
}
