// The texting relay: every message a user's number sends or receives is POSTed as JSON (the
// Texting relay message) to the user's relay URL, with the webhook retry rule. Reuses the webhook
// layer's Delivery state machine and its HTTP attempt; deliveries are kept on disk
// (`texting_relay_deliveries`) before the first try and resumed on start, and every attempt is
// logged in `texting_relay_attempts` (the newest RELAY_ATTEMPTS_KEPT per account).
import { setMaxListeners } from "node:events";
import { toGregorianSeconds, type Clock } from "../clock.js";
import { attempt, Delivery, type DeliveryChange, type DeliveryRecord } from "../events/webhook-delivery.js";
import { newId, type Collection, type Store, type StoredDoc } from "../store/index.js";
import { BackgroundWork } from "./background.js";
import { relayUrlOf, SETTINGS_COLLECTION } from "./settings.js";

export const RELAY_DELIVERIES_COLLECTION = "texting_relay_deliveries";
export const RELAY_ATTEMPTS_COLLECTION = "texting_relay_attempts";
export const RELAY_ATTEMPTS_KEPT = 1_000;
const RELAY_EVENT = "texting_relay";

/** The Texting relay message of service-api.md. */
export interface RelayPayload extends Record<string, unknown> {
  MessageID: string;
  ConversationID: string;
  ToNumber: string;
  FromNumber: string;
  MessageBody: string;
  MessageDirection: "in" | "out";
  ServiceUserID: string;
  ContactName: string;
  /** "" when the contact has none. */
  ContactEmail: string;
  /** [] when the message has no attachments. */
  Media: string[];
}

export interface RelayOptions {
  store: Store;
  clock: Clock;
  logger?: { warn(obj: object, msg: string): void };
  /** Between a failed attempt and its retry: the webhooks' 2 s unless configured. */
  retryDelayMs?: number;
  /** A receiver that has not answered by then fails the attempt: 10 s. */
  timeoutMs?: number;
  /** Attempts after the first failure, as a webhook's default `retries`. */
  retries?: number;
}

const DEFAULTS = { retryDelayMs: 2_000, timeoutMs: 10_000, retries: 2 };
/** Requests in flight over all users; each user's relay gets one at a time, in message order. */
const MAX_IN_FLIGHT = 64;

/** A delivery waiting in its lane, with the write of its record its first try must wait for. */
interface Queued {
  delivery: Delivery;
  persisted: Promise<unknown>;
}

interface Lane {
  queue: Queued[];
  sending: boolean;
}

/** The attempts list order: time, then a counter, since one millisecond holds many attempts. */
export function relayAttemptOrder(doc: StoredDoc): string {
  return typeof doc.data.pvt_order === "string" ? doc.data.pvt_order : "";
}

export class TextingRelay {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #tuning: typeof DEFAULTS;
  readonly #lanes = new Map<string, Lane>();
  readonly #waiting = new Set<() => void>();
  readonly #background: BackgroundWork;
  readonly #stopping = new AbortController();
  #inFlight = 0;
  #attemptCounter = 0;

  constructor(options: RelayOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#background = new BackgroundWork("texting relay", options.logger);
    this.#tuning = {
      retryDelayMs: options.retryDelayMs ?? DEFAULTS.retryDelayMs,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      retries: options.retries ?? DEFAULTS.retries,
    };
    setMaxListeners(MAX_IN_FLIGHT + 1, this.#stopping.signal);
  }

  /** Resumes what a previous run left on disk, oldest first. */
  async resume(): Promise<void> {
    const accounts = await this.#store.global("accounts");
    for (const account of accounts.all()) {
      const pending = await this.#deliveries(account.id);
      const records = [...pending.all()].sort((a, b) => Number(a.data.seq) - Number(b.data.seq));
      for (const doc of records.reverse()) this.#schedule(new Delivery(doc.id, account.id, doc.data as DeliveryRecord, this.#clock, this.#keepOnDisk));
    }
  }

  /**
   * Relays one message when its user has a relay URL. The record is written before the first try;
   * `seq` orders deliveries resumed after a restart.
   */
  async relay(accountId: string, userId: string, payload: RelayPayload, seq: number): Promise<void> {
    if (this.#stopping.signal.aborted) return;
    const settings = await this.#store.account(accountId, SETTINGS_COLLECTION);
    if (relayUrlOf(settings.get(userId)) === null) return;
    const record: DeliveryRecord = { hook_id: userId, hook_event: RELAY_EVENT, payload, try: 1, due: this.#clock.now(), seq };
    const delivery = new Delivery(newId(this.#store.random), accountId, record, this.#clock, this.#keepOnDisk);
    const persisted = this.#deliveries(accountId).then((c) => c.create(record, { id: delivery.id }));
    // A failed write is reported by the try that waits for it; until then it is not unhandled.
    persisted.catch(() => undefined);
    // The lane is joined in this turn, so one user's messages keep their order.
    this.#lane(delivery).queue.push({ delivery, persisted });
    this.#pump();
  }

  stop(): Promise<void> {
    this.#stopping.abort();
    for (const cancel of this.#waiting) cancel();
    this.#waiting.clear();
    return this.#background.settled();
  }

  #lane(delivery: Delivery): Lane {
    const key = `${delivery.accountId}/${delivery.hookId}`;
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { queue: [], sending: false };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  /** Queue at the head of its lane when due (a retry or a resumed delivery goes before newer ones). */
  #schedule(delivery: Delivery): void {
    const run = (): void => {
      if (this.#stopping.signal.aborted) return;
      this.#lane(delivery).queue.unshift({ delivery, persisted: Promise.resolve() });
      this.#pump();
    };
    const wait = delivery.record.due - this.#clock.now();
    if (wait <= 0) return run();
    const cancel = this.#clock.after(wait, () => {
      this.#waiting.delete(cancel);
      run();
    });
    this.#waiting.add(cancel);
  }

  #pump(): void {
    for (const [key, lane] of this.#lanes) {
      if (this.#inFlight >= MAX_IN_FLIGHT || this.#stopping.signal.aborted) return;
      const next = lane.sending ? undefined : lane.queue.shift();
      if (!next) {
        if (!lane.sending && lane.queue.length === 0) this.#lanes.delete(key);
        continue;
      }
      lane.sending = true;
      this.#inFlight++;
      this.#track(
        this.#run(next).finally(() => {
          lane.sending = false;
          this.#inFlight--;
          this.#pump();
        }),
      );
    }
  }

  async #run({ delivery, persisted }: Queued): Promise<void> {
    await persisted;
    if (this.#stopping.signal.aborted) return;
    const settings = await this.#store.account(delivery.accountId, SETTINGS_COLLECTION);
    const uri = relayUrlOf(settings.get(delivery.hookId));
    if (uri === null) {
      delivery.cancel("relay URL removed");
      return;
    }
    delivery.send();
    const result = await attempt(
      this.#clock,
      {
        url: uri,
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Account-ID": delivery.accountId },
        body: JSON.stringify(delivery.record.payload),
      },
      this.#tuning.timeoutMs,
      this.#stopping.signal,
    );
    if (result.result === "stopped") return;
    const retriesLeft = Math.max(0, this.#tuning.retries + 1 - delivery.try);
    const payload = delivery.record.payload as RelayPayload;
    this.#track(
      this.#logAttempt(delivery.accountId, {
        user_id: delivery.hookId,
        message_id: payload.MessageID,
        direction: payload.MessageDirection,
        result: result.result,
        ...(result.result === "failure" ? { reason: result.reason } : {}),
        ...(result.responseCode === undefined ? {} : { response_code: result.responseCode }),
        ...(result.result === "failure" && result.clientError !== undefined ? { client_error: result.clientError } : {}),
        try: delivery.try,
        retries_left: retriesLeft,
        uri,
        method: "post",
      }),
    );
    if (result.result === "success") delivery.succeed();
    else if (retriesLeft > 0) {
      delivery.retryAfter(this.#tuning.retryDelayMs, result.reason);
      this.#schedule(delivery);
    } else delivery.fail("retries exceeded");
  }

  async #logAttempt(accountId: string, entry: Record<string, unknown>): Promise<void> {
    const log = await this.#store.account(accountId, RELAY_ATTEMPTS_COLLECTION);
    const at = this.#clock.now();
    const order = `${String(at).padStart(15, "0")}.${String(++this.#attemptCounter).padStart(9, "0")}`;
    const writes: Promise<unknown>[] = [log.create({ ...entry, timestamp: toGregorianSeconds(at), pvt_order: order })];
    const excess = log.size - RELAY_ATTEMPTS_KEPT;
    if (excess > 0) for (const old of log.all().slice(0, excess)) writes.push(log.delete(old.id));
    await Promise.all(writes);
  }

  /** A retry's new try and due time are written; a finished delivery's record is deleted. */
  readonly #keepOnDisk = (delivery: Delivery, change: DeliveryChange): void => {
    if (change.to === "waiting-retry") {
      this.#track(this.#deliveries(delivery.accountId).then((c) => c.update(delivery.id, { ...delivery.record })));
    } else if (change.to === "succeeded" || change.to === "failed" || change.to === "cancelled") {
      this.#track(this.#deliveries(delivery.accountId).then((c) => c.delete(delivery.id)));
    }
  };

  #deliveries(accountId: string): Promise<Collection> {
    return this.#store.account(accountId, RELAY_DELIVERIES_COLLECTION);
  }

  #track(work: Promise<unknown>): void {
    this.#background.track(work);
  }
}
