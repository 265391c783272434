// The queues' figures per 15-minute interval on the store: one collection per account and local
// day (`callq_intervals_<YYYYMMDD>`), holding one document per queue (id `<queue id>-<YYYYMMDD>`)
// with the starts of the intervals counted that day and each figure's values in the same order.
// Written as the engine counts, read back at an account's load (yesterday and today) and by the
// history API (one document). A day's collection holds one small document per queue however long
// the history grows, so neither a start nor a day view reads other days: 90 days of 50 queues
// were 432,000 documents in one collection, whose opening took seconds. Session 9 kept one
// document per interval, every day in one `callq_intervals` collection: an account's first read
// moves those into the day documents.
import { dayBounds, dayOf, emptyFigures, FIGURE_NAMES, timeOf, type IntervalFigures, type IntervalLedger, type QueueInterval } from "../callq/index.js";
import { fromGregorianSeconds, toGregorianSeconds } from "../clock.js";
import type { Store, StoredDoc } from "../store/index.js";

/** Session 9's single collection of every day, read only to move its documents into their days. */
export const LEGACY_INTERVALS_COLLECTION = "callq_intervals";
/** Legacy documents moved at once (their queue-day documents written together, then they are deleted). */
const MOVE_BATCH = 1_000;

/** The collection of the local day `day` (YYYY-MM-DD). */
export function intervalsCollection(day: string): string {
  return `callq_intervals_${compactDay(day)}`;
}

/** The document of a queue's day in that day's collection. */
export function dayDocId(queueId: string, day: string): string {
  return `${queueId}-${compactDay(day)}`;
}

function compactDay(day: string): string {
  return day.replace(/-/g, "");
}

/**
 * A queue's day document with `interval` written into it (added in order of its start, or
 * replacing what was stored for that start); `data` is the document as stored, if any.
 */
export function dayDocWith(data: Record<string, unknown> | undefined, interval: QueueInterval): Record<string, unknown> {
  const stored = data === undefined ? [] : dayColumns(data);
  const starts = stored.map((row) => row.start);
  const columns = FIGURE_NAMES.map((name) => stored.map((row) => row.figures[name]));
  const start = toGregorianSeconds(interval.start);
  let at = starts.indexOf(start);
  if (at < 0) {
    at = starts.findIndex((s) => s > start);
    if (at < 0) at = starts.length;
    starts.splice(at, 0, start);
    for (const column of columns) column.splice(at, 0, 0);
  }
  const out: Record<string, unknown> = { queue_id: interval.queue_id, day: dayOf(interval.start), interval_start: starts };
  FIGURE_NAMES.forEach((name, i) => {
    const column = columns[i] ?? [];
    column[at] = interval[name];
    out[name] = column;
  });
  return out;
}

/**
 * A day document's rows (a start in Gregorian seconds and its figures), each checked: a start
 * that is not a number is dropped with its figures, a figure that is not a count reads as 0 (a
 * hand-edited file cannot break the engine).
 */
function dayColumns(data: Record<string, unknown>): { start: number; figures: IntervalFigures }[] {
  const starts = Array.isArray(data.interval_start) ? data.interval_start : [];
  const columns = FIGURE_NAMES.map((name) => {
    const column = data[name];
    return Array.isArray(column) ? column : [];
  });
  const rows: { start: number; figures: IntervalFigures }[] = [];
  starts.forEach((start: unknown, i) => {
    if (typeof start !== "number" || !Number.isFinite(start)) return;
    const figures = emptyFigures();
    FIGURE_NAMES.forEach((name, f) => {
      const v: unknown = columns[f]?.[i];
      if (typeof v === "number" && Number.isFinite(v) && v >= 0) figures[name] = v;
    });
    rows.push({ start, figures });
  });
  return rows;
}

/** A day document's intervals. */
export function dayIntervalsOf(doc: StoredDoc): QueueInterval[] {
  const queueId = doc.data.queue_id;
  if (typeof queueId !== "string") return [];
  return dayColumns(doc.data).map((row) => ({ queue_id: queueId, start: fromGregorianSeconds(row.start), ...row.figures }));
}

/** Session 9's document of one queue's interval (its own id, its figures as fields). */
export function legacyIntervalDoc(interval: QueueInterval): Record<string, unknown> {
  const figures: Record<string, number> = {};
  for (const name of FIGURE_NAMES) figures[name] = interval[name];
  return { queue_id: interval.queue_id, day: dayOf(interval.start), time: timeOf(interval.start), interval_start: toGregorianSeconds(interval.start), ...figures };
}

export function legacyIntervalId(interval: Pick<QueueInterval, "queue_id" | "start">): string {
  return `${interval.queue_id}-${compactDay(dayOf(interval.start))}T${timeOf(interval.start).replace(":", "")}`;
}

/** A session 9 interval document read back, each figure checked. */
export function legacyIntervalOf(doc: StoredDoc): QueueInterval | undefined {
  const { queue_id: queueId, interval_start: start } = doc.data;
  if (typeof queueId !== "string" || typeof start !== "number" || !Number.isFinite(start)) return undefined;
  const figures = emptyFigures();
  for (const name of FIGURE_NAMES) {
    const v = doc.data[name];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) figures[name] = v;
  }
  return { queue_id: queueId, start: fromGregorianSeconds(start), ...figures };
}

/** Writes `interval` into its queue's day document. */
async function saveInterval(store: Store, accountId: string, interval: QueueInterval): Promise<void> {
  const day = dayOf(interval.start);
  const docs = await store.account(accountId, intervalsCollection(day));
  // Read and written in one turn: two intervals of one queue and day saved at once both land.
  const id = dayDocId(interval.queue_id, day);
  const stored = docs.get(id);
  const data = dayDocWith(stored?.data, interval);
  if (stored) await docs.update(id, data);
  else await docs.create(data, { id });
}

export function storeIntervals(store: Store): IntervalLedger {
  return {
    async load(accountId: string, since: number, until: number): Promise<QueueInterval[]> {
      await movedToDays(store, accountId);
      const out: QueueInterval[] = [];
      for (const day of daysBetween(since, until)) {
        const docs = await store.account(accountId, intervalsCollection(day));
        for (const doc of docs.all()) for (const interval of dayIntervalsOf(doc)) if (interval.start >= since && interval.start <= until) out.push(interval);
      }
      return out;
    },
    save: (accountId, interval) => saveInterval(store, accountId, interval),
  };
}

/** A queue's stored intervals of one day: one document of that day's collection, nothing else read. */
export class IntervalDays {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  async day(accountId: string, queueId: string, day: string): Promise<QueueInterval[]> {
    await movedToDays(this.#store, accountId);
    const doc = (await this.#store.account(accountId, intervalsCollection(day))).get(dayDocId(queueId, day));
    return doc ? dayIntervalsOf(doc).filter((i) => i.queue_id === queueId) : [];
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
    const accounts = byAccount;
    move = moveLegacy(store, accountId);
    accounts.set(accountId, move);
    // A failed move is tried again by the next read.
    move.catch(() => accounts.delete(accountId));
  }
  return move;
}

async function moveLegacy(store: Store, accountId: string): Promise<void> {
  const legacy = await store.account(accountId, LEGACY_INTERVALS_COLLECTION);
  const docs = legacy.all();
  for (let i = 0; i < docs.length; i += MOVE_BATCH) {
    const batch = docs.slice(i, i + MOVE_BATCH);
    // One write per queue and day of the batch, not one per interval.
    const byDayDoc = new Map<string, QueueInterval[]>();
    for (const doc of batch) {
      const interval = legacyIntervalOf(doc);
      if (!interval) continue;
      const key = `${interval.queue_id} ${dayOf(interval.start)}`;
      byDayDoc.set(key, [...(byDayDoc.get(key) ?? []), interval]);
    }
    await Promise.all([...byDayDoc.values()].map((intervals) => moveIntoDay(store, accountId, intervals)));
    await Promise.all(batch.map((doc) => legacy.delete(doc.id)));
  }
}

/** Writes one queue's intervals of one day into its day document, keeping any start it has already (a move cut short: that copy is the newer). */
async function moveIntoDay(store: Store, accountId: string, intervals: readonly QueueInterval[]): Promise<void> {
  const first = intervals[0];
  if (first === undefined) return;
  const day = dayOf(first.start);
  const docs = await store.account(accountId, intervalsCollection(day));
  const id = dayDocId(first.queue_id, day);
  const stored = docs.get(id);
  const has = new Set(stored === undefined ? [] : dayColumns(stored.data).map((row) => row.start));
  const [head, ...rest] = intervals.filter((interval) => !has.has(toGregorianSeconds(interval.start)));
  if (head === undefined) return;
  let data = dayDocWith(stored?.data, head);
  for (const interval of rest) data = dayDocWith(data, interval);
  if (stored) await docs.update(id, data);
  else await docs.create(data, { id });
}
