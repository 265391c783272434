// The call-queue engine: every account's queues, recipients and sessions. It decides who is
// offered which caller and when; calls/ acts for it through each session's QueuedCall, and
// callq-host/ feeds it the accounts' queues and users and keeps its ledger (ports.ts).
// Every change is one state-machine step (recipient-state.ts, session-state.ts) and one event.
import { fromGregorianSeconds, systemClock, systemRandom, toGregorianSeconds, type RandomSource } from "../clock.js";
import { SwitchedClock } from "../clock-control.js";
import { Accounts, type Account } from "./accounts.js";
import { alertKey, evaluateAlerts, hasAlerts } from "./alerts.js";
import { CallqPublisher } from "./publisher.js";
import { dayWriter, intervalWriter, recipientStateWriter, type CoalescingWriter } from "./writers.js";
import { dayOf, intervalStart } from "./intervals.js";
import { NO_DAY_LEDGER, NO_INTERVAL_LEDGER, type CallbackDial, type CallqDirectory, type CallqEventSink, type CallqLogger, type CallqUser, type IntervalLedger, type LentClock, type OfferOutcome, type OfferRequest, type QueuedCall, type RecipientDayLedger, type RecipientLedger, type Scheduler, type SessionEnd } from "./ports.js";
import type { QueueConfig } from "./queue-config.js";
import { pickRecipient, type Candidate } from "./queue-router.js";
import { Queue } from "./queue.js";
import { Recipient, type CallInfo, type Disposition } from "./recipient.js";
import type { RecipientDayView } from "./recipient-day.js";
import { IllegalRecipientTransition, type RecipientAction, type RecipientTrigger, type Step, type StepContext } from "./recipient-state.js";
import { Session } from "./session.js";
import type { SessionTrigger } from "./session-state.js";
import { staffingEstimate, type StaffingEstimate, type WhatIf } from "./staffing.js";
import { accountFloor, callInfo, loggedInMembers, queueStatus, recipientData, recipientStatus, sessionRow, type AccountFloor, type QueueClock, type QueueStatus, type RecipientStatus, type SessionRow, type Wiretap } from "./views.js";

export type CallqErrorCode =
  | "no_recipient"
  | "no_queue"
  | "no_session"
  | "illegal"
  /** Ready refused: the last queue call needs a disposition first. */
  | "disposition_required"
  /** Ready refused: the wrap-up may not be cut short. */
  | "wrapup_locked"
  /** A disposition code the call's queue does not have. */
  | "bad_disposition"
  /** A callback the queue does not offer, or a session that cannot become one. */
  | "callback_refused";

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

export interface CallqEngineOptions {
  /** The accounts' queues and users. */
  directory: CallqDirectory;
  /** Recipient states across restarts. */
  ledger: RecipientLedger;
  /** Queue figures per 15-minute interval across restarts (none kept without it). */
  intervals?: IntervalLedger;
  /** Recipients' figures per day across restarts (none kept without it). */
  days?: RecipientDayLedger;
  bus: CallqEventSink;
  scheduler?: Scheduler;
  /** Session ids. */
  random?: RandomSource;
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

export class CallqEngine {
  readonly #accounts: Accounts;
  readonly #ledger: CoalescingWriter<Recipient>;
  readonly #intervals: CoalescingWriter<Queue>;
  readonly #days: CoalescingWriter<Recipient>;
  readonly #events: CallqPublisher;
  readonly #scheduler: Scheduler;
  readonly #random: RandomSource;
  readonly #logger: CallqLogger;
  readonly #node: string;
  readonly #deviceGraceMs: number;
  /** Per account: the cancel of the timer that re-evaluates its alerts while a queue has any. */
  readonly #alertTimers = new Map<string, () => void>();
  /** Per account: its queue time (the server's, or a training run's while one is live). */
  readonly #clocks = new Map<string, SwitchedClock>();
  /** Per account: the clock lent to it, while one is. */
  readonly #lent = new Map<string, LentClock>();
  #closed = false;

  constructor(options: CallqEngineOptions) {
    this.#scheduler = options.scheduler ?? systemClock;
    this.#random = options.random ?? systemRandom;
    this.#logger = options.logger;
    const intervals = options.intervals ?? NO_INTERVAL_LEDGER;
    const days = options.days ?? NO_DAY_LEDGER;
    this.#accounts = new Accounts(options.directory, options.ledger, (accountId) => this.#clock(accountId).now(), intervals, days);
    this.#ledger = recipientStateWriter(options.ledger, options.logger);
    this.#intervals = intervalWriter(intervals, options.logger);
    this.#days = dayWriter(days, options.logger);
    this.#events = new CallqPublisher(options.bus, options.logger, (accountId) => this.#clock(accountId).now());
    this.#node = options.node ?? "switchboard@127.0.0.1";
    this.#deviceGraceMs = options.deviceGraceMs ?? DEFAULT_DEVICE_GRACE_MS;
  }

  /** Stops every timer and waits for recipient states to reach the ledger. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const cancel of this.#alertTimers.values()) cancel();
    this.#alertTimers.clear();
    for (const account of this.#accounts.all()) {
      const now = this.#clock(account.id).now();
      for (const queue of account.queues.values()) {
        queue.cancelTick?.();
        for (const session of queue.sessions) session.cancelTimeout?.();
      }
      for (const recipient of account.recipients.values()) {
        recipient.cancelWrapup?.();
        recipient.cancelDeviceGrace?.();
        // The state in progress counts up to the stop, so its time so far is kept.
        recipient.days.countTo(now);
        this.#days.save(recipient);
      }
    }
    await Promise.all([this.#ledger.flushed(), this.#intervals.flushed(), this.#days.flushed()]);
  }

  /** Resolves once every interval counted so far is in the interval ledger. */
  async intervalsWritten(): Promise<void> {
    await this.#intervals.flushed();
  }

  /** Resolves once every recipient day counted so far is in the day ledger. */
  async daysWritten(): Promise<void> {
    await this.#days.flushed();
  }

  // ---- time ------------------------------------------------------------------------------

  /**
   * The account's queue time is `clock`'s from now on (a training run's, which pauses): its
   * callers' connection timeouts, ring timeouts, wrap-ups, callback retries, ticks and alerts wait
   * on it, and its waits, times in state and figures read it. Timers already set keep the time
   * they had left. The answer gives the account the server's clock back, the same way; it does
   * nothing once another clock has been given since.
   */
  useClock(accountId: string, clock: LentClock): () => void {
    const switched = this.#clock(accountId);
    this.#shiftEnds(accountId, switched.switchTo(clock));
    this.#lent.set(accountId, clock);
    this.clockMoved(accountId);
    return () => {
      if (switched.source !== clock) return;
      this.#shiftEnds(accountId, switched.switchTo(this.#scheduler));
      this.#lent.delete(accountId);
      this.clockMoved(accountId);
    };
  }

  /** The account's queue time against the server's: how far behind it is, and whether it stands still. */
  queueClock(accountId: string): QueueClock {
    return { behind_ms: Math.max(0, this.#scheduler.now() - this.#clock(accountId).now()), paused: this.#lent.get(accountId)?.paused === true };
  }

  /**
   * The clock lent to the account stopped, went on or was given back: its listeners learn its
   * queue time (`clock` on callq.clock.<account_id>), so boards counting waits from the stamps
   * count in it.
   */
  clockMoved(accountId: string): void {
    this.#events.publish(accountId, "clock", accountId, "clock", { queue_clock: this.queueClock(accountId) });
  }

  #clock(accountId: string): SwitchedClock {
    let clock = this.#clocks.get(accountId);
    if (!clock) {
      clock = new SwitchedClock(this.#scheduler);
      this.#clocks.set(accountId, clock);
    }
    return clock;
  }

  /**
   * The account's time moved by `ms` with its clock: the moments that end a countdown (a
   * wrap-up, a device found unreachable, a callback's retry) move with it, so each keeps the
   * time it had left, as the timers do.
   */
  #shiftEnds(accountId: string, ms: number): void {
    const account = this.#accounts.loaded(accountId);
    if (!account || ms === 0) return;
    for (const r of account.recipients.values()) {
      if (r.wrapupEndsAt > 0) r.wrapupEndsAt += ms;
      if (r.unreachableUntil > 0) r.unreachableUntil += ms;
    }
    for (const queue of account.queues.values()) {
      for (const session of queue.sessions) if (session.callback) session.callback.notBefore += ms;
    }
  }

  // ---- queues ----------------------------------------------------------------------------

  async queueStatus(accountId: string, queueId: string): Promise<QueueStatus> {
    const account = await this.#accounts.get(accountId);
    this.#checkAlerts(account);
    return queueStatus(this.#queue(account, queueId), account.recipients, this.#clock(account.id).now(), this.#node, this.queueClock(account.id));
  }

  /** The account's floor: every queue's figures of the day together, and every recipient. */
  async accountFloor(accountId: string): Promise<AccountFloor> {
    const account = await this.#accounts.get(accountId);
    return accountFloor(account.queues.values(), account.recipients, this.#clock(account.id).now());
  }

  /**
   * An estimate of the agents the queue needs, from the arrivals and handle times of the
   * intervals since `minutes` ago (from the start of the interval that moment falls in), with
   * `whatIf` replacing any of the inputs.
   */
  async staffing(accountId: string, queueId: string, minutes: number, whatIf: WhatIf = {}): Promise<StaffingEstimate> {
    const account = await this.#accounts.get(accountId);
    const queue = this.#queue(account, queueId);
    const now = this.#clock(account.id).now();
    const from = intervalStart(now - minutes * 60_000);
    let ready = 0;
    for (const id of queue.config.members) if (account.recipients.get(id)?.availableFor(queue.id, now)) ready += 1;
    return staffingEstimate({
      window: queue.stats.since(from),
      day: queue.stats.today(now),
      windowS: Math.max(1, (now - from) / 1000),
      minutes,
      config: queue.config,
      loggedIn: loggedInMembers(queue, account.recipients),
      ready,
      whatIf,
    });
  }

  async queueSessions(accountId: string, queueId: string): Promise<SessionRow[]> {
    const account = await this.#accounts.get(accountId);
    return this.#queue(account, queueId).sessions.map((s) => sessionRow(s));
  }

  async removeSession(accountId: string, queueId: string, sessionId: string): Promise<void> {
    const account = await this.#accounts.get(accountId);
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
    const account = await this.#accounts.get(accountId);
    this.#checkAlerts(account);
    return [...account.queues.keys()].sort();
  }

  /**
   * The callq module's entry: the caller waits in the queue until handled, gone or timed out.
   * `joined` is called once the session is in the queue (not when it ends at once).
   */
  async join(accountId: string, queueId: string, call: QueuedCall, joined?: () => void): Promise<SessionEnd> {
    const account = await this.#accounts.get(accountId);
    const queue = account.queues.get(queueId);
    if (!queue || queue.removed || this.#closed) return { kind: "no_queue" };
    const now = this.#clock(account.id).now();
    const session = new Session(this.#random.bytes(16).toString("hex"), accountId, queueId, call, now);
    const ahead = queue.queuedCount;
    queue.sessions.push(session);
    queue.stats.joined(session.enteredAt);
    this.#intervalsChanged(queue);
    this.#events.publish(account.id, "session", session.id, "create", { ...sessionRow(session), queue_name: queue.config.name });
    this.#events.queue(account.id, queue, "join", session);
    const { config } = queue;
    if (config.timeoutImmediatelyIfEmpty && loggedInMembers(queue, account.recipients) === 0) {
      this.#timeout(account, queue, session);
    } else if (config.timeoutIfSizeExceeds > 0 && ahead >= config.timeoutIfSizeExceeds) {
      this.#timeout(account, queue, session);
    } else {
      session.cancelTimeout = this.#clock(account.id).after(config.timeoutS * 1000, () => this.#timeout(account, queue, session));
      // Once the caller asked for a callback their hang-up is expected: the session stays.
      call.onGone(() => {
        if (session.callback === undefined) this.#abandon(account, queue, session);
      });
      this.#startTick(account, queue);
      this.#scheduleDispatch(account);
      // The session is in its queue now: what the caller asked for meanwhile (a callback) can be done.
      joined?.();
    }
    return session.done;
  }

  /**
   * The caller of call `callId` in the queue asks to be called back (local addition): their
   * session keeps its place (its time of entry) with `callback` as its call from now on, the
   * caller's own wait ends with `{kind: "callback"}` so the call side can hang up, and the
   * queue's timeout no longer applies (nobody holds the line). An offer ringing for them is
   * withdrawn and made again as a callback.
   */
  async requestCallback(accountId: string, queueId: string, callId: string, callback: QueuedCall): Promise<SessionRow> {
    const account = await this.#accounts.get(accountId);
    const queue = this.#queue(account, queueId);
    const config = queue.config.callback;
    if (!config) throw new CallqError("callback_refused", `queue ${queue.config.name} offers no callbacks`, queueId);
    const session = queue.sessions.find((s) => s.call.callId === callId && s.callback === undefined);
    if (!session) throw new CallqError("no_session", `no caller of call ${callId} in queue ${queueId}`, callId);
    if (!session.queued) throw new CallqError("callback_refused", `session ${session.id} is ${session.state}; only a waiting caller can ask for a callback`, session.id);
    const now = this.#clock(account.id).now();
    session.cancelTimeout?.();
    session.cancelTimeout = undefined;
    const offer = session.offer;
    session.offer = undefined;
    session.recipientId = undefined;
    session.call = callback;
    session.callback = { number: callback.caller.number, requestedAt: now, attempts: 0, notBefore: now };
    queue.stats.callback(session.enteredAt, "requested");
    this.#intervalsChanged(queue);
    this.#sessionStep(account, queue, session, "callback_requested", { max_attempts: config.maxAttempts });
    this.#events.queue(account.id, queue, "callback_requested", session);
    // Settles as cancelled: the recipient is freed, the session (no longer offering) untouched.
    offer?.abort();
    session.release({ kind: "callback" });
    this.#startTick(account, queue);
    this.#scheduleDispatch(account);
    this.#checkAlerts(account);
    return sessionRow(session);
  }

  // ---- recipients ------------------------------------------------------------------------

  async recipientStatus(accountId: string, userId: string): Promise<RecipientStatus> {
    const account = await this.#accounts.get(accountId);
    this.#checkRecipient(account, userId);
    return this.#status(account, this.#recipient(account, userId));
  }

  /**
   * A recipient's figures of the local day `day` (default today), the state in progress counted
   * up to now; undefined for a day the engine no longer holds (the day ledger has it).
   */
  async recipientDay(accountId: string, userId: string, day?: string): Promise<RecipientDayView | undefined> {
    const account = await this.#accounts.get(accountId);
    this.#checkRecipient(account, userId);
    const now = this.#clock(account.id).now();
    return this.#recipient(account, userId).days.view(day ?? dayOf(now), now);
  }

  isLoggedIn(accountId: string, userId: string): boolean {
    return this.#accounts.loaded(accountId)?.recipients.get(userId)?.loggedIn ?? false;
  }

  /** The ids of the account's logged-in recipients (to check their devices at start). */
  async loggedInRecipients(accountId: string): Promise<string[]> {
    const account = await this.#accounts.get(accountId);
    return [...account.recipients.values()].filter((r) => r.loggedIn).map((r) => r.id);
  }

  /**
   * Whether the user has a queue device registered. Without one for the grace period a
   * recipient receives no offer (`unavailable_reason: no_device`, one `unavailable` event); a
   * device registering again lifts it (`available` event) with the state untouched, so the
   * recipient is back to the availability they had.
   */
  async devicePresence(accountId: string, userId: string, registered: boolean): Promise<void> {
    const account = await this.#accounts.get(accountId);
    if (account.users.get(userId)?.recipient !== true) return;
    const r = this.#recipient(account, userId);
    if (registered) {
      r.cancelDeviceGrace?.();
      r.cancelDeviceGrace = undefined;
      if (!r.noDevice) return;
      r.noDevice = false;
      if (r.loggedIn) this.#events.publish(account.id, "recipient", r.id, "available", { ...recipientData(r), previous_reason: "no_device" });
      this.#scheduleDispatch(account);
      return;
    }
    if (r.noDevice || r.cancelDeviceGrace || this.#closed) return;
    r.cancelDeviceGrace = this.#scheduler.after(this.#deviceGraceMs, () => {
      r.cancelDeviceGrace = undefined;
      r.noDevice = true;
      if (r.loggedIn) this.#events.publish(account.id, "recipient", r.id, "unavailable", { ...recipientData(r), unavailable_reason: "no_device" });
    });
  }

  /**
   * One recipient action. `reason` goes with away (one of the account's reasons: the API checks
   * it); Away already, a new reason replaces the old one and starts its time again.
   */
  async recipientAction(accountId: string, userId: string, action: RecipientAction, options: { queueId?: string; reason?: string } = {}): Promise<RecipientStatus> {
    const account = await this.#accounts.get(accountId);
    this.#checkRecipient(account, userId);
    const r = this.#recipient(account, userId);
    try {
      this.#act(account, r, action, options);
    } catch (err) {
      if (err instanceof IllegalRecipientTransition && err.heldBack !== undefined) throw new CallqError(err.heldBack, err.message, userId);
      throw err;
    }
    return this.#status(account, r);
  }

  #act(account: Account, r: Recipient, action: RecipientAction, options: { queueId?: string; reason?: string }): void {
    const userId = r.id;
    if (options.queueId !== undefined && (action === "ready" || action === "away")) {
      this.#queue(account, options.queueId);
      if (!r.loggedIn) throw new CallqError("illegal", `recipient ${userId} is not logged in`, userId);
      this.#queueAvailability(account, r, options.queueId, action === "ready");
      return;
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
        this.#away(account, r, options.reason);
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
        if (r.wrapupEndsAt === 0) throw new CallqError("illegal", `recipient ${userId} is in a wrap-up with no end to extend`, userId);
        this.#extendWrapup(account, r);
        break;
      case "wrapup_cancel":
        if (r.state !== "Wrapup-Time") throw new CallqError("illegal", `recipient ${userId} is ${r.state}, not in wrap-up`, userId);
        this.#step(account, r, "wrapup_cancel");
        break;
    }
  }

  /**
   * The recipient's disposition of the queue call they handle or handled last (`sessionId`, when
   * given, must name it): a code of that call's queue and a note, replacing any given before.
   * It goes out as a `disposition` event on the recipient and on the session; a wrap-up held
   * only for it then ends as its time had already told it to.
   */
  async setDisposition(accountId: string, userId: string, input: { code: string; note: string; sessionId?: string }): Promise<{ status: RecipientStatus; call: CallInfo; disposition: Disposition }> {
    const account = await this.#accounts.get(accountId);
    this.#checkRecipient(account, userId);
    const r = this.#recipient(account, userId);
    const last = r.lastCall;
    if (!last) throw new CallqError("illegal", `recipient ${userId} has handled no queue call to give a disposition`, userId);
    if (input.sessionId !== undefined && input.sessionId !== last.info.session_id) {
      throw new CallqError("no_session", `session ${input.sessionId} is not the queue call recipient ${userId} handles or handled last`, input.sessionId);
    }
    const code = last.codes.find((c) => c.code === input.code);
    if (!code) {
      const known = last.codes.map((c) => c.code).join(", ");
      throw new CallqError("bad_disposition", known === "" ? `queue ${last.info.queue_name} has no disposition codes` : `${input.code} is not a disposition of queue ${last.info.queue_name} (${known})`, input.code);
    }
    const disposition: Disposition = { code: code.code, label: code.label, note: input.note, set_at: toGregorianSeconds(this.#clock(account.id).now()) };
    last.disposition = disposition;
    const call = { ...last.info };
    this.#events.publish(account.id, "recipient", r.id, "disposition", { ...recipientData(r), ...call, disposition });
    const session = account.queues.get(call.queue_id)?.sessions.find((s) => s.id === call.session_id);
    // The caller may have hung up already: the session has ended then.
    const state = session?.state ?? "ended";
    this.#events.publish(account.id, "session", call.session_id, "disposition", { ...call, state, recipient_id: r.id, disposition });
    if (r.state === "Wrapup-Time" && r.heldForDisposition) this.#step(account, r, "wrapup_done");
    return { status: this.#status(account, r), call, disposition };
  }

  /** Supervision: what the status says the supervisor is doing; one `monitor` event per change. */
  setWiretap(accountId: string, userId: string, wiretap: Wiretap | undefined): void {
    void this.#accounts.get(accountId).then((account) => {
      const before = account.wiretaps.get(userId);
      if (before?.target === wiretap?.target && before?.mode === wiretap?.mode) return;
      if (wiretap) account.wiretaps.set(userId, { ...wiretap });
      else account.wiretaps.delete(userId);
      // Every user of the account may subscribe to recipient events, so they name neither the
      // target nor the mode: the supervisor's console and the monitored agent's read their status
      // again, which shows each reader what they may know (api/callq-recipients.ts).
      this.#events.publish(account.id, "recipient", userId, "monitor", { recipient_id: userId, active: wiretap !== undefined });
      const targets = new Set([before?.target, wiretap?.target].filter((t): t is string => t !== undefined));
      for (const target of targets) this.#events.publish(account.id, "recipient", target, "wiretap", { recipient_id: target });
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
    this.#checkAlerts(account);
    const now = this.#clock(account.id).now();
    // Usually a handful are Ready at once: each session looks only at them, not at every member.
    const ready: Recipient[] = [];
    for (const r of account.recipients.values()) if (r.available && now >= r.unreachableUntil) ready.push(r);
    if (ready.length === 0) return;
    const waiting: Session[] = [];
    for (const queue of account.queues.values()) for (const s of queue.sessions) if (s.waiting && (s.callback === undefined || s.callback.notBefore <= now)) waiting.push(s);
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
    const callback = session.callback;
    this.#sessionStep(account, queue, session, callback ? "callback_offered" : "offer", callback ? { recipient_id: recipient.id, attempt: callback.attempts + 1 } : undefined);
    this.#events.queue(account.id, queue, callback ? "callback_offered" : "offer", session);
    recipient.stats.offers += 1;
    recipient.days.offered(this.#clock(account.id).now());
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
      clock: this.#clock(account.id),
      enteredAt: session.enteredAt,
      ...(callback ? { callback: { number: callback.number, attempt: callback.attempts + 1 } } : {}),
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
    const now = this.#clock(account.id).now();
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
          const { dispositions, dispositionRequired, wrapupPolicy } = queue.config;
          recipient.lastCall = { info, codes: dispositions.map((c) => ({ ...c })), required: dispositionRequired, policy: wrapupPolicy, disposition: undefined };
        });
      }
      if (sessionStill && session.callback) {
        this.#callbackAccepted(account, queue, session, recipient, outcome.dialed);
      } else if (sessionStill) {
        session.cancelTimeout?.();
        session.cancelTimeout = undefined;
        session.leftWaitingAt = now;
        queue.stats.left(session.enteredAt, now, "answered", queue.config.serviceLevelS);
        this.#intervalsChanged(queue);
        this.#sessionStep(account, queue, session, "answered");
        this.#events.queue(account.id, queue, "answered", session);
        this.#checkAlerts(account);
      }
      const settle = (): void => this.#callEnded(account, queue, session, recipient, info, now, recipientStill);
      outcome.ended.then(settle, settle);
      return;
    }
    if (recipientStill) {
      if (outcome.kind === "cancelled") this.#step(account, recipient, "withdrawn");
      else {
        recipient.stats.missed_calls += 1;
        recipient.days.offerMissed(now);
        queue.stats.offerMissed(session.enteredAt);
        this.#intervalsChanged(queue);
        if (outcome.kind === "unreachable") recipient.unreachableUntil = now + queue.config.tickMs;
        // A device that cannot be rung is no decision of the agent's: only refusals and ring
        // timeouts count towards max_missed_offers.
        else recipient.missedInARow += 1;
        const limit = queue.config.maxMissedOffers;
        const tooMany = outcome.kind !== "unreachable" && limit > 0 && recipient.missedInARow >= limit;
        const forceAway = tooMany || (outcome.kind === "rejected" && queue.config.forceAwayOnReject);
        const missed = recipient.missedInARow;
        const detail = { reason: outcome.kind, session_id: session.id, queue_id: queue.id, ...(tooMany ? { missed_offers: missed } : {}) };
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

  /**
   * The recipient accepted a callback: the call side dials the caller. Connected, the session is
   * answered like a caller's; failed, the attempt counts and the callback waits again in its
   * place after the queue's retry delay, or is given up after the last attempt.
   */
  #callbackAccepted(account: Account, queue: Queue, session: Session, recipient: Recipient, dialed: Promise<CallbackDial> | undefined): void {
    const callback = session.callback;
    if (!callback) return;
    callback.attempts += 1;
    this.#sessionStep(account, queue, session, "callback_dialing", { recipient_id: recipient.id, number: callback.number, attempt: callback.attempts });
    this.#events.queue(account.id, queue, "callback_dialing", session);
    const failed: CallbackDial = { kind: "failed", reason: "unreachable" };
    (dialed ?? Promise.resolve(failed)).then(
      (result) => this.#callbackDialed(account, queue, session, result),
      (err: unknown) => {
        this.#logger.warn({ err, session_id: session.id }, "callq: dialling a callback failed");
        this.#callbackDialed(account, queue, session, failed);
      },
    );
  }

  #callbackDialed(account: Account, queue: Queue, session: Session, result: CallbackDial): void {
    const callback = session.callback;
    if (!callback || session.state !== "dialing") return;
    const now = this.#clock(account.id).now();
    if (result.kind === "connected") {
      session.leftWaitingAt = now;
      queue.stats.callback(session.enteredAt, "connected");
      this.#intervalsChanged(queue);
      this.#sessionStep(account, queue, session, "callback_connected", { number: callback.number, attempt: callback.attempts });
      this.#events.queue(account.id, queue, "callback_connected", session);
      this.#checkAlerts(account);
      return;
    }
    const maxAttempts = queue.config.callback?.maxAttempts ?? callback.attempts;
    const retry = callback.attempts < maxAttempts && !queue.removed;
    const retryDelayMs = (queue.config.callback?.retryDelayS ?? 0) * 1000;
    if (!retry) {
      queue.stats.callback(session.enteredAt, "failed");
      this.#intervalsChanged(queue);
    }
    this.#sessionStep(account, queue, session, "callback_failed", { reason: result.reason, attempt: callback.attempts, max_attempts: maxAttempts, retry });
    this.#events.queue(account.id, queue, "callback_failed", session, { reason: result.reason, retry });
    session.recipientId = undefined;
    if (!retry) {
      this.#end(account, queue, session, { kind: "callback_failed" });
      return;
    }
    callback.notBefore = now + retryDelayMs;
    session.tried.clear();
    this.#sessionStep(account, queue, session, "callback_retry", { retry_at: toGregorianSeconds(callback.notBefore) });
    this.#startTick(account, queue);
    if (retryDelayMs === 0) this.#scheduleDispatch(account);
    else this.#clock(account.id).after(retryDelayMs, () => this.#scheduleDispatch(account));
  }

  #callEnded(account: Account, queue: Queue, session: Session, recipient: Recipient, info: CallInfo, answeredAt: number, delivered: boolean): void {
    const now = this.#clock(account.id).now();
    if (delivered) {
      recipient.stats.total_calls += 1;
      recipient.stats.total_call_time += (now - answeredAt) / 1000;
      recipient.days.callHandled(now);
    }
    if (recipient.state === "On-A-Call" && recipient.handling?.session_id === info.session_id) {
      const policy = queue.config.wrapupPolicy;
      const timed = policy === "timeboxed" || policy === "timeboxed_no_exit";
      const wrapupS = timed ? queue.config.wrapupS : 0;
      account.wrapupS.set(recipient.id, wrapupS > 0 ? wrapupS : DEFAULT_WRAPUP_EXTEND_S);
      this.#step(account, recipient, "call_ended", { wrapupSeconds: wrapupS, openWrapup: policy === "required" }, () => {
        if (recipient.state !== "Wrapup-Time") return;
        recipient.wrapupNoExit = policy === "timeboxed_no_exit";
        if (wrapupS > 0) this.#scheduleWrapupEnd(account, recipient, now + wrapupS * 1000);
        // No time of its own and not the recipient's to end: only the missing disposition holds it.
        else if (policy !== "required") recipient.heldForDisposition = true;
      });
    } else if (delivered) {
      this.#save(recipient);
    }
    if (session.state === "answered") {
      queue.stats.handled(session.enteredAt, (now - answeredAt) / 1000);
      this.#intervalsChanged(queue);
      this.#sessionStep(account, queue, session, "handled");
      this.#end(account, queue, session, { kind: "handled" });
    }
  }

  #timeout(account: Account, queue: Queue, session: Session): void {
    if (!session.queued) return;
    const now = this.#clock(account.id).now();
    session.leftWaitingAt = now;
    queue.stats.left(session.enteredAt, now, "timeout", queue.config.serviceLevelS);
    this.#intervalsChanged(queue);
    this.#sessionStep(account, queue, session, "timeout");
    this.#events.queue(account.id, queue, "timeout", session);
    this.#withdraw(session);
    const redirect = queue.config.timeoutRedirect;
    const target = redirect !== undefined && redirect !== queue.id && account.queues.has(redirect) ? redirect : undefined;
    this.#end(account, queue, session, target === undefined ? { kind: "timeout" } : { kind: "timeout", redirect: target });
  }

  #abandon(account: Account, queue: Queue, session: Session): void {
    if (!session.queued) return;
    const now = this.#clock(account.id).now();
    session.leftWaitingAt = now;
    queue.stats.left(session.enteredAt, now, "abandoned", queue.config.serviceLevelS);
    this.#intervalsChanged(queue);
    this.#sessionStep(account, queue, session, "abandoned");
    this.#events.queue(account.id, queue, "abandoned", session);
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
    this.#events.queue(account.id, queue, "leave", session, { reason: end.kind });
    session.finish(end);
    this.#checkAlerts(account);
  }

  #startTick(account: Account, queue: Queue): void {
    if (queue.cancelTick || this.#closed) return;
    queue.cancelTick = this.#clock(account.id).after(queue.config.tickMs, () => {
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
    const now = this.#clock(account.id).now();
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
    const now = this.#clock(account.id).now();
    const taken = recipient.apply(trigger, ctx, now);
    during?.();
    recipient.days.observe(recipient.state, recipient.awayReason, now);
    this.#events.recipient(account.id, recipient, taken, detail);
    this.#save(recipient);
    if (taken.to === "Ready") this.#scheduleDispatch(account);
    this.#checkAlerts(account);
    return taken;
  }

  #ready(account: Account, r: Recipient): void {
    if (r.state === "Away" || r.state === "Wrapup-Time") this.#step(account, r, "ready");
    else if (r.state === "Call-Offer" || r.state === "On-A-Call") {
      r.pendingAway = false;
      this.#save(r);
    }
  }

  #away(account: Account, r: Recipient, reason: string | undefined): void {
    const now = this.#clock(account.id).now();
    const withReason = (): void => {
      r.awayReason = reason;
    };
    if (r.state === "Ready" || (r.state === "Wrapup-Time" && !r.wrapupLocked(now))) this.#step(account, r, "away", {}, withReason);
    else if (r.state === "Call-Offer") {
      const offer = r.offer;
      r.offer = undefined;
      this.#step(account, r, "away", {}, withReason);
      offer?.abort();
    } else if (r.state === "On-A-Call" || r.state === "Wrapup-Time") {
      // Kept for when the call (or the wrap-up that may not be cut short) is over.
      r.pendingAway = true;
      r.pendingAwayReason = reason;
      this.#save(r);
    } else if (r.state === "Away" && reason !== undefined && reason !== r.awayReason) {
      // A new reason while Away; Away again without one changes nothing, as before reasons.
      r.awayReason = reason;
      r.awaySince = now;
      r.missedAwayAfter = 0;
      r.changedAt = now;
      r.stats.last_action_time = toGregorianSeconds(now);
      r.days.observe(r.state, r.awayReason, now);
      this.#events.recipient(account.id, r, { from: "Away", to: "Away", event: "away", clearsPendingAway: false });
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
    this.#events.publish(account.id, "recipient", r.id, on ? "ready" : "away", {
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
    r.cancelWrapup = this.#clock(account.id).after(endsAt - this.#clock(account.id).now(), () => {
      r.cancelWrapup = undefined;
      if (r.state !== "Wrapup-Time") return;
      if (r.dispositionMissing && !r.pendingAway) {
        // The time is over but Ready waits for the disposition: the wrap-up stays, with no end.
        r.wrapupEndsAt = 0;
        r.wrapupNoExit = false;
        r.heldForDisposition = true;
        this.#events.publish(account.id, "recipient", r.id, "wrapup", { ...recipientData(r), previous_state: "Wrapup-Time", wrapup_time_seconds: 0 });
        return;
      }
      this.#step(account, r, "wrapup_done");
    });
  }

  #extendWrapup(account: Account, r: Recipient): void {
    const by = account.wrapupS.get(r.id) ?? DEFAULT_WRAPUP_EXTEND_S;
    const endsAt = Math.max(r.wrapupEndsAt, this.#clock(account.id).now()) + by * 1000;
    this.#step(account, r, "wrapup_extend", {}, () => this.#scheduleWrapupEnd(account, r, endsAt), { extended_by: by });
  }

  #mustBeLoggedIn(r: Recipient): void {
    if (!r.loggedIn) throw new CallqError("illegal", `recipient ${r.id} is not logged in`, r.id);
  }

  // ---- statuses --------------------------------------------------------------------------

  #status(account: Account, r: Recipient): RecipientStatus {
    return recipientStatus(r, account.wiretaps, (userId) => account.users.get(userId)?.name ?? "", this.#clock(account.id).now(), this.#node);
  }

  // ---- alerts ----------------------------------------------------------------------------

  /**
   * Re-evaluates the account's alerts at the engine's now, publishing `fire` and `clear` on
   * callq.alert.<queue_id> once per change, and keeps a one-second timer while any queue has
   * alerts (a wait or a state grows past its limit, and a window moves on, with no event).
   */
  #checkAlerts(account: Account): void {
    if (this.#closed) return;
    const now = this.#clock(account.id).now();
    let watched = false;
    for (const queue of account.queues.values()) {
      const configured = hasAlerts(queue.config.alerts);
      watched ||= configured;
      if (!configured && queue.alerts.size === 0) continue;
      const holding = evaluateAlerts(queue, account.recipients, queue.stats.stopped, now, queue.alerts);
      const keys = new Set(holding.map(alertKey));
      for (const [key, alert] of queue.alerts) {
        if (keys.has(key)) continue;
        queue.alerts.delete(key);
        this.#events.publish(account.id, "alert", queue.id, "clear", { ...alert, queue_name: queue.config.name });
      }
      for (const alert of holding) {
        const key = alertKey(alert);
        if (queue.alerts.has(key)) continue;
        queue.alerts.set(key, alert);
        this.#events.publish(account.id, "alert", queue.id, "fire", { ...alert, queue_name: queue.config.name });
      }
    }
    if (watched && !this.#alertTimers.has(account.id)) {
      this.#alertTimers.set(
        account.id,
        this.#clock(account.id).after(1000, () => {
          this.#alertTimers.delete(account.id);
          this.#checkAlerts(account);
        }),
      );
    }
  }

  #intervalsChanged(queue: Queue): void {
    this.#intervals.save(queue);
  }

  #sessionStep(account: Account, queue: Queue, session: Session, trigger: SessionTrigger, detail?: Record<string, unknown>): void {
    this.#events.session(account.id, queue, session, session.apply(trigger), detail);
  }

  // ---- accounts, queues and users --------------------------------------------------------

  /** A queue was created or changed. */
  applyQueue(accountId: string, config: QueueConfig): void {
    this.#accounts.whenLoaded(accountId, (account) => {
      const queue = account.queues.get(config.id);
      if (queue) queue.config = config;
      else account.queues.set(config.id, new Queue(account.id, config));
      this.#scheduleDispatch(account);
      this.#checkAlerts(account);
    });
  }

  /** A queue was deleted: its waiting callers leave it (`no_queue`). */
  removeQueue(accountId: string, queueId: string): void {
    this.#accounts.whenLoaded(accountId, (account) => {
      const queue = account.queues.get(queueId);
      if (!queue) return;
      queue.removed = true;
      queue.cancelTick?.();
      account.queues.delete(queueId);
      for (const [key, alert] of queue.alerts) {
        queue.alerts.delete(key);
        this.#events.publish(account.id, "alert", queue.id, "clear", { ...alert, reason: "queue_deleted" });
      }
      for (const session of [...queue.sessions]) {
        if (!session.queued) continue;
        this.#sessionStep(account, queue, session, "removed");
        this.#withdraw(session);
        this.#end(account, queue, session, { kind: "no_queue" });
      }
    });
  }

  /** A user was created or changed; one who is no longer a recipient is logged out. */
  applyUser(accountId: string, user: CallqUser): void {
    this.#accounts.whenLoaded(accountId, (account) => {
      account.users.set(user.id, { ...user });
      const r = account.recipients.get(user.id);
      if (r?.loggedIn && !user.recipient) this.#logout(account, r);
    });
  }

  /** A user was deleted: logged out, and their recipient forgotten. */
  removeUser(accountId: string, userId: string): void {
    this.#accounts.whenLoaded(accountId, (account) => {
      account.users.delete(userId);
      const r = account.recipients.get(userId);
      if (!r) return;
      if (r.loggedIn) this.#logout(account, r);
      account.recipients.delete(userId);
    });
  }

  #queue(account: Account, queueId: string): Queue {
    const queue = account.queues.get(queueId);
    if (!queue || queue.removed) throw new CallqError("no_queue", `no queue ${queueId}`, queueId);
    return queue;
  }

  #checkRecipient(account: Account, userId: string): void {
    if (account.users.get(userId)?.recipient !== true) throw new CallqError("no_recipient", `user ${userId} is not a call-queue recipient`, userId);
  }

  #recipient(account: Account, userId: string): Recipient {
    let r = account.recipients.get(userId);
    if (!r) {
      r = new Recipient(account.id, userId);
      account.recipients.set(userId, r);
    }
    return r;
  }

  /** The recipient's state, and their day's figures where they changed. */
  #save(r: Recipient): void {
    this.#ledger.save(r);
    this.#days.save(r);
  }
}

function candidateOf(r: Recipient): Candidate {
  const idleSince = r.stats.last_handled_time > 0 ? fromGregorianSeconds(r.stats.last_handled_time) : r.stats.login_time * 1000;
  return { id: r.id, totalCalls: r.stats.total_calls, offers: r.stats.offers, idleSince };
}
