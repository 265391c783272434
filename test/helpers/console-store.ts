// The console's whole store for slice tests: fake storage, an auth API that grants at once, a
// manual clock and whatever fake server APIs the test hands in; `signIn()` gives it a session.
import type { AuthApi } from "../../renderer/api/client.js";
import { memoryStorage, type KeyValueStorage } from "../../renderer/state/storage.js";
import { createAppStore, type StoreDeps } from "../../renderer/state/store.js";
import { manualClock, type ManualClock } from "./manual-clock.js";

export const TEST_ORIGIN = "http://127.0.0.1:8000";
export const ACCOUNT_ID = "a".repeat(32);
export const OWNER_ID = "b".repeat(32);

const grantingAuth: AuthApi = {
  signIn: async (_serverUrl, credentials) => ({ token: `token-${credentials.username}`, accountId: ACCOUNT_ID, ownerId: OWNER_ID, accountName: "demo" }),
  signOut: async () => undefined,
};

export function consoleStore(deps: Partial<StoreDeps> = {}) {
  const clock: ManualClock = manualClock();
  const storage: KeyValueStorage = deps.storage ?? memoryStorage();
  const store = createAppStore({ storage, pageOrigin: TEST_ORIGIN, auth: grantingAuth, clock, ...deps });
  async function signIn(username = "admin"): Promise<void> {
    const ok = await store.getState().signIn({ accountName: "demo", username, password: "pw" }, { remember: false });
    if (!ok) throw new Error("the fake sign-in failed");
  }
  return { store, clock, storage, signIn };
}

/** A promise the test settles by hand, to hold an API answer back. */
export function deferred<T>() {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
