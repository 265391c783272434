// The simulated callers of every account: started for the API (trainers, demos, tests), handed to
// the call engine beside SIP's inbound calls so the engine cannot tell them apart, kept while live.
import type { Clock, RandomSource } from "../clock.js";
import { MediaLibrary } from "../calls/media-library.js";
import { MediaUriError, type AudioSource, type MediaEngine } from "../media/index.js";
import { MediaReferenceError } from "../media/reference.js";
import type { CallSignalling, InboundCall } from "../sip/call-signalling.js";
import type { Store } from "../store/index.js";
import { newId } from "../store/index.js";
import { SimulatedCaller } from "./caller.js";

/** Far more than a training session rings at once; a bound so a script cannot exhaust the ports. */
export const MAX_SIM_CALLS_PER_ACCOUNT = 50;

export interface SimCallRequest {
  to: string;
  callerIdName: string;
  callerIdNumber: string;
  /** A media reference (server/media/reference.ts): a media id of the account, tone_stream:// or silence_stream://. */
  audio: string;
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

/** The account already has MAX_SIM_CALLS_PER_ACCOUNT live simulated calls. */
export class SimCallLimitError extends Error {
  override name = "SimCallLimitError";
}

export interface SimCallersDeps {
  store: Store;
  media: MediaEngine;
  clock: Clock;
  random: RandomSource;
}

export class SimCallers {
  readonly #deps: SimCallersDeps;
  readonly #library: MediaLibrary;
  readonly #handlers: ((call: InboundCall) => void)[] = [];
  readonly #calls = new Map<string, SimulatedCaller>();

  constructor(deps: SimCallersDeps) {
    this.#deps = deps;
    this.#library = new MediaLibrary(deps.store, deps.media);
  }

  /** The signalling the call engine listens to: `sip`'s calls in and out, plus the simulated ones in. */
  signalling(sip: CallSignalling | undefined): CallSignalling {
    return {
      onInbound: (handler) => {
        sip?.onInbound(handler);
        this.#handlers.push(handler);
      },
      invite: (target, options) => sip?.invite(target, options) ?? null,
    };
  }

  /** Places a call: resolves once the engine has it (its progress is the caller's `state`). */
  async start(accountId: string, request: SimCallRequest): Promise<SimulatedCaller> {
    if (this.#handlers.length === 0) throw new Error("no call engine takes simulated calls");
    if (this.ofAccount(accountId).length >= MAX_SIM_CALLS_PER_ACCOUNT) {
      throw new SimCallLimitError(`an account may have ${MAX_SIM_CALLS_PER_ACCOUNT} simulated calls at once`);
    }
    const audio = await this.#audio(accountId, request.audio);
    const leg = this.#deps.media.createLeg();
    let offer: string;
    try {
      offer = await leg.createOffer();
    } catch (err) {
      await leg.close("offer failed");
      throw err;
    }
    const caller = new SimulatedCaller({
      id: newId(this.#deps.random),
      accountId,
      to: request.to,
      caller: { name: request.callerIdName, number: request.callerIdNumber },
      leg,
      offer,
      audio,
      audioName: request.audio,
      clock: this.#deps.clock,
    });
    this.#calls.set(caller.id, caller);
    caller.on("state", (change) => {
      if (change.to === "ended") this.#calls.delete(caller.id);
    });
    for (const handler of this.#handlers) handler(caller.inbound);
    return caller;
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
    for (const caller of [...this.#calls.values()]) caller.hangup();
  }

  async #audio(accountId: string, audio: string): Promise<AudioSource> {
    let uri: string;
    try {
      uri = await this.#library.resolve(accountId, audio);
    } catch (err) {
      if (err instanceof MediaReferenceError) throw new SimCallRequestError("audio", err.rule, err.message, audio);
      throw err;
    }
    try {
      return await this.#deps.media.player(uri);
    } catch (err) {
      // A URI's own mistake helps the client; a file's error would only show the server's paths.
      const why = err instanceof MediaUriError ? err.message : "the media's audio cannot be read";
      throw new SimCallRequestError("audio", "format", `cannot be played: ${why}`, audio);
    }
  }
}
