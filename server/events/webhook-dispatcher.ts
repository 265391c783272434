// The webhook dispatcher: hears every bus event, picks the account's enabled hooks it fires,
// persists one delivery per hook and sends them outside the request path, one lane per hook.
import { setMaxListeners } from "node:events";
import type { Cancel, Clock } from "../clock.js";
import { newId, type Collection, type StoredDoc, type Store } from "../store/index.js";
import type { BusEvent, EventBus } from "./bus.js";
import { AttemptLog } from "./webhook-attempt-log.js";
import { attempt, Delivery, type AttemptResult, type DeliveryChange, type DeliveryRecord, type DeliveryState } from "./webhook-delivery.js";
import { FAULT_REASON, type WebhookFaults } from "./webhook-faults.js";
import { buildPayload, requestFor, triggerOf, type Trigger } from "./webhook-payload.js";

export const DELIVERIES_COLLECTION = "webhook_deliveries";
export const DISABLE_REASON = "too many failed attempts";

const FINAL: ReadonlySet<DeliveryState> = new Set(["succeeded", "failed", "cancelled"]);

export interface WebhookDispatcherOptions {
  store: Store;
  bus: EventBus;
  clock: Clock;
  logger?: { warn(obj: object, msg: string): void };
  /** Between a failed attempt and its retry; 2 s as the hosted service. */
  retryDelayMs?: number;
  /** A receiver that has not answered by then fails the attempt; 10 s. */
  timeoutMs?: number;
  /** Requests in flight over all hooks. */
  maxInFlight?: number;
  /** Requests in flight to one hook; 1 keeps a hook's first attempts in event order. */
  perHookInFlight?: number;
  /** Failed attempts of one hook within `failureWindowMs` that disable it. */
  failuresToDisable?: number;
  failureWindowMs?: number;
  /** Failure windows on cue (training): an attempt in one fails without a request. */
  faults?: WebhookFaults;
}

const DEFAULTS = {
  retryDelayMs: 2_000,
  timeoutMs: 10_000,
  maxInFlight: 64,
  perHookInFlight: 1,
  failuresToDisable: 6,
  failureWindowMs: 60_000,
};

/** A delivery waiting in its lane, with the write of its record the first try must wait for. */
interface Queued {
  delivery: Delivery;
  persisted: Promise<unknown>;
}

/** One hook's queue: its deliveries wait here for a free slot of the hook and of the dispatcher. */
interface Lane {
  key: string;
  queue: Queued[];
  sending: number;
  /** In the dispatcher's ready list. */
  ready: boolean;
}

export class WebhookDispatcher {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #logger: WebhookDispatcherOptions["logger"];
  readonly #faults: WebhookFaults | undefined;
  readonly #tuning: typeof DEFAULTS;
  readonly #attempts: AttemptLog;
  readonly #lanes = new Map<string, Lane>();
  /** Lanes with work and a free slot, served in turn so one busy hook cannot starve the others. */
  readonly #ready: Lane[] = [];
  /** Failure times per hook (`account/hook`), within the window. */
  readonly #failures = new Map<string, number[]>();
  readonly #timers = new Set<Cancel>();
  /** Sends and store writes still running; stop() waits for them. */
  readonly #running = new Set<Promise<unknown>>();
  readonly #stopping = new AbortController();
  #inFlight = 0;
  #unsubscribe: () => void = () => undefined;
  #stopped: Promise<void> | null = null;

  private constructor(options: WebhookDispatcherOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#faults = options.faults;
    const defined = Object.fromEntries(Object.entries(options).filter(([k, v]) => k in DEFAULTS && v !== undefined));
    this.#tuning = { ...DEFAULTS, ...defined };
    this.#attempts = new AttemptLog(options.store, options.clock);
    // Every request in flight listens for the stop.
    setMaxListeners(this.#tuning.maxInFlight + 1, this.#stopping.signal);
  }

  /** Listens to the bus, then resumes every delivery a previous run left on disk. */
  static async start(options: WebhookDispatcherOptions): Promise<WebhookDispatcher> {
    const dispatcher = new WebhookDispatcher(options);
    dispatcher.#unsubscribe = options.bus.subscribe((event) => dispatcher.#hear(event));
    await dispatcher.#resume();
    return dispatcher;
  }

  /**
   * Stops listening, aborts the requests in flight (unlogged: they will be sent again) and drops
   * the retry timers; every unfinished delivery stays on disk for the next start.
   */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#unsubscribe();
      this.#stopping.abort();
      for (const cancel of this.#timers) cancel();
      this.#timers.clear();
      while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
    })();
    return this.#stopped;
  }

  #hear(event: BusEvent): void {
    const trigger = triggerOf(event);
    if (!trigger || this.#stopping.signal.aborted) return;
    let hooks: Promise<Collection>;
    try {
      hooks = this.#store.account(event.account_id, "webhooks");
    } catch {
      // Not an account id: no account, so no hooks.
      return;
    }
    // The collection promise is shared, so events of one account are taken in bus order.
    this.#track(hooks.then((collection) => this.#intake(event, trigger, collection)));
  }

  #intake(event: BusEvent, trigger: Trigger, hooks: Collection): void {
    if (this.#stopping.signal.aborted) return;
    for (const hook of hooks.all()) {
      if (!fires(hook, trigger, event)) continue;
      const record: DeliveryRecord = {
        hook_id: hook.id,
        hook_event: trigger.hook,
        payload: buildPayload(event, trigger, overlayOf(hook, trigger)),
        try: 1,
        due: this.#clock.now(),
        seq: event.seq,
      };
      const delivery = new Delivery(newId(this.#store.random), event.account_id, record, this.#clock, this.#keepOnDisk);
      // Written before the first attempt; the lane waits for it, so the event order stays.
      const persisted = this.#deliveries(event.account_id).then((c) => c.create(record, { id: delivery.id }));
      this.#enqueue(delivery, persisted, false);
    }
  }

  async #resume(): Promise<void> {
    const accounts = await this.#store.global("accounts");
    for (const account of accounts.all()) {
      const pending = await this.#deliveries(account.id);
      const records = [...pending.all()].sort((a, b) => seqOf(a) - seqOf(b));
      // Older than anything heard since the start: ahead of it in the lanes, in their own order.
      for (const doc of records.reverse()) {
        const delivery = new Delivery(doc.id, account.id, doc.data as DeliveryRecord, this.#clock, this.#keepOnDisk);
        this.#schedule(delivery, Promise.resolve());
      }
    }
  }

  /** Queue now if due, else when due. */
  #schedule(delivery: Delivery, persisted: Promise<unknown>): void {
    const wait = delivery.record.due - this.#clock.now();
    if (wait <= 0) {
      this.#enqueue(delivery, persisted, true);
      return;
    }
    const cancel = this.#clock.after(wait, () => {
      this.#timers.delete(cancel);
      this.#enqueue(delivery, persisted, true);
    });
    this.#timers.add(cancel);
  }

  #enqueue(delivery: Delivery, persisted: Promise<unknown>, first: boolean): void {
    if (this.#stopping.signal.aborted) return;
    const key = `${delivery.accountId}/${delivery.hookId}`;
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { key, queue: [], sending: 0, ready: false };
      this.#lanes.set(key, lane);
    }
    if (first) lane.queue.unshift({ delivery, persisted });
    else lane.queue.push({ delivery, persisted });
    this.#markReady(lane);
    this.#pump();
  }

  #markReady(lane: Lane): void {
    if (lane.ready || lane.queue.length === 0 || lane.sending >= this.#tuning.perHookInFlight) return;
    lane.ready = true;
    this.#ready.push(lane);
  }

  /** Starts as many sends as the global and per-hook limits allow, taking the lanes in turn. */
  #pump(): void {
    while (this.#inFlight < this.#tuning.maxInFlight && !this.#stopping.signal.aborted) {
      const lane = this.#ready.shift();
      if (!lane) return;
      lane.ready = false;
      const next = lane.queue.shift();
      if (!next) continue;
      lane.sending++;
      this.#inFlight++;
      const run = this.#run(next).finally(() => {
        lane.sending--;
        this.#inFlight--;
        if (lane.sending === 0 && lane.queue.length === 0) this.#lanes.delete(lane.key);
        else this.#markReady(lane);
        this.#pump();
      });
      this.#track(run);
      this.#markReady(lane);
    }
  }

  /** One try of one delivery, and what follows from its outcome. */
  async #run({ delivery, persisted }: Queued): Promise<void> {
    await persisted;
    if (this.#stopping.signal.aborted) return;
    const hooks = await this.#store.account(delivery.accountId, "webhooks");
    const hook = hooks.get(delivery.hookId);
    if (!hook || hook.data.enabled === false) {
      delivery.cancel(hook ? "hook disabled" : "hook deleted");
      return;
    }
    delivery.send();
    const request = requestFor(
      {
        hookId: hook.id,
        accountId: delivery.accountId,
        uri: String(hook.data.uri),
        httpVerb: hook.data.http_verb === "get" ? "get" : "post",
        format: hook.data.format === "json" ? "json" : "form",
      },
      delivery.record.payload,
    );
    // A fault window fails the attempt as a dead target would, counted and logged like one.
    const result: AttemptResult = this.#faults?.failing(delivery.accountId)
      ? { result: "failure", reason: FAULT_REASON }
      : await attempt(this.#clock, request, this.#tuning.timeoutMs, this.#stopping.signal);
    if (result.result === "stopped") return;
    const retries = retriesOf(hook);
    const retriesLeft = Math.max(0, retries + 1 - delivery.try);
    this.#log(delivery, request.method === "GET" ? "get" : "post", String(hook.data.uri), result, retriesLeft);
    if (result.result === "success") {
      delivery.succeed();
      return;
    }
    const disabled = this.#noteFailure(delivery.accountId, hook, hooks);
    if (retriesLeft > 0 && !disabled) {
      delivery.retryAfter(this.#tuning.retryDelayMs, result.reason);
      this.#schedule(delivery, Promise.resolve());
      return;
    }
    delivery.fail(disabled ? DISABLE_REASON : "retries exceeded");
  }

  #log(delivery: Delivery, method: "get" | "post", uri: string, result: Exclude<AttemptResult, { result: "stopped" }>, retriesLeft: number): void {
    this.#track(
      this.#attempts.append(delivery.accountId, {
        hook_id: delivery.hookId,
        hook_event: delivery.record.hook_event,
        result: result.result,
        ...(result.result === "failure" ? { reason: result.reason } : {}),
        ...(result.responseCode === undefined ? {} : { response_code: result.responseCode }),
        ...(result.result === "failure" && result.clientError !== undefined ? { client_error: result.clientError } : {}),
        try: delivery.try,
        retries_left: retriesLeft,
        uri,
        method,
      }),
    );
  }

  /**
   * Counts a failed attempt; the one that makes `failuresToDisable` within the window disables
   * the hook through the store, so the API and object hooks see it. True when the hook is now off.
   */
  #noteFailure(accountId: string, hook: StoredDoc, hooks: Collection): boolean {
    const key = `${accountId}/${hook.id}`;
    const now = this.#clock.now();
    const recent = (this.#failures.get(key) ?? []).filter((at) => at > now - this.#tuning.failureWindowMs);
    recent.push(now);
    if (recent.length < this.#tuning.failuresToDisable) {
      this.#failures.set(key, recent);
      return false;
    }
    // A re-enabled hook starts with a clean slate.
    this.#failures.delete(key);
    const current = hooks.get(hook.id);
    if (!current || current.data.enabled === false) return true;
    this.#logger?.warn({ account_id: accountId, hook_id: hook.id, uri: current.data.uri }, `webhook disabled: ${DISABLE_REASON}`);
    this.#track(hooks.update(hook.id, { ...current.data, enabled: false, disable_reason: DISABLE_REASON }));
    return true;
  }

  /**
   * The disk follows each delivery's transitions: a retry's new try and due time are written, a
   * finished delivery's record is deleted. The collection applies writes in call order, so a
   * record is never deleted before it is written.
   */
  readonly #keepOnDisk = (delivery: Delivery, change: DeliveryChange): void => {
    if (change.to === "waiting-retry") {
      this.#track(this.#deliveries(delivery.accountId).then((c) => c.update(delivery.id, { ...delivery.record })));
    } else if (FINAL.has(change.to)) {
      this.#track(this.#deliveries(delivery.accountId).then((c) => c.delete(delivery.id)));
    }
  };

  #deliveries(accountId: string): Promise<Collection> {
    return this.#store.account(accountId, DELIVERIES_COLLECTION);
  }

  /** Keeps a background promise for stop() to wait on; its failure is logged, never thrown. */
  #track(work: Promise<unknown>): void {
    const tracked = work.catch((err: unknown) => {
      this.#logger?.warn({ err }, "webhook dispatcher: background work failed");
    });
    this.#running.add(tracked);
    void tracked.finally(() => this.#running.delete(tracked));
  }
}

/** Does this webhook fire for this event? Enabled, same hook, and the hook's own selectors. */
function fires(hook: StoredDoc, trigger: Trigger, event: BusEvent): boolean {
  const data = hook.data;
  if (data.enabled === false || data.hook !== trigger.hook) return false;
  const custom = customData(hook);
  switch (trigger.hook) {
    case "notifications":
      // "all" is Kazoo's catch-all notification type.
      return custom?.type === "all" || custom?.type === trigger.notification;
    case "object":
      // As the hosted service: custom_data.type and .action narrow an object hook; "all" or absent matches all.
      return selects(custom?.type, event.data.type) && selects(custom?.action, event.data.action);
    default:
      return data.include_internal_legs !== false || event.data.is_internal_leg !== true;
  }
}

function selects(wanted: unknown, actual: unknown): boolean {
  return wanted === undefined || wanted === "all" || wanted === actual;
}

/**
 * custom_data, laid over the payload. An object hook's `type` and `action`, and a notification
 * hook's `type`, are its selectors, not data: laid over, "all" would hide the event's real type.
 */
function overlayOf(hook: StoredDoc, trigger: Trigger): Record<string, unknown> | undefined {
  const custom = customData(hook);
  if (!custom || (trigger.hook !== "object" && trigger.hook !== "notifications")) return custom;
  const rest = { ...custom };
  delete rest.type;
  if (trigger.hook === "object") delete rest.action;
  // A notification's payload names its type as the hook's selector would.
  else if (trigger.notification !== undefined) rest.type = trigger.notification;
  return rest;
}

function customData(hook: StoredDoc): Record<string, unknown> | undefined {
  const custom = hook.data.custom_data;
  return typeof custom === "object" && custom !== null && !Array.isArray(custom) ? (custom as Record<string, unknown>) : undefined;
}

/** `retries` as validated by the API (0..4, default 2); a hand-edited file cannot make it loop. */
function retriesOf(hook: StoredDoc): number {
  const retries = hook.data.retries;
  return typeof retries === "number" && Number.isInteger(retries) ? Math.min(4, Math.max(0, retries)) : 2;
}

function seqOf(doc: StoredDoc): number {
  return typeof doc.data.seq === "number" ? doc.data.seq : 0;
}

export function startWebhookDispatcher(options: WebhookDispatcherOptions): Promise<WebhookDispatcher> {
  return WebhookDispatcher.start(options);
}
