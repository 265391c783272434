// The call-queue engine: every account's queues, recipients and sessions. It decides who is
// offered which caller and when; calls/ acts for it through each session's QueuedCall.
// Every change is one state-machine step (recipient-state.ts, session-state.ts) and one event.
import { fromGregorianSeconds, systemClock, toGregorianSeconds } from "../clock.js";
import { newId, type Collection, type Store, type StoreChange, type StoredDoc } from "../store/index.js";
import type { CallqEventSink, OfferOutcome, OfferRequest, QueuedCall, Scheduler, SessionEnd } from "./ports.js";
import { queueConfigOf } from "./queue-config.js";
import { pickRecipient, type Candidate } from "./queue-router.js";
import { Queue } from "./queue.js";
import { Recipient, type AwayReason, type CallInfo, type SavedRecipient, type UnavailableReason } from "./recipient.js";
import type { AvailabilityState, RecipientAction, RecipientTrigger, Step, StepContext } from "./recipient-state.js";
import { Session } from "./session.js";
import { listedState, type ListedSessionState, type SessionTrigger } from "./session-state.js";


export type MonitorMode = "eavesdrop" | "whisper" | "barge";

/** Where recipients' login, availability and stats are kept across restarts (ids = user ids). */
export const RECIPIENT_STATES_COLLECTION = "callq_recipient_states";

export type CallqErrorCode = "no_recipient" | "no_queue" | "no_session" | "illegal";

export class CallqError extends Error {
  constructor(
    readonly code: CallqErrorCode,
    message: string,
    /** The id the error is about (the API's data.cause). */
    readonly id?: string,
  ) {
    super(message);
    this.name = "CallqError";
  }
}

export interface QueueStatus {
  active_recipient_count: number;
  available_recipient_count: number;
  node: string;
  stats: {
    estimated_wait: number;
    average_wait: number;
    recipient_count: number;
    active_session_count: number;
    total_sessions: number;
    missed_sessions: number;
    abandoned_sessions: number;
    /** Sessions of the day delivered to a recipient (beyond the spec: the wallboard shows it). */
    answered_sessions: number;
    /** Offers of the day a recipient rejected, let ring out or could not be rung for (beyond the spec: Qubicle's missed). */
    missed_offers: number;
  };
}

export interface SessionRow {
  session_id: string;
  call_id: string;
  queue_id: string;
  caller_id_name: string;
  caller_id_number: string;
  /** Gregorian seconds. */
  queue_enter_time: number;
  state: ListedSessionState;
  recipient_id?: string;
}

export interface RecipientStatus {
  available: boolean;
  availability_state: AvailabilityState;
  /** Why a Ready recipient receives no offer (beyond the spec). */
  unavailable_reason?: UnavailableReason;
  /** Why the engine set the recipient Away (beyond the spec). */
  away_reason?: AwayReason;
  /** Offers missed in a row, with the queue's limit when the engine set them Away for it. */
  missed_offers?: number;
  queue_availability?: Record<string, boolean>;
  offered_call?: CallInfo;
  handling_call?: CallInfo;
  wiretapping_recipient?: string;
  wiretap_mode?: MonitorMode;
  /**
   * Supervisors listening to this recipient's call (beyond the spec, for the agent's cue); the API
   * shows it to the recipient themself (eavesdrop only when announced), supervisors and admins.
   */
  wiretapped_by?: WiretapListener[];
  wrapup_time_seconds: number;
  stats: {
    total_calls: number;
    missed_calls: number;
    avg_call_time: number;
    login_time: number;
    last_action_time: number;
    last_handled_time: number;
  };
  node: string;
}

export interface Wiretap {
  target: string;
  mode: MonitorMode;
  /** The call id of the target's leg that is listened to. */
  callId?: string;
}

export interface WiretapListener {
  recipient_id: string;
  /** The supervisor's name as users see it (first and last name, else the username). */
  name: string;
  mode: MonitorMode;
  /** The recipient's leg the supervisor listens to. */
  call_id?: string;
}

export interface CallqLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CallqEngineOptions {
  store: Store;
  bus: CallqEventSink;
  scheduler?: Scheduler;
  logger: CallqLogger;
  /** What `node` says in statuses. */
  node?: string;
  /**
   * Milliseconds a logged-in recipient may be without a registered queue device before offers
   * stop (the phone re-registering after a restart or a network blip stays inside it).
   */
  deviceGraceMs?: number;
}

/** The default of `deviceGraceMs`. */
export const DEFAULT_DEVICE_GRACE_MS = 10_000;

/** Seconds a wrap-up is extended by when its queue has no wrap-up time of its own. */
const DEFAULT_WRAPUP_EXTEND_S = 30;

interface Account {
  id: string;
  queues: Map<string, Queue>;
  recipients: Map<string, Recipient>;
  users: Collection;
  saved: Collection;
  dispatchScheduled: boolean;
  /** Per supervisor: whom they listen to, how, and the target's leg (its call id). */
  wiretaps: Map<string, Wiretap>;
  /** Seconds the current wrap-up of each recipient is extended by (its queue's wrap-up). */
  wrapupS: Map<string, number>;
}

export class CallqEngine {
  readonly #store: Store;
  readonly #bus: CallqEventSink;
  readonly #scheduler: Scheduler;
  readonly #logger: CallqLogger;
  readonly #node: string;
  readonly #deviceGraceMs: number;
  readonly #accounts = new Map<string, Promise<Account>>();
  readonly #loaded = new Map<string, Account>();
  readonly #dirty = new Set<Recipient>();
  #flushing: Promise<void> | undefined;
  #unwatch: (() => void) | undefined;
  #closed = false;

  private constructor(options: CallqEngineOptions) {
    this.#store = options.store;
    this.#bus = options.bus;
    this.#scheduler = options.scheduler ?? systemClock;
    this.#logger = options.logger;
    this.#node = options.node ?? "switchboard@127.0.0.1";
    this.#deviceGraceMs = options.deviceGraceMs ?? DEFAULT_DEVICE_GRACE_MS;
  }

  /** Loads every account's queues and saved recipients, and follows queue and user changes. */
  static async start(options: CallqEngineOptions): Promise<CallqEngine> {
    const engine = new CallqEngine(options);
    const accounts = await options.store.global("accounts");
    for (const account of accounts.all()) await engine.#account(account.id);
    engine.#unwatch = options.store.onChange((change) => engine.#onStoreChange(change));
    return engine;
  }

  /** Stops every timer and waits for recipient states to reach the disk. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unwatch?.();
    for (const account of this.#loaded.values()) {
      for (const queue of account.queues.values()) {
        queue.cancelTick?.();
        for (const session of queue.sessions) session.cancelTimeout?.();
      }
      for (const recipient of account.recipients.values()) {
        recipient.cancelWrapup?.();
        recipient.cancelDeviceGrace?.();
      }
    }
    await this.#flushing;
  }

  // ---- queues ----------------------------------------------------------------------------

  async queueStatus(accountId: string, queueId: string): Promise<QueueStatus> {
    const account = await this.#account(accountId);
    return this.#queueStatus(account, this.#queue(account, queueId));
  }

  async queueSessions(accountId: string, queueId: string): Promise<SessionRow[]> {
    const account = await this.#account(accountId);
    return this.#queue(account, queueId).sessions.map((s) => sessionRow(s));
  }

  async removeSession(accountId: string, queueId: string, sessionId: string): Promise<void> {
    const account = await this.#account(accountId);
    const queue = this.#queue(account, queueId);
    const session = queue.sessions.find((s) => s.id === sessionId);
    if (!session) throw new CallqError("no_session", `no session ${sessionId} in queue ${queueId}`, sessionId);
    if (!session.queued) throw new CallqError("illegal", `session ${sessionId} is ${session.state}; only a waiting session can be removed`, sessionId);
    this.#sessionStep(account, queue, session, "removed");
    this.#withdraw(session);
    this.#end(account, queue, session, { kind: "removed" });
  }

  /** Every queue of the account runs from its creation; this lists them (the hosted call starts them). */
  async ensureStarted(accountId: string): Promise<string[]> {
    const account = await this.#account(accountId);
    return [...account.queues.keys()].sort();
  }

  /** The callq module's entry: the caller waits in the queue until handled, gone or timed out. */
  async join(accountId: string, queueId: string, call: QueuedCall): Promise<SessionEnd> {
    const account = await this.#account(accountId);
    const queue = account.queues.get(queueId);
    if (!queue || queue.removed || this.#closed) return { kind: "no_queue" };
    const now = this.#scheduler.now();
    const session = new Session(newId(this.#store.random), accountId, queueId, call, now);
    const ahead = queue.queuedCount;
    queue.sessions.push(session);
    queue.stats.joined(now);
    this.#publish(account, "session", session.id, "create", { ...sessionRow(session), queue_name: queue.config.name });
    this.#publishQueue(account, queue, "join", session);
    const { config } = queue;
    if (config.timeoutImmediatelyIfEmpty && this.#loggedInMembers(account, queue) === 0) {
      this.#timeout(account, queue, session);
    } else if (config.timeoutIfSizeExceeds > 0 && ahead >= config.timeoutIfSizeExceeds) {
      this.#timeout(account, queue, session);
    } else {
      session.cancelTimeout = this.#scheduler.after(config.timeoutS * 1000, () => this.#timeout(account, queue, session));
      call.onGone(() => this.#abandon(account, queue, session));
      this.#startTick(account, queue);
      this.#scheduleDispatch(account);
    }
    return session.done;
  }

  // ---- recipients ------------------------------------------------------------------------

  async recipientStatus(accountId: string, userId: string): Promise<RecipientStatus> {
    const account = await this.#account(accountId);
    this.#checkRecipient(account, userId);
    return this.#status(account, this.#recipient(account, userId));
  }

  isLoggedIn(accountId: string, userId: string): boolean {
    return this.#loaded.get(accountId)?.recipients.get(userId)?.loggedIn ?? false;
  }

  /** The ids of the account's logged-in recipients (to check their devices at start). */
  async loggedInRecipients(accountId: string): Promise<string[]> {
    const account = await this.#account(accountId);
    return [...account.recipients.values()].filter((r) => r.loggedIn).map((r) => r.id);
  }

  /**
   * Whether the user has a queue device registered. Without one for the grace period a
   * recipient receives no offer (`unavailable_reason: no_device`, one `unavailable` event); a
   * device registering again lifts it (`available` event) with the state untouched, so the
   * recipient is back to the availability they had.
   */
  async devicePresence(accountId: string, userId: string, registered: boolean): Promise<void> {
    const account = await this.#account(accountId);
    const user = account.users.get(userId);
    if (!user || !isRecipientUser(user)) return;
    const r = this.#recipient(account, userId);
    if (registered) {
      r.cancelDeviceGrace?.();
      r.cancelDeviceGrace = undefined;
      if (!r.noDevice) return;
      r.noDevice = false;
      if (r.loggedIn) this.#publish(account, "recipient", r.id, "available", { ...recipientData(r), previous_reason: "no_device" });
      this.#scheduleDispatch(account);
      return;
    }
    if (r.noDevice || r.cancelDeviceGrace || this.#closed) return;
    r.cancelDeviceGrace = this.#scheduler.after(this.#deviceGraceMs, () => {
      r.cancelDeviceGrace = undefined;
      r.noDevice = true;
      if (r.loggedIn) this.#publish(account, "recipient", r.id, "unavailable", { ...recipientData(r), unavailable_reason: "no_device" });
    });
  }

  async recipientAction(accountId: string, userId: string, action: RecipientAction, options: { queueId?: string } = {}): Promise<RecipientStatus> {
    const account = await this.#account(accountId);
    this.#checkRecipient(account, userId);
    const r = this.#recipient(account, userId);
    if (options.queueId !== undefined && (action === "ready" || action === "away")) {
      this.#queue(account, options.queueId);
      if (!r.loggedIn) throw new CallqError("illegal", `recipient ${userId} is not logged in`, userId);
      this.#queueAvailability(account, r, options.queueId, action === "ready");
      return this.#status(account, r);
    }
    switch (action) {
      case "login":
        if (!r.loggedIn) this.#step(account, r, "login");
        break;
      case "logout":
        if (r.loggedIn) this.#logout(account, r);
        break;
      case "ready":
        this.#mustBeLoggedIn(r);
        this.#ready(account, r);
        break;
      case "away":
        this.#mustBeLoggedIn(r);
        this.#away(account, r);
        break;
      case "login_ready":
        if (!r.loggedIn) this.#step(account, r, "login");
        this.#ready(account, r);
        break;
      case "state_toggle":
        if (r.loggedIn) this.#logout(account, r);
        else {
          this.#step(account, r, "login");
          this.#ready(account, r);
        }
        break;
      case "wrapup_extend":
        if (r.state !== "Wrapup-Time") throw new CallqError("illegal", `recipient ${userId} is ${r.state}, not in wrap-up`, userId);
        this.#extendWrapup(account, r);
        break;
      case "wrapup_cancel":
        if (r.state !== "Wrapup-Time") throw new CallqError("illegal", `recipient ${userId} is ${r.state}, not in wrap-up`, userId);
        this.#step(account, r, "wrapup_cancel");
        break;
    }
    return this.#status(account, r);
  }

  /** Supervision: what the status says the supervisor is doing; one `monitor` event per change. */
  setWiretap(accountId: string, userId: string, wiretap: Wiretap | undefined): void {
    void this.#account(accountId).then((account) => {
      const before = account.wiretaps.get(userId);
      if (before?.target === wiretap?.target && before?.mode === wiretap?.mode) return;
      if (wiretap) account.wiretaps.set(userId, { ...wiretap });
      else account.wiretaps.delete(userId);
      // Every user of the account may subscribe to recipient events, so they name neither the
      // target nor the mode: the supervisor's console and the monitored agent's read their status
      // again, which shows each reader what they may know (api/callq-recipients.ts).
      this.#publish(account, "recipient", userId, "monitor", { recipient_id: userId, active: wiretap !== undefined });
      const targets = new Set([before?.target, wiretap?.target].filter((t): t is string => t !== undefined));
      for (const target of targets) this.#publish(account, "recipient", target, "wiretap", { recipient_id: target });
    });
  }

  // ---- dispatch --------------------------------------------------------------------------

  /** Coalesces the dispatches asked for in one turn of the event loop into one pass. */
  #scheduleDispatch(account: Account): void {
    if (account.dispatchScheduled || this.#closed) return;
    account.dispatchScheduled = true;
    queueMicrotask(() => {
      account.dispatchScheduled = false;
      this.#dispatch(account);
    });
  }

  /** Offers the oldest waiting sessions, across the account's queues, to available recipients. */
  #dispatch(account: Account): void {
    const now = this.#scheduler.now();
    // Usually a handful are Ready at once: each session looks only at them, not at every member.
    const ready: Recipient[] = [];
    for (const r of account.recipients.values()) if (r.available && now >= r.unreachableUntil) ready.push(r);
    if (ready.length === 0) return;
    const waiting: Session[] = [];
    for (const queue of account.queues.values()) for (const s of queue.sessions) if (s.waiting) waiting.push(s);
    waiting.sort((a, b) => a.enteredAt - b.enteredAt);
    for (const session of waiting) {
      const queue = account.queues.get(session.queueId);
      if (!queue || !session.waiting) continue;
      const eligible: { r: Recipient; at: number }[] = [];
      for (const r of ready) {
        const at = queue.memberIndex(r.id);
        if (at !== undefined && r.state === "Ready" && !session.tried.has(r.id) && r.availableFor(queue.id, now)) eligible.push({ r, at });
      }
      if (eligible.length === 0) continue;
      eligible.sort((a, b) => a.at - b.at);
      const chosen = pickRecipient(queue.config.router, eligible.map((e) => candidateOf(e.r)), queue.round);
      const recipient = eligible.find((e) => e.r.id === chosen)?.r;
      if (!recipient) continue;
      this.#offer(account, queue, session, recipient);
      ready.splice(ready.indexOf(recipient), 1);
      if (ready.length === 0) break;
    }
  }

  #offer(account: Account, queue: Queue, session: Session, recipient: Recipient): void {
    const controller = new AbortController();
    session.tried.add(recipient.id);
    session.recipientId = recipient.id;
    session.offer = controller;
    this.#sessionStep(account, queue, session, "offer");
    this.#publishQueue(account, queue, "offer", session);
    recipient.stats.offers += 1;
    const info = callInfo(session, queue);
    this.#step(account, recipient, "offer", {}, () => {
      recipient.offered = info;
      recipient.offer = controller;
    });
    const request: OfferRequest = {
      accountId: account.id,
      recipientId: recipient.id,
      queueId: queue.id,
      queueName: queue.config.name,
      sessionId: session.id,
      timeoutMs: queue.config.ringTimeoutS * 1000,
      enteredAt: session.enteredAt,
    };
    let offering: Promise<OfferOutcome>;
    try {
      offering = session.call.offer(request, controller.signal);
    } catch (err) {
      offering = Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    offering.then(
      (outcome) => this.#offerSettled(account, queue, session, recipient, controller, outcome),
      (err: unknown) => {
        this.#logger.warn({ err, session_id: session.id, recipient_id: recipient.id }, "callq: offer failed");
        this.#offerSettled(account, queue, session, recipient, controller, { kind: "unreachable" });
      },
    );
  }

  #offerSettled(account: Account, queue: Queue, session: Session, recipient: Recipient, controller: AbortController, outcome: OfferOutcome): void {
    const now = this.#scheduler.now();
    const sessionStill = session.offer === controller && session.state === "offering";
    const recipientStill = recipient.offer === controller && recipient.state === "Call-Offer";
    if (session.offer === controller) session.offer = undefined;
    if (recipient.offer === controller) recipient.offer = undefined;
    if (outcome.kind === "answered") {
      const info = recipient.offered ?? callInfo(session, queue);
      recipient.missedInARow = 0;
      if (recipientStill) {
        this.#step(account, recipient, "answered", {}, () => {
          recipient.handling = info;
          recipient.stats.last_handled_time = toGregorianSeconds(now);
        });
      }
      if (sessionStill) {
        session.cancelTimeout?.();
        session.cancelTimeout = undefined;
        session.leftWaitingAt = now;
        queue.stats.left(now, now - session.enteredAt, "answered");
        this.#sessionStep(account, queue, session, "answered");
        this.#publishQueue(account, queue, "answered", session);
      }
      const settle = (): void => this.#callEnded(account, queue, session, recipient, info, now, recipientStill);
      outcome.ended.then(settle, settle);
      return;
    }
    if (recipientStill) {
      if (outcome.kind === "cancelled") this.#step(account, recipient, "withdrawn");
      else {
        recipient.stats.missed_calls += 1;
        queue.stats.offerMissed(now);
        if (outcome.kind === "unreachable") recipient.unreachableUntil = now + queue.config.tickMs;
        // A device that cannot be rung is no decision of the agent's: only refusals and ring
        // timeouts count towards max_missed_offers.
        else recipient.missedInARow += 1;
        const limit = queue.config.maxMissedOffers;
        const tooMany = outcome.kind !== "unreachable" && limit > 0 && recipient.missedInARow >= limit;
        const forceAway = tooMany || (outcome.kind === "rejected" && queue.config.forceAwayOnReject);
        const missed = recipient.missedInARow;
        const detail = { reason: outcome.kind, session_id: session.id, queue_id: queue.id, ...(tooMany ? { away_reason: "missed_offers", missed_offers: missed } : {}) };
        this.#step(account, recipient, "missed", { forceAway }, () => {
          if (recipient.state !== "Away") return;
          // Set Away: the count starts again when they come back.
          recipient.missedInARow = 0;
          if (tooMany) {
            recipient.awayReason = "missed_offers";
            recipient.missedAwayAfter = missed;
          }
        }, detail);
      }
    }
    if (sessionStill) {
      session.recipientId = undefined;
      this.#sessionStep(account, queue, session, "missed", { reason: outcome.kind, recipient_id: recipient.id });
    }
    this.#scheduleDispatch(account);
  }

  #callEnded(account: Account, queue: Queue, session: Session, recipient: Recipient, info: CallInfo, answeredAt: number, delivered: boolean): void {
    const now = this.#scheduler.now();
    if (delivered) {
      recipient.stats.total_calls += 1;
      recipient.stats.total_call_time += (now - answeredAt) / 1000;
    }
    if (recipient.state === "On-A-Call" && recipient.handling?.session_id === info.session_id) {
      const wrapupS = queue.config.wrapupS;
      account.wrapupS.set(recipient.id, wrapupS > 0 ? wrapupS : DEFAULT_WRAPUP_EXTEND_S);
      this.#step(account, recipient, "call_ended", { wrapupSeconds: wrapupS }, () => {
        if (recipient.state === "Wrapup-Time") this.#scheduleWrapupEnd(account, recipient, now + wrapupS * 1000);
      });
    } else if (delivered) {
      this.#save(recipient);
    }
    if (session.state === "answered") {
      this.#sessionStep(account, queue, session, "handled");
      this.#end(account, queue, session, { kind: "handled" });
    }
  }

  #timeout(account: Account, queue: Queue, session: Session): void {
    if (!session.queued) return;
    const now = this.#scheduler.now();
    session.leftWaitingAt = now;
    queue.stats.left(now, now - session.enteredAt, "timeout");
    this.#sessionStep(account, queue, session, "timeout");
    this.#publishQueue(account, queue, "timeout", session);
    this.#withdraw(session);
    const redirect = queue.config.timeoutRedirect;
    const target = redirect !== undefined && redirect !== queue.id && account.queues.has(redirect) ? redirect : undefined;
    this.#end(account, queue, session, target === undefined ? { kind: "timeout" } : { kind: "timeout", redirect: target });
  }

  #abandon(account: Account, queue: Queue, session: Session): void {
    if (!session.queued) return;
    const now = this.#scheduler.now();
    session.leftWaitingAt = now;
    queue.stats.left(now, now - session.enteredAt, "abandoned");
    this.#sessionStep(account, queue, session, "abandoned");
    this.#publishQueue(account, queue, "abandoned", session);
    this.#withdraw(session);
    this.#end(account, queue, session, { kind: "abandoned" });
  }

  /** Gives up the session's offer: calls/ stops ringing and the settle step frees the recipient. */
  #withdraw(session: Session): void {
    const offer = session.offer;
    session.offer = undefined;
    offer?.abort();
  }

  #end(account: Account, queue: Queue, session: Session, end: SessionEnd): void {
    this.#sessionStep(account, queue, session, "end");
    queue.drop(session);
    this.#publishQueue(account, queue, "leave", session, { reason: end.kind });
    session.finish(end);
  }

  #startTick(account: Account, queue: Queue): void {
    if (queue.cancelTick || this.#closed) return;
    queue.cancelTick = this.#scheduler.after(queue.config.tickMs, () => {
      queue.cancelTick = undefined;
      let busy = false;
      for (const session of queue.sessions) {
        if (session.waiting && !this.#untriedSoon(account, queue, session)) session.tried.clear();
        if (session.queued) busy = true;
      }
      if (!busy) return;
      this.#scheduleDispatch(account);
      this.#startTick(account, queue);
    });
  }

  /**
   * Whether a member not yet tried for the session is Ready or ringing for another caller: the
   * session waits for them (a ringing offer ends within the ring timeout) rather than ringing
   * again who already missed it. A member on a call or in wrap-up is not waited for, so a caller
   * is never starved while somebody Ready could take them.
   */
  #untriedSoon(account: Account, queue: Queue, session: Session): boolean {
    const now = this.#scheduler.now();
    for (const id of queue.config.members) {
      if (session.tried.has(id)) continue;
      const r = account.recipients.get(id);
      if (!r || r.noDevice || r.queueAvailability.get(queue.id) === false) continue;
      if (r.availableFor(queue.id, now) || r.state === "Call-Offer") return true;
    }
    return false;
  }

  // ---- recipient steps -------------------------------------------------------------------

  /**
   * One recipient transition: the table decides, `during` sets what the new state carries
   * before the event goes out, the event is published and the state saved.
   */
  #step(
    account: Account,
    recipient: Recipient,
    trigger: RecipientTrigger,
    ctx: Omit<StepContext, "pendingAway"> = {},
    during?: () => void,
    detail?: Record<string, unknown>,
  ): Step {
    const taken = recipient.apply(trigger, ctx, this.#scheduler.now());
    during?.();
    this.#publishRecipient(account, recipient, taken, detail);
    this.#save(recipient);
    if (taken.to === "Ready") this.#scheduleDispatch(account);
    return taken;
  }

  #ready(account: Account, r: Recipient): void {
    if (r.state === "Away" || r.state === "Wrapup-Time") this.#step(account, r, "ready");
    else if (r.state === "Call-Offer" || r.state === "On-A-Call") {
      r.pendingAway = false;
      this.#save(r);
    }
  }

  #away(account: Account, r: Recipient): void {
    if (r.state === "Ready" || r.state === "Wrapup-Time") this.#step(account, r, "away");
    else if (r.state === "Call-Offer") {
      const offer = r.offer;
      r.offer = undefined;
      this.#step(account, r, "away");
      offer?.abort();
    } else if (r.state === "On-A-Call") {
      r.pendingAway = true;
      this.#save(r);
    }
  }

  #logout(account: Account, r: Recipient): void {
    const offer = r.offer;
    r.offer = undefined;
    this.#step(account, r, "logout");
    offer?.abort();
  }

  #queueAvailability(account: Account, r: Recipient, queueId: string, on: boolean): void {
    r.queueAvailability.set(queueId, on);
    this.#publish(account, "recipient", r.id, on ? "ready" : "away", {
      ...recipientData(r),
      queue_id: queueId,
      queue_availability: Object.fromEntries(r.queueAvailability),
    });
    this.#save(r);
    if (on) this.#scheduleDispatch(account);
  }

  #scheduleWrapupEnd(account: Account, r: Recipient, endsAt: number): void {
    r.cancelWrapup?.();
    r.wrapupEndsAt = endsAt;
    r.cancelWrapup = this.#scheduler.after(endsAt - this.#scheduler.now(), () => {
      r.cancelWrapup = undefined;
      if (r.state === "Wrapup-Time") this.#step(account, r, "wrapup_done");
    });
  }

  #extendWrapup(account: Account, r: Recipient): void {
    const by = account.wrapupS.get(r.id) ?? DEFAULT_WRAPUP_EXTEND_S;
    const endsAt = Math.max(r.wrapupEndsAt, this.#scheduler.now()) + by * 1000;
    this.#step(account, r, "wrapup_extend", {}, () => this.#scheduleWrapupEnd(account, r, endsAt), { extended_by: by });
  }

  #mustBeLoggedIn(r: Recipient): void {
    if (!r.loggedIn) throw new CallqError("illegal", `recipient ${r.id} is not logged in`, r.id);
  }

  // ---- statuses --------------------------------------------------------------------------

  #queueStatus(account: Account, queue: Queue): QueueStatus {
    const now = this.#scheduler.now();
    let available = 0;
    for (const id of queue.config.members) if (account.recipients.get(id)?.availableFor(queue.id, now)) available += 1;
    const queued = queue.queuedCount;
    return {
      active_recipient_count: this.#loggedInMembers(account, queue),
      available_recipient_count: available,
      node: this.#node,
      stats: {
        estimated_wait: queue.stats.estimatedWait(now, queued, available),
        average_wait: queue.stats.averageWait(now),
        recipient_count: queue.config.members.length,
        active_session_count: queued,
        total_sessions: queue.stats.totalSessions,
        missed_sessions: queue.stats.missedSessions,
        abandoned_sessions: queue.stats.abandonedSessions,
        answered_sessions: queue.stats.answeredSessions,
        missed_offers: queue.stats.missedOffers,
      },
    };
  }

  #status(account: Account, r: Recipient): RecipientStatus {
    const now = this.#scheduler.now();
    const { stats } = r;
    const status: RecipientStatus = {
      available: r.available,
      availability_state: r.state,
      ...reasons(r),
      wrapup_time_seconds: r.state === "Wrapup-Time" ? Math.max(0, Math.ceil((r.wrapupEndsAt - now) / 1000)) : 0,
      stats: {
        total_calls: stats.total_calls,
        missed_calls: stats.missed_calls,
        avg_call_time: stats.total_calls === 0 ? 0 : Math.round((stats.total_call_time / stats.total_calls) * 10) / 10,
        login_time: stats.login_time,
        last_action_time: stats.last_action_time,
        last_handled_time: stats.last_handled_time,
      },
      node: this.#node,
    };
    if (r.queueAvailability.size > 0) status.queue_availability = Object.fromEntries(r.queueAvailability);
    if (r.offered) status.offered_call = { ...r.offered };
    if (r.handling) status.handling_call = { ...r.handling };
    const wiretap = account.wiretaps.get(r.id);
    if (wiretap) {
      status.wiretapping_recipient = wiretap.target;
      status.wiretap_mode = wiretap.mode;
    }
    const listeners: WiretapListener[] = [];
    for (const [supervisorId, tap] of account.wiretaps) {
      if (tap.target !== r.id) continue;
      const listener: WiretapListener = { recipient_id: supervisorId, name: displayName(account.users.get(supervisorId)), mode: tap.mode };
      if (tap.callId !== undefined) listener.call_id = tap.callId;
      listeners.push(listener);
    }
    if (listeners.length > 0) status.wiretapped_by = listeners;
    return status;
  }

  #loggedInMembers(account: Account, queue: Queue): number {
    let n = 0;
    for (const id of queue.config.members) if (account.recipients.get(id)?.loggedIn) n += 1;
    return n;
  }

  // ---- events ----------------------------------------------------------------------------

  #publish(account: Account, kind: "queue" | "recipient" | "session", id: string, name: string, data: Record<string, unknown>): void {
    try {
      this.#bus.publish({ account_id: account.id, routing_key: `callq.${kind}.${id}`, name, data: { account_id: account.id, ...data } });
    } catch (err) {
      this.#logger.warn({ err, routing_key: `callq.${kind}.${id}` }, "callq: publishing an event failed");
    }
  }

  #publishRecipient(account: Account, r: Recipient, taken: Step, detail?: Record<string, unknown>): void {
    const call = taken.event === "offer" ? r.offered : taken.event === "delivered" ? r.handling : undefined;
    this.#publish(account, "recipient", r.id, taken.event, {
      ...recipientData(r),
      previous_state: taken.from,
      ...(call ? { ...call } : {}),
      ...(taken.to === "Wrapup-Time" ? { wrapup_time_seconds: Math.max(0, Math.ceil((r.wrapupEndsAt - this.#scheduler.now()) / 1000)) } : {}),
      ...detail,
    });
  }

  #sessionStep(account: Account, queue: Queue, session: Session, trigger: SessionTrigger, detail?: Record<string, unknown>): void {
    const taken = session.apply(trigger);
    this.#publish(account, "session", session.id, taken.event, { ...sessionRow(session), queue_name: queue.config.name, previous_state: taken.from, ...detail });
  }

  #publishQueue(account: Account, queue: Queue, name: string, session: Session, detail?: Record<string, unknown>): void {
    const wait = session.leftWaitingAt === undefined ? undefined : Math.round((session.leftWaitingAt - session.enteredAt) / 100) / 10;
    this.#publish(account, "queue", queue.id, name, {
      ...sessionRow(session),
      queue_name: queue.config.name,
      ...(wait === undefined ? {} : { wait_time: wait }),
      ...detail,
    });
  }

  // ---- accounts, queues and users --------------------------------------------------------

  #account(accountId: string): Promise<Account> {
    let loading = this.#accounts.get(accountId);
    if (!loading) {
      loading = this.#load(accountId);
      this.#accounts.set(accountId, loading);
      loading.catch(() => this.#accounts.delete(accountId));
    }
    return loading;
  }

  async #load(accountId: string): Promise<Account> {
    const [queues, users, saved] = await Promise.all([
      this.#store.account(accountId, "callq_queues"),
      this.#store.account(accountId, "users"),
      this.#store.account(accountId, RECIPIENT_STATES_COLLECTION),
    ]);
    const account: Account = {
      id: accountId,
      queues: new Map(),
      recipients: new Map(),
      users,
      saved,
      dispatchScheduled: false,
      wiretaps: new Map(),
      wrapupS: new Map(),
    };
    for (const doc of queues.all()) account.queues.set(doc.id, new Queue(accountId, queueConfigOf(doc.id, doc.data)));
    const now = this.#scheduler.now();
    for (const doc of saved.all()) {
      const user = users.get(doc.id);
      if (!user || !isRecipientUser(user)) continue;
      const r = new Recipient(accountId, doc.id);
      r.restore(savedOf(doc.data), now);
      account.recipients.set(doc.id, r);
    }
    this.#loaded.set(accountId, account);
    return account;
  }

  #queue(account: Account, queueId: string): Queue {
    const queue = account.queues.get(queueId);
    if (!queue || queue.removed) throw new CallqError("no_queue", `no queue ${queueId}`, queueId);
    return queue;
  }

  #checkRecipient(account: Account, userId: string): void {
    const user = account.users.get(userId);
    if (!user || !isRecipientUser(user)) throw new CallqError("no_recipient", `user ${userId} is not a call-queue recipient`, userId);
  }

  #recipient(account: Account, userId: string): Recipient {
    let r = account.recipients.get(userId);
    if (!r) {
      r = new Recipient(account.id, userId);
      account.recipients.set(userId, r);
    }
    return r;
  }

  #onStoreChange(change: StoreChange): void {
    const accountId = change.accountId;
    if (!accountId || (change.collection !== "callq_queues" && change.collection !== "users")) return;
    void this.#account(accountId).then(
      (account) => (change.collection === "callq_queues" ? this.#queueChanged(account, change) : this.#userChanged(account, change)),
      (err: unknown) => this.#logger.warn({ err, account_id: accountId }, "callq: loading an account failed"),
    );
  }

  #queueChanged(account: Account, change: StoreChange): void {
    const { doc } = change;
    const queue = account.queues.get(doc.id);
    if (change.kind === "deleted") {
      if (!queue) return;
      queue.removed = true;
      queue.cancelTick?.();
      account.queues.delete(doc.id);
      for (const session of [...queue.sessions]) {
        if (!session.queued) continue;
        this.#sessionStep(account, queue, session, "removed");
        this.#withdraw(session);
        this.#end(account, queue, session, { kind: "no_queue" });
      }
      return;
    }
    const config = queueConfigOf(doc.id, doc.data);
    if (queue) queue.config = config;
    else account.queues.set(doc.id, new Queue(account.id, config));
    this.#scheduleDispatch(account);
  }

  #userChanged(account: Account, change: StoreChange): void {
    const r = account.recipients.get(change.doc.id);
    if (!r) return;
    const still = change.kind !== "deleted" && isRecipientUser(change.doc);
    if (still) return;
    if (r.loggedIn) this.#logout(account, r);
    if (change.kind === "deleted") account.recipients.delete(change.doc.id);
  }

  // ---- persistence -----------------------------------------------------------------------

  #save(r: Recipient): void {
    this.#dirty.add(r);
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
  }

  async #flush(): Promise<void> {
    while (this.#dirty.size > 0) {
      const batch = [...this.#dirty];
      this.#dirty.clear();
      await Promise.all(batch.map((r) => this.#write(r)));
    }
  }

  async #write(r: Recipient): Promise<void> {
    try {
      const account = await this.#account(r.accountId);
      const data = { ...r.saved() };
      if (account.saved.has(r.id)) await account.saved.update(r.id, data);
      else await account.saved.create(data, { id: r.id });
    } catch (err) {
      this.#logger.warn({ err, recipient_id: r.id }, "callq: saving a recipient's state failed");
    }
  }
}

/**
 * Who is a recipient, the one rule for the API, the engine and the callflow modules: an enabled
 * user with `callq.enabled`. A disabled user is no recipient: not listed, not addable to a queue,
 * no status, offered nothing, until enabled again.
 */
export function isRecipientUser(user: StoredDoc | undefined): user is StoredDoc {
  const callq = user?.data.callq;
  return user !== undefined && typeof callq === "object" && callq !== null && (callq as Record<string, unknown>).enabled === true && user.data.enabled !== false;
}

function displayName(user: StoredDoc | undefined): string {
  if (!user) return "";
  const text = (v: unknown): string => (typeof v === "string" ? v.trim() : "");
  const full = [text(user.data.first_name), text(user.data.last_name)].filter((p) => p !== "").join(" ");
  return full !== "" ? full : text(user.data.username);
}

function savedOf(data: Record<string, unknown>): SavedRecipient {
  const state = data.state === "Ready" || data.state === "Away" ? data.state : "Not-Logged-In";
  const qa = typeof data.queue_availability === "object" && data.queue_availability !== null ? (data.queue_availability as Record<string, unknown>) : {};
  const stats = typeof data.stats === "object" && data.stats !== null ? (data.stats as Record<string, unknown>) : {};
  const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    state,
    pending_away: data.pending_away === true,
    ...(data.away_reason === "missed_offers" ? { away_reason: "missed_offers" as const, missed_offers: typeof data.missed_offers === "number" ? data.missed_offers : 0 } : {}),
    queue_availability: Object.fromEntries(Object.entries(qa).filter((e): e is [string, boolean] => typeof e[1] === "boolean")),
    stats: {
      total_calls: n(stats.total_calls),
      missed_calls: n(stats.missed_calls),
      total_call_time: n(stats.total_call_time),
      offers: n(stats.offers),
      login_time: n(stats.login_time),
      last_action_time: n(stats.last_action_time),
      last_handled_time: n(stats.last_handled_time),
    },
  };
}

function candidateOf(r: Recipient): Candidate {
  const idleSince = r.stats.last_handled_time > 0 ? fromGregorianSeconds(r.stats.last_handled_time) : r.stats.login_time * 1000;
  return { id: r.id, totalCalls: r.stats.total_calls, offers: r.stats.offers, idleSince };
}

function callInfo(session: Session, queue: Queue): CallInfo {
  return {
    queue_id: queue.id,
    queue_name: queue.config.name,
    session_id: session.id,
    call_id: session.call.callId,
    caller_id_name: session.call.caller.name,
    caller_id_number: session.call.caller.number,
    queue_enter_time: toGregorianSeconds(session.enteredAt),
  };
}

function sessionRow(s: Session): SessionRow {
  const row: SessionRow = {
    session_id: s.id,
    call_id: s.call.callId,
    queue_id: s.queueId,
    caller_id_name: s.call.caller.name,
    caller_id_number: s.call.caller.number,
    queue_enter_time: toGregorianSeconds(s.enteredAt),
    state: listedState(s.state),
  };
  if (s.recipientId !== undefined) row.recipient_id = s.recipientId;
  return row;
}

function recipientData(r: Recipient): Record<string, unknown> {
  return { recipient_id: r.id, availability_state: r.state, available: r.available, ...reasons(r), last_action_time: r.stats.last_action_time };
}

/** The reason fields of a status or event: set only while they apply. */
function reasons(r: Recipient): Pick<RecipientStatus, "unavailable_reason" | "away_reason" | "missed_offers"> {
  const out: Pick<RecipientStatus, "unavailable_reason" | "away_reason" | "missed_offers"> = {};
  const unavailable = r.unavailableReason;
  if (unavailable !== undefined) out.unavailable_reason = unavailable;
  if (r.state === "Away" && r.awayReason !== undefined) {
    out.away_reason = r.awayReason;
    if (r.missedAwayAfter > 0) out.missed_offers = r.missedAwayAfter;
  }
  return out;
}
