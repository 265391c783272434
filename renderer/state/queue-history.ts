// The supervisor's History panel: one queue's (or every queue's, summed) figures per 15-minute
// interval of one local day, as the server stored them while they happened. Read when the panel
// opens and each time the queue or day changes; the latest choice's answer wins. The figures say
// whose they are (`shown`): while a new choice is read, the previous one's stay, under its own name.
import type { StateCreator } from "zustand/vanilla";
import { ApiRequestError } from "../api/client.js";
import { apiErrorText } from "../api/error-text.js";
import { createQueueHistoryApi, sumIntervals, type HistoryInterval, type QueueHistoryApi } from "../api/queue-history.js";
import type { AccountConnection } from "../api/account.js";
import type { Clock } from "../clock.js";
import { connectionOf } from "./account-connection.js";
import { onConnectionChange } from "./connection-watch.js";
import { readOrder } from "./read-order.js";
import type { AppState } from "./store.js";

/** The queue choice that sums every queue of the account. */
export const ALL_QUEUES = "all";

export interface QueueHistoryState {
  /** The choice asked last (what the controls show): a queue id, or ALL_QUEUES. */
  queueId: string;
  /** The choice asked last: a local day, YYYY-MM-DD. */
  day: string;
  /** The choice asked last is being read. */
  loading: boolean;
  /**
   * The intervals last read, of the choice `shown` (not necessarily the one asked last: while a
   * newer choice is read they are the previous one's); null before an answer and after a failure.
   */
  intervals: HistoryInterval[] | null;
  /** The queue and day `intervals` are of; null with them. */
  shown: HistoryChoice | null;
  /** Why the choice asked last could not be read. */
  error: string | null;
}

/** A queue (or ALL_QUEUES) and a local day. */
export interface HistoryChoice {
  queueId: string;
  day: string;
}

export interface QueueHistorySlice {
  queueHistory: QueueHistoryState;
  /** Shows `queueId`'s (or every queue's) day `day`: today's local day when absent. */
  showQueueHistory(queueId: string, day?: string): Promise<void>;
}

export interface QueueHistoryDeps {
  clock: Clock;
  queueHistoryApi?: (connection: AccountConnection) => QueueHistoryApi;
}

/** The local date of `t` (epoch ms), YYYY-MM-DD: the server's own day key. */
export function localDay(t: number): string {
  const d = new Date(t);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/** The local day `days` after `day` (before, when negative). */
export function shiftDay(day: string, days: number): string {
  const [year, month, date] = day.split("-").map(Number);
  return localDay(new Date(year ?? 1970, (month ?? 1) - 1, (date ?? 1) + days).getTime());
}

/** A refusal in the panel's words: the API decides who reads which queue. */
export function historyErrorText(error: unknown): string {
  if (error instanceof ApiRequestError && error.status === 403) return "You may not read this history: queue figures are for account admins and supervisors (call_monitor).";
  return `The history cannot be read: ${apiErrorText(error)}`;
}

export function createQueueHistorySlice(deps: QueueHistoryDeps): StateCreator<AppState, [], [], QueueHistorySlice> {
  const makeApi = deps.queueHistoryApi ?? createQueueHistoryApi;
  return (set, get, store) => {
    const initial = (): QueueHistoryState => ({ queueId: ALL_QUEUES, day: localDay(deps.clock.now()), loading: false, intervals: null, shown: null, error: null });
    // Each choice's read in order (state/read-order): only the latest choice's answer lands, and
    // none asked before a sign-out (the panel starts empty for whoever signs in next).
    const order = readOrder();
    onConnectionChange(store, {
      online: () => undefined,
      signedOut: () => {
        order.reset();
        set({ queueHistory: initial() });
      },
    });

    /**
     * Every queue of the account, for the sum: the queues slice's list, waited for while a read of
     * it is on its way (or read here, once, when none is). On a slow link the board opened before
     * the first read answered, and the sum over no queue showed the day as empty (no request made,
     * nothing read again once the list came). Null when the list cannot be read.
     */
    async function everyQueue(): Promise<string[] | null> {
      let readHere = false;
      for (;;) {
        const { queues, session } = get();
        if (queues.loadedAt !== null || queues.list.length > 0) return queues.list.map((q) => q.id);
        if (session === null) return null;
        if (queues.loading) {
          // A newer read may take over from the one waited for (the event websocket back online):
          // wait until none is on its way.
          await new Promise<void>((resolve) => {
            const stop = store.subscribe((state) => {
              if (state.queues.loading && state.session !== null) return;
              stop();
              resolve();
            });
          });
        } else if (readHere) {
          return null;
        } else {
          readHere = true;
          await get().loadQueueDirectory();
        }
      }
    }

    return {
      queueHistory: initial(),

      async showQueueHistory(queueId, day) {
        const connection = connectionOf(get());
        if (connection === null) return;
        const chosen = day ?? localDay(deps.clock.now());
        const mine = order.ask();
        set((s) => ({ queueHistory: { ...s.queueHistory, queueId, day: chosen, loading: true, error: null } }));
        const api = makeApi(connection);
        try {
          const ids = queueId === ALL_QUEUES ? await everyQueue() : [queueId];
          if (ids === null) {
            if (order.latest(mine)) set((s) => ({ queueHistory: { ...s.queueHistory, loading: false, intervals: null, shown: null, error: "The history cannot be read: the account's queues could not be read." } }));
            return;
          }
          const days = await Promise.all(ids.map((id) => api.day(id, chosen)));
          if (order.latest(mine)) set((s) => ({ queueHistory: { ...s.queueHistory, loading: false, intervals: sumIntervals(days), shown: { queueId, day: chosen } } }));
        } catch (error) {
          if (order.latest(mine)) set((s) => ({ queueHistory: { ...s.queueHistory, loading: false, intervals: null, shown: null, error: historyErrorText(error) } }));
        }
      },
    };
  };
}
