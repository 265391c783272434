// The scheduled-callbacks slice: the callbacks the agent may see (read after sign-in and after
// each change), scheduling one from a caller's history, cancelling, and the reminders: a
// callq.callback.<id> event for the agent shows a notice until they call or dismiss it.
import type { StateCreator } from "zustand/vanilla";
import { createCallbacksApi, scheduledCallbackOf, type CallbacksApi, type CallbacksApiOptions, type ScheduledCallback } from "../api/callbacks.js";
import { errorMessage } from "../api/error-text.js";
import type { PlatformEvent } from "../api/events.js";
import type { AppState } from "./store.js";

export interface CallbacksState {
  list: ScheduledCallback[];
  /** Reminders the agent has not yet acted on, oldest first. */
  reminders: ScheduledCallback[];
  error: string | null;
}

export interface CallbacksSlice {
  callbacks: CallbacksState;
  loadCallbacks(): Promise<void>;
  /** Schedules a callback; answers the refusal in words, or null once scheduled. */
  scheduleCallback(number: string, remindAt: number, note: string): Promise<string | null>;
  cancelCallback(id: string): Promise<void>;
  /** Calls the reminder's number and takes its notice down. */
  callBackNow(id: string): Promise<void>;
  dismissReminder(id: string): void;
}

export interface CallbacksDeps {
  callbacksApi?: (options: CallbacksApiOptions) => CallbacksApi;
}

const EMPTY: CallbacksState = { list: [], reminders: [], error: null };

export function createCallbacksSlice(deps: CallbacksDeps): StateCreator<AppState, [], [], CallbacksSlice> {
  const makeApi = deps.callbacksApi ?? createCallbacksApi;
  let api: { token: string; client: CallbacksApi } | null = null;
  let watching: (() => void) | null = null;
  /** Bumped by each read, so an older answer never lands on a newer list. */
  let reads = 0;

  return (set, get) => {
    const patch = (next: Partial<CallbacksState>) => set((state) => ({ callbacks: { ...state.callbacks, ...next } }));
    const client = (): CallbacksApi | null => {
      const session = get().session;
      if (session === null) return null;
      if (api === null || api.token !== session.token) {
        api = { token: session.token, client: makeApi({ baseUrl: get().endpoints.api, token: session.token, accountId: session.accountId }) };
        // A new session: nothing of the last one's is shown.
        reads += 1;
        set({ callbacks: EMPTY });
      }
      return api.client;
    };

    const onEvent = (event: PlatformEvent): void => {
      if (!event.routingKey.startsWith("callq.callback.") || event.name !== "reminder") return;
      const reminded = scheduledCallbackOf(event.data);
      if (reminded.userId !== get().session?.ownerId) return;
      const { reminders, list } = get().callbacks;
      patch({
        reminders: reminders.some((r) => r.id === reminded.id) ? reminders : [...reminders, reminded],
        list: list.map((c) => (c.id === reminded.id ? reminded : c)),
      });
    };

    return {
      callbacks: EMPTY,

      async loadCallbacks() {
        const callbacks = client();
        if (callbacks === null) return;
        watching ??= get().onPlatformEvent(onEvent);
        const mine = ++reads;
        try {
          const list = await callbacks.list();
          if (mine === reads) patch({ list, error: null });
        } catch (error) {
          if (mine === reads) patch({ error: `Cannot read the scheduled callbacks: ${errorMessage(error)}` });
        }
      },

      async scheduleCallback(number, remindAt, note) {
        const callbacks = client();
        if (callbacks === null) return "Not signed in.";
        try {
          await callbacks.schedule({ number, remindAt, note });
        } catch (error) {
          return errorMessage(error);
        }
        await get().loadCallbacks();
        return null;
      },

      async cancelCallback(id) {
        const callbacks = client();
        if (callbacks === null) return;
        try {
          await callbacks.cancel(id);
          patch({ reminders: get().callbacks.reminders.filter((r) => r.id !== id) });
        } catch (error) {
          patch({ error: `The callback was not cancelled: ${errorMessage(error)}` });
        }
        await get().loadCallbacks();
      },

      async callBackNow(id) {
        const reminder = get().callbacks.reminders.find((r) => r.id === id) ?? get().callbacks.list.find((c) => c.id === id);
        if (reminder === undefined) return;
        get().dismissReminder(id);
        await get().dial(reminder.number);
      },

      dismissReminder(id) {
        patch({ reminders: get().callbacks.reminders.filter((r) => r.id !== id) });
      },
    };
  };
}
