// A simulated agent's phone: the server rings it like any registered device (the call engine's
// INVITE reaches it through SimCallers.signalling instead of SIP), and it answers after a ring
// with a real WebRTC leg of its own (or, with direct media, the in-memory side of the call the
// engine gave it), keeps the call for a handle time, then hangs up. So a bot is
// a real recipient on a real bridge: channels, CDRs and queue events are the same as a person's.
import { EventEmitter } from "node:events";
import type { Cancel, Clock } from "../clock.js";
import type { CallMedia, MediaEngine } from "../media/index.js";
import type { DeviceRef, InviteOptions, OutboundCall, OutboundCallEvents } from "../sip/call-signalling.js";

export interface BotPhoneConduct {
  /** The clock its ring and talk timers run on (a training run's own, so a pause holds them). */
  clock: Clock;
  ringDelayMs: number;
  /** The next call's handle time, drawn when the bot answers. */
  nextTalkMs(): number;
  /**
   * Its phone takes calls with direct media (in memory with the server's side of the call, no
   * WebRTC leg): a training run's bots. Otherwise a WebRTC leg of its own answers the offer.
   */
  directMedia?: boolean;
  /** The bot answered a call (its leg's id is the call's). */
  onAnswered?(callId: string): void;
  onError?(err: unknown, what: string): void;
}

/** One call to a bot's phone, as the call engine sees a device's answer to its INVITE. */
export class BotCall extends EventEmitter<OutboundCallEvents> implements OutboundCall {
  readonly callId: string;
  readonly device: DeviceRef;
  readonly #media: MediaEngine;
  readonly #conduct: BotPhoneConduct;
  #leg: CallMedia | undefined;
  #timer: Cancel | undefined;
  #over = false;

  constructor(callId: string, device: DeviceRef, options: InviteOptions, media: MediaEngine, conduct: BotPhoneConduct) {
    super();
    this.callId = callId;
    this.device = device;
    this.#media = media;
    this.#conduct = conduct;
    // The engine listens once invite() returns: the ringing is told on the next turn.
    setImmediate(() => {
      if (this.#over) return;
      this.emit("ringing");
      this.#timer = conduct.clock.after(conduct.ringDelayMs, () => void this.#answer(options));
    });
  }

  cancel(): void {
    this.#end("cancelled");
  }

  async hangup(): Promise<void> {
    this.#end("hangup");
  }

  async reinvite(offer: string): Promise<string> {
    if (this.#leg === undefined || this.#over) throw new Error("the bot's call is over");
    return this.#leg.acceptOffer(offer);
  }

  async #answer(options: InviteOptions): Promise<void> {
    if (this.#over) return;
    // Direct media: the engine's pair already joins the bot to the call; no SDP crosses.
    const leg = options.media ?? this.#media.createLeg();
    this.#leg = leg;
    try {
      const answer = await leg.acceptOffer(options.offer);
      if (this.#over) return;
      this.emit("answered", answer);
      this.#conduct.onAnswered?.(this.callId);
      this.#timer = this.#conduct.clock.after(this.#conduct.nextTalkMs(), () => {
        if (this.#over) return;
        this.#end("bot hung up");
        this.emit("bye");
      });
    } catch (err) {
      this.#conduct.onError?.(err, "answering a call");
      if (!this.#over) {
        this.#end("answer failed");
        this.emit("rejected", 500, "Server Internal Error");
      }
    }
  }

  #end(reason: string): void {
    if (this.#over) return;
    this.#over = true;
    this.#timer?.();
    void this.#leg?.close(reason).catch(() => undefined);
  }
}
