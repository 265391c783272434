// A waiting caller's call as the queue engine sees it (ports.ts QueuedCall), around the caller's
// channel: an offer rings the recipient's queue devices and bridges the answer to the caller.
import type { Channel, ChannelChange, ChannelParty } from "../calls/channel.js";
import type { CallContext } from "../calls/context.js";
import { QUEUE_SESSION_VAR } from "../calls/cdrs.js";
import { dial, type DialTarget } from "../calls/dial.js";
import { userTargets } from "../calls/targets.js";
import type { CallerId, OfferOutcome, OfferRequest, QueuedCall } from "../callq/ports.js";

/** Refusals by the device (busy, declined, busy everywhere, declined everywhere). */
const REFUSALS = new Set([486, 600, 603]);

/**
 * Extra INVITE headers of a queue offer, for the console to show the queue and the wait; the
 * names the console reads (renderer/phone/softphone.ts OFFER_HEADERS) and two for scripts.
 */
export const QUEUE_HEADERS = {
  queueId: "X-Queue-ID",
  /** Percent-encoded when it holds anything but printable ASCII (or a %). */
  queueName: "X-Queue-Name",
  /** Seconds the caller waited before this offer. */
  waited: "X-Queue-Wait-Seconds",
  sessionId: "X-Queue-Session-ID",
  /**
   * When the caller entered the queue, Unix seconds on the server's clock, less any time the
   * account's queue time stood still since (a paused training run): a phone that shows "waited"
   * as its clock less this time shows the queue's wait.
   */
  enteredAt: "X-Queue-Enter-Time",
} as const;

/**
 * `queueNow` is the account's queue time, which `enteredAt` is on; `serverNow` the server's clock,
 * which is ahead of the queue time by a training run's pauses.
 */
export function queueHeaders(request: Pick<OfferRequest, "queueId" | "queueName" | "sessionId" | "enteredAt">, queueNow: number, serverNow: number): [string, string][] {
  const name = /[^\x20-\x7e]|%/.test(request.queueName) ? encodeURIComponent(request.queueName) : request.queueName;
  const waitedMs = Math.max(0, queueNow - request.enteredAt);
  return [
    [QUEUE_HEADERS.queueId, request.queueId],
    [QUEUE_HEADERS.queueName, name],
    [QUEUE_HEADERS.waited, String(Math.floor(waitedMs / 1000))],
    [QUEUE_HEADERS.sessionId, request.sessionId],
    [QUEUE_HEADERS.enteredAt, String(Math.floor((serverNow - waitedMs) / 1000))],
  ];
}

/** How a rung agent sees the caller: the queue's name before the caller's name. */
export function offeredCallerId(caller: ChannelParty, queueName: string): ChannelParty {
  const name = queueName.trim() === "" ? caller.name : `${queueName.trim()}: ${caller.name}`;
  return { name, number: caller.number };
}

/** The devices of a recipient a queue may ring: enabled and not `exclude_from_queues`. */
export async function queueTargets(ctx: CallContext, accountId: string, userId: string, caller?: Channel): Promise<DialTarget[]> {
  const found = await userTargets(ctx.store, accountId, userId);
  if (!found) return [];
  // The caller's own phone is never rung for their own call (an agent testing their queue).
  return found.targets.filter((t) => t.device.data.exclude_from_queues !== true && t.device.id !== caller?.identity.deviceId);
}

/**
 * Settles when the agent's leg hangs up: the agent is on the call until then. Not the bridge's
 * end: an attended transfer releases that bridge when the consultation starts, while the agent
 * still has the caller (on hold) until they complete the transfer (hang up) or take it back.
 */
function agentLeaves(agent: Channel): Promise<void> {
  return new Promise((resolve) => {
    if (agent.over) {
      resolve();
      return;
    }
    const onState = (change: ChannelChange): void => {
      if (change.to !== "hungup") return;
      agent.off("state", onState);
      resolve();
    };
    agent.on("state", onState);
  });
}

export class ChannelQueuedCall implements QueuedCall {
  readonly callId: string;
  readonly caller: CallerId;
  readonly #ctx: CallContext;
  readonly #channel: Channel;
  readonly #gone = new Set<() => void>();
  /** The caller left (hung up, or other call logic took the channel); fires once. */
  #isGone = false;
  /** Bridged to a recipient: from here the engine follows the offer's `ended`, not onGone. */
  #handedOver = false;

  /**
   * `signal` is the callq module's: it aborts when the caller hangs up or other call logic (a
   * transfer, a break, another callflow) takes the channel, which ends the caller's wait alike.
   */
  constructor(ctx: CallContext, channel: Channel, signal: AbortSignal) {
    this.#ctx = ctx;
    this.#channel = channel;
    this.callId = channel.id;
    this.caller = { name: channel.identity.caller.name, number: channel.identity.caller.number };
    const leave = (): void => this.#leave();
    if (signal.aborted || channel.over) this.#isGone = true;
    else signal.addEventListener("abort", leave, { once: true });
  }

  onGone(listener: () => void): void {
    if (this.#isGone) {
      if (!this.#handedOver) listener();
      return;
    }
    this.#gone.add(listener);
  }

  async offer(request: OfferRequest, signal: AbortSignal): Promise<OfferOutcome> {
    const ctx = this.#ctx;
    const caller = this.#channel;
    if (signal.aborted || this.#isGone || caller.over) return { kind: "cancelled" };
    const targets = await queueTargets(ctx, request.accountId, request.recipientId, caller);
    if (targets.length === 0) return { kind: "unreachable" };
    // Ringing stops when the engine gives the offer up or the caller leaves.
    const ringing = new AbortController();
    const stop = (): void => ringing.abort();
    signal.addEventListener("abort", stop, { once: true });
    const unlisten = this.#whenGone(stop);
    let result;
    try {
      result = await dial(ctx, {
        accountId: request.accountId,
        realm: caller.identity.realm,
        targets,
        caller: offeredCallerId(caller.self, request.queueName),
        timeoutMs: request.timeoutMs,
        clock: request.clock,
        signal: ringing.signal,
        origin: caller,
        headers: queueHeaders(request, request.clock.now(), ctx.clock.now()),
      });
    } finally {
      signal.removeEventListener("abort", stop);
      unlisten();
    }
    switch (result.kind) {
      case "aborted":
        return { kind: "cancelled" };
      case "failed":
        if (result.cause === "SUBSCRIBER_ABSENT") return { kind: "unreachable" };
        return REFUSALS.has(result.code) ? { kind: "rejected" } : { kind: "timeout" };
      case "answered":
        return this.#bridge(result.channel, signal, request);
    }
  }

  /** The agent answered: joined to the caller (the caller's hold treatment gives way to the bridge). */
  #bridge(agent: Channel, signal: AbortSignal, request: OfferRequest): OfferOutcome {
    const caller = this.#channel;
    if (signal.aborted || this.#isGone || caller.over || !caller.answered || caller.bridged) {
      agent.hangup("ORIGINATOR_CANCEL");
      return { kind: "cancelled" };
    }
    if (agent.state !== "answered") return { kind: "timeout" };
    this.#handedOver = true;
    // The queue the call came through, for its recording (filter_queue_id) and whatever else the
    // legs leave behind.
    for (const leg of [caller, agent]) {
      leg.customVars.set("queue_id", request.queueId);
      // The session's disposition, given later, lands on both legs' CDRs (calls/cdrs.ts).
      leg.customVars.set(QUEUE_SESSION_VAR, request.sessionId);
    }
    caller.setCallee(agent.identity.callee);
    this.#ctx.bridge(caller, agent);
    return { kind: "answered", ended: agentLeaves(agent) };
  }

  /** Runs `fn` when the caller leaves or hangs up; returns the function that stops listening. */
  #whenGone(fn: () => void): () => void {
    this.#gone.add(fn);
    return () => this.#gone.delete(fn);
  }

  #leave(): void {
    if (this.#isGone) return;
    this.#isGone = true;
    const listeners = [...this.#gone];
    this.#gone.clear();
    if (this.#handedOver) return;
    for (const listener of listeners) listener();
  }
}
