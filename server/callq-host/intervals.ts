// The queues' figures per 15-minute interval on the store: one callq_intervals document per queue
// and interval (id `<queue id>-<YYYYMMDD>T<HHMM>` of the local start), written as the engine counts,
// read back at start (the day so far) and by the history API (a day's documents).
import { fromGregorianSeconds, toGregorianSeconds } from "../clock.js";
import { FIGURE_NAMES, dayOf, emptyFigures, timeOf, type IntervalLedger, type QueueInterval } from "../callq/index.js";
import type { Store, StoredDoc } from "../store/index.js";

export const INTERVALS_COLLECTION = "callq_intervals";

/** The stored document of one queue's interval: its figures, the local day and time it starts. */
export function intervalDoc(interval: QueueInterval): Record<string, unknown> {
  const figures: Record<string, number> = {};
  for (const name of FIGURE_NAMES) figures[name] = interval[name];
  return { queue_id: interval.queue_id, day: dayOf(interval.start), time: timeOf(interval.start), interval_start: toGregorianSeconds(interval.start), ...figures };
}

export function intervalId(interval: Pick<QueueInterval, "queue_id" | "start">): string {
  return `${interval.queue_id}-${dayOf(interval.start).replace(/-/g, "")}T${timeOf(interval.start).replace(":", "")}`;
}

/** A stored interval read back, each figure checked (a hand-edited file cannot break the engine). */
export function intervalOf(doc: StoredDoc): QueueInterval | undefined {
  const { queue_id: queueId, interval_start: start } = doc.data;
  if (typeof queueId !== "string" || typeof start !== "number" || !Number.isFinite(start)) return undefined;
  const figures = emptyFigures();
  for (const name of FIGURE_NAMES) {
    const v = doc.data[name];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) figures[name] = v;
  }
  return { queue_id: queueId, start: fromGregorianSeconds(start), ...figures };
}

export function storeIntervals(store: Store): IntervalLedger {
  return {
    async load(accountId: string, since: number): Promise<QueueInterval[]> {
      const docs = await store.account(accountId, INTERVALS_COLLECTION);
      const out: QueueInterval[] = [];
      for (const doc of docs.all()) {
        const interval = intervalOf(doc);
        if (interval && interval.start >= since) out.push(interval);
      }
      return out;
    },
    async save(accountId: string, interval: QueueInterval): Promise<void> {
      const docs = await store.account(accountId, INTERVALS_COLLECTION);
      const id = intervalId(interval);
      const data = intervalDoc(interval);
      if (docs.has(id)) await docs.update(id, data);
      else await docs.create(data, { id });
    },
  };
}

/**
 * A queue's stored intervals of one day without reading every document of the account's history
 * (90 days of 50 queues is 432,000 of them): per account, (queue id, day) -> document ids, built
 * on the first read and kept by the store's change feed from then on.
 */
export class IntervalDays {
  readonly #store: Store;
  readonly #byAccount = new Map<string, Map<string, Set<string>>>();

  constructor(store: Store) {
    this.#store = store;
    store.onChange((change) => {
      if (change.collection !== INTERVALS_COLLECTION || change.accountId === null) return;
      const index = this.#byAccount.get(change.accountId);
      if (!index) return;
      if (change.kind === "deleted") index.get(dayKey(change.doc.data))?.delete(change.doc.id);
      else add(index, change.doc);
    });
  }

  async day(accountId: string, queueId: string, day: string): Promise<QueueInterval[]> {
    const docs = await this.#store.account(accountId, INTERVALS_COLLECTION);
    let index = this.#byAccount.get(accountId);
    if (!index) {
      index = new Map();
      for (const doc of docs.all()) add(index, doc);
      this.#byAccount.set(accountId, index);
    }
    const out: QueueInterval[] = [];
    for (const id of index.get(`${queueId} ${day}`) ?? []) {
      const doc = docs.get(id);
      const interval = doc ? intervalOf(doc) : undefined;
      if (interval) out.push(interval);
    }
    return out;
  }
}

function dayKey(data: Record<string, unknown>): string {
  return `${String(data.queue_id)} ${String(data.day)}`;
}

function add(index: Map<string, Set<string>>, doc: StoredDoc): void {
  const key = dayKey(doc.data);
  let ids = index.get(key);
  if (!ids) {
    ids = new Set();
    index.set(key, ids);
  }
  ids.add(doc.id);
}
