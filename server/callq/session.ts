// A caller waiting in (or served by) one queue: its state, the recipients already tried this
// round, the offer in progress, and how its time in the queue ends.
import type { QueuedCall, SessionEnd } from "./ports.js";
import { sessionStep, type SessionEventName, type SessionState, type SessionTrigger } from "./session-state.js";

/** A session that became a callback: whom to call and how the attempts went (local addition). */
export interface SessionCallback {
  /** The number the server dials, the caller's as they asked from it. */
  number: string;
  /** Unix ms. */
  requestedAt: number;
  /** Dialling attempts made so far. */
  attempts: number;
  /** Unix ms before which a failed callback is not offered again. */
  notBefore: number;
}

export class Session {
  readonly id: string;
  readonly accountId: string;
  readonly queueId: string;
  /** The caller's call; for a callback, the call side's handle that dials them back. */
  call: QueuedCall;
  /** Set once the caller asked to be called back. */
  callback: SessionCallback | undefined;
  /** Unix ms. */
  readonly enteredAt: number;
  #state: SessionState = "waiting";
  /** Recipients offered this session since the last tick: not rung again until then. */
  readonly tried = new Set<string>();
  /** The offer in progress and to whom. */
  offer: AbortController | undefined;
  recipientId: string | undefined;
  /** Unix ms when the caller stopped waiting (answered, left, timed out). */
  leftWaitingAt: number | undefined;
  cancelTimeout: (() => void) | undefined;
  readonly #resolve: (end: SessionEnd) => void;
  readonly done: Promise<SessionEnd>;

  constructor(id: string, accountId: string, queueId: string, call: QueuedCall, enteredAt: number) {
    this.id = id;
    this.accountId = accountId;
    this.queueId = queueId;
    this.call = call;
    this.enteredAt = enteredAt;
    let resolve: (end: SessionEnd) => void = () => undefined;
    this.done = new Promise((r) => (resolve = r));
    this.#resolve = resolve;
  }

  get state(): SessionState {
    return this.#state;
  }

  get waiting(): boolean {
    return this.#state === "waiting";
  }

  /** A caller on the line waiting or being offered (not a callback). */
  get callerQueued(): boolean {
    return this.callback === undefined && this.queued;
  }

  /** A callback not yet connected: waiting, offered or being dialled. */
  get callbackWaiting(): boolean {
    return this.callback !== undefined && (this.queued || this.#state === "dialing");
  }

  /** Still in the queue's hands (not yet answered or ended). */
  get queued(): boolean {
    return this.#state === "waiting" || this.#state === "offering";
  }

  apply(trigger: SessionTrigger): { from: SessionState; to: SessionState; event: SessionEventName } {
    const taken = sessionStep(this.#state, trigger);
    this.#state = taken.to;
    return taken;
  }

  /** Ends the caller's own wait (a callback asked) while the session stays in the queue. */
  release(end: SessionEnd): void {
    this.#resolve(end);
  }

  finish(end: SessionEnd): void {
    this.cancelTimeout?.();
    this.cancelTimeout = undefined;
    this.#resolve(end);
  }
}
