// The simulated callers of every account: started for the API (trainers, demos, tests), handed to
// the call engine beside SIP's inbound calls so the engine cannot tell them apart, kept while live.
// A scripted caller learns how its call goes from the call events on the bus, as a person on the
// line would hear it: someone answered (its channel bridged), its party holds, a transfer.
import type { Clock, RandomSource } from "../clock.js";
import { MediaLibrary } from "../calls/media-library.js";
import type { BusEvent, EventBus } from "../events/bus.js";
import { MediaUriError, memoryMediaPair, OVERLOAD_RETRY_AFTER_S, type AudioSource, type CallMedia, type MediaEngine } from "../media/index.js";
import { MediaReferenceError } from "../media/reference.js";
import type { CallSignalling, InboundCall } from "../sip/call-signalling.js";
import type { Store } from "../store/index.js";
import { newId } from "../store/index.js";
import { BotCall, type BotPhoneConduct } from "./bot-phone.js";
import { SimulatedCaller, type ScriptMedia } from "./caller.js";
import { DEFAULT_PHONE_AUDIO, SimPhones, type PhoneAnswer } from "./phones.js";
import type { ConductPlan, ConductStep } from "./conduct.js";
import type { CallerScript } from "./script.js";
import { SPEECH_PROGRAM, SpeechRenderError, SpeechUnavailableError, SUPERVISOR_LINE, type SpeechSynthesiser, type SpokenLine } from "./speech.js";

/** Far more than a training session rings at once; a bound so a script cannot exhaust the ports. */
export const MAX_SIM_CALLS_PER_ACCOUNT = 50;

export interface SimCallRequest {
  to: string;
  callerIdName: string;
  callerIdNumber: string;
  /**
   * What the caller does once answered: `audio`, a media reference (server/media/reference.ts:
   * a media id of the account, tone_stream:// or silence_stream://) played once, or a script.
   */
  behaviour: { audio: string } | { script: CallerScript };
  /**
   * Given, the caller's number becomes a phone calls can reach later (a queue callback, an agent
   * calling back): it answers, is busy or never answers; once answered it plays `audio` (a media
   * reference; the call's own audio, else a steady tone, by default) until the server hangs up.
   * Not given, calls to the number reach nothing.
   */
  phone?: { answer: PhoneAnswer; audio?: string };
  /**
   * The caller's media: a WebRTC leg calling the server over loopback UDP (ICE, DTLS, SRTP, RTP:
   * the default, the same path a device's call takes), or `direct`: an in-memory pair with the
   * server's side of the call, for callers that stand in for people (a training run's), whose
   * network leg would only be the server talking to itself.
   */
  media?: "webrtc" | "direct";
}

/** A request the simulator refuses, naming the field and the rule (the API's 400). */
export class SimCallRequestError extends Error {
  override name = "SimCallRequestError";
  constructor(
    readonly field: string,
    readonly rule: string,
    message: string,
    readonly value?: unknown,
  ) {
    super(message);
  }
}

/** The media engine is refusing new calls (media/load.ts): the carrier would get a 503 too. */
export class SimCallOverloadError extends Error {
  override name = "SimCallOverloadError";
  readonly retryAfterS = OVERLOAD_RETRY_AFTER_S;
}

/** The account already has MAX_SIM_CALLS_PER_ACCOUNT live simulated calls. */
export class SimCallLimitError extends Error {
  override name = "SimCallLimitError";
}

export interface SimCallersDeps {
  store: Store;
  media: MediaEngine;
  clock: Clock;
  random: RandomSource;
  /** The call events scripted callers follow. */
  bus: EventBus;
  speech: SpeechSynthesiser;
  /** Failures in a caller's background work (a line that cannot be opened, DTMF not sent). */
  onError?(err: unknown, what: string, callId: string): void;
}

export class SimCallers {
  readonly #deps: SimCallersDeps;
  readonly #library: MediaLibrary;
  readonly #handlers: ((call: InboundCall) => void)[] = [];
  readonly #calls = new Map<string, SimulatedCaller>();
  /** The leg each simulated call is bridged with, by that leg's id: its hold is the caller's. */
  readonly #parties = new Map<string, string>();
  readonly #unsubscribe: () => void;
  /** The callers' numbers, which calls out to them reach. */
  readonly #phones: SimPhones;
  /** Simulated agents' phones by `<account id>/<device id>`: the engine's INVITEs to them end here. */
  readonly #bots = new Map<string, BotPhoneConduct>();

  constructor(deps: SimCallersDeps) {
    this.#deps = deps;
    this.#library = new MediaLibrary(deps.store, deps.media);
    this.#phones = new SimPhones(deps);
    this.#unsubscribe = deps.bus.subscribe((event) => this.#follow(event));
  }

  /** The signalling the call engine listens to: `sip`'s calls in and out, plus the simulated ones in. */
  signalling(sip: CallSignalling | undefined): CallSignalling {
    return {
      onInbound: (handler) => {
        sip?.onInbound(handler);
        this.#handlers.push(handler);
      },
      invite: (target, options) => {
        const bot = this.#bots.get(botKey(target));
        if (bot) return new BotCall(newId(this.#deps.random), target, options, this.#deps.media, bot);
        return sip?.invite(target, options) ?? null;
      },
      directMedia: (target) => this.#bots.get(botKey(target))?.directMedia === true,
      dialOut: (target, options) => this.#phones.dialOut(target, options) ?? sip?.dialOut?.(target, options) ?? null,
    };
  }

  /**
   * Makes `device` a simulated agent's phone: from now on the engine's calls to it are answered
   * as `conduct` says, never sent over SIP. The returned function gives the device back.
   */
  botPhone(device: { accountId: string; deviceId: string }, conduct: BotPhoneConduct): () => void {
    const key = botKey(device);
    this.#bots.set(key, conduct);
    return () => {
      if (this.#bots.get(key) === conduct) this.#bots.delete(key);
    };
  }

  /** Places a call: resolves once the engine has it (its progress is the caller's `state`). */
  async start(accountId: string, request: SimCallRequest): Promise<SimulatedCaller> {
    if (this.#handlers.length === 0) throw new Error("no call engine takes simulated calls");
    if (this.ofAccount(accountId).length >= MAX_SIM_CALLS_PER_ACCOUNT) {
      throw new SimCallLimitError(`an account may have ${MAX_SIM_CALLS_PER_ACCOUNT} simulated calls at once`);
    }
    const overload = this.#deps.media.refusal();
    if (overload !== undefined) throw new SimCallOverloadError(`the media engine takes no new call now: ${overload}`);
    const id = newId(this.#deps.random);
    const phone = request.phone;
    const phoneAudio = phone === undefined ? undefined : (phone.audio ?? ("audio" in request.behaviour ? request.behaviour.audio : undefined));
    const phoneUri = phoneAudio === undefined ? DEFAULT_PHONE_AUDIO : await this.#playable(accountId, phoneAudio, phone?.audio === undefined ? "audio" : "phone.audio");
    const behaviour = "audio" in request.behaviour
      ? { kind: "audio" as const, source: await this.#audio(accountId, request.behaviour.audio, "audio"), name: request.behaviour.audio }
      : { kind: "script" as const, plan: await this.#plan(accountId, request.behaviour.script), media: this.#scriptMedia(id) };
    const media = request.media === "direct" ? directMedia() : await this.#webRtcMedia();
    const caller = new SimulatedCaller({
      id,
      accountId,
      to: request.to,
      caller: { name: request.callerIdName, number: request.callerIdNumber },
      ...media,
      behaviour,
      clock: this.#deps.clock,
    });
    this.#calls.set(caller.id, caller);
    // Only a caller who says how their phone answers owns their number: calls to it (a callback,
    // an agent calling back) reach nothing otherwise, as before phones.
    if (phone !== undefined) this.#phones.own(accountId, request.callerIdNumber, { answer: phone.answer, audioUri: phoneUri });
    caller.on("state", (change) => {
      if (change.to !== "ended") return;
      this.#calls.delete(caller.id);
      for (const [party, callId] of this.#parties) if (callId === caller.id) this.#parties.delete(party);
    });
    for (const handler of this.#handlers) handler(caller.inbound);
    return caller;
  }

  /** A WebRTC leg of the caller's own, holding its offer. */
  async #webRtcMedia(): Promise<{ leg: CallMedia; offer: string }> {
    const leg = this.#deps.media.createLeg();
    try {
      return { leg, offer: await leg.createOffer() };
    } catch (err) {
      await leg.close("offer failed");
      throw err;
    }
  }

  /** A live simulated call of the account, or undefined (another account's is not there). */
  get(accountId: string, id: string): SimulatedCaller | undefined {
    const caller = this.#calls.get(id);
    return caller?.accountId === accountId ? caller : undefined;
  }

  ofAccount(accountId: string): SimulatedCaller[] {
    return [...this.#calls.values()].filter((c) => c.accountId === accountId);
  }

  /** Every simulated caller hangs up (server shutdown). */
  close(): void {
    this.#unsubscribe();
    this.#phones.close();
    for (const caller of [...this.#calls.values()]) caller.hangup();
  }

  /** A call event of a simulated caller's channel, or of the leg it is bridged with. */
  #follow(event: BusEvent): void {
    if (this.#calls.size === 0 || !event.routing_key.startsWith("call.")) return;
    const id = event.routing_key.slice(event.routing_key.lastIndexOf(".") + 1);
    const own = this.#calls.get(id);
    if (own && event.name === "CHANNEL_BRIDGE") {
      const party = event.data.other_leg_call_id;
      if (typeof party === "string") this.#parties.set(party, id);
      own.channelBridged();
    } else if (own && event.name === "CHANNEL_UNBRIDGE") {
      for (const [party, callId] of this.#parties) if (callId === id) this.#parties.delete(party);
      own.channelUnbridged();
    } else if (event.name === "CHANNEL_HOLD" || event.name === "CHANNEL_UNHOLD") {
      const callId = this.#parties.get(id);
      if (callId !== undefined) this.#calls.get(callId)?.partyHolding(event.name === "CHANNEL_HOLD");
    }
  }

  #scriptMedia(callId: string): ScriptMedia {
    const onError = this.#deps.onError;
    return { ticks: this.#deps.media.clock, player: (uri) => this.#deps.media.player(uri), onError: (err, what) => onError?.(err, what, callId) };
  }

  /**
   * The script with every line made playable before the call is placed, so a line that cannot be
   * said is the request's 400 and not a silence in the middle of a call.
   */
  async #plan(accountId: string, script: CallerScript): Promise<ConductPlan> {
    const steps: ConductStep[] = [];
    if (script.asksForSupervisor) {
      const line = { text: SUPERVISOR_LINE, language: script.language, ...(script.voice === undefined ? {} : { voice: script.voice }) };
      steps.push({ kind: "line", uri: await this.#spoken(line, undefined, accountId, "script.asks_for_supervisor") });
    }
    for (const [index, step] of script.steps.entries()) {
      const field = `script.steps.${index}`;
      switch (step.kind) {
        case "say":
          steps.push({ kind: "line", uri: await this.#spoken(step.line, step.media, accountId, `${field}.say`) });
          break;
        case "play":
          steps.push({ kind: "line", uri: await this.#playable(accountId, step.media, `${field}.play`) });
          break;
        case "wait":
          steps.push({ kind: "wait", seconds: step.seconds });
          break;
        case "digits":
          steps.push({ kind: "digits", digits: step.digits, ...(step.afterS === undefined ? {} : { afterS: step.afterS }) });
          break;
        case "hangup":
          steps.push({ kind: "hangup" });
          break;
      }
    }
    return {
      steps,
      ...(script.patienceS === undefined ? {} : { patienceS: script.patienceS }),
      ...(script.talkS === undefined ? {} : { talkS: script.talkS }),
      ...(script.holdPatienceS === undefined ? {} : { holdPatienceS: script.holdPatienceS }),
    };
  }

  /** A line's WAV: synthesised (or a stock phrase), else its fallback media when synthesis is missing. */
  async #spoken(line: SpokenLine, fallback: string | undefined, accountId: string, field: string): Promise<string> {
    // The fallback is checked whether or not it is needed here: the script must hold on any machine.
    const fallbackUri = fallback === undefined ? undefined : await this.#playable(accountId, fallback, field.replace(/\.say$/, ".media"));
    try {
      return await this.#deps.speech.wavOf(line);
    } catch (err) {
      if (err instanceof SpeechUnavailableError) {
        if (fallbackUri !== undefined) return fallbackUri;
        throw new SimCallRequestError(field, "synthesis_unavailable", `${err.message}; or give the line a media id to play instead`, SPEECH_PROGRAM);
      }
      if (err instanceof SpeechRenderError) throw new SimCallRequestError(field, "synthesis", err.message, line.text);
      throw err;
    }
  }

  /** A media reference resolved and opened once, so what cannot be played is refused now. */
  async #playable(accountId: string, reference: string, field: string): Promise<string> {
    const uri = await this.#resolve(accountId, reference, field);
    await this.#open(uri, reference, field);
    return uri;
  }

  async #audio(accountId: string, audio: string, field: string): Promise<AudioSource> {
    return this.#open(await this.#resolve(accountId, audio, field), audio, field);
  }

  async #resolve(accountId: string, reference: string, field: string): Promise<string> {
    try {
      return await this.#library.resolve(accountId, reference);
    } catch (err) {
      if (err instanceof MediaReferenceError) throw new SimCallRequestError(field, err.rule, err.message, reference);
      throw err;
    }
  }

  async #open(uri: string, reference: string, field: string): Promise<AudioSource> {
    try {
      return await this.#deps.media.player(uri);
    } catch (err) {
      // A URI's own mistake helps the client; a file's error would only show the server's paths.
      const why = err instanceof MediaUriError ? err.message : "the media's audio cannot be read";
      throw new SimCallRequestError(field, "format", `cannot be played: ${why}`, reference);
    }
  }
}

/** The caller's side and the server's side of direct media (no SDP: an empty offer). */
function directMedia(): { leg: CallMedia; serverMedia: CallMedia; offer: string } {
  const [leg, serverMedia] = memoryMediaPair();
  return { leg, serverMedia, offer: "" };
}

/** A bot phone's key: its device in its account. */
function botKey(device: { accountId: string; deviceId: string }): string {
  return `${device.accountId}/${device.deviceId}`;
}
