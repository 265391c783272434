// The simulator's carrier for calls out: a simulated caller who said how their phone answers
// (`phone` of POST /sim/calls) owns their number for a while after their call, so a call the
// server places to it (a queue callback dialling the caller back, an agent calling back) reaches
// it, as a carrier would deliver it to the caller's phone. The phone answers (or is busy, or never answers, as its caller's request said) and
// plays its audio on a loop until the server hangs up.
import { EventEmitter } from "node:events";
import type { Clock } from "../clock.js";
import type { LegStateChange, MediaEngine, WebRtcLeg } from "../media/index.js";
import type { InviteOptions, NumberRef, OutboundCall, OutboundCallEvents } from "../sip/call-signalling.js";
import { newId } from "../store/index.js";
import type { RandomSource } from "../clock.js";

/** How a simulated caller's phone takes a call to its number. */
export const PHONE_ANSWERS = ["answer", "busy", "no_answer"] as const;
export type PhoneAnswer = (typeof PHONE_ANSWERS)[number];

export interface PhoneBehaviour {
  answer: PhoneAnswer;
  /** The URI played on a loop once answered. */
  audioUri: string;
}

/** A number stays the simulator's for this long after its caller's call started. */
export const PHONE_KEEP_MS = 24 * 3600_000;
/** The most numbers an account's simulated callers keep at once; the oldest goes first. */
export const MAX_PHONES_PER_ACCOUNT = 500;
/** How long the phone rings before it answers. */
const RING_MS = 1000;
/** What an answered phone plays when its caller named no audio: a steady 440 Hz tone. */
export const DEFAULT_PHONE_AUDIO = "tone_stream://%(1000,0,440)";

interface Phone extends PhoneBehaviour {
  /** Unix ms. */
  since: number;
}

export class SimPhones {
  readonly #media: MediaEngine;
  readonly #clock: Clock;
  readonly #random: RandomSource;
  /** Account -> number -> phone, oldest first. */
  readonly #phones = new Map<string, Map<string, Phone>>();
  readonly #live = new Set<SimPhoneCall>();

  constructor(deps: { media: MediaEngine; clock: Clock; random: RandomSource }) {
    this.#media = deps.media;
    this.#clock = deps.clock;
    this.#random = deps.random;
  }

  /** The number is the simulator's from now on, taking calls as `behaviour` says. */
  own(accountId: string, number: string, behaviour: PhoneBehaviour): void {
    let phones = this.#phones.get(accountId);
    if (!phones) {
      phones = new Map();
      this.#phones.set(accountId, phones);
    }
    phones.delete(number);
    phones.set(number, { ...behaviour, since: this.#clock.now() });
    for (const oldest of phones.keys()) {
      if (phones.size <= MAX_PHONES_PER_ACCOUNT) break;
      phones.delete(oldest);
    }
  }

  /** The call the carrier places to `target`; null when no simulated caller owns the number. */
  dialOut(target: NumberRef, options: InviteOptions): OutboundCall | null {
    const phone = this.#phones.get(target.accountId)?.get(target.number);
    if (!phone) return null;
    if (this.#clock.now() - phone.since > PHONE_KEEP_MS) {
      this.#phones.get(target.accountId)?.delete(target.number);
      return null;
    }
    const call = new SimPhoneCall(newId(this.#random), { accountId: target.accountId, deviceId: target.number }, phone, options.offer, {
      media: this.#media,
      clock: this.#clock,
      done: () => this.#live.delete(call),
    });
    this.#live.add(call);
    call.start();
    return call;
  }

  /** Every phone still on a call hangs up (server shutdown). */
  close(): void {
    for (const call of [...this.#live]) void call.hangup();
  }
}

interface PhoneCallDeps {
  media: MediaEngine;
  clock: Clock;
  done(): void;
}

/** One call to a simulated phone, as the server's side of it sees it. */
class SimPhoneCall extends EventEmitter<OutboundCallEvents> implements OutboundCall {
  readonly #phone: PhoneBehaviour;
  readonly #offer: string;
  readonly #deps: PhoneCallDeps;
  #leg: WebRtcLeg | undefined;
  #cancelRing: (() => void) | undefined;
  #over = false;

  constructor(
    readonly callId: string,
    readonly device: { accountId: string; deviceId: string },
    phone: PhoneBehaviour,
    offer: string,
    deps: PhoneCallDeps,
  ) {
    super();
    this.#phone = phone;
    this.#offer = offer;
    this.#deps = deps;
  }

  start(): void {
    // The events go out on a later turn: the dialler listens once the call is handed back.
    this.#cancelRing = this.#deps.clock.after(0, () => {
      if (this.#over) return;
      if (this.#phone.answer === "busy") {
        this.#finish();
        this.emit("rejected", 486, "Busy Here");
        return;
      }
      this.emit("ringing");
      if (this.#phone.answer === "answer") this.#cancelRing = this.#deps.clock.after(RING_MS, () => void this.#answer());
    });
  }

  cancel(): void {
    this.#finish();
  }

  async hangup(): Promise<void> {
    this.#finish();
  }

  async reinvite(offer: string): Promise<string> {
    if (!this.#leg || this.#over) throw new Error("the simulated phone's call is over");
    return this.#leg.acceptOffer(offer);
  }

  async #answer(): Promise<void> {
    if (this.#over) return;
    const leg = this.#deps.media.createLeg();
    this.#leg = leg;
    let answer: string;
    try {
      answer = await leg.acceptOffer(this.#offer);
    } catch {
      this.#finish();
      this.emit("rejected", 488, "Not Acceptable Here");
      return;
    }
    if (this.#over) return;
    leg.on("state", (change: LegStateChange) => {
      if (change.to !== "closed" || this.#over) return;
      // The media died under the call: the phone is gone, as a real one would be.
      this.#finish();
      this.emit("bye");
    });
    this.emit("answered", answer);
    try {
      leg.play(await this.#deps.media.player(this.#phone.audioUri, { loop: true }));
    } catch {
      // Answered with nothing to say: the caller's line stays silent.
    }
  }

  #finish(): void {
    if (this.#over) return;
    this.#over = true;
    this.#cancelRing?.();
    void this.#leg?.close("hangup").catch(() => undefined);
    this.#deps.done();
  }
}
