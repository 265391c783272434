// The directory slice: the account's users with their live presence (read once after sign-in,
// then kept by the directory.user.<id> events), the search over them, the quick connects, the
// agent's own do not disturb and auto-answer, and their missed direct calls (read after sign-in
// and on each missed_call notification for them, so the count survives a reload).
import type { StateCreator } from "zustand/vanilla";
import { createDirectoryApi, colleagueOf, type Colleague, type DirectoryApi, type DirectoryApiOptions, type MissedCall, type Preferences, type QuickConnect } from "../api/directory.js";
import { errorMessage } from "../api/error-text.js";
import type { PlatformEvent } from "../api/events.js";
import { frameBatcher, frameScheduler, type CallqDeps } from "./callq-access.js";
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
  /** Bumped by sign-out and each read, so an old answer never lands on a newer state. */
  let generation = 0;
  /** Bumped by each change of the preferences: only the newest change's answer lands. */
  let writes = 0;
  /**
   * Presence heard since the newest read of the colleagues was asked, by user: newer than that
   * read's answer, so it stands on it (on a slow link the answer landed after the events and put
   * the colleagues' older presence back).
   */
  let heard: Map<string, Colleague> | null = null;

  return (set, get) => {
    const patch = (next: Partial<DirectoryState>) => set((state) => ({ directory: { ...state.directory, ...next } }));
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
      const mine = generation;
      try {
        const missed = await directory.missedCalls(session.ownerId);
        if (mine === generation) patch({ missed });
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
        heard?.set(entry.id, entry);
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
        const mine = ++generation;
        const since = new Map<string, Colleague>();
        heard = since;
        patch({ loading: true, error: null });
        try {
          const [read, quickConnects, preferences, missed] = await Promise.all([
            directory.colleagues(),
            directory.quickConnects(),
            directory.preferences(session.ownerId),
            directory.missedCalls(session.ownerId),
          ]);
          if (mine !== generation) return;
          const colleagues = read.map((c) => since.get(c.id) ?? c);
          heard = null;
          patch({ colleagues, quickConnects, preferences, missed, loading: false });
        } catch (error) {
          if (mine === generation) patch({ loading: false, error: `Cannot read the directory: ${errorMessage(error)}` });
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
        const mine = ++writes;
        try {
          const preferences = await directory.setPreferences(session.ownerId, { doNotDisturb: enabled });
          if (mine === writes) patch({ preferences, error: null });
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
        const mine = ++writes;
        try {
          const preferences = await directory.setPreferences(session.ownerId, { autoAnswer: { enabled, delayS } });
          if (mine === writes) patch({ preferences, error: null });
        } catch (error) {
          if (mine === writes) patch({ preferences: before, error: `Auto-answer was not changed: ${errorMessage(error)}` });
        }
      },

      async markMissedSeen() {
        const session = get().session;
        const directory = client();
        if (session === null || directory === null || unseenMissed(get().directory) === 0) return;
        patch({ missed: get().directory.missed.map((m) => ({ ...m, seen: true })) });
        try {
          await directory.markMissedSeen(session.ownerId);
        } catch (error) {
          patch({ error: `The missed calls were not marked seen: ${errorMessage(error)}` });
        }
      },

      clearColleagues() {
        generation++;
        heard = null;
        presence.cancel();
        watching?.();
        watching = null;
        api = null;
        set({ directory: EMPTY });
      },
    };
  };
}
