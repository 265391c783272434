// The account calls of the signed-in session, as the admin and recordings slices and views make them.
import type { AccountConnection } from "../api/account.js";
import type { AppState } from "./store.js";

/** The account calls of the signed-in session; null when signed out. */
export function connectionOf(state: Pick<AppState, "session" | "serverUrl">): AccountConnection | null {
  const session = state.session;
  if (session === null) return null;
  return { serverUrl: state.serverUrl, token: session.token, accountId: session.accountId };
}
