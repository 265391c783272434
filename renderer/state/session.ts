// The session slice: who is signed in (account, user, token, ids), the sign-in attempt in flight
// and its error, the account name and username remembered on this computer between visits, and
// the session that expired (its token refused) until its user signs in again.
import type { StateCreator } from "zustand/vanilla";
import type { AuthApi, Credentials } from "../api/client.js";
import { signInErrorText } from "../api/error-text.js";
import type { AppState } from "./store.js";
import { readStored, writeStored, type KeyValueStorage } from "./storage.js";

export interface SignedInSession {
  accountName: string;
  username: string;
  token: string;
  accountId: string;
  ownerId: string;
}

export interface RememberedLogin {
  accountName: string;
  username: string;
}

export interface SessionSlice {
  session: SignedInSession | null;
  signingIn: boolean;
  /** Why the last sign-in failed, in words for the agent; null when it did not. */
  signInError: string | null;
  remembered: RememberedLogin | null;
  /** The session whose token the server stopped accepting; the sign-in view offers to resume it. */
  expiredSession: SignedInSession | null;
  /** Resolves true when signed in. `remember` keeps (or forgets) the account and username. */
  signIn(credentials: Credentials, options: { remember: boolean }): Promise<boolean>;
  signOut(): void;
  /** The server answered 401 to the session's token: back to sign-in, keeping everything else. */
  expireSession(): void;
}

export interface SessionDeps {
  storage: KeyValueStorage;
  auth: AuthApi;
}

const REMEMBERED_KEY = "switchboard.remembered";

export function createSessionSlice(deps: SessionDeps): StateCreator<AppState, [], [], SessionSlice> {
  // Bumped by every sign-in and sign-out, so an answer that arrives after the agent gave up
  // (signed out, or tried again) cannot sign them in behind their back.
  let attempt = 0;

  return (set, get) => ({
    session: null,
    signingIn: false,
    signInError: null,
    remembered: parseRemembered(readStored(deps.storage, REMEMBERED_KEY)),
    expiredSession: null,

    async signIn(credentials, options) {
      const accountName = credentials.accountName.trim();
      const username = credentials.username.trim();
      if (accountName === "" || username === "" || credentials.password === "") {
        set({ signInError: "Enter the account name, username and password." });
        return false;
      }
      const mine = ++attempt;
      const serverUrl = get().serverUrl;
      set({ signingIn: true, signInError: null });
      try {
        const grant = await deps.auth.signIn(serverUrl, { accountName, username, password: credentials.password });
        if (mine !== attempt) return false;
        const remembered = options.remember ? { accountName, username } : null;
        writeStored(deps.storage, REMEMBERED_KEY, remembered);
        set({
          session: { accountName: grant.accountName, username, token: grant.token, accountId: grant.accountId, ownerId: grant.ownerId },
          signingIn: false,
          remembered,
          expiredSession: null,
        });
        return true;
      } catch (error) {
        if (mine === attempt) set({ signingIn: false, signInError: signInErrorText(error, serverUrl) });
        return false;
      }
    },

    signOut() {
      attempt++;
      const session = get().session;
      set({ session: null, signingIn: false, signInError: null, expiredSession: null });
      // Revoking is a courtesy to the server; the console is signed out whatever it answers.
      if (session !== null) deps.auth.signOut(get().serverUrl, session.token).catch(() => undefined);
      void get().disconnect();
    },

    expireSession() {
      const session = get().session;
      if (session === null) return;
      attempt++;
      set({ session: null, signingIn: false, signInError: null, expiredSession: session });
      get().suspendConnection();
    },
  });
}

function parseRemembered(value: unknown): RememberedLogin | null {
  if (typeof value !== "object" || value === null) return null;
  const accountName: unknown = Reflect.get(value, "accountName");
  const username: unknown = Reflect.get(value, "username");
  return typeof accountName === "string" && typeof username === "string" ? { accountName, username } : null;
}
