// The queue engine's boundary: what it needs from below (a scheduler, a place to publish, and
// each waiting caller's call as calls/ presents it) and what it tells the call side back. The
// accounts' queues and users come through a directory and recipient states go to a ledger, which
// callq-host/ implements on the store.
import type { Clock } from "../clock.js";
import type { QueueInterval } from "./intervals.js";
import type { QueueConfig } from "./queue-config.js";
import type { SavedRecipient } from "./recipient.js";
import type { RecipientDay } from "./recipient-day.js";

/** Time and one-shot timers: the server's clock, which tests and the simulator run by hand. */
export type Scheduler = Pick<Clock, "now" | "after">;

/** A clock lent to an account's queues (a training run's): one that can stand still says when it does. */
export type LentClock = Scheduler & { readonly paused?: boolean };

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
  /**
   * The account's queue time, which the ring timeout waits on and `enteredAt` is read against:
   * a training run's clock holds both while the run is paused.
   */
  clock: Scheduler;
  /** When the caller entered the queue (Unix ms, queue time): the console shows how long they waited. */
  enteredAt: number;
  /** Set when the offer is a callback: the number to dial once the recipient accepts. */
  callback?: { number: string; attempt: number };
}

/** Why dialling a caller back did not connect them. */
export const CALLBACK_FAILURES = ["no_answer", "busy", "rejected", "unreachable", "recipient_hung_up"] as const;
export type CallbackFailure = (typeof CALLBACK_FAILURES)[number];

/** How dialling the caller back went, once the recipient accepted a callback. */
export type CallbackDial = { kind: "connected" } | { kind: "failed"; reason: CallbackFailure };

export type OfferOutcome =
  /** The recipient answered and is bridged to the caller; `ended` settles when that call ends. */
  | {
      kind: "answered";
      ended: Promise<void>;
      /** A callback's: settles once the caller is dialled (connected) or could not be (failed). */
      dialed?: Promise<CallbackDial>;
    }
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
  | { kind: "no_queue" }
  /** The caller asked to be called back: the line ends, the session keeps its place (local addition). */
  | { kind: "callback" }
  /** A callback given up after its last failed attempt (local addition). */
  | { kind: "callback_failed" };

/** A user of an account as the engine knows them. */
export interface CallqUser {
  id: string;
  /** Whether the user is a call-queue recipient (the host applies the spec's rule). */
  recipient: boolean;
  /** The name users see (first and last name, else the username): statuses name supervisors by it. */
  name: string;
}

/** An account's queues and users as they are when the engine first needs the account. */
export interface CallqAccount {
  queues: QueueConfig[];
  users: CallqUser[];
}

/**
 * Where the engine reads an account from, once, when it first needs it; later changes reach it
 * through applyQueue, removeQueue, applyUser and removeUser.
 */
export interface CallqDirectory {
  load(accountId: string): Promise<CallqAccount>;
}

/** Where recipients' login, availability and stats are kept across restarts. */
export interface RecipientLedger {
  /** The account's saved recipient states, by user id. */
  load(accountId: string): Promise<ReadonlyMap<string, SavedRecipient>>;
  save(accountId: string, recipientId: string, state: SavedRecipient): Promise<void>;
}

/**
 * Where queues' figures per 15-minute interval are kept as they happen (intervals.ts), so a
 * restart loses none of the day's figures.
 */
export interface IntervalLedger {
  /** The account's stored intervals that start from `since` to `until` (Unix ms, both included). */
  load(accountId: string, since: number, until: number): Promise<readonly QueueInterval[]>;
  /** Stores one queue's interval as it is now (replacing what was stored for it). */
  save(accountId: string, interval: QueueInterval): Promise<void>;
}

/** An interval ledger that keeps nothing: figures last as long as the engine. */
export const NO_INTERVAL_LEDGER: IntervalLedger = {
  load: async () => [],
  save: async () => undefined,
};

/**
 * Where recipients' figures per local day are kept as they happen (recipient-day.ts), so a
 * restart loses none of the day's figures.
 */
export interface RecipientDayLedger {
  /** The account's stored recipient days from `since` (YYYY-MM-DD) on. */
  load(accountId: string, since: string): Promise<readonly RecipientDay[]>;
  /** Stores one recipient's day as it is now (replacing what was stored for it). */
  save(accountId: string, day: RecipientDay): Promise<void>;
}

/** A day ledger that keeps nothing: figures last as long as the engine. */
export const NO_DAY_LEDGER: RecipientDayLedger = {
  load: async () => [],
  save: async () => undefined,
};

export interface CallqLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
