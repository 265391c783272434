// The connection slice: everything the console keeps open while signed in. After sign-in it reads
// the user's profile, opens the event websocket (resuming with `since` after a drop or a new token)
// and starts the phone; it tells the agent when the server is out of reach. Other slices and views
// hear the account's events through onPlatformEvent.
import type { StateCreator } from "zustand/vanilla";
import { errorMessage } from "../api/error-text.js";
import type { EventStreamOptions, EventStreamStatus, PlatformEvent } from "../api/events.js";
import { EventStream } from "../api/events.js";
import { createPlatformApi, type PlatformApi, type PlatformApiOptions, type UserProfile } from "../api/platform.js";
import type { Clock } from "../clock.js";
import type { AppState } from "./store.js";

/**
 * What the console listens to: calls, document changes, registrations, the queue engine and
 * texting, for the signed-in account only (the server enforces that).
 */
export const EVENT_BINDINGS = ["call.*.*", "object.*.*", "notification.*.*", "callq.#", "texting.#", "directory.user.*"] as const;

export interface EventStreamLike {
  readonly lastSeq: number | null;
  start(): void;
  stop(): void;
  reconnectNow(): void;
}

export interface ConnectionState {
  /** `idle` before sign-in and after sign-out. */
  events: EventStreamStatus | "idle";
  /** When the next attempt to reach the event websocket is due (clock ms), while offline. */
  eventsRetryAt: number | null;
  eventsError: string | null;
  /** Why the profile could not be read; null when it was. */
  profileError: string | null;
}

export interface ConnectionSlice {
  profile: UserProfile | null;
  connection: ConnectionState;
  /** After sign-in: profile, events, phone, recent calls. After a re-sign-in as the same user, only the events resume. */
  connect(): Promise<void>;
  /** Sign-out: closes everything the session opened. */
  disconnect(): Promise<void>;
  /** The token expired: events stop (they need a token); the phone stays registered. */
  suspendConnection(): void;
  /** Tries the event websocket and the phone again now, not after the back-off. */
  reconnectNow(): void;
  onPlatformEvent(listener: (event: PlatformEvent) => void): () => void;
  /** The /v2 client for the signed-in session; null when signed out. */
  platformApi(): PlatformApi | null;
}

export interface ConnectionDeps {
  clock: Clock;
  random?: () => number;
  platform?: (options: PlatformApiOptions) => PlatformApi;
  eventStream?: (options: EventStreamOptions) => EventStreamLike;
}

const IDLE: ConnectionState = { events: "idle", eventsRetryAt: null, eventsError: null, profileError: null };

export function createConnectionSlice(deps: ConnectionDeps): StateCreator<AppState, [], [], ConnectionSlice> {
  const listeners = new Set<(event: PlatformEvent) => void>();
  const makePlatform = deps.platform ?? createPlatformApi;
  const makeStream = deps.eventStream ?? ((options: EventStreamOptions) => new EventStream(options));
  let stream: EventStreamLike | null = null;
  /** `account/owner` the profile, phone and events belong to. */
  let connectedAs: string | null = null;
  let api: { token: string; client: PlatformApi } | null = null;
  /** Where a resumed stream continues from, kept across a token's expiry. */
  let resumeFrom: number | null = null;

  return (set, get) => {
    function openEvents(): void {
      const session = get().session;
      if (session === null) return;
      stream?.stop();
      const mine = makeStream({
        url: get().endpoints.events,
        token: session.token,
        accountId: session.accountId,
        bindings: EVENT_BINDINGS,
        clock: deps.clock,
        random: deps.random,
        since: resumeFrom,
        onEvent: (event) => {
          for (const listener of listeners) listener(event);
        },
        onStatus: (status, detail) => {
          if (stream !== mine) return;
          set((state) => ({
            connection: {
              ...state.connection,
              events: status,
              eventsRetryAt: detail.retryInMs === undefined ? null : deps.clock.now() + detail.retryInMs,
              eventsError: status === "online" ? null : (detail.error ?? state.connection.eventsError),
            },
          }));
        },
        onUnauthorized: () => get().expireSession(),
      });
      stream = mine;
      mine.start();
    }

    function closeEvents(): void {
      if (stream !== null) resumeFrom = stream.lastSeq ?? resumeFrom;
      stream?.stop();
      stream = null;
    }

    return {
      profile: null,
      connection: IDLE,

      async connect() {
        const session = get().session;
        if (session === null) return;
        const who = `${session.accountId}/${session.ownerId}`;
        if (connectedAs === who) {
          // Back from an expired token: same user, so the phone and the view carry on.
          if (stream === null) openEvents();
          return;
        }
        if (connectedAs !== null) await get().disconnect();
        connectedAs = who;
        resumeFrom = null;
        openEvents();
        try {
          const profile = await get().platformApi()?.user(session.ownerId);
          if (connectedAs !== who || profile === undefined) return;
          set((state) => ({ profile, connection: { ...state.connection, profileError: null } }));
        } catch (error) {
          if (connectedAs !== who) return;
          set((state) => ({ connection: { ...state.connection, profileError: errorMessage(error) } }));
        }
        await Promise.all([get().startPhone(), get().loadRecentCalls(), get().loadColleagues(), get().loadCallbacks()]);
      },

      async disconnect() {
        connectedAs = null;
        resumeFrom = null;
        closeEvents();
        api = null;
        set({ profile: null, connection: IDLE });
        get().clearRecentCalls();
        get().clearColleagues();
        await get().stopPhone();
      },

      suspendConnection() {
        closeEvents();
        api = null;
        set((state) => ({ connection: { ...state.connection, events: "idle", eventsRetryAt: null } }));
      },

      reconnectNow() {
        stream?.reconnectNow();
        get().retryRegistration();
      },

      onPlatformEvent(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },

      platformApi() {
        const session = get().session;
        if (session === null) return null;
        if (api === null || api.token !== session.token) {
          api = { token: session.token, client: makePlatform({ baseUrl: get().endpoints.api, token: session.token, accountId: session.accountId }) };
        }
        return api.client;
      },
    };
  };
}
