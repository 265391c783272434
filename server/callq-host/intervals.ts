// The queues' figures per 15-minute interval on the store: one collection per account and local
// day (`callq_intervals_<YYYYMMDD>`), one document per queue and interval in it (id
// `<queue id>-<YYYYMMDD>T<HHMM>` of the local start), written as the engine counts, read back at
// an account's load (yesterday and today) and by the history API (a day's documents, by id). A
// day's collection holds at most queues x 100 documents however long the history grows, so
// neither a start nor a day view reads the other days (90 days of 50 queues is 432,000
// documents; in one collection, opening it took seconds). Session 9 kept every day in one
// `callq_intervals` collection: an account's first read moves those documents into their days.
import { dayBounds, dayIntervals, FIGURE_NAMES, dayOf, emptyFigures, timeOf, type IntervalLedger, type QueueInterval } from "../callq/index.js";
import { fromGregorianSeconds, toGregorianSeconds } from "../clock.js";
import type { Store, StoredDoc } from "../store/index.js";

/** Session 9's single collection of every day, read only to move its documents into their days. */
export const LEGACY_INTERVALS_COLLECTION = "callq_intervals";
/** Legacy documents moved at once (each a journal write in its day and one in the old collection). */
const MOVE_BATCH = 1_000;

/** The collection of the local day `day` (YYYY-MM-DD). */
export function intervalsCollection(day: string): string {
  return `callq_intervals_${day.replace(/-/g, "")}`;
}

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
    async load(accountId: string, since: number, until: number): Promise<QueueInterval[]> {
      await movedToDays(store, accountId);
      const out: QueueInterval[] = [];
      for (const day of daysBetween(since, until)) {
        const docs = await store.account(accountId, intervalsCollection(day));
        for (const doc of docs.all()) {
          const interval = intervalOf(doc);
          if (interval && interval.start >= since && interval.start <= until) out.push(interval);
        }
      }
      return out;
    },
    async save(accountId: string, interval: QueueInterval): Promise<void> {
      const docs = await store.account(accountId, intervalsCollection(dayOf(interval.start)));
      const id = intervalId(interval);
      const data = intervalDoc(interval);
      if (docs.has(id)) await docs.update(id, data);
      else await docs.create(data, { id });
    },
  };
}

/**
 * A queue's stored intervals of one day: that day's collection, its documents found by the ids
 * the day's interval starts give (no index to build, nothing else read).
 */
export class IntervalDays {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  async day(accountId: string, queueId: string, day: string): Promise<QueueInterval[]> {
    await movedToDays(this.#store, accountId);
    const docs = await this.#store.account(accountId, intervalsCollection(day));
    const out: QueueInterval[] = [];
    for (const start of dayIntervals(day)) {
      const doc = docs.get(intervalId({ queue_id: queueId, start }));
      const interval = doc ? intervalOf(doc) : undefined;
      // An hour repeated when the clocks go back shares its ids: the document holds the later one.
      if (interval && interval.queue_id === queueId && interval.start === start) out.push(interval);
    }
    return out;
  }
}

/** The local days from `since`'s to `until`'s, in order. */
function daysBetween(since: number, until: number): string[] {
  const out: string[] = [];
  let day = dayOf(since);
  for (;;) {
    out.push(day);
    const end = dayBounds(day)?.end;
    if (end === undefined || end > until) return out;
    day = dayOf(end);
  }
}

/** Per store and account, the move of the legacy collection's documents into their days (once a run). */
const moves = new WeakMap<Store, Map<string, Promise<void>>>();

function movedToDays(store: Store, accountId: string): Promise<void> {
  let byAccount = moves.get(store);
  if (!byAccount) {
    byAccount = new Map();
    moves.set(store, byAccount);
  }
  let move = byAccount.get(accountId);
  if (!move) {
    move = moveLegacy(store, accountId);
    byAccount.set(accountId, move);
    // A failed move is tried again by the next read.
    move.catch(() => byAccount.delete(accountId));
  }
  return move;
}

async function moveLegacy(store: Store, accountId: string): Promise<void> {
  const legacy = await store.account(accountId, LEGACY_INTERVALS_COLLECTION);
  const docs = legacy.all();
  for (let i = 0; i < docs.length; i += MOVE_BATCH) {
    await Promise.all(
      docs.slice(i, i + MOVE_BATCH).map(async (doc) => {
        const interval = intervalOf(doc);
        if (interval) {
          const day = await store.account(accountId, intervalsCollection(dayOf(interval.start)));
          // Written in its day already (a move cut short): the day's copy is the newer.
          if (!day.has(doc.id)) await day.create(doc.data, { id: doc.id });
        }
        await legacy.delete(doc.id);
      }),
    );
  }
}
