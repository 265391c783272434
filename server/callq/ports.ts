// The queue engine's boundary: what it needs from below (a scheduler, a place to publish, and
// each waiting caller's call as calls/ presents it) and what it tells the call side back.
import type { Clock } from "../clock.js";

/** Time and one-shot timers: the server's clock, which tests and the simulator run by hand. */
export type Scheduler = Pick<Clock, "now" | "after">;

/** Where the engine's events go (the bus of events/, seen from below). */
export interface CallqEventSink {
  publish(event: { account_id: string; routing_key: string; name: string; data: Record<string, unknown> }): unknown;
}

export interface CallerId {
  name: string;
  number: string;
}

/** What the queue asks the call side to do for one offer. */
export interface OfferRequest {
  accountId: string;
  recipientId: string;
  queueId: string;
  queueName: string;
  sessionId: string;
  /** How long to ring (the queue's ring_timeout). */
  timeoutMs: number;
  /** When the caller entered the queue (Unix ms): the console shows how long they waited. */
  enteredAt: number;
}

export type OfferOutcome =
  /** The recipient answered and is bridged to the caller; `ended` settles when that call ends. */
  | { kind: "answered"; ended: Promise<void> }
  /** The recipient's device refused the call. */
  | { kind: "rejected" }
  /** Nobody answered within the ring timeout. */
  | { kind: "timeout" }
  /** The recipient has no device that can be rung (none registered, or all excluded). */
  | { kind: "unreachable" }
  /** The engine gave the offer up (abort), or the caller went away while it rang. */
  | { kind: "cancelled" };

/**
 * A waiting caller's call as the engine sees it. calls/ implements it around the caller's
 * channel; the routing benchmark implements it with an instant answer.
 */
export interface QueuedCall {
  readonly callId: string;
  readonly caller: CallerId;
  /** Rings the recipient for this caller; aborting `signal` cancels the ringing. */
  offer(request: OfferRequest, signal: AbortSignal): Promise<OfferOutcome>;
  /** Calls `listener` once when the caller hangs up (at once if they already have). */
  onGone(listener: () => void): void;
}

/** How a caller's time in a queue ended, for the callq module to act on. */
export type SessionEnd =
  | { kind: "handled" }
  | { kind: "abandoned" }
  /** Timed out; `redirect` is the queue to try next (timeout_redirect), if any. */
  | { kind: "timeout"; redirect?: string }
  /** Taken out of the queue through the API. */
  | { kind: "removed" }
  /** The queue does not exist (or was deleted while the caller waited). */
  | { kind: "no_queue" };
