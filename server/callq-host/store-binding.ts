// The queue engine on the store: its directory (each account's callq_queues and users), its
// ledger (callq_recipient_states) and the store's change feed turned into the engine's
// applyQueue/removeQueue/applyUser/removeUser. The engine itself never sees a document.
import type { CallqAccount, CallqDirectory, CallqEngine, CallqUser, RecipientLedger, SavedRecipient } from "../callq/index.js";
import { queueConfigOf } from "../callq/index.js";
import type { Store, StoreChange, StoredDoc } from "../store/index.js";

/** Where recipients' login, availability and stats are kept across restarts (ids = user ids). */
export const RECIPIENT_STATES_COLLECTION = "callq_recipient_states";

/**
 * Who is a recipient, the one rule for the API, the engine and the callflow modules: an enabled
 * user with `callq.enabled`. A disabled user is no recipient: not listed, not addable to a queue,
 * no status, offered nothing, until enabled again.
 */
export function isRecipientUser(user: StoredDoc | undefined): user is StoredDoc {
  const callq = user?.data.callq;
  return user !== undefined && typeof callq === "object" && callq !== null && (callq as Record<string, unknown>).enabled === true && user.data.enabled !== false;
}

/** A user document as the engine knows the user. */
export function callqUserOf(user: StoredDoc): CallqUser {
  return { id: user.id, recipient: isRecipientUser(user), name: displayName(user) };
}

/** The name users see: first and last name, else the username. */
function displayName(user: StoredDoc): string {
  const text = (v: unknown): string => (typeof v === "string" ? v.trim() : "");
  const full = [text(user.data.first_name), text(user.data.last_name)].filter((p) => p !== "").join(" ");
  return full !== "" ? full : text(user.data.username);
}

export function storeDirectory(store: Store): CallqDirectory {
  return {
    async load(accountId: string): Promise<CallqAccount> {
      const [queues, users] = await Promise.all([store.account(accountId, "callq_queues"), store.account(accountId, "users")]);
      return { queues: queues.all().map((doc) => queueConfigOf(doc.id, doc.data)), users: users.all().map(callqUserOf) };
    },
  };
}

export function storeLedger(store: Store): RecipientLedger {
  return {
    async load(accountId: string): Promise<ReadonlyMap<string, SavedRecipient>> {
      const saved = await store.account(accountId, RECIPIENT_STATES_COLLECTION);
      return new Map(saved.all().map((doc) => [doc.id, savedOf(doc.data)]));
    },
    async save(accountId: string, recipientId: string, state: SavedRecipient): Promise<void> {
      const saved = await store.account(accountId, RECIPIENT_STATES_COLLECTION);
      const data = { ...state };
      if (saved.has(recipientId)) await saved.update(recipientId, data);
      else await saved.create(data, { id: recipientId });
    },
  };
}

/** Tells the engine of every change to queues and users; the returned function stops. */
export function followStore(store: Store, engine: CallqEngine): () => void {
  return store.onChange((change: StoreChange) => {
    const { accountId, doc } = change;
    if (!accountId) return;
    if (change.collection === "callq_queues") {
      if (change.kind === "deleted") engine.removeQueue(accountId, doc.id);
      else engine.applyQueue(accountId, queueConfigOf(doc.id, doc.data));
    } else if (change.collection === "users") {
      if (change.kind === "deleted") engine.removeUser(accountId, doc.id);
      else engine.applyUser(accountId, callqUserOf(doc));
    }
  });
}

/** A stored recipient state read back, each field checked (a hand-edited file cannot break the engine). */
function savedOf(data: Record<string, unknown>): SavedRecipient {
  const state = data.state === "Ready" || data.state === "Away" ? data.state : "Not-Logged-In";
  const qa = typeof data.queue_availability === "object" && data.queue_availability !== null ? (data.queue_availability as Record<string, unknown>) : {};
  const stats = typeof data.stats === "object" && data.stats !== null ? (data.stats as Record<string, unknown>) : {};
  const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    state,
    pending_away: data.pending_away === true,
    ...(typeof data.away_reason === "string" && data.away_reason !== "" ? { away_reason: data.away_reason, missed_offers: typeof data.missed_offers === "number" ? data.missed_offers : 0 } : {}),
    ...(typeof data.away_since === "number" && Number.isFinite(data.away_since) ? { away_since: data.away_since } : {}),
    ...(data.pending_away === true && typeof data.pending_away_reason === "string" && data.pending_away_reason !== "" ? { pending_away_reason: data.pending_away_reason } : {}),
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
