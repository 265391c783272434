// The recent-calls slice: the signed-in user's newest call records (CDRs), newest first, read
// after sign-in and again whenever the server writes a new record (an object event) or a call on
// this console ends, at most once per short interval.
import type { StateCreator } from "zustand/vanilla";
import { errorMessage } from "../api/error-text.js";
import type { CallRecord } from "../api/platform.js";
import type { Clock } from "../clock.js";
import type { AppState } from "./store.js";

export const RECENT_CALLS_COUNT = 20;
/** A burst of CDRs (one per leg of a call) or a call's end and its record, read once. */
const REFRESH_DELAY_MS = 400;

export interface RecentCallsState {
  rows: CallRecord[];
  loading: boolean;
  error: string | null;
  /** Clock ms of the last successful read; null before the first. */
  loadedAt: number | null;
}

export interface RecentCallsSlice {
  recentCalls: RecentCallsState;
  loadRecentCalls(): Promise<void>;
  /** Reads the list again shortly (coalescing several asks into one read). */
  refreshRecentCallsSoon(): void;
  /** Sign-out: forgets the list. */
  clearRecentCalls(): void;
}

export function createRecentCallsSlice(deps: { clock: Clock }): StateCreator<AppState, [], [], RecentCallsSlice> {
  let cancelRefresh: (() => void) | null = null;
  let watching: (() => void) | null = null;
  let reads = 0;

  const EMPTY: RecentCallsState = { rows: [], loading: false, error: null, loadedAt: null };

  return (set, get) => ({
    recentCalls: EMPTY,

    async loadRecentCalls() {
      const session = get().session;
      const api = get().platformApi();
      if (session === null || api === null) return;
      // New CDRs are announced on the event websocket: listen from the first read on.
      watching ??= get().onPlatformEvent((event) => {
        if (event.routingKey === "object.doc_created.cdr") get().refreshRecentCallsSoon();
      });
      const mine = ++reads;
      set((state) => ({ recentCalls: { ...state.recentCalls, loading: true } }));
      try {
        const rows = await api.recentCalls(session.ownerId, RECENT_CALLS_COUNT);
        if (mine === reads) set({ recentCalls: { rows, loading: false, error: null, loadedAt: deps.clock.now() } });
      } catch (error) {
        if (mine === reads) {
          set((state) => ({
            recentCalls: { ...state.recentCalls, loading: false, error: `Cannot read your recent calls: ${errorMessage(error)}` },
          }));
        }
      }
    },

    refreshRecentCallsSoon() {
      if (cancelRefresh !== null || get().session === null) return;
      cancelRefresh = deps.clock.after(REFRESH_DELAY_MS, () => {
        cancelRefresh = null;
        void get().loadRecentCalls();
      });
    },

    clearRecentCalls() {
      reads++;
      cancelRefresh?.();
      cancelRefresh = null;
      set({ recentCalls: EMPTY });
    },
  });
}
