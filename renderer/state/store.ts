// The console's one store, built from slice creators; each slice owns its state and actions.
// Dependencies (storage, page origin, the server's APIs, the phone, the clock) come in from outside
// so tests can fake them. To add a slice: its type to AppState, its creator to createAppStore.
import { createStore } from "zustand/vanilla";
import type { CallqApi, CallqApiOptions } from "../api/callq.js";
import type { AdminApi } from "../api/admin.js";
import type { AuthApi } from "../api/client.js";
import type { RecordingsApi } from "../api/recordings.js";
import type { EventStreamOptions } from "../api/events.js";
import type { PlatformApi, PlatformApiOptions } from "../api/platform.js";
import type { CallAlerts, PhoneFactory } from "../phone/phone-line.js";
import { createAgentSlice, type AgentSlice } from "./agent.js";
import { createCallFailuresSlice, type CallFailuresSlice } from "./call-failures.js";
import { systemClock, type Clock } from "../clock.js";
import { createConnectionSlice, type ConnectionSlice, type EventStreamLike } from "./connection.js";
import { createPhoneSlice, type PhoneSlice } from "./phone.js";
import type { FrameScheduler } from "./callq-access.js";
import { createQueuesSlice, type QueuesSlice } from "./queues.js";
import { createRecentCallsSlice, type RecentCallsSlice } from "./recent-calls.js";
import { createSessionSlice, type SessionSlice } from "./session.js";
import { createSettingsSlice, type SettingsSlice } from "./settings.js";
import { createSupervisorSlice, type SupervisorSlice } from "./supervisor.js";
import { createTextingSlice, type TextingSlice } from "./texting.js";
import type { KeyValueStorage } from "./storage.js";
import { createAdminSlice, type AdminSlice } from "./admin.js";
import { createAudioSlice, type AudioHardware, type AudioSlice } from "./audio.js";
import { createRecordingsSlice, type RecordingsSlice } from "./recordings.js";
import { createWallboardsSlice, type WallboardsSlice } from "./wallboards.js";
import type { WallboardsApi } from "../api/wallboards.js";
import { createDirectorySlice, type DirectorySlice } from "./directory.js";
import type { DirectoryApi, DirectoryApiOptions } from "../api/directory.js";
import { createTrainingSlice, type TrainingSlice } from "./training.js";
import type { TrainingApi } from "../api/training.js";
import { createCallerHistorySlice, type CallerHistorySlice } from "./caller-history.js";
import { createCallbacksSlice, type CallbacksSlice } from "./callbacks.js";
import type { CallerHistoryApi, CallerHistoryApiOptions } from "../api/caller-history.js";
import { createQueueHistorySlice, type QueueHistorySlice } from "./queue-history.js";
import type { QueueHistoryApi } from "../api/queue-history.js";
import type { AccountConnection } from "../api/account.js";
import type { CallbacksApi, CallbacksApiOptions } from "../api/callbacks.js";

export type AppState = SettingsSlice & SessionSlice & ConnectionSlice & PhoneSlice & CallFailuresSlice & RecentCallsSlice & AgentSlice & QueuesSlice & SupervisorSlice & TextingSlice & RecordingsSlice & AdminSlice & AudioSlice & WallboardsSlice & DirectorySlice & TrainingSlice & CallerHistorySlice & QueueHistorySlice & CallbacksSlice;

export interface StoreDeps {
  storage: KeyValueStorage;
  pageOrigin: string;
  auth: AuthApi;
  /** Time and timers for every slice; the system clock when absent. */
  clock?: Clock;
  /** Fakes for the recordings, admin and audio slices' server and hardware; the real ones when absent. */
  recordingsApi?: RecordingsApi;
  adminApi?: AdminApi;
  wallboardsApi?: WallboardsApi;
  trainingApi?: TrainingApi;
  audioHardware?: AudioHardware;
  random?: () => number;
  /** The /v2 client for a session; the HTTP one when absent. */
  platform?: (options: PlatformApiOptions) => PlatformApi;
  /** The event websocket; the blackhole client over the page's WebSocket when absent. */
  eventStream?: (options: EventStreamOptions) => EventStreamLike;
  /** The phone line (sip.js in the page); without it the console has no phone. */
  phone?: PhoneFactory;
  /** Ring tone and desktop notification for offered calls. */
  alerts?: CallAlerts;
  /** The call-queue API for a session; the HTTP one when absent. */
  callq?: (options: CallqApiOptions) => CallqApi;
  /** The directory's local additions for a session; the HTTP one when absent. */
  directoryApi?: (options: DirectoryApiOptions) => DirectoryApi;
  /** The caller history for a session; the HTTP one when absent. */
  callerHistoryApi?: (options: CallerHistoryApiOptions) => CallerHistoryApi;
  /** The queues' stored intervals for a session; the HTTP one when absent. */
  queueHistoryApi?: (connection: AccountConnection) => QueueHistoryApi;
  /** Scheduled callbacks for a session; the HTTP one when absent. */
  callbacksApi?: (options: CallbacksApiOptions) => CallbacksApi;
  /** When batched event updates apply: each animation frame when absent. */
  frame?: FrameScheduler;
}

export function createAppStore(options: StoreDeps) {
  const deps = { ...options, clock: options.clock ?? systemClock };
  return createStore<AppState>()((...args) => ({
    ...createSettingsSlice(deps)(...args),
    ...createSessionSlice(deps)(...args),
    ...createRecordingsSlice(deps)(...args),
    ...createAdminSlice(deps)(...args),
    ...createAudioSlice(deps)(...args),
    ...createConnectionSlice(deps)(...args),
    ...createPhoneSlice(deps)(...args),
    ...createCallFailuresSlice(deps)(...args),
    ...createRecentCallsSlice(deps)(...args),
    ...createAgentSlice(deps)(...args),
    ...createQueuesSlice(deps)(...args),
    ...createSupervisorSlice(deps)(...args),
    ...createTextingSlice(deps)(...args),
    ...createWallboardsSlice(deps)(...args),
    ...createDirectorySlice(deps)(...args),
    ...createTrainingSlice(deps)(...args),
    ...createCallerHistorySlice(deps)(...args),
    ...createQueueHistorySlice(deps)(...args),
    ...createCallbacksSlice(deps)(...args),
  }));
}

export type AppStore = ReturnType<typeof createAppStore>;
