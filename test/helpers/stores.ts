// Stores opened by a test file, closed when it is done. A test that simulates a crash opens the
// same data directory again without closing the first store; that store's journal file stays open
// until it is closed here (left to the garbage collector, Node closes it with a warning, and says
// a later version will throw).
import { Store, type StoreOptions } from "../../server/store/index.js";

const opened: Store[] = [];

/** Store.open, remembered for closeOpenedStores. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const store = await Store.open(options);
  opened.push(store);
  return store;
}

/** Close every store openStore gave, newest first; call it before the data directories are removed. */
export async function closeOpenedStores(): Promise<void> {
  for (const store of opened.splice(0).reverse()) await store.close().catch(() => undefined);
}
