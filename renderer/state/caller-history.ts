// The caller history the call card shows (screen pop), by number: read when a call rings or is
// answered, kept while the session lasts (a new session starts empty: another agent's screen pops
// are not theirs to see), at most a few numbers.
import type { StateCreator } from "zustand";
import { createCallerHistoryApi, type CallerHistory, type CallerHistoryApi, type CallerHistoryApiOptions } from "../api/caller-history.js";
import { apiErrorText } from "../api/error-text.js";
import type { AppState } from "./store.js";

export interface CallerHistoryEntry {
  loading: boolean;
  history: CallerHistory | null;
  error: string | null;
}

export interface CallerHistorySlice {
  /** By the number as the call shows it. */
  callerHistory: Readonly<Record<string, CallerHistoryEntry>>;
  /** Reads the number's history (again, if read already); the queue picks its CRM link. */
  loadCallerHistory(number: string, queueId?: string): Promise<void>;
}

export interface CallerHistoryDeps {
  callerHistoryApi?: (options: CallerHistoryApiOptions) => CallerHistoryApi;
}

/** Numbers kept: the calls a console has at once, and a few just ended. */
const KEPT = 8;

export function createCallerHistorySlice(deps: CallerHistoryDeps): StateCreator<AppState, [], [], CallerHistorySlice> {
  const makeApi = deps.callerHistoryApi ?? createCallerHistoryApi;
  let api: { token: string; client: CallerHistoryApi } | null = null;

  return (set, get) => {
    const put = (number: string, entry: CallerHistoryEntry) =>
      set((state) => {
        const others = Object.entries(state.callerHistory).filter(([n]) => n !== number);
        return { callerHistory: Object.fromEntries([...others.slice(-(KEPT - 1)), [number, entry]]) };
      });

    return {
      callerHistory: {},

      async loadCallerHistory(number, queueId) {
        const session = get().session;
        if (session === null || number === "") return;
        if (api === null || api.token !== session.token) {
          api = { token: session.token, client: makeApi({ baseUrl: get().endpoints.api, token: session.token, accountId: session.accountId }) };
          set({ callerHistory: {} });
        }
        const client = api.client;
        const known = get().callerHistory[number];
        put(number, { loading: true, history: known?.history ?? null, error: null });
        try {
          const history = await client.history(number, queueId);
          if (api?.client === client) put(number, { loading: false, history, error: null });
        } catch (error) {
          if (api?.client === client) put(number, { loading: false, history: known?.history ?? null, error: apiErrorText(error) });
        }
      },
    };
  };
}
