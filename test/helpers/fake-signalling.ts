// An in-memory CallSignalling for call-engine tests: phones registered as devices that dial the
// engine and are rung by it, each call carrying real SDP and a real werift leg as the phone's audio.
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { DtmfDigit, MediaEngine, WebRtcLeg } from "../../server/media/index.js";
import { frameWiseShare } from "./tone-windows.js";
import type {
  CallParty,
  CallSignalling,
  DeviceRef,
  InfoDtmf,
  InboundCall,
  InboundCallEvents,
  InviteOptions,
  OutboundCall,
  OutboundCallEvents,
} from "../../server/sip/call-signalling.js";

// The phones share the server's frame clock, so they stall with it; a real phone would not, and
// its audio would reach the server whole. They send every frame however late, as bursts that
// the server's receive FIFO absorbs (server legs drop such frames: see maxSendLatenessMs).
const PHONE_LEG = { maxSendLatenessMs: Infinity };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function until(check: () => boolean, what = "condition", timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Waits until the phones' media legs of these calls are connected (ICE and DTLS up). */
export async function connected(...calls: PhoneCall[]): Promise<void> {
  await until(() => calls.every((c) => c.leg.state === "connected"), "the phones' media to connect");
}

/**
 * The phone's view of one call. Outgoing: calling → ringing → talking, or ended with the final
 * code. Incoming: offered → (ring) → talking, or ended (cancelled, rejected).
 */
export type PhoneCallState = "calling" | "ringing" | "offered" | "talking" | "ended";

/** Why the phone's call ended. */
export type PhoneCallEnd = "rejected" | "remote-bye" | "cancelled" | "local-bye" | "local-cancel" | "local-reject";

interface PhoneCallEvents {
  state: [PhoneCallState];
}

export class PhoneCall extends EventEmitter<PhoneCallEvents> {
  readonly callId: string;
  readonly direction: "outgoing" | "incoming";
  readonly leg: WebRtcLeg;
  readonly dtmfIn: DtmfDigit[] = [];
  /** For an incoming call: how the server presented the caller. */
  readonly from: CallParty | undefined;
  /** The final code of an outgoing call that was refused. */
  finalCode: number | undefined;
  /** The reason phrase of that response, when the server chose one. */
  finalReason: string | undefined;
  /** Its Retry-After, seconds, when it had one. */
  finalRetryAfterS: number | undefined;
  endedBy: PhoneCallEnd | undefined;
  #state: PhoneCallState;
  readonly #media: MediaEngine;
  /** The server side of the dialog: where the phone's requests go. */
  readonly #server: FakeInboundCall | FakeOutboundCall;
  readonly #offer: string | undefined;

  constructor(options: {
    callId: string;
    direction: "outgoing" | "incoming";
    leg: WebRtcLeg;
    media: MediaEngine;
    server: FakeInboundCall | FakeOutboundCall;
    offer?: string;
    from?: CallParty;
  }) {
    super();
    this.callId = options.callId;
    this.direction = options.direction;
    this.leg = options.leg;
    this.#media = options.media;
    this.#server = options.server;
    this.#offer = options.offer;
    this.from = options.from;
    this.#state = options.direction === "outgoing" ? "calling" : "offered";
    this.leg.on("dtmf", (digit) => this.dtmfIn.push(digit));
  }

  get state(): PhoneCallState {
    return this.#state;
  }

  /** Resolves when the call reaches `state` (at once if it is there). */
  async reaches(state: PhoneCallState, timeoutMs = 10_000): Promise<void> {
    await until(() => this.#state === state, `call ${this.callId} to be ${state} (it is ${this.#state})`, timeoutMs);
  }

  /** Incoming: the phone rings (180). */
  ring(): void {
    this.#expect("offered");
    this.#outbound().emit("ringing");
  }

  /** Incoming: the phone picks up, answering the server's offer. */
  async answer(): Promise<void> {
    if (this.#state !== "offered" && this.#state !== "ringing") throw new Error(`cannot answer a call that is ${this.#state}`);
    const answer = await this.leg.acceptOffer(this.#offer ?? "");
    this.#set("talking");
    this.#outbound().emit("answered", answer);
  }

  /** Incoming: the phone refuses (486 busy, 603 decline ...). */
  reject(code = 486): void {
    if (this.#state !== "offered" && this.#state !== "ringing") throw new Error(`cannot reject a call that is ${this.#state}`);
    this.#end("local-reject");
    this.#outbound().emit("rejected", code, code === 486 ? "Busy Here" : "Declined");
  }

  /** Outgoing: the caller gives up before an answer (CANCEL). */
  cancel(): void {
    if (this.direction !== "outgoing" || (this.#state !== "calling" && this.#state !== "ringing")) throw new Error(`cannot cancel a call that is ${this.#state}`);
    this.#end("local-cancel");
    this.#inbound().emit("cancel");
  }

  /** BYE from the phone. */
  hangup(): void {
    this.#expect("talking");
    this.#end("local-bye");
    this.#server.phoneBye();
  }

  /** SIP INFO with a DTMF digit. */
  info(digit: string): void {
    this.#expect("talking");
    this.#server.phoneDtmf({ digit, durationMs: 100 });
  }

  /** Puts the server's side on hold (a sendonly re-INVITE). */
  async hold(): Promise<void> {
    this.#expect("talking");
    await this.leg.acceptAnswer(await this.#reinvite(await this.leg.hold()));
  }

  async unhold(): Promise<void> {
    this.#expect("talking");
    await this.leg.acceptAnswer(await this.#reinvite(await this.leg.unhold()));
  }

  /** Plays a media URI into the call (what this phone's user says). */
  async say(uri: string): Promise<void> {
    this.leg.play(await this.#media.player(uri));
  }

  /**
   * The share of each frequency in what this phone hears for `ms`, after a settling pause, frame
   * by frame (who hears whom; a frame late or cut on a loaded machine is the benches' figure).
   */
  async hears(frequencies: readonly number[], ms = 500): Promise<Record<number, number>> {
    const samples = await this.record(ms);
    return Object.fromEntries(frequencies.map((f) => [f, frameWiseShare(samples, f)]));
  }

  /** What this phone hears for `ms`, after 120 ms for audio in flight. */
  async record(ms = 500): Promise<number[]> {
    await sleep(120);
    const samples: number[] = [];
    const stop = this.#media.clock.subscribe((tick) => samples.push(...this.leg.incoming.read(tick)));
    await sleep(ms);
    stop();
    return samples;
  }

  // What the server does to the phone, through the server-side objects below.

  serverRinging(): void {
    if (this.#state === "calling") this.#set("ringing");
  }

  async serverAnswered(sdp: string): Promise<void> {
    await this.leg.acceptAnswer(sdp);
    this.#set("talking");
  }

  serverRejected(code: number, reason: string | undefined, retryAfterS?: number): void {
    this.finalCode = code;
    this.finalReason = reason;
    this.finalRetryAfterS = retryAfterS;
    this.#end("rejected");
  }

  serverCancelled(): void {
    this.#end("cancelled");
  }

  serverBye(): void {
    if (this.#state !== "ended") this.#end("remote-bye");
  }

  serverReinvite(offer: string): Promise<string> {
    return this.leg.acceptOffer(offer);
  }

  #reinvite(offer: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const respond = { answer: resolve, reject: (code: number) => reject(new Error(`re-INVITE refused ${code}`)) };
      this.#server.phoneReinvite(offer, respond);
    });
  }

  #outbound(): FakeOutboundCall {
    if (!(this.#server instanceof FakeOutboundCall)) throw new Error("only an incoming call is answered by the phone");
    return this.#server;
  }

  #inbound(): FakeInboundCall {
    if (!(this.#server instanceof FakeInboundCall)) throw new Error("only an outgoing call is cancelled by the phone");
    return this.#server;
  }

  #expect(state: PhoneCallState): void {
    if (this.#state !== state) throw new Error(`the call is ${this.#state}, not ${state}`);
  }

  #set(state: PhoneCallState): void {
    this.#state = state;
    this.emit("state", state);
  }

  #end(by: PhoneCallEnd): void {
    if (this.#state === "ended") return;
    this.endedBy = by;
    this.#set("ended");
    void this.leg.close(by);
  }
}

type ReinviteResponse = { answer(sdp: string): void; reject(code: number): void };

/** The INVITE a phone sent, as the engine receives it. */
class FakeInboundCall extends EventEmitter<InboundCallEvents> implements InboundCall {
  phone: PhoneCall | undefined;
  ringingSent = 0;

  constructor(
    readonly callId: string,
    readonly device: DeviceRef,
    readonly from: CallParty,
    readonly to: CallParty,
    readonly dialled: string,
    readonly offer: string,
    readonly headers: ReadonlyMap<string, string[]>,
  ) {
    super();
  }

  phoneBye(): void {
    this.emit("bye");
  }

  phoneDtmf(dtmf: InfoDtmf): void {
    this.emit("dtmf", dtmf);
  }

  phoneReinvite(offer: string, respond: ReinviteResponse): void {
    this.emit("reinvite", offer, respond);
  }

  ringing(): void {
    this.ringingSent++;
    this.phone?.serverRinging();
  }

  async answer(sdp: string): Promise<void> {
    await this.phone?.serverAnswered(sdp);
  }

  reject(code: number, reason?: string, retryAfterS?: number): void {
    this.phone?.serverRejected(code, reason, retryAfterS);
  }

  async hangup(): Promise<void> {
    this.phone?.serverBye();
  }

  async reinvite(offer: string): Promise<string> {
    if (!this.phone) throw new Error("no phone");
    return this.phone.serverReinvite(offer);
  }
}

/** The INVITE the engine sent to a phone. */
class FakeOutboundCall extends EventEmitter<OutboundCallEvents> implements OutboundCall {
  phone: PhoneCall | undefined;

  constructor(
    readonly callId: string,
    readonly device: DeviceRef,
  ) {
    super();
  }

  phoneBye(): void {
    this.emit("bye");
  }

  phoneDtmf(dtmf: InfoDtmf): void {
    this.emit("dtmf", dtmf);
  }

  phoneReinvite(offer: string, respond: ReinviteResponse): void {
    this.emit("reinvite", offer, respond);
  }

  cancel(): void {
    if (this.phone && this.phone.state !== "ended" && this.phone.state !== "talking") this.phone.serverCancelled();
  }

  async hangup(): Promise<void> {
    this.phone?.serverBye();
  }

  async reinvite(offer: string): Promise<string> {
    if (!this.phone) throw new Error("no phone");
    return this.phone.serverReinvite(offer);
  }
}

interface PhoneEvents {
  incoming: [PhoneCall];
}

/** A phone registered as one device. */
export class FakePhone extends EventEmitter<PhoneEvents> {
  registered = true;
  readonly calls: PhoneCall[] = [];
  readonly #signalling: FakeSignalling;
  readonly #media: MediaEngine;

  constructor(
    signalling: FakeSignalling,
    media: MediaEngine,
    readonly device: DeviceRef,
    /** The SIP user part this phone presents in From. */
    readonly user: string,
  ) {
    super();
    this.#signalling = signalling;
    this.#media = media;
  }

  /** Dials a number; the call is handed to the engine at once. */
  async dial(number: string, options: { from?: CallParty; headers?: Record<string, string[]> } = {}): Promise<PhoneCall> {
    const leg = this.#media.createLeg(PHONE_LEG);
    const offer = await leg.createOffer();
    const callId = `${randomUUID()}@phone`;
    const from = options.from ?? { user: this.user };
    const headers = new Map(Object.entries(options.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const server = new FakeInboundCall(callId, this.device, from, { user: number }, number, offer, headers);
    const phoneCall = new PhoneCall({ callId, direction: "outgoing", leg, media: this.#media, server });
    server.phone = phoneCall;
    this.calls.push(phoneCall);
    this.#signalling.deliver(server);
    return phoneCall;
  }

  /** The next call offered to this phone (already offered ones first). */
  async incoming(timeoutMs = 10_000): Promise<PhoneCall> {
    const seen = this.#taken;
    await until(() => this.calls.some((c) => c.direction === "incoming" && !seen.has(c)), `a call to ${this.user}`, timeoutMs);
    const call = this.calls.find((c) => c.direction === "incoming" && !seen.has(c));
    if (!call) throw new Error("no incoming call");
    seen.add(call);
    return call;
  }

  readonly #taken = new Set<PhoneCall>();

  /**
   * Forgets the calls offered so far: the next incoming() waits for a new one. For a test that
   * starts afresh after others (an offer a queue made and cancelled in an earlier test is not
   * the next test's call).
   */
  forgetOffers(): void {
    for (const call of this.calls) if (call.direction === "incoming") this.#taken.add(call);
  }

  offered(server: FakeOutboundCall, options: InviteOptions): void {
    const call = new PhoneCall({
      callId: server.callId,
      direction: "incoming",
      leg: this.#media.createLeg(PHONE_LEG),
      media: this.#media,
      server,
      offer: options.offer,
      from: options.from,
    });
    server.phone = call;
    this.calls.push(call);
    this.emit("incoming", call);
  }
}

export class FakeSignalling implements CallSignalling {
  readonly #phones = new Map<string, FakePhone>();
  readonly #handlers: ((call: InboundCall) => void)[] = [];
  /** Every INVITE the engine sent, in order. */
  readonly invites: { target: DeviceRef; options: InviteOptions; callId: string | null }[] = [];

  constructor(readonly media: MediaEngine) {}

  onInbound(handler: (call: InboundCall) => void): void {
    this.#handlers.push(handler);
  }

  invite(target: DeviceRef, options: InviteOptions): OutboundCall | null {
    const phone = this.#phones.get(key(target));
    if (!phone?.registered) {
      this.invites.push({ target, options, callId: null });
      return null;
    }
    const call = new FakeOutboundCall(`${randomUUID()}@server`, target);
    this.invites.push({ target, options, callId: call.callId });
    // The phone hears of it after the engine has its handle, as over a real transport.
    queueMicrotask(() => phone.offered(call, options));
    return call;
  }

  /** A phone registered as `device`, presenting `user` in From. */
  phone(device: DeviceRef, user: string): FakePhone {
    const phone = new FakePhone(this, this.media, device, user);
    this.#phones.set(key(device), phone);
    return phone;
  }

  deliver(call: InboundCall): void {
    if (this.#handlers.length === 0) throw new Error("no call engine listens");
    for (const handler of this.#handlers) handler(call);
  }
}

function key(device: DeviceRef): string {
  return `${device.accountId}/${device.deviceId}`;
}
