// The recipients' figures per local day on the store: one callq_recipient_days document per
// recipient and day (id `<user id>-<YYYYMMDD>`), written as the engine counts, read back at start
// (the day so far) and by the day API for a day the engine no longer holds.
import { COUNTED_STATES, emptyDay, type RecipientDay, type RecipientDayLedger } from "../callq/index.js";
import type { Store, StoredDoc } from "../store/index.js";

export const RECIPIENT_DAYS_COLLECTION = "callq_recipient_days";

export function recipientDayId(recipientId: string, day: string): string {
  return `${recipientId}-${day.replace(/-/g, "")}`;
}

/** A stored day read back, each figure checked (a hand-edited file cannot break the engine). */
export function recipientDayOf(doc: StoredDoc): RecipientDay | undefined {
  const { recipient_id: recipientId, day } = doc.data;
  if (typeof recipientId !== "string" || typeof day !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const figures = emptyDay(recipientId, day);
  const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  figures.calls_handled = n(doc.data.calls_handled);
  figures.handle_ms = n(doc.data.handle_ms);
  figures.offers = n(doc.data.offers);
  figures.missed_offers = n(doc.data.missed_offers);
  const states = record(doc.data.state_ms);
  for (const state of COUNTED_STATES) figures.state_ms[state] = n(states[state]);
  for (const [reason, ms] of Object.entries(record(doc.data.away_ms))) if (n(ms) > 0) figures.away_ms[reason] = n(ms);
  return figures;
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function storeRecipientDays(store: Store): RecipientDayLedger {
  return {
    async load(accountId: string, since: string): Promise<RecipientDay[]> {
      const docs = await store.account(accountId, RECIPIENT_DAYS_COLLECTION);
      const out: RecipientDay[] = [];
      for (const doc of docs.all()) {
        const day = recipientDayOf(doc);
        if (day && day.day >= since) out.push(day);
      }
      return out;
    },
    async save(accountId: string, day: RecipientDay): Promise<void> {
      const docs = await store.account(accountId, RECIPIENT_DAYS_COLLECTION);
      const id = recipientDayId(day.recipient_id, day.day);
      const data = { ...day, state_ms: { ...day.state_ms }, away_ms: { ...day.away_ms } };
      if (docs.has(id)) await docs.update(id, data);
      else await docs.create(data, { id });
    },
  };
}

/** One recipient's stored day; undefined when nothing was counted that day. */
export async function storedRecipientDay(store: Store, accountId: string, recipientId: string, day: string): Promise<RecipientDay | undefined> {
  const doc = (await store.account(accountId, RECIPIENT_DAYS_COLLECTION)).get(recipientDayId(recipientId, day));
  return doc ? recipientDayOf(doc) : undefined;
}
