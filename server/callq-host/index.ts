// The queue engine's host: the engine started on the store (its accounts loaded, their changes
// followed, recipient states kept), and the call-side adapters that act for it: the callflow
// modules (modules/), the caller's channel as a QueuedCall (queued-call.ts), supervision
// (monitor.ts) and device presence (presence.ts).
import { CallqEngine, type CallqEngineOptions } from "../callq/index.js";
import type { Store } from "../store/index.js";
import { storeIntervals } from "./intervals.js";
import { storeRecipientDays } from "./recipient-days.js";
import { followStore, storeDirectory, storeLedger } from "./store-binding.js";

export interface CallqHostOptions extends Omit<CallqEngineOptions, "directory" | "ledger" | "intervals" | "days"> {
  store: Store;
}

export interface CallqHost {
  engine: CallqEngine;
  /** Stops following the store, then closes the engine (its timers; its ledger written). */
  close(): Promise<void>;
}

/** Starts the engine on the store: every account loaded, queue and user changes followed. */
export async function startCallqHost(options: CallqHostOptions): Promise<CallqHost> {
  const { store, ...engineOptions } = options;
  const engine = new CallqEngine({ random: store.random, ...engineOptions, directory: storeDirectory(store), ledger: storeLedger(store), intervals: storeIntervals(store), days: storeRecipientDays(store) });
  // Followed before the accounts load: a change made meanwhile reaches the account once loaded.
  const unfollow = followStore(store, engine);
  const accounts = await store.global("accounts");
  for (const account of accounts.all()) await engine.ensureStarted(account.id);
  return {
    engine,
    async close() {
      unfollow();
      await engine.close();
    },
  };
}

export { callqUserOf, isRecipientUser, RECIPIENT_STATES_COLLECTION } from "./store-binding.js";
export { IntervalDays, intervalsCollection, LEGACY_INTERVALS_COLLECTION } from "./intervals.js";
export { RECIPIENT_DAYS_COLLECTION, storedRecipientDay } from "./recipient-days.js";
