// A simulated caller: it calls the account as a device would (it makes the offer, hears 180 and
// 200 or a refusal), then either plays one audio source once answered or follows a script
// (conduct.ts), and sends DTMF or hangs up when the API says so. The call engine meets it as an
// ordinary InboundCall. Its media is a server-side WebRTC leg, or (direct media) one side of an
// in-memory pair (media/memory-media.ts) whose other side the engine takes as the call's media:
// no SDP, no RTP, a frame copied per tick.
import { EventEmitter } from "node:events";
import type { Clock } from "../clock.js";
import type { AudioSource, CallMedia, LegStateChange } from "../media/index.js";
import type { CallParty, DeviceRef, InboundCall, InboundCallEvents } from "../sip/call-signalling.js";
import { CallerConduct, type ConductCall, type ConductPlan } from "./conduct.js";
import type { CallerProgress } from "./script.js";

/**
 * ```
 *   new ──180──> ringing ──200──> answered ──hangup, BYE──> ended
 *    │                              ▲
 *    └──────────────200─────────────┘
 *   new, ringing ──hangup (CANCEL), refusal, media lost──> ended
 * ```
 * `ended` is final. Each arrow is one `state` event.
 */
export type SimCallState = "new" | "ringing" | "answered" | "ended";

const ALLOWED: Record<SimCallState, readonly SimCallState[]> = {
  new: ["ringing", "answered", "ended"],
  ringing: ["answered", "ended"],
  answered: ["ended"],
  ended: [],
};

/**
 * The caller's media, as its own side of the call's media sees it: `connecting` until the call is
 * answered and its WebRTC leg has ICE and DTLS up with the server's leg of the call (that leg
 * answers the caller's offer, so the two connect together), then `connected`. Direct media (an
 * in-memory pair with the server's side, no network) is `connected` from the start. A leg that
 * closes under the call ends the call (media lost), so a live call is never `closed`.
 */
export type SimMediaState = "connecting" | "connected";

export class IllegalSimCallTransition extends Error {
  override name = "IllegalSimCallTransition";
}

/** A request the call cannot take as it is now (DTMF before an answer ...). */
export class SimCallStateError extends Error {
  override name = "SimCallStateError";
}

/**
 * Why the call ended, the leg's close reason: the caller's hang-up before (cancelled) or after
 * (hangup) the answer, the engine's refusal or BYE, or lost media.
 */
export type SimCallEnd = "cancelled" | "hangup" | "rejected" | "remote-bye" | "media-lost";

export interface SimCallChange {
  from: SimCallState;
  to: SimCallState;
  /** Unix ms from the injected clock. */
  at: number;
}

export interface SimulatedCallerOptions {
  /** The SIP Call-ID of the call: also its id in the API and the channel's uuid. */
  id: string;
  accountId: string;
  /** What the caller dials. */
  to: string;
  caller: { name: string; number: string };
  /**
   * The caller's own side of the media: a WebRTC leg already holding its offer, or (direct media)
   * one side of a memory pair whose other side `serverMedia` is, with an empty offer.
   */
  leg: CallMedia;
  offer: string;
  /** Direct media: the server's side, handed to the engine with the INVITE instead of an SDP offer. */
  serverMedia?: CallMedia;
  /** One source played from the answer on, once; or a script the caller follows. */
  behaviour: { kind: "audio"; source: AudioSource; name: string } | { kind: "script"; plan: ConductPlan; media: ScriptMedia };
  clock: Clock;
}

/** What a scripted caller uses of the media engine besides its leg. */
export type ScriptMedia = Pick<ConductCall, "ticks" | "player" | "onError">;

interface SimulatedCallerEvents {
  state: [SimCallChange];
  /** A scripted caller moved on: a step, a phase, or why it left. */
  progress: [CallerProgress];
}

export class SimulatedCaller extends EventEmitter<SimulatedCallerEvents> {
  readonly id: string;
  readonly accountId: string;
  readonly to: string;
  readonly caller: { name: string; number: string };
  /** What the request named as audio (a caller without a script), for the API's rows. */
  readonly audioName: string | undefined;
  readonly createdAt: number;
  /** What the call engine is handed: the INVITE this caller sends. */
  readonly inbound: InboundCall;
  readonly #leg: CallMedia;
  readonly #audio: AudioSource | undefined;
  readonly #conduct: CallerConduct | undefined;
  readonly #clock: Clock;
  readonly #face: SimInboundCall;
  #state: SimCallState = "new";
  #media: SimMediaState;

  constructor(options: SimulatedCallerOptions) {
    super();
    this.id = options.id;
    this.accountId = options.accountId;
    this.to = options.to;
    this.caller = { ...options.caller };
    this.#leg = options.leg;
    this.#clock = options.clock;
    this.#media = options.serverMedia === undefined ? "connecting" : "connected";
    const behaviour = options.behaviour;
    if (behaviour.kind === "audio") {
      this.audioName = behaviour.name;
      this.#audio = behaviour.source;
    } else {
      this.audioName = undefined;
      const call: ConductCall = {
        ...behaviour.media,
        clock: options.clock,
        incoming: this.#leg.incoming,
        play: (source) => this.#leg.play(source),
        sendDtmf: (digits) => (this.#state === "answered" ? this.#leg.sendDtmf(digits) : Promise.resolve()),
        hangup: () => this.hangup(),
      };
      this.#conduct = new CallerConduct(behaviour.plan, call, (progress) => this.emit("progress", progress));
    }
    this.createdAt = this.#clock.now();
    this.#face = new SimInboundCall(
      {
        callId: options.id,
        // No device document stands behind it: the call authorises itself, as the simulator.
        device: { accountId: options.accountId, deviceId: options.id },
        from: { user: options.caller.number, display: options.caller.name },
        to: { user: options.to },
        dialled: options.to,
        offer: options.offer,
        media: options.serverMedia,
      },
      {
        ringing: () => this.#engineRinging(),
        answer: (sdp) => this.#engineAnswered(sdp),
        reject: () => this.#end("rejected"),
        hangup: () => this.#end("remote-bye"),
        reinvite: (offer) => this.#engineReinvite(offer),
      },
    );
    this.inbound = this.#face;
    this.#leg.on("state", (change: LegStateChange) => {
      if (change.to === "connected") this.#media = "connected";
      // The media died under the call (ICE failed, shutdown): the caller is gone, as a phone would be.
      if (change.to === "closed" && !this.#over()) this.#leave("media-lost");
    });
  }

  get state(): SimCallState {
    return this.#state;
  }

  /** Whether its media is up yet (SimMediaState). */
  get media(): SimMediaState {
    return this.#media;
  }

  /** A scripted caller's step and phase; undefined for a caller that plays one audio source. */
  get progress(): CallerProgress | undefined {
    return this.#conduct?.progress;
  }

  /** Its channel joined a bridge (someone answered it, or took it after a transfer). */
  channelBridged(): void {
    this.#conduct?.bridged();
  }

  /** Its channel left its bridge and is still up. */
  channelUnbridged(): void {
    this.#conduct?.unbridged();
  }

  /** The party bridged with it holds (true) or resumes (false). */
  partyHolding(on: boolean): void {
    this.#conduct?.partyHolding(on);
  }

  /**
   * RFC 4733 digits on the caller's leg; resolves once they are sent. Throws at once (not in the
   * promise) when the call is not answered, so a caller can refuse the request before accepting it.
   */
  sendDtmf(digits: string): Promise<void> {
    if (this.#state !== "answered") throw new SimCallStateError(`the call is ${this.#state}: digits need an answered call`);
    return this.#leg.sendDtmf(digits);
  }

  /** The caller hangs up: a CANCEL before the answer, a BYE after it. Idempotent. */
  hangup(): void {
    if (this.#over()) return;
    this.#leave(this.#state === "answered" ? "hangup" : "cancelled");
  }

  /** The caller goes away by itself: the engine hears CANCEL or BYE. */
  #leave(how: SimCallEnd): void {
    const answered = this.#state === "answered";
    this.#end(how);
    if (answered) this.#face.emit("bye");
    else this.#face.emit("cancel");
  }

  #engineRinging(): void {
    if (this.#state === "new") this.#transition("ringing");
  }

  async #engineAnswered(sdp: string): Promise<void> {
    // No ACK for an answer that crossed our CANCEL; state is read again after every await.
    const gone = () => new SimCallStateError("the simulated caller hung up before the answer");
    if (this.#over()) throw gone();
    await this.#leg.acceptAnswer(sdp);
    if (this.#over()) throw gone();
    if (this.#state === "answered") return;
    this.#transition("answered");
    if (this.#audio) this.#leg.play(this.#audio);
    this.#conduct?.answered();
  }

  async #engineReinvite(offer: string): Promise<string> {
    if (this.#over()) throw new SimCallStateError("the simulated call is over");
    return this.#leg.acceptOffer(offer);
  }

  #over(): boolean {
    return this.#state === "ended";
  }

  /** Ended, however: the leg closes with `how` as its reason. */
  #end(how: SimCallEnd): void {
    if (this.#over()) return;
    this.#transition("ended");
    void this.#leg.close(how).catch(() => undefined);
  }

  /** The one way the state changes: checked against the diagram, stamped, told once. */
  #transition(to: SimCallState): void {
    const from = this.#state;
    if (!ALLOWED[from].includes(to)) throw new IllegalSimCallTransition(`simulated call ${this.id} cannot go from ${from} to ${to}`);
    this.#state = to;
    if (to === "ended") this.#conduct?.ended();
    this.emit("state", { from, to, at: this.#clock.now() });
  }
}

interface SimInboundDetails {
  callId: string;
  device: DeviceRef;
  from: CallParty;
  to: CallParty;
  dialled: string;
  offer: string;
  media: CallMedia | undefined;
}

/** What the engine's requests do to the simulated caller. */
interface SimFarEnd {
  ringing(): void;
  answer(sdp: string): Promise<void>;
  reject(): void;
  hangup(): void;
  reinvite(offer: string): Promise<string>;
}

/** The caller's INVITE as the engine sees it: the same contract a SIP device's INVITE meets. */
class SimInboundCall extends EventEmitter<InboundCallEvents> implements InboundCall {
  readonly callId: string;
  readonly device: DeviceRef;
  readonly from: CallParty;
  readonly to: CallParty;
  readonly dialled: string;
  readonly offer: string;
  readonly media: CallMedia | undefined;
  readonly headers: ReadonlyMap<string, string[]> = new Map();
  readonly authorizingType = "sim" as const;
  readonly #far: SimFarEnd;

  constructor(details: SimInboundDetails, far: SimFarEnd) {
    super();
    this.callId = details.callId;
    this.device = details.device;
    this.from = details.from;
    this.to = details.to;
    this.dialled = details.dialled;
    this.offer = details.offer;
    this.media = details.media;
    this.#far = far;
  }

  ringing(): void {
    this.#far.ringing();
  }

  answer(sdp: string): Promise<void> {
    return this.#far.answer(sdp);
  }

  reject(): void {
    this.#far.reject();
  }

  async hangup(): Promise<void> {
    this.#far.hangup();
  }

  reinvite(offer: string): Promise<string> {
    return this.#far.reinvite(offer);
  }
}
