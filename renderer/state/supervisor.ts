// The supervisor slice: every recipient of the account with their state, time in state and current
// caller, live while the board is watched (callq.recipient.* events, applied once per animation
// frame; the touched recipients' statuses read again together, at most twice a second), and the
// supervisor's own Listen / Whisper / Barge: the server rings the supervisor's phone, the console
// answers that ring itself, and the mode can change during the call.
import type { StateCreator } from "zustand/vanilla";
import { callqEventKind, queueAlertKey, queueAlertOf, recipientEventOf, type AvailabilityState, type QueueAlert, type MonitorMode, type QueueCall, type RecipientDay, type RecipientEntry, type RecipientStatus, type RecipientStatusEntry, type Staffing, type StaffingWhatIf } from "../api/callq.js";
import { errorMessage, monitorErrorText } from "../api/error-text.js";
import type { PlatformEvent } from "../api/events.js";
import { untilNextDay } from "./agent-day.js";
import { callqAccess, frameBatcher, frameScheduler, touchedReads, type CallqDeps } from "./callq-access.js";
import { onConnectionChange } from "./connection-watch.js";
import { readOrder } from "./read-order.js";
import type { CallAlerts } from "../phone/phone-line.js";
import type { AppState } from "./store.js";

/** Statuses of recipients touched by events are read again this much later, together. */
export const RECIPIENT_RECONCILE_MS = 500;
/** The supervisor's phone rings for the server's monitor call; the console answers it within this. */
export const MONITOR_ANSWER_WINDOW_MS = 30_000;
/** The queues' staffing estimates are read again this often while the board is watched. */
export const STAFFING_REFRESH_MS = 15_000;
/** After local midnight, the board reads the agents' new day this much later (the server's clock may be a moment behind). */
const NEW_DAY_READ_DELAY_MS = 2_000;
/** Until the queue list has arrived, the first staffing read is tried this often. */
const STAFFING_FIRST_TRY_MS = 1_000;
/** After a caller's time in a queue or an agent's call ends, the estimates are read again this much later (events of one call together). */
const STAFFING_AFTER_CHANGE_MS = 1_000;
/** Events after which a queue's arrivals or handle times have moved: a caller gone, a call ended (the agent's wrap-up starts). */
const FIGURES_MOVED = new Set(["leave", "end", "abandoned", "timeout", "removed", "wrapup"]);
/** The routing keys of a queue's alerts, before the queue id. */
const ALERT_PREFIX = "callq.alert.";
/** How the server names the supervisor's monitor call (caller id name prefix). */
export const MONITOR_CALLER_PREFIX = "Monitor:";

export interface RecipientRow {
  id: string;
  /** The username. */
  name: string;
  state: AvailabilityState;
  /** Clock ms the state began; null when not known. */
  since: number | null;
  /** The caller being offered or handled. */
  call: QueueCall | null;
  /** Clock ms the wrap-up ends, in Wrapup-Time. */
  wrapupEndsAt: number | null;
  /**
   * Calls handled and offers missed: the day's where the server counts days, else the running
   * stats.total_calls and stats.missed_calls; as last read, null before any read while logged in.
   */
  handledCalls: number | null;
  missedCalls: number | null;
  /** Today's figures as last read (kept while logged out); null where the server gives none. */
  day: RecipientDay | null;
  /** Why they are Away (a reason they chose, or the server's missed_offers, with how many offers in a row); null otherwise. */
  awayReason: RecipientStatus["awayReason"];
  missedOffers: number;
  /** Why they receive no offer whatever their state (no_device); null otherwise. */
  unavailableReason: RecipientStatus["unavailableReason"];
  /** Their last queue call needs a disposition before they may be Ready. */
  dispositionPending: boolean;
}

export interface MonitorState {
  target: string;
  mode: MonitorMode;
  /** `requesting`: asked the server; `ringing`: the supervisor's phone rings; `listening`: connected. */
  phase: "requesting" | "ringing" | "listening";
  /** The phone call carrying the supervision, once it rang. */
  callId: string | null;
}

export interface SupervisorState {
  /** Recipient ids, by name. */
  ids: string[];
  rows: Record<string, RecipientRow>;
  loading: boolean;
  error: string | null;
  monitor: MonitorState | null;
  monitorError: string | null;
  /** Per queue id: the server's staffing estimate as last read. */
  staffing: Record<string, Staffing>;
  /** Per queue id: the alerts that hold, from the statuses read when the board opened and the callq.alert events since. */
  alerts: Record<string, QueueAlert[]>;
}

export interface SupervisorSlice {
  supervisor: SupervisorState;
  /** Keeps the board (recipients and queues) live until the answer is called. */
  watchBoard(): () => void;
  refreshRecipients(): Promise<void>;
  /** Listen (eavesdrop), whisper or barge on `target`'s call; with a supervision of that target under way, changes its mode. */
  monitorRecipient(target: string, mode: MonitorMode): Promise<boolean>;
  /** Ends the supervision (hangs up its call). */
  stopMonitor(): Promise<void>;
  /** The staffing estimate with `whatIf`'s inputs in place of the measured ones; null when it cannot be read. */
  estimateStaffing(queueId: string, whatIf: StaffingWhatIf): Promise<Staffing | null>;
}

/** The supervision modes' names, as the bar's buttons say them. */
export const MONITOR_MODE_LABELS: Record<MonitorMode, string> = { eavesdrop: "Listen", whisper: "Whisper", barge: "Barge" };

/** Why a switch of mode was refused, in words (the server's reason; "Could not start listening" would mislead). */
function switchRefusalText(error: unknown): string {
  const words = monitorErrorText(error);
  return words.startsWith("Could not start listening: ") ? `The server said: ${words.slice("Could not start listening: ".length)}` : words;
}

const EMPTY: SupervisorState = { ids: [], rows: {}, loading: false, error: null, monitor: null, monitorError: null, staffing: {}, alerts: {} };

export function createSupervisorSlice(deps: CallqDeps & { alerts?: Pick<CallAlerts, "tone"> }): StateCreator<AppState, [], [], SupervisorSlice> {
  const callqOf = callqAccess(deps);
  return (set, get, store) => {
    let watchers = 0;
    let stopQueues: (() => void) | null = null;
    let listening: (() => void) | null = null;
    // The recipients' reads and events in one order (state/read-order): a status read lands for a
    // recipient unless a newer read of them or an event of theirs landed first, and a read of the
    // list (who the recipients are, their names) only when no newer read of the list has landed.
    // Reads of the list and of statuses overlap (the board opened, the websocket back online, a
    // recipient the board does not know, midnight, the touched rows' reconcile) and answer in any
    // order on a slow link: the one answering last is not the newest.
    const rowOrder = readOrder();
    /** The list's own order: `latest` says whether a newer read of the list is still on its way. */
    const listOrder = readOrder();
    let cancelAnswerWindow: (() => void) | null = null;
    let cancelStaffing: (() => void) | null = null;
    /** The next staffing read is the early one an event asked for. */
    let staffingDueSoon = false;
    /** Cancels the board's read at the next local midnight, when the agents' day figures start again. */
    let cancelNewDay: (() => void) | null = null;
    /** Monitor requests asked so far, and the settling of the one on its way: the next waits for it. */
    let monitorAsks = 0;
    let monitorSending: Promise<void> = Promise.resolve();
    /** The mode the server last took, and for whom: what a refused switch leaves in force. */
    let monitorTaken: { target: string; mode: MonitorMode } | null = null;

    /** No event marks midnight: the rows are read again then (and each midnight after), while the board is watched. */
    function readAtNewDay(): void {
      cancelNewDay = deps.clock.after(untilNextDay(deps.clock.now()) + NEW_DAY_READ_DELAY_MS, () => {
        void get().refreshRecipients();
        readAtNewDay();
      });
    }
    /** The alerts' reads and events, per queue: a read lands for a queue unless a newer read or an alert event of it landed first. */
    const alertOrder = readOrder();

    /** The alerts of every queue as their statuses say, where no alert event or newer read came in the meantime. */
    async function readAlerts(): Promise<void> {
      const api = callqOf(get());
      if (api === null) return;
      const ticket = alertOrder.ask();
      try {
        const statuses = await api.queueStatuses();
        if (watchers === 0) return;
        set((s) => {
          const alerts = { ...s.supervisor.alerts };
          for (const [id, status] of Object.entries(statuses)) {
            if (status.alerts === undefined || !alertOrder.land(ticket, id)) continue;
            alerts[id] = status.alerts;
          }
          return { supervisor: { ...s.supervisor, alerts } };
        });
      } catch {
        // The board still shows the alerts that fire from now on.
      }
    }

    /** A callq.alert.<queue_id> event: `fire` adds the alert (with a tone if the supervisor wants one), `clear` drops it. */
    function alertEvent(event: PlatformEvent, queueId: string): void {
      const alert = queueAlertOf({ ...event.data, queue_id: queueId });
      if (alert === null || (event.name !== "fire" && event.name !== "clear")) return;
      alertOrder.changed(queueId);
      const key = queueAlertKey(alert);
      set((s) => {
        const others = (s.supervisor.alerts[queueId] ?? []).filter((a) => queueAlertKey(a) !== key);
        return { supervisor: { ...s.supervisor, alerts: { ...s.supervisor.alerts, [queueId]: event.name === "fire" ? [...others, alert] : others } } };
      });
      if (event.name === "fire" && get().alertSound) deps.alerts?.tone();
    }

    /**
     * The staffing reads' order, per queue: an estimate lands unless a newer read of its queue
     * landed first, and the set of queues shown is the newest landed read's. A board closed and
     * opened again while a read is on its way starts a second read beside it; on a slow link the
     * older one may answer last, and put its older estimates back.
     */
    const staffingOrder = readOrder();

    /** Reads every queue's staffing estimate, then again after a while, while the board is watched. */
    async function readStaffing(): Promise<void> {
      cancelStaffing = null;
      const api = callqOf(get());
      const ids = get().queues.list.map((q) => q.id);
      if (api !== null && ids.length > 0) {
        const ticket = staffingOrder.ask();
        // A read that failed (a slow or busy server) keeps the queue's last estimate: dropping it
        // would take the What-if panel off the tile, closing it under the supervisor's hand.
        const read = await Promise.all(ids.map((id) => api.queueStaffing(id).then((s): [string, Staffing | null] => [id, s], (): [string, null] => [id, null])));
        if (watchers > 0) {
          const shown = get().supervisor.staffing;
          // The newest read so far decides which queues are shown (a queue gone is dropped); an
          // older one only updates the queues still shown whose estimate is older than its own.
          // None asked before a sign-out lands (the order's reset).
          const whole = staffingOrder.land(ticket);
          let landed = whole;
          const staffing: Record<string, Staffing> = whole ? {} : { ...shown };
          for (const [id, estimate] of read) {
            if (!whole && !(id in shown)) continue;
            const fresh = estimate !== null && staffingOrder.land(ticket, id);
            landed ||= fresh;
            const kept = fresh ? estimate : shown[id];
            if (kept !== undefined) staffing[id] = kept;
          }
          if (landed) set((s) => ({ supervisor: { ...s.supervisor, staffing } }));
        }
      }
      if (watchers > 0 && cancelStaffing === null) cancelStaffing = deps.clock.after(ids.length > 0 ? STAFFING_REFRESH_MS : STAFFING_FIRST_TRY_MS, () => void readStaffing());
    }

    /** The figures behind the estimates moved: read them soon rather than at the next refresh. */
    function staffingSoon(): void {
      // A read under way schedules its own next one; one already due soon is not put off (a busy floor would starve it).
      if (cancelStaffing === null || staffingDueSoon) return;
      cancelStaffing();
      staffingDueSoon = true;
      cancelStaffing = deps.clock.after(STAFFING_AFTER_CHANGE_MS, () => {
        staffingDueSoon = false;
        void readStaffing();
      });
    }

    const batch = frameBatcher<PlatformEvent>(frameScheduler(deps), (events) => applyEvents(events));
    const reconcile = touchedReads(deps.clock, RECIPIENT_RECONCILE_MS, (ids) => {
      if (watchers === 0) return;
      const known = ids.filter((id) => id in get().supervisor.rows);
      // A recipient the board does not know yet (just enabled): read the list again.
      if (known.length < ids.length) void get().refreshRecipients();
      else void readStatuses(known);
    });

    function applyEvents(events: PlatformEvent[]): void {
      const now = deps.clock.now();
      const me = get().session?.ownerId;
      const before = get().supervisor.rows;
      let rows = before;
      for (const event of events) {
        const kind = callqEventKind(event);
        if (kind === null || kind.kind !== "recipient") continue;
        const change = recipientEventOf(event, kind.id);
        if (change.name === "monitor") {
          if (change.recipientId === me) monitorEvent(event.data["active"] === true);
          continue;
        }
        const row = rows[change.recipientId];
        if (change.state === null || row === undefined) {
          reconcile.touch(change.recipientId);
          continue;
        }
        rowOrder.changed(row.id);
        reconcile.touch(row.id);
        const state = change.state;
        const next: RecipientRow = {
          ...row,
          state,
          // Time in the state and its reason: a new Away reason starts the count again.
          since: state !== row.state || change.name === "wrapup" || (state === "Away" && (change.reasons.awayReason ?? null) !== (row.awayReason ?? null)) ? now : row.since,
          call: state === "Call-Offer" || state === "On-A-Call" ? (change.call ?? row.call) : state === "Wrapup-Time" ? row.call : null,
          wrapupEndsAt: state !== "Wrapup-Time" ? null : change.wrapupSeconds !== null ? now + change.wrapupSeconds * 1000 : row.wrapupEndsAt,
          // Every event with a state states the reasons that apply now (absent: none).
          ...(state === "Not-Logged-In" ? NO_REASONS : change.reasons),
        };
        if (rows === before) rows = { ...before };
        rows[row.id] = next;
      }
      if (rows !== before) set((s) => ({ supervisor: { ...s.supervisor, rows } }));
    }

    async function readStatuses(ids: readonly string[]): Promise<void> {
      const api = callqOf(get());
      if (api === null) return;
      const ticket = rowOrder.ask();
      try {
        const statuses = await api.recipientStatuses(ids);
        const now = deps.clock.now();
        set((s) => {
          const rows = { ...s.supervisor.rows };
          for (const id of ids) {
            const row = rows[id];
            const status = statuses[id];
            // An event or a read newer than this one stands (an event's own read follows).
            if (row === undefined || status === undefined || !rowOrder.land(ticket, id)) continue;
            rows[id] = rowOf(row, status, now);
          }
          return { supervisor: { ...s.supervisor, rows, error: null } };
        });
      } catch (error) {
        set((s) => ({ supervisor: { ...s.supervisor, error: `Cannot read the agents' states: ${errorMessage(error)}` } }));
      }
    }

    /**
     * The monitor event says only whether the supervisor now listens (events reach every user of
     * the account, so it names no target or mode): whom and how are what this console asked for.
     * A supervisor who is no recipient (an admin) has no status to read, so the request is the truth.
     */
    function monitorEvent(active: boolean): void {
      set((s) => {
        const current = s.supervisor.monitor;
        // Stopped here already, or asked elsewhere: nothing this console shows.
        if (current === null) return s;
        // The end of the supervision this console listened to; one asked for since (another
        // agent: the server ends the first) is still on its way.
        if (!active) return current.phase === "listening" ? { supervisor: { ...s.supervisor, monitor: null } } : s;
        return { supervisor: { ...s.supervisor, monitor: { ...current, phase: "listening" } } };
      });
    }

    function listen(): void {
      listening ??= get().onPlatformEvent((event) => {
        if (event.routingKey.startsWith(ALERT_PREFIX)) {
          if (watchers > 0) alertEvent(event, event.routingKey.slice(ALERT_PREFIX.length));
          return;
        }
        const kind = callqEventKind(event);
        if (kind !== null && watchers > 0 && FIGURES_MOVED.has(event.name)) staffingSoon();
        if (kind === null || kind.kind !== "recipient") return;
        // The supervisor's own monitor events matter on every view; the rest only while the board is open.
        if (watchers > 0 || kind.id === get().session?.ownerId) batch.push(event);
      });
    }

    /** While a supervision is asked for: answer the monitor call the server rings the supervisor with. */
    function answerMonitorCall(state: AppState): void {
      const monitor = state.supervisor.monitor;
      if (monitor === null) return;
      const calls = state.phone.calls;
      if (monitor.callId !== null) {
        // The supervision's call is over: so is the supervision.
        if (!calls.some((c) => c.id === monitor.callId)) {
          set((s) => ({ supervisor: { ...s.supervisor, monitor: null } }));
        }
        return;
      }
      if (monitor.phase === "requesting") return;
      const ring = calls.find((c) => c.state === "incoming" && c.remoteName.startsWith(MONITOR_CALLER_PREFIX));
      if (ring === undefined) return;
      cancelAnswerWindow?.();
      cancelAnswerWindow = null;
      set((s) => ({ supervisor: { ...s.supervisor, monitor: s.supervisor.monitor === null ? null : { ...s.supervisor.monitor, callId: ring.id } } }));
      void state.acceptCall(ring.id);
    }

    store.subscribe((state, previous) => {
      if (state.phone.calls !== previous.phone.calls || state.supervisor.monitor !== previous.supervisor.monitor) answerMonitorCall(state);
    });

    onConnectionChange(store, {
      online: () => {
        if (watchers > 0) void get().refreshRecipients();
      },
      signedOut: () => {
        rowOrder.reset();
        listOrder.reset();
        alertOrder.reset();
        staffingOrder.reset();
        reconcile.cancel();
        cancelNewDay?.();
        cancelNewDay = null;
        cancelAnswerWindow?.();
        cancelAnswerWindow = null;
        batch.cancel();
        set({ supervisor: EMPTY });
      },
    });

    return {
      supervisor: EMPTY,

      watchBoard() {
        watchers += 1;
        listen();
        if (watchers === 1) {
          stopQueues = get().watchQueues();
          void get().refreshRecipients();
          void readStaffing();
          void readAlerts();
          readAtNewDay();
        }
        let stopped = false;
        return () => {
          if (stopped) return;
          stopped = true;
          watchers -= 1;
          if (watchers > 0) return;
          stopQueues?.();
          stopQueues = null;
          cancelStaffing?.();
          cancelStaffing = null;
          staffingDueSoon = false;
          cancelNewDay?.();
          cancelNewDay = null;
          reconcile.cancel();
        };
      },

      async estimateStaffing(queueId, whatIf) {
        const api = callqOf(get());
        if (api === null) return null;
        try {
          return await api.queueStaffing(queueId, whatIf);
        } catch {
          return null;
        }
      },

      async refreshRecipients() {
        const api = callqOf(get());
        if (api === null) return;
        listen();
        const listTicket = listOrder.ask();
        set((s) => ({ supervisor: { ...s.supervisor, loading: true } }));
        try {
          const list = await api.recipients();
          // A newer read of the list has landed: this one's list and statuses are older than the board's.
          if (!listOrder.current(listTicket)) return;
          const statusTicket = rowOrder.ask();
          const statuses = await api.recipientStatuses(list.map((r) => r.id));
          if (!listOrder.land(listTicket)) return;
          const now = deps.clock.now();
          // Still loading while a newer read of the list is on its way.
          const loading = !listOrder.latest(listTicket);
          set((s) => {
            const rows: Record<string, RecipientRow> = {};
            for (const entry of list) {
              const current = s.supervisor.rows[entry.id];
              const status = statuses[entry.id] ?? "not_logged_in";
              // A recipient's event or a newer read of them landed since this read was asked: theirs stands.
              const newer = !rowOrder.land(statusTicket, entry.id) && current !== undefined;
              rows[entry.id] = newer ? { ...current, name: entry.name } : rowOf(blankRow(entry), status, now);
            }
            return { supervisor: { ...s.supervisor, ids: byName(list), rows, loading, error: null } };
          });
        } catch (error) {
          // An older read's failure says nothing of the board a newer one shows or is reading.
          if (listOrder.latest(listTicket)) set((s) => ({ supervisor: { ...s.supervisor, loading: false, error: `Cannot read the agents: ${errorMessage(error)}` } }));
        }
      },

      async monitorRecipient(target, mode) {
        const state = get();
        const api = callqOf(state);
        const me = state.session?.ownerId;
        if (api === null || me === undefined) return false;
        const current = state.supervisor.monitor;
        const sameCall = current !== null && current.target === target && current.callId !== null;
        set((s) => ({
          supervisor: {
            ...s.supervisor,
            monitorError: null,
            monitor: sameCall && current !== null ? { ...current, mode } : { target, mode, phase: "requesting", callId: null },
          },
        }));
        // A supervision of another target ends first (the server does the same).
        if (current !== null && current.target !== target && current.callId !== null) await get().hangupCall(current.callId);
        // One request at a time, in the order asked: two sent together may reach the server in
        // either order (on a slow link they did), and the one it takes last is the mode it keeps,
        // whatever the bar shows. A request overtaken while it waited is not sent at all.
        const mine = ++monitorAsks;
        const before = monitorSending;
        const sending = (async (): Promise<boolean> => {
          await before;
          if (mine !== monitorAsks) return false;
          await api.monitor(me, target, mode);
          monitorTaken = { target, mode };
          return true;
        })();
        monitorSending = sending.then(
          () => undefined,
          () => undefined,
        );
        try {
          // Overtaken by a newer ask: that one says what the supervisor wants, and shows it.
          if (!(await sending)) return true;
          if (!sameCall) {
            set((s) => ({ supervisor: { ...s.supervisor, monitor: s.supervisor.monitor === null ? null : { ...s.supervisor.monitor, phase: "ringing" } } }));
            cancelAnswerWindow?.();
            cancelAnswerWindow = deps.clock.after(MONITOR_ANSWER_WINDOW_MS, () => {
              cancelAnswerWindow = null;
              set((s) => (s.supervisor.monitor?.callId === null ? { supervisor: { ...s.supervisor, monitor: null, monitorError: "Your phone did not take the monitor call." } } : s));
            });
          }
          return true;
        } catch (error) {
          // A newer ask is waiting: it says what the supervisor wants, and shows it; this one's refusal only in words.
          const newest = mine === monitorAsks;
          if (!sameCall) {
            set((s) => ({ supervisor: { ...s.supervisor, monitor: newest ? null : s.supervisor.monitor, monitorError: monitorErrorText(error) } }));
            return false;
          }
          // A switch on the call in progress refused: the supervision goes on in the mode the server
          // last took, and the bar shows that one, not the refused one.
          const inForce = monitorTaken !== null && monitorTaken.target === target ? monitorTaken.mode : (current?.mode ?? mode);
          set((s) => {
            const monitor = s.supervisor.monitor;
            const shown = newest && monitor !== null && monitor.target === target ? { ...monitor, mode: inForce } : monitor;
            return { supervisor: { ...s.supervisor, monitor: shown, monitorError: `${MONITOR_MODE_LABELS[mode]} was refused; still ${MONITOR_MODE_LABELS[inForce]}. ${switchRefusalText(error)}` } };
          });
          return false;
        }
      },

      async stopMonitor() {
        const monitor = get().supervisor.monitor;
        monitorTaken = null;
        cancelAnswerWindow?.();
        cancelAnswerWindow = null;
        // The words of a refused switch went with the supervision they were about.
        set((s) => ({ supervisor: { ...s.supervisor, monitor: null, monitorError: null } }));
        if (monitor?.callId) await get().hangupCall(monitor.callId);
      },
    };
  };
}

function blankRow(entry: RecipientEntry): RecipientRow {
  return { id: entry.id, name: entry.name, state: "Not-Logged-In", since: null, call: null, wrapupEndsAt: null, handledCalls: null, missedCalls: null, day: null, ...NO_REASONS };
}

const NO_REASONS: Pick<RecipientRow, "awayReason" | "missedOffers" | "unavailableReason" | "dispositionPending"> = {
  awayReason: null,
  missedOffers: 0,
  unavailableReason: null,
  dispositionPending: false,
};

function rowOf(row: RecipientRow, status: RecipientStatusEntry, now: number): RecipientRow {
  if (status === "not_logged_in") {
    // The day so far stays on the board; nothing is in progress once logged out.
    const day = row.day === null ? null : { ...row.day, current: null };
    return { ...row, state: "Not-Logged-In", since: row.state === "Not-Logged-In" ? row.since : null, call: null, wrapupEndsAt: null, day, ...NO_REASONS };
  }
  return {
    ...row,
    state: status.state,
    since: status.lastActionAt > 0 ? status.lastActionAt : row.since,
    call: status.offeredCall ?? status.handlingCall,
    wrapupEndsAt: status.state === "Wrapup-Time" ? now + status.wrapupSeconds * 1000 : null,
    handledCalls: status.day?.callsHandled ?? status.totalCalls,
    missedCalls: status.day?.missedOffers ?? status.missedCalls,
    day: status.day,
    awayReason: status.awayReason,
    missedOffers: status.missedOffers,
    unavailableReason: status.unavailableReason,
    dispositionPending: status.dispositionPending,
  };
}

function byName(list: readonly RecipientEntry[]): string[] {
  return [...list].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id)).map((r) => r.id);
}
