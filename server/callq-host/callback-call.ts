// A callback as the queue engine sees it (ports.ts QueuedCall): the caller left the line, so an
// offer rings the recipient with the number to call back; once they accept, the server dials the
// caller through the signalling's carrier (calls/dial.ts dialNumber) and bridges the two.
import type { Channel, ChannelChange } from "../calls/channel.js";
import type { CallContext } from "../calls/context.js";
import { CALLBACK_NUMBER_VAR, QUEUE_SESSION_VAR } from "../calls/cdrs.js";
import { dial, dialNumber, type DialResult } from "../calls/dial.js";
import type { CallbackDial, CallbackFailure, CallerId, OfferOutcome, OfferRequest, QueuedCall } from "../callq/ports.js";
import { DEFAULT_FAILURE_MEDIA, playPrompt } from "./modules/prompts.js";
import { offeredCallerId, queueHeaders, queueTargets } from "./queued-call.js";

/** The INVITE header that tells the console an offer is a callback, and to which number. */
export const CALLBACK_HEADER = "X-Callback-Number";
/** How long the caller's phone may ring before the attempt counts as not answered. */
export const CALLBACK_DIAL_TIMEOUT_MS = 30_000;
/** What the recipient hears while the caller's phone rings. */
const RINGBACK = "tone_stream://%(2000,4000,440,480)";

/** Refusals by the called phone: busy (486, 600) and declined (603). */
function failureOf(result: Exclude<DialResult, { kind: "answered" }>): CallbackFailure {
  if (result.kind === "aborted") return "recipient_hung_up";
  if (result.cause === "SUBSCRIBER_ABSENT") return "unreachable";
  if (result.code === 486 || result.code === 600) return "busy";
  if (result.code === 603) return "rejected";
  return "no_answer";
}

/** Settles when the leg hangs up (at once if it has). */
function hungUp(leg: Channel): Promise<void> {
  return new Promise((resolve) => {
    if (leg.over) {
      resolve();
      return;
    }
    const onState = (change: ChannelChange): void => {
      if (change.to !== "hungup") return;
      leg.off("state", onState);
      resolve();
    };
    leg.on("state", onState);
  });
}

export interface CallbackCallOptions {
  /** The call the caller asked from: the session keeps its id. */
  callId: string;
  caller: CallerId;
  realm: string;
  /** The number the caller dialled: what their phone shows when the server calls back. */
  dialled: string;
}

export class CallbackQueuedCall implements QueuedCall {
  readonly callId: string;
  readonly caller: CallerId;
  readonly #ctx: CallContext;
  readonly #realm: string;
  readonly #dialled: string;

  constructor(ctx: CallContext, options: CallbackCallOptions) {
    this.#ctx = ctx;
    this.callId = options.callId;
    this.caller = { ...options.caller };
    this.#realm = options.realm;
    this.#dialled = options.dialled;
  }

  /** A callback holds no line: there is nobody to hang up. */
  onGone(): void {}

  async offer(request: OfferRequest, signal: AbortSignal): Promise<OfferOutcome> {
    const ctx = this.#ctx;
    if (signal.aborted) return { kind: "cancelled" };
    const targets = await queueTargets(ctx, request.accountId, request.recipientId);
    if (targets.length === 0) return { kind: "unreachable" };
    const number = request.callback?.number ?? this.caller.number;
    const result = await dial(ctx, {
      accountId: request.accountId,
      realm: this.#realm,
      targets,
      caller: offeredCallerId({ name: this.caller.name, number }, request.queueName),
      timeoutMs: request.timeoutMs,
      clock: request.clock,
      signal,
      headers: [...queueHeaders(request, request.clock.now(), ctx.clock.now()), [CALLBACK_HEADER, number]],
    });
    switch (result.kind) {
      case "aborted":
        return { kind: "cancelled" };
      case "failed":
        if (result.cause === "SUBSCRIBER_ABSENT") return { kind: "unreachable" };
        return result.code === 486 || result.code === 600 || result.code === 603 ? { kind: "rejected" } : { kind: "timeout" };
      case "answered": {
        const agent = result.channel;
        if (signal.aborted) {
          agent.hangup("ORIGINATOR_CANCEL");
          return { kind: "cancelled" };
        }
        this.#mark(agent, request, number);
        return { kind: "answered", ended: hungUp(agent), dialed: this.#dialCaller(agent, request, number) };
      }
    }
  }

  /** Dials the caller for the recipient who accepted, who hears ringback until they answer. */
  async #dialCaller(agent: Channel, request: OfferRequest, number: string): Promise<CallbackDial> {
    const ctx = this.#ctx;
    const gone = new AbortController();
    void hungUp(agent).then(() => gone.abort());
    try {
      agent.media.play(await ctx.media.player(RINGBACK, { loop: true }));
    } catch (err) {
      ctx.logger.warn({ err, call_id: agent.id }, "callq: callback ringback cannot be played");
    }
    const result = await dialNumber(ctx, {
      accountId: request.accountId,
      realm: this.#realm,
      number,
      caller: { name: request.queueName, number: this.#dialled },
      timeoutMs: CALLBACK_DIAL_TIMEOUT_MS,
      signal: gone.signal,
      origin: agent,
    });
    if (result.kind === "answered") {
      const caller = result.channel;
      if (agent.over) {
        caller.hangup("ORIGINATOR_CANCEL");
        return { kind: "failed", reason: "recipient_hung_up" };
      }
      this.#mark(caller, request, number);
      agent.setCallee(caller.identity.callee);
      ctx.bridge(agent, caller);
      return { kind: "connected" };
    }
    const reason = failureOf(result);
    if (!agent.over) {
      // The recipient hears why it ends (the low pair of refusal) before their leg hangs up.
      await playPrompt(ctx, agent, undefined, DEFAULT_FAILURE_MEDIA, gone.signal);
      agent.hangup("NORMAL_CLEARING");
    }
    return { kind: "failed", reason };
  }

  /** The queue, the session and the callback's number on a leg, for its CDR and recording. */
  #mark(leg: Channel, request: OfferRequest, number: string): void {
    leg.customVars.set("queue_id", request.queueId);
    leg.customVars.set(QUEUE_SESSION_VAR, request.sessionId);
    leg.customVars.set(CALLBACK_NUMBER_VAR, number);
  }
}
