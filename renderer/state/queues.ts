// The queues slice: the account's call queues and their members (read after sign-in and again when
// a queue document changes), and, while a view watches them, each queue's live status and callers.
// Callers follow the callq.queue.* and callq.session.* events, applied once per animation frame
// however many arrive; counts and the day's stats are read again (coalesced) after events touch
// a queue, and every half minute. Waits count in the account's queue time, which a paused training
// run holds (the statuses' queue_clock and the callq.clock events say so).
import type { StateCreator } from "zustand/vanilla";
import { callqEventKind, queueClockOf, sessionOf, type QueueEntry, type QueueSession, type QueueStatus } from "../api/callq.js";
import type { QueueTime } from "./queue-time.js";
import { errorMessage } from "../api/error-text.js";
import type { PlatformEvent } from "../api/events.js";
import { callqAccess, frameBatcher, frameScheduler, touchedReads, type CallqDeps } from "./callq-access.js";
import { onConnectionChange } from "./connection-watch.js";
import { readOrder } from "./read-order.js";
import type { AppState } from "./store.js";
import { readStored, writeStored, type KeyValueStorage } from "./storage.js";

/** After events touch a queue, its status is read again this much later (one read for a burst). */
export const QUEUE_RECONCILE_MS = 500;
/** Averages and estimates move with time alone: read every watched queue this often. */
export const QUEUE_REFRESH_MS = 30_000;
/** The day's chart has one point per this many minutes. */
export const DAY_BUCKET_MINUTES = 5;
const BUCKETS_PER_DAY = (24 * 60) / DAY_BUCKET_MINUTES;

export interface QueueLive {
  status: QueueStatus | null;
  /** Callers in the queue (waiting, being offered, or answered and not yet gone), oldest first. */
  sessions: QueueSession[];
}

/**
 * The day of one queue as this console saw it: per bucket of DAY_BUCKET_MINUTES, the most callers
 * waiting at once and the day's session total at the bucket's first and last sample; null where it
 * was not watching.
 */
export interface QueueDay {
  /** Local date, YYYY-MM-DD. */
  date: string;
  waiting: (number | null)[];
  total: (number | null)[];
  /** The total when the bucket was first sampled: the base of a bucket with no sample before it. */
  start: (number | null)[];
}

export interface QueuesState {
  list: QueueEntry[];
  /** Queue id to member user ids. */
  members: Record<string, string[]>;
  /** Live status and callers per queue id, while watched. */
  live: Record<string, QueueLive>;
  day: Record<string, QueueDay>;
  loading: boolean;
  error: string | null;
  /** Clock ms the directory (list and members) was read; null before. */
  loadedAt: number | null;
  /** The account's queue time; null until a status or event told it (the server's time then). */
  queueTime: QueueTime | null;
}

export interface QueuesSlice {
  queues: QueuesState;
  /** Reads the queues and their members. */
  loadQueueDirectory(): Promise<void>;
  /** Keeps every queue's status and callers live until the answer is called (views call it on mount). */
  watchQueues(): () => void;
  /** Reads every queue's status and callers now. */
  refreshQueues(): Promise<void>;
}

const EMPTY: QueuesState = { list: [], members: {}, live: {}, day: {}, loading: false, error: null, loadedAt: null, queueTime: null };

/** Events that end a caller's time in a queue. */
const GONE = new Set(["leave", "end", "abandoned", "timeout", "removed"]);

export function createQueuesSlice(deps: CallqDeps): StateCreator<AppState, [], [], QueuesSlice> {
  const callqOf = callqAccess(deps);
  return (set, get, store) => {
    let watchers = 0;
    let listening: (() => void) | null = null;
    let cancelRefresh: (() => void) | null = null;
    /** The queue list's reads: only the newest read's answer lands. */
    const directoryOrder = readOrder();
    /**
     * The live reads in order (state/read-order), per queue: its status (a read lands for a queue
     * unless a newer one of that queue already did: one count for all queues dropped a whole
     * board's read when a read of one queue started after it answered first, and the other queues
     * kept their old figures until the next refresh, half a minute on; on a slow link coming back
     * to the board did that), and its callers (`sessions:<id>`: each caller's event is a change,
     * so a list read before it is stale).
     */
    const liveOrder = readOrder();
    const sessionsKey = (queueId: string) => `sessions:${queueId}`;
    /** Bumped by each callq.clock event: a status read before the latest one tells an older queue time. */
    let clockEvents = 0;

    /**
     * Queues whose callers changed by events since their lists were last read: only those lists
     * are read again (a recipient's change moves a queue's counts, not its callers; at 200 of them
     * a second, reading every member queue's list was 100 requests a second for nothing).
     */
    const sessionsTouched = new Set<string>();
    const batch = frameBatcher<PlatformEvent>(frameScheduler(deps), (events) => applyEvents(events));
    const reconcile = touchedReads(deps.clock, QUEUE_RECONCILE_MS, (ids) => {
      if (watchers > 0) void readLive(ids);
    });

    function applyEvents(events: PlatformEvent[]): void {
      const state = get().queues;
      let live = state.live;
      const touched = new Set<string>();
      for (const event of events) {
        const kind = callqEventKind(event);
        if (kind === null) continue;
        if (kind.kind === "recipient") {
          // Availability counts move: the queues this recipient is a member of are read again.
          for (const [queueId, members] of Object.entries(state.members)) if (members.includes(kind.id)) touched.add(queueId);
          continue;
        }
        const row = sessionOf(event.data, kind.kind === "queue" ? kind.id : "");
        if (row.queueId === "" || row.sessionId === "") continue;
        touched.add(row.queueId);
        sessionsTouched.add(row.queueId);
        liveOrder.changed(sessionsKey(row.queueId));
        const current = live[row.queueId] ?? { status: null, sessions: [] };
        const others = current.sessions.filter((s) => s.sessionId !== row.sessionId);
        const sessions = GONE.has(event.name) ? others : [...others, row].sort((a, b) => a.enteredAt - b.enteredAt);
        live = { ...live, [row.queueId]: { ...current, sessions } };
      }
      if (live !== state.live) set((s) => ({ queues: { ...s.queues, live, day: sampleDay(s.queues.day, live, deps.clock.now()) } }));
      for (const id of touched) reconcile.touch(id);
    }

    async function readLive(ids: readonly string[] | undefined): Promise<void> {
      const api = callqOf(get());
      if (api === null) return;
      const mine = liveOrder.ask();
      const queueIds = ids ?? get().queues.list.map((q) => q.id);
      const listIds = ids === undefined ? queueIds : queueIds.filter((id) => sessionsTouched.has(id));
      for (const id of listIds) sessionsTouched.delete(id);
      const clockSeen = clockEvents;
      try {
        const [statuses, lists] = await Promise.all([api.queueStatuses(ids), Promise.all(listIds.map((id) => api.queueSessions(id).then((rows) => [id, rows] as const)))]);
        const dayBefore = get().queues.day;
        set((s) => {
          const live = { ...s.queues.live };
          for (const [id, status] of Object.entries(statuses)) {
            const current = live[id] ?? { status: null, sessions: [] };
            const newest = liveOrder.land(mine, id);
            live[id] = { ...current, status: newest || current.status === null ? status : current.status };
          }
          for (const [id, rows] of lists) {
            // Events that came in while the list was read are newer than it: they stand.
            const fresh = liveOrder.land(mine, sessionsKey(id));
            const current = live[id] ?? { status: null, sessions: [] };
            live[id] = { ...current, sessions: fresh ? rows : current.sessions };
          }
          const told = clockSeen === clockEvents ? Object.values(statuses).find((status) => status.queueClock !== undefined)?.queueClock : undefined;
          const queueTime = told === undefined ? s.queues.queueTime : { ...told, toldAt: deps.clock.now() };
          return { queues: { ...s.queues, live, queueTime, day: sampleDay(s.queues.day, live, deps.clock.now()), error: null } };
        });
        if (get().queues.day !== dayBefore) saveDay(deps.storage, get());
      } catch (error) {
        // Their lists are read again with the next read.
        for (const id of listIds) sessionsTouched.add(id);
        set((s) => ({ queues: { ...s.queues, error: `Cannot read the queues: ${errorMessage(error)}` } }));
      }
    }

    function scheduleRefresh(): void {
      cancelRefresh?.();
      cancelRefresh = deps.clock.after(QUEUE_REFRESH_MS, () => {
        cancelRefresh = null;
        if (watchers === 0) return;
        void readLive(undefined).finally(() => {
          if (watchers > 0 && cancelRefresh === null) scheduleRefresh();
        });
      });
    }

    function listen(): void {
      listening ??= get().onPlatformEvent((event) => {
        if (event.routingKey === "object.doc_created.callq_queue" || event.routingKey === "object.doc_edited.callq_queue" || event.routingKey === "object.doc_deleted.callq_queue") {
          void get().loadQueueDirectory();
          return;
        }
        if (event.routingKey.startsWith("callq.clock.")) {
          const told = queueClockOf(event.data["queue_clock"]);
          if (told === null) return;
          clockEvents += 1;
          set((s) => ({ queues: { ...s.queues, queueTime: { ...told, toldAt: deps.clock.now() } } }));
          return;
        }
        if (watchers > 0 && callqEventKind(event) !== null) batch.push(event);
      });
    }

    function stopWatching(): void {
      cancelRefresh?.();
      cancelRefresh = null;
      reconcile.cancel();
      batch.cancel();
    }

    onConnectionChange(store, {
      online: () => {
        void get().loadQueueDirectory();
        if (watchers > 0) void get().refreshQueues();
      },
      signedOut: () => {
        stopWatching();
        set({ queues: EMPTY });
      },
    });

    return {
      queues: EMPTY,

      async loadQueueDirectory() {
        const state = get();
        const api = callqOf(state);
        if (api === null) return;
        listen();
        const mine = directoryOrder.ask();
        set((s) => ({ queues: { ...s.queues, loading: true, day: { ...loadDay(deps.storage, state), ...s.queues.day } } }));
        try {
          const [list, members] = await Promise.all([api.queues(), api.membership()]);
          if (!directoryOrder.latest(mine)) return;
          set((s) => ({ queues: { ...s.queues, list, members, loading: false, error: null, loadedAt: deps.clock.now() } }));
        } catch (error) {
          if (!directoryOrder.latest(mine)) return;
          set((s) => ({ queues: { ...s.queues, loading: false, error: `Cannot read the queues: ${errorMessage(error)}` } }));
        }
      },

      watchQueues() {
        watchers += 1;
        listen();
        if (watchers === 1) {
          void (get().queues.loadedAt === null ? get().loadQueueDirectory() : Promise.resolve()).then(() => get().refreshQueues());
        }
        let stopped = false;
        return () => {
          if (stopped) return;
          stopped = true;
          watchers -= 1;
          if (watchers === 0) stopWatching();
        };
      },

      async refreshQueues() {
        if (watchers > 0) scheduleRefresh();
        await readLive(undefined);
      },
    };
  };
}

/** Callers on the line waiting or being offered (callbacks left the line: waitingCallbacks). */
export function waitingSessions(live: QueueLive | undefined): QueueSession[] {
  return live === undefined ? [] : live.sessions.filter((s) => s.state !== "handled" && s.callbackNumber === null);
}

/** Callbacks not yet connected, in their place (oldest first). */
export function waitingCallbacks(live: QueueLive | undefined): QueueSession[] {
  return live === undefined ? [] : live.sessions.filter((s) => s.state !== "handled" && s.callbackNumber !== null);
}

/** Clock ms the longest-waiting caller entered; null when nobody waits. */
export function longestWaitSince(live: QueueLive | undefined): number | null {
  let oldest: number | null = null;
  for (const s of waitingSessions(live)) if (s.enteredAt > 0 && (oldest === null || s.enteredAt < oldest)) oldest = s.enteredAt;
  return oldest;
}

/**
 * Sessions of the day answered: the server's count when it gives one, else the day's total less
 * those missed (timed out), abandoned, and still in the queue.
 */
export function answeredOf(status: QueueStatus): number {
  const { total, missed, abandoned, waiting, answered } = status.stats;
  return answered ?? Math.max(0, total - missed - abandoned - waiting);
}

/**
 * The board's "Missed": offers of the day that rang out, were rejected or could not ring (as
 * Qubicle's missed, and what adds to each recipient's missed_calls); the callers who timed out
 * unhandled (the spec's missed_sessions) stand apart. A server without missed_offers gives the
 * timed-out count.
 */
export function missedOffersOf(status: QueueStatus): number {
  return status.stats.missedOffers ?? status.stats.missed;
}

export function localDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
}

/** The bucket of the local day `ms` falls in. */
export function dayBucket(ms: number): number {
  const d = new Date(ms);
  return Math.min(BUCKETS_PER_DAY - 1, Math.floor((d.getHours() * 60 + d.getMinutes()) / DAY_BUCKET_MINUTES));
}

/** Local midnight of the day `ms` falls in, as epoch ms. */
export function localMidnight(ms: number): number {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
}

function emptyDay(date: string): QueueDay {
  const series = () => new Array<number | null>(BUCKETS_PER_DAY).fill(null);
  return { date, waiting: series(), total: series(), start: series() };
}

/** Records what each queue shows now in the current bucket of its day (a new date starts a new day). */
export function sampleDay(days: Record<string, QueueDay>, live: Record<string, QueueLive>, now: number): Record<string, QueueDay> {
  const date = localDate(now);
  const bucket = dayBucket(now);
  let out = days;
  for (const [id, queue] of Object.entries(live)) {
    if (queue.status === null) continue;
    const waiting = waitingSessions(queue).length;
    const before = days[id];
    const day = before !== undefined && before.date === date ? before : emptyDay(date);
    const prevWaiting = day.waiting[bucket] ?? null;
    const nextWaiting = prevWaiting === null ? waiting : Math.max(prevWaiting, waiting);
    if (day === before && prevWaiting === nextWaiting && day.total[bucket] === queue.status.stats.total) continue;
    const next: QueueDay = { date, waiting: [...day.waiting], total: [...day.total], start: [...day.start] };
    next.waiting[bucket] = nextWaiting;
    next.total[bucket] = queue.status.stats.total;
    next.start[bucket] ??= queue.status.stats.total;
    if (out === days) out = { ...days };
    out[id] = next;
  }
  return out;
}

/**
 * New sessions per bucket: the total at the bucket's end less the one before it (the previous
 * bucket's end, or, after a gap or at the first bucket watched, the bucket's first sample, so the
 * callers of the first minutes watched count and those of a gap do not); null where not watching.
 */
export function callsPerBucket(day: QueueDay): (number | null)[] {
  return day.total.map((total, i) => {
    if (total === null) return null;
    const base = day.total[i - 1] ?? day.start[i] ?? total;
    return Math.max(0, total - base);
  });
}

const dayKey = (state: AppState) => (state.session === null ? null : `switchboard.queueDay.${state.session.accountId}`);

function loadDay(storage: KeyValueStorage, state: AppState): Record<string, QueueDay> {
  const key = dayKey(state);
  if (key === null) return {};
  const stored = readStored(storage, key);
  if (typeof stored !== "object" || stored === null) return {};
  const out: Record<string, QueueDay> = {};
  for (const [id, value] of Object.entries(stored)) if (isQueueDay(value)) out[id] = value;
  return out;
}

function saveDay(storage: KeyValueStorage, state: AppState): void {
  const key = dayKey(state);
  if (key !== null) writeStored(storage, key, state.queues.day);
}

function isQueueDay(value: unknown): value is QueueDay {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  const series = (s: unknown) => Array.isArray(s) && s.length === BUCKETS_PER_DAY && s.every((n) => n === null || typeof n === "number");
  return typeof v["date"] === "string" && series(v["waiting"]) && series(v["total"]) && series(v["start"]);
}
