// The webhook attempts log: one document per HTTP attempt in each account's `webhook_attempts`
// collection, capped to the newest ATTEMPTS_KEPT; GET /webhooks/attempts reads it newest first.
import type { Clock } from "../clock.js";
import { toGregorianSeconds } from "../clock.js";
import type { Store, StoredDoc } from "../store/index.js";

export const ATTEMPTS_COLLECTION = "webhook_attempts";
export const ATTEMPTS_KEPT = 1_000;

export interface AttemptEntry extends Record<string, unknown> {
  hook_id: string;
  hook_event: string;
  result: "success" | "failure";
  /** Failures only: "bad response code" or "kazoo http client error". */
  reason?: string;
  /** The receiver's HTTP status, when it answered. */
  response_code?: number;
  /** What went wrong without an answer: timeout, ECONNREFUSED ... */
  client_error?: string;
  /** This attempt's number, from 1. */
  try: number;
  /** Attempts still allowed after this one (0 when it was the last). */
  retries_left: number;
  uri: string;
  method: "get" | "post";
  /** Gregorian seconds. */
  timestamp: number;
}

/** The list order: the attempt's time, then a counter, since one millisecond holds many attempts. */
export function attemptOrder(doc: StoredDoc): string {
  const order = doc.data.pvt_order;
  return typeof order === "string" ? order : "";
}

export class AttemptLog {
  #counter = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly kept = ATTEMPTS_KEPT,
  ) {}

  async append(accountId: string, entry: Omit<AttemptEntry, "timestamp">): Promise<void> {
    const log = await this.store.account(accountId, ATTEMPTS_COLLECTION);
    const at = this.clock.now();
    const order = `${String(at).padStart(15, "0")}.${String(++this.#counter).padStart(9, "0")}`;
    // Synced before it counts as logged: a failure row must outlive a crash or a power cut, or
    // the retries after a restart would look like first tries.
    const writes: Promise<unknown>[] = [log.create({ ...entry, timestamp: toGregorianSeconds(at), pvt_order: order }, { durable: true })];
    // The collection applies each write in memory at once, so the oldest are picked and removed
    // in this same turn: two appends never pick the same victim.
    const excess = log.size - this.kept;
    if (excess > 0) for (const old of log.all().slice(0, excess)) writes.push(log.delete(old.id));
    await Promise.all(writes);
  }
}
