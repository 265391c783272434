// The recordings slice: one page of the account's call recordings under the agent's filters (date,
// caller, queue), paging forward and back by start keys, and deleting a recording; and which calls
// are being recorded now (the server's RECORD_START / RECORD_STOP call events), for the call card.
import type { StateCreator } from "zustand/vanilla";
import type { AccountConnection } from "../api/account.js";
import { apiErrorText } from "../api/error-text.js";
import { httpRecordingsApi, type Recording, type RecordingsApi } from "../api/recordings.js";
import { connectionOf } from "./account-connection.js";
import type { Clock } from "../clock.js";
import type { AppState } from "./store.js";
import { toGregorianSeconds } from "../api/gregorian.js";
import { readOrder } from "./read-order.js";

export interface RecordingFilters {
  /** Local calendar dates, YYYY-MM-DD, inclusive; "" for no bound. */
  from: string;
  to: string;
  /** A caller-id number, matched exactly as the API filters do. */
  caller: string;
  /** A queue id, or "" for every queue. */
  queueId: string;
}

export const NO_RECORDING_FILTERS: RecordingFilters = { from: "", to: "", caller: "", queueId: "" };

export interface RecordingsState {
  rows: Recording[];
  filters: RecordingFilters;
  /** Start keys of the pages walked to reach this one; the last is this page's (undefined: the first). */
  pageKeys: (string | undefined)[];
  nextStartKey: string | null;
  loading: boolean;
  /** Why the list could not be read, or why the filters were refused; null when fine. */
  error: string | null;
  /** The recording being deleted now, if any. */
  deleting: string | null;
  /** A one-line outcome for the agent ("Recording deleted."), announced politely. */
  notice: string | null;
}

export interface QueueChoice {
  id: string;
  name: string;
}

export interface RecordingsSlice {
  recordings: RecordingsState;
  /** Call ids (channel uuids, the SIP Call-IDs) whose call the server is recording now. */
  recordingCalls: readonly string[];
  /** The queues to filter by; null until read, or when the server has no queues API. */
  recordingQueues: QueueChoice[] | null;
  loadRecordingQueues(): Promise<void>;
  /** Reads the current page again (or the first, after a filter change). */
  loadRecordings(): Promise<void>;
  /** Applies new filters from the first page; refused filters leave the list as it was. */
  applyRecordingFilters(filters: RecordingFilters): Promise<boolean>;
  /** Sets the dates of `filters` (the ones in force when absent) to `days` ending today, and applies them. */
  showRecentRecordings(days: number, filters?: RecordingFilters): Promise<boolean>;
  nextRecordingsPage(): Promise<void>;
  previousRecordingsPage(): Promise<void>;
  /** Resolves true once the server deleted it; the row leaves the list at once. */
  deleteRecording(id: string): Promise<boolean>;
}

export interface RecordingsDeps {
  recordingsApi?: RecordingsApi;
  clock: Clock;
  /** Rows per page; 25 by default. */
  recordingsPageSize?: number;
}


/** Local midnight of a YYYY-MM-DD date, as Unix ms; null when the text is not a real date. */
function localMidnight(date: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const at = new Date(year, month - 1, day);
  // new Date rolls 2024-02-31 over into March: such a date was not a real one.
  if (at.getFullYear() !== year || at.getMonth() !== month - 1 || at.getDate() !== day) return null;
  return at.getTime();
}

/** A local date as YYYY-MM-DD. */
export function localDate(ms: number): string {
  const at = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}

/** The position of each recording in its interaction, among the rows shown; only for interactions of more than one row. */
export function interactionParts(rows: readonly Recording[]): Map<string, { part: number; of: number }> {
  const groups = new Map<string, Recording[]>();
  for (const row of rows) {
    if (row.interaction_id === undefined) continue;
    groups.set(row.interaction_id, [...(groups.get(row.interaction_id) ?? []), row]);
  }
  const parts = new Map<string, { part: number; of: number }>();
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const oldestFirst = [...group].sort((a, b) => (a.start ?? 0) - (b.start ?? 0));
    oldestFirst.forEach((row, index) => parts.set(row.id, { part: index + 1, of: group.length }));
  }
  return parts;
}

/**
 * The query-string filters for the recordings list, or the reason the agent's filters cannot be
 * sent. Dates bound the document's creation (the end of the call) from the first second of `from`
 * to the last second of `to`, in local time.
 */
export function recordingQuery(filters: RecordingFilters): { params: Record<string, string> } | { error: string } {
  const params: Record<string, string> = {};
  let from: number | null = null;
  let to: number | null = null;
  if (filters.from !== "") {
    from = localMidnight(filters.from);
    if (from === null) return { error: "The start date is not a date." };
    params.created_from = String(toGregorianSeconds(from));
  }
  if (filters.to !== "") {
    const midnight = localMidnight(filters.to);
    if (midnight === null) return { error: "The end date is not a date." };
    const at = new Date(midnight);
    // The next local midnight, not +24 h: a day with a clock change is 23 or 25 hours long.
    to = new Date(at.getFullYear(), at.getMonth(), at.getDate() + 1).getTime() - 1000;
    params.created_to = String(toGregorianSeconds(to));
  }
  if (from !== null && to !== null && from > to) return { error: "The start date is after the end date." };
  const caller = filters.caller.trim();
  if (caller !== "") params.filter_caller_id_number = caller;
  if (filters.queueId !== "") params.filter_queue_id = filters.queueId;
  return { params };
}

export function createRecordingsSlice(deps: RecordingsDeps): StateCreator<AppState, [], [], RecordingsSlice> {
  const api = deps.recordingsApi ?? httpRecordingsApi;
  const pageSize = deps.recordingsPageSize ?? 25;
  // Only the newest read's answer lands (a slow first page must not overwrite the page the agent
  // moved on to), and a recording deleted after a read was asked stays gone on its answer (on a
  // slow link the row came back).
  const order = readOrder();

  let watching: (() => void) | null = null;

  return (set, get, store) => {
    const patch = (changes: Partial<RecordingsState>) => set((state) => ({ recordings: { ...state.recordings, ...changes } }));

    // From the first sign-in on, for good: a call's recording starts as it is answered, before its
    // card could ask. A stopped or ended call leaves the list; signing out empties it.
    store.subscribe((state) => {
      if (state.session === null) {
        if (state.recordingCalls.length > 0) set({ recordingCalls: [] });
        return;
      }
      watching ??= state.onPlatformEvent((event) => {
        const callId = event.data.call_id;
        if (typeof callId !== "string") return;
        const recorded = get().recordingCalls;
        if (event.name === "RECORD_START" && !recorded.includes(callId)) set({ recordingCalls: [...recorded, callId] });
        else if ((event.name === "RECORD_STOP" || event.name === "CHANNEL_DESTROY") && recorded.includes(callId)) {
          set({ recordingCalls: recorded.filter((id) => id !== callId) });
        }
      });
    });

    async function load(filters: RecordingFilters, pageKeys: (string | undefined)[]): Promise<boolean> {
      const connection = connectionOf(get());
      if (connection === null) return false;
      const query = recordingQuery(filters);
      if ("error" in query) {
        patch({ error: query.error });
        return false;
      }
      const mine = order.ask();
      patch({ loading: true, error: null, filters, notice: null });
      try {
        const startKey = pageKeys.at(-1);
        const page = await api.list(connection, { pageSize, filters: query.params, ...(startKey === undefined ? {} : { startKey }) });
        if (!order.latest(mine) || !order.land(mine)) return false;
        patch({ rows: order.rows(mine, page.rows, get().recordings.rows, (row) => row.id), nextStartKey: page.nextStartKey, pageKeys, loading: false });
        return true;
      } catch (error) {
        if (order.latest(mine)) patch({ loading: false, error: `The recordings could not be read: ${apiErrorText(error)}` });
        return false;
      }
    }

    return {
      recordings: {
        rows: [],
        filters: NO_RECORDING_FILTERS,
        pageKeys: [undefined],
        nextStartKey: null,
        loading: false,
        error: null,
        deleting: null,
        notice: null,
      },
      recordingCalls: [],

      async loadRecordings() {
        const { filters, pageKeys } = get().recordings;
        await load(filters, pageKeys);
      },

      recordingQueues: null,

      async loadRecordingQueues() {
        const connection = connectionOf(get());
        if (connection === null) return;
        try {
          const rows = await api.queues(connection);
          const queues = rows.map((row) => ({ id: row.id, name: row.name ?? row.id })).sort((a, b) => a.name.localeCompare(b.name));
          set({ recordingQueues: queues });
        } catch {
          // Without a queues API (or the right to read it) the filter is simply not offered.
          set({ recordingQueues: null });
        }
      },

      applyRecordingFilters: (filters) => load(filters, [undefined]),

      showRecentRecordings(days, filters = get().recordings.filters) {
        const now = deps.clock.now();
        const today = new Date(now);
        const first = new Date(today.getFullYear(), today.getMonth(), today.getDate() - (Math.max(1, days) - 1)).getTime();
        return load({ ...filters, from: localDate(first), to: localDate(now) }, [undefined]);
      },

      async nextRecordingsPage() {
        const { filters, pageKeys, nextStartKey, loading } = get().recordings;
        if (nextStartKey === null || loading) return;
        await load(filters, [...pageKeys, nextStartKey]);
      },

      async previousRecordingsPage() {
        const { filters, pageKeys, loading } = get().recordings;
        if (pageKeys.length < 2 || loading) return;
        await load(filters, pageKeys.slice(0, -1));
      },

      async deleteRecording(id) {
        const connection: AccountConnection | null = connectionOf(get());
        if (connection === null || get().recordings.deleting !== null) return false;
        patch({ deleting: id, error: null, notice: null });
        try {
          await api.remove(connection, id);
          order.removed(id);
          set((state) => ({
            recordings: {
              ...state.recordings,
              rows: state.recordings.rows.filter((row) => row.id !== id),
              deleting: null,
              notice: "Recording deleted.",
            },
          }));
          return true;
        } catch (error) {
          patch({ deleting: null, error: `The recording was not deleted: ${apiErrorText(error)}` });
          return false;
        }
      },
    };
  };
}
