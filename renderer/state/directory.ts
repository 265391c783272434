// The directory slice: the account's users with their live presence (read once after sign-in,
// then kept by the directory.user.<id> events), the search over them, the quick connects, the
// agent's own do not disturb and auto-answer, and their missed direct calls (read after sign-in
// and on each missed_call notification for them, so the count survives a reload).
import type { StateCreator } from "zustand/vanilla";
import { createDirectoryApi, colleagueOf, type Colleague, type DirectoryApi, type DirectoryApiOptions, type MissedCall, type Preferences, type QuickConnect } from "../api/directory.js";
import { errorMessage } from "../api/error-text.js";
import type { PlatformEvent } from "../api/events.js";
import { frameBatcher, frameScheduler, type CallqDeps } from "./callq-access.js";
import { readOrder } from "./read-order.js";
import type { AppState } from "./store.js";

export interface DirectoryState {
  colleagues: Colleague[];
  query: string;
  quickConnects: QuickConnect[];
  /** Null until read. */
  preferences: Preferences | null;
  missed: MissedCall[];
  loading: boolean;
  error: string | null;
}

export interface DirectorySlice {
  directory: DirectoryState;
  loadColleagues(): Promise<void>;
  setDirectoryQuery(query: string): void;
  setDoNotDisturb(enabled: boolean): Promise<void>;
  setAutoAnswer(enabled: boolean, delayS: number): Promise<void>;
  /** The agent looked at the list: the count goes back to 0 here and on the server. */
  markMissedSeen(): Promise<void>;
  clearColleagues(): void;
}

export interface DirectoryDeps extends Pick<CallqDeps, "clock" | "frame"> {
  directoryApi?: (options: DirectoryApiOptions) => DirectoryApi;
}

const MISSED = "missed";
const PREFERENCES = "preferences";

const EMPTY: DirectoryState = { colleagues: [], query: "", quickConnects: [], preferences: null, missed: [], loading: false, error: null };

/** The missed calls not yet seen: the count on the navigation and in the window title. */
export function unseenMissed(directory: DirectoryState): number {
  return directory.missed.filter((m) => !m.seen).length;
}

/** The colleagues whose name, username or extension holds the query (any case). */
export function searchColleagues(directory: DirectoryState): Colleague[] {
  const q = directory.query.trim().toLowerCase();
  if (q === "") return directory.colleagues;
  return directory.colleagues.filter((c) => c.name.toLowerCase().includes(q) || c.username.toLowerCase().includes(q) || c.extensions.some((e) => e.includes(q)));
}

export function createDirectorySlice(deps: DirectoryDeps): StateCreator<AppState, [], [], DirectorySlice> {
  const makeApi = deps.directoryApi ?? createDirectoryApi;
  let api: { token: string; client: DirectoryApi } | null = null;
  let watching: (() => void) | null = null;
  /**
   * The reads and changes in order (reset by sign-out), per what they show: the directory as a
   * whole, each colleague (a presence event is a change of them: on a slow link a read's answer
   * landed after the events and put the colleagues' older presence back), "missed" (a read of the
   * missed calls, the sign-in read's among them, and marking them seen) and "preferences" (the
   * sign-in read's, and each change of do not disturb or auto-answer: on a slow link the sign-in
   * read's older preferences landed after a change).
   */
  const order = readOrder();
  /** Bumped by each change of the preferences: only the newest change's answer lands. */
  let writes = 0;

  return (set, get) => {
    const patch = (next: Partial<DirectoryState>) => set((state) => ({ directory: { ...state.directory, ...next } }));
    /** A change of the preferences the server took: its answer is them now; a read asked before it is older. */
    const tookPreferences = (preferences: Preferences): void => {
      order.changed(PREFERENCES);
      patch({ preferences, error: null });
    };
    const client = (): DirectoryApi | null => {
      const session = get().session;
      if (session === null) return null;
      if (api === null || api.token !== session.token) {
        api = { token: session.token, client: makeApi({ baseUrl: get().endpoints.api, token: session.token, accountId: session.accountId }) };
      }
      return api.client;
    };

    const readMissed = async (): Promise<void> => {
      const session = get().session;
      const directory = client();
      if (session === null || directory === null) return;
      const mine = order.ask();
      try {
        const missed = await directory.missedCalls(session.ownerId);
        if (order.land(mine, MISSED)) patch({ missed });
      } catch {
        // The count only helps; the list says so when it is opened and cannot be read.
      }
    };

    // Presence changes land once a frame, together: a floor of 500 agents changing state 200 times
    // a second must not change the store (and run every view's selectors) 200 times.
    const presence = frameBatcher<Colleague>(frameScheduler(deps), (entries) => {
      const changed = new Map(entries.map((entry) => [entry.id, entry]));
      const known = get().directory.colleagues;
      const colleagues = known.map((c) => changed.get(c.id) ?? c);
      const seen = new Set(known.map((c) => c.id));
      for (const entry of changed.values()) if (!seen.has(entry.id)) colleagues.push(entry);
      patch({ colleagues });
    });

    const onEvent = (event: PlatformEvent): void => {
      if (event.routingKey.startsWith("directory.user.")) {
        const entry = colleagueOf(event.data);
        order.changed(entry.id);
        presence.push(entry);
      } else if (event.routingKey.startsWith("notification.missed_call.") && event.data["owner_id"] === get().session?.ownerId) {
        // The server keeps it once the notification is out; read the list a moment after.
        void readMissed();
      }
    };

    return {
      directory: EMPTY,

      async loadColleagues() {
        const session = get().session;
        const directory = client();
        if (session === null || directory === null) return;
        watching ??= get().onPlatformEvent(onEvent);
        const mine = order.ask();
        patch({ loading: true, error: null });
        try {
          const [read, quickConnects, preferences, missed] = await Promise.all([
            directory.colleagues(),
            directory.quickConnects(),
            directory.preferences(session.ownerId),
            directory.missedCalls(session.ownerId),
          ]);
          if (!order.land(mine)) return;
          const shown = get().directory;
          // Presence heard since the read was asked stands on its answer (a batch not yet shown
          // lands on it in the next frame).
          const colleagues = order.rows(mine, read, shown.colleagues, (c) => c.id);
          patch({
            colleagues,
            quickConnects,
            preferences: order.land(mine, PREFERENCES) ? preferences : shown.preferences,
            missed: order.land(mine, MISSED) ? missed : shown.missed,
            loading: false,
          });
        } catch (error) {
          if (order.current(mine)) patch({ loading: false, error: `Cannot read the directory: ${errorMessage(error)}` });
        }
      },

      setDirectoryQuery(query) {
        patch({ query });
      },

      async setDoNotDisturb(enabled) {
        const session = get().session;
        const directory = client();
        if (session === null || directory === null) return;
        const before = get().directory.preferences;
        // Shown at once, put back if the server refuses.
        if (before !== null) patch({ preferences: { ...before, doNotDisturb: enabled } });
        order.changed(PREFERENCES);
        const mine = ++writes;
        try {
          const preferences = await directory.setPreferences(session.ownerId, { doNotDisturb: enabled });
          if (mine === writes) tookPreferences(preferences);
        } catch (error) {
          if (mine === writes) patch({ preferences: before, error: `Do not disturb was not changed: ${errorMessage(error)}` });
        }
      },

      async setAutoAnswer(enabled, delayS) {
        const session = get().session;
        const directory = client();
        if (session === null || directory === null) return;
        const before = get().directory.preferences;
        if (before !== null) patch({ preferences: { ...before, autoAnswer: { enabled, delayS } } });
        order.changed(PREFERENCES);
        const mine = ++writes;
        try {
          const preferences = await directory.setPreferences(session.ownerId, { autoAnswer: { enabled, delayS } });
          if (mine === writes) tookPreferences(preferences);
        } catch (error) {
          if (mine === writes) patch({ preferences: before, error: `Auto-answer was not changed: ${errorMessage(error)}` });
        }
      },

      async markMissedSeen() {
        const session = get().session;
        const directory = client();
        if (session === null || directory === null || unseenMissed(get().directory) === 0) return;
        patch({ missed: get().directory.missed.map((m) => ({ ...m, seen: true })) });
        // A read asked before this does not put the count back.
        const marked = order.changed(MISSED);
        try {
          await directory.markMissedSeen(session.ownerId);
          // A read asked while the mark was on its way may have reached the server before it (a
          // slow link): its answer is dropped, and the list read again.
          order.changed(MISSED);
          if (order.askedSince(marked)) void readMissed();
        } catch (error) {
          patch({ error: `The missed calls were not marked seen: ${errorMessage(error)}` });
        }
      },

      clearColleagues() {
        order.reset();
        presence.cancel();
        watching?.();
        watching = null;
        api = null;
        set({ directory: EMPTY });
      },
    };
  };
}
