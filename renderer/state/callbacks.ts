// The scheduled-callbacks slice: the callbacks the agent may see (read after sign-in and after
// each change), scheduling one from a caller's history, cancelling, and the reminders: a
// callq.callback.<id> event for the agent shows a notice until they call or dismiss it.
import type { StateCreator } from "zustand/vanilla";
import { createCallbacksApi, scheduledCallbackOf, type CallbacksApi, type CallbacksApiOptions, type ScheduledCallback } from "../api/callbacks.js";
import { errorMessage } from "../api/error-text.js";
import type { PlatformEvent } from "../api/events.js";
import { readOrder } from "./read-order.js";
import type { AppState } from "./store.js";

export interface CallbacksState {
  list: ScheduledCallback[];
  /** Reminders the agent has not yet acted on, oldest first. */
  reminders: ScheduledCallback[];
  /** Per reminder, why its "Call now" placed no call (the reminder stays). */
  reminderErrors: Record<string, string>;
  error: string | null;
}

export interface CallbacksSlice {
  callbacks: CallbacksState;
  loadCallbacks(): Promise<void>;
  /** Schedules a callback; answers the refusal in words, or null once scheduled. */
  scheduleCallback(number: string, remindAt: number, note: string): Promise<string | null>;
  cancelCallback(id: string): Promise<void>;
  /** Calls the reminder's number and takes its notice down; a call not placed leaves it up, saying why. Resolves whether it was placed. */
  callBackNow(id: string): Promise<boolean>;
  dismissReminder(id: string): void;
}

export interface CallbacksDeps {
  callbacksApi?: (options: CallbacksApiOptions) => CallbacksApi;
}

const EMPTY: CallbacksState = { list: [], reminders: [], reminderErrors: {}, error: null };

export function createCallbacksSlice(deps: CallbacksDeps): StateCreator<AppState, [], [], CallbacksSlice> {
  const makeApi = deps.callbacksApi ?? createCallbacksApi;
  let api: { token: string; client: CallbacksApi } | null = null;
  let watching: (() => void) | null = null;
  /**
   * The list's reads and the rows' changes in order: an older answer never lands on a newer list,
   * and a row a reminder changed after a read was asked keeps the reminder's state on its answer.
   */
  const order = readOrder();
  /** Reminders whose "Call now" is placing its call. */
  const calling = new Set<string>();

  return (set, get) => {
    const patch = (next: Partial<CallbacksState>) => set((state) => ({ callbacks: { ...state.callbacks, ...next } }));
    const client = (): CallbacksApi | null => {
      const session = get().session;
      if (session === null) return null;
      if (api === null || api.token !== session.token) {
        api = { token: session.token, client: makeApi({ baseUrl: get().endpoints.api, token: session.token, accountId: session.accountId }) };
        // A new session: nothing of the last one's is shown.
        order.reset();
        set({ callbacks: EMPTY });
      }
      return api.client;
    };

    const onEvent = (event: PlatformEvent): void => {
      if (!event.routingKey.startsWith("callq.callback.") || event.name !== "reminder") return;
      const reminded = scheduledCallbackOf(event.data);
      if (reminded.userId !== get().session?.ownerId) return;
      const { reminders, list } = get().callbacks;
      order.changed(reminded.id);
      const listed = list.some((c) => c.id === reminded.id);
      patch({
        reminders: reminders.some((r) => r.id === reminded.id) ? reminders : [...reminders, reminded],
        // A callback made after the list was read (by a supervisor, a script, another console of
        // theirs) is shown in its place, soonest first as the server lists them; the list is read
        // again, as after a create, so that a read already on its way does not leave it out.
        list: listed ? list.map((c) => (c.id === reminded.id ? reminded : c)) : [...list, reminded].sort((a, b) => a.remindAt - b.remindAt),
      });
      if (!listed) void get().loadCallbacks();
    };

    return {
      callbacks: EMPTY,

      async loadCallbacks() {
        const callbacks = client();
        if (callbacks === null) return;
        watching ??= get().onPlatformEvent(onEvent);
        const mine = order.ask();
        try {
          const list = await callbacks.list();
          if (order.land(mine)) patch({ list: order.rows(mine, list, get().callbacks.list, (c) => c.id), error: null });
        } catch (error) {
          if (order.current(mine)) patch({ error: `Cannot read the scheduled callbacks: ${errorMessage(error)}` });
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
        // A second press while its call is being placed places no second call.
        if (reminder === undefined || calling.has(id)) return false;
        calling.add(id);
        const { [id]: _, ...others } = get().callbacks.reminderErrors;
        patch({ reminderErrors: others });
        const notPlaced = await get()
          .dial(reminder.number)
          .finally(() => calling.delete(id));
        // No call placed (no phone line yet, or the call refused): the reminder stays, saying why.
        if (notPlaced !== null) {
          if (get().callbacks.reminders.some((r) => r.id === id)) patch({ reminderErrors: { ...get().callbacks.reminderErrors, [id]: notPlaced } });
          return false;
        }
        get().dismissReminder(id);
        return true;
      },

      dismissReminder(id) {
        const { [id]: _, ...others } = get().callbacks.reminderErrors;
        patch({ reminders: get().callbacks.reminders.filter((r) => r.id !== id), reminderErrors: others });
      },
    };
  };
}
