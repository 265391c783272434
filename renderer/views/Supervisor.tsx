// The supervisor's board: every queue (waiting, longest wait, service level against its target,
// average speed of answer, abandonment rate, the staffing estimate, answered, missed offers, timed
// out, abandoned, average wait, a chart of the day) and every agent (state, time in state, current
// caller, the day's calls handled, average handle time, offers missed and occupancy, and why the
// server keeps them from offers), live; Listen,
// Whisper and Barge on an agent's call, switchable while listening. Each row and card selects only
// its own slice of the store, so an event re-renders what it changed and nothing else. A queue's
// alerts (service level below target over a window, a caller waiting too long, an agent too long
// in a state) show on its card while they hold, with a tone if the supervisor ticked "Alert sound".
import { memo, useEffect, useMemo, useRef, useState, type UIEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import { queueAlertKey, type MonitorMode, type QueueAlert, type QueueEntry, type ServiceLevel, type Staffing } from "../api/callq.js";
import { StateName, stateReasonShort, useFreshNow } from "../components/AgentState.js";
import "../components/callq.css";
import { QueueDayChart } from "../components/QueueDayChart.js";
import { QueueHistory } from "../components/QueueHistory.js";
import { WallboardsPanel } from "../components/WallboardsPanel.js";
import { formatDuration } from "../components/useNow.js";
import { systemClock } from "../clock.js";
import { useAppStore } from "../state/context.js";
import { liveDay } from "../state/agent-day.js";
import { answeredOf, longestWaitSince, missedOffersOf, waitingCallbacks, waitingSessions } from "../state/queues.js";
import { MONITOR_MODE_LABELS } from "../state/supervisor.js";
import { queueTimeAt } from "../state/queue-time.js";
import type { AppState } from "../state/store.js";

/** Admins and users with the call_monitor permission. */
export function canSupervise(state: AppState): boolean {
  return state.profile?.canMonitor ?? false;
}

export const MODE_LABELS: Record<MonitorMode, string> = MONITOR_MODE_LABELS;
const MODES: readonly MonitorMode[] = ["eavesdrop", "whisper", "barge"];

export function Supervisor() {
  const allowed = useAppStore(canSupervise);
  // The profile says who may supervise; until it is read (a slow link, a reload on this view) the
  // view does not say "not for you" to a supervisor.
  const checking = useAppStore((state) => state.profile === null && state.connection.profileError === null);
  const watch = useAppStore((state) => state.watchBoard);
  useEffect(() => (allowed ? watch() : undefined), [watch, allowed]);
  if (!allowed) {
    return (
      <div>
        <h1>Supervisor</h1>
        {checking ? (
          <p role="status">Checking your access…</p>
        ) : (
          <p className="muted">The board is for admins and users with the call_monitor permission.</p>
        )}
      </div>
    );
  }
  return (
    <div className="supervisor-view">
      <h1>Supervisor</h1>
      <MonitorBar />
      <QueueBoard />
      <RecipientBoard />
      <QueueHistory />
      <WallboardsPanel />
    </div>
  );
}

function MonitorBar() {
  const { monitor, error, name, switchMode, stop } = useAppStore(
    useShallow((state) => ({
      monitor: state.supervisor.monitor,
      error: state.supervisor.monitorError,
      name: state.supervisor.monitor === null ? "" : (state.supervisor.rows[state.supervisor.monitor.target]?.name ?? ""),
      switchMode: state.monitorRecipient,
      stop: state.stopMonitor,
    })),
  );
  if (monitor === null && error === null) return null;
  return (
    <section className="card monitor-bar" aria-label="Supervision" data-testid="monitor-bar">
      {monitor !== null ? (
        <>
          <p aria-live="polite">
            {monitor.phase === "listening" ? `${MODE_LABELS[monitor.mode]}: ${name}` : monitor.phase === "ringing" ? `Connecting to ${name}… (your phone rings)` : `Asking to ${MODE_LABELS[monitor.mode].toLowerCase()}…`}
          </p>
          <div className="monitor-buttons" role="group" aria-label="Supervision mode">
            {MODES.map((mode) => (
              <button key={mode} type="button" className="button button-small" aria-pressed={monitor.mode === mode} onClick={() => void switchMode(monitor.target, mode)}>
                {MODE_LABELS[mode]}
              </button>
            ))}
          </div>
          <button type="button" className="button button-small button-danger" onClick={() => void stop()}>
            Stop
          </button>
        </>
      ) : null}
      {error !== null ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}

/**
 * From this many queues a tile out of view (and a margin) is a placeholder with its name: 50 live
 * tiles each watching the store, re-rendered every second, kept the board from its frames.
 */
const MANY_QUEUES = 12;
/** How far beyond the view a tile comes alive, so a scroll finds it drawn. */
const TILE_MARGIN = "400px";

function QueueBoard() {
  const { list, error, read } = useAppStore(useShallow((state) => ({ list: state.queues.list, error: state.queues.error, read: state.queues.loadedAt !== null })));
  const now = useFreshNow(1000);
  const { alertSound, setAlertSound } = useAppStore(useShallow((state) => ({ alertSound: state.alertSound, setAlertSound: state.setAlertSound })));
  return (
    <section className="board-section" aria-labelledby="board-queues">
      <h2 id="board-queues">Queues</h2>
      <label className="alert-sound">
        <input type="checkbox" checked={alertSound} onChange={(e) => setAlertSound(e.target.checked)} data-testid="alert-sound" /> Alert sound
      </label>
      {error !== null ? <p className="form-error">{error}</p> : null}
      {list.length === 0 && (read || error === null) ? <p className="muted">{read ? "No queues." : "Reading the queues…"}</p> : null}
      <div className="queues-grid">
        {list.map((queue) => (list.length >= MANY_QUEUES ? <QueueTileInView key={queue.id} queue={queue} tick={now} /> : <QueueTile key={queue.id} queue={queue} tick={now} />))}
      </div>
    </section>
  );
}

/** The queue's tile while it is near the view; its name alone, at a tile's height, otherwise. */
function QueueTileInView({ queue, tick }: { queue: QueueEntry; tick: number }) {
  const slot = useRef<HTMLDivElement | null>(null);
  const [near, setNear] = useState(false);
  useEffect(() => {
    const element = slot.current;
    if (element === null) return undefined;
    const observer = new IntersectionObserver((entries) => setNear(entries.some((e) => e.isIntersecting)), { rootMargin: TILE_MARGIN });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={slot} className="queue-slot">
      {near ? (
        <QueueTile queue={queue} tick={tick} />
      ) : (
        <section className="card queue-tile queue-tile-away" aria-label={queue.name} data-queue-id={queue.id}>
          <h3>{queue.name}</h3>
        </section>
      )}
    </div>
  );
}

/** `tick` re-renders the tile each second; the time itself is read fresh (an event may be newer than the tick). */
const QueueTile = memo(function QueueTile({ queue, tick }: { queue: QueueEntry; tick: number }) {
  const now = Math.max(tick, systemClock.now());
  const live = useAppStore((state) => state.queues.live[queue.id]);
  const queueTime = useAppStore((state) => state.queues.queueTime);
  // Callers' entry stamps are in the account's queue time, which a paused training run holds.
  const waitNow = queueTimeAt(queueTime, now);
  const status = live?.status ?? null;
  const staffing = useAppStore((state) => state.supervisor.staffing[queue.id]);
  const alerts = useAppStore((state) => state.supervisor.alerts[queue.id] ?? NO_ALERTS);
  // Only the names its alerts mention: a tile must not re-render for every recipient's change.
  const alertNames = useAppStore(useShallow((state) => alerts.map((alert) => (alert.recipientId === null ? "" : (state.supervisor.rows[alert.recipientId]?.name ?? alert.recipientId)))));
  const oldest = longestWaitSince(live);
  const callbacks = waitingCallbacks(live);
  const level = status?.serviceLevel;
  const headingId = `board-queue-${queue.id}`;
  const figures: [string, string, string][] = [
    ["Waiting", String(waitingSessions(live).length), "waiting"],
    ...(callbacks.length > 0 || status?.stats.callbacksWaiting !== undefined ? [["Callbacks waiting", String(callbacks.length), "callbacks"] as [string, string, string]] : []),
    ["Longest wait", oldest === null ? "–" : formatDuration(waitNow - oldest), "longest"],
    ["Service level", status === null ? "…" : serviceLevelText(level), "service-level"],
    ["Speed of answer", level === undefined ? "–" : formatDuration(level.asa * 1000), "asa"],
    ["Abandonment", level === undefined || level.abandonmentRate === null ? "–" : `${level.abandonmentRate}%`, "abandonment"],
    ["Available", status === null ? "…" : `${status.available} of ${status.loggedIn}`, "available"],
    ["Agents needed (estimate)", staffingText(staffing), "staffing"],
    ["Answered", status === null ? "…" : String(answeredOf(status)), "answered"],
    ["Missed", status === null ? "…" : String(missedOffersOf(status)), "missed"],
    ["Timed out", status === null ? "…" : String(status.stats.missed), "timed-out"],
    ["Abandoned", status === null ? "…" : String(status.stats.abandoned), "abandoned"],
    ["Average wait", status === null ? "…" : formatDuration(status.stats.averageWait * 1000), "average"],
    ["Calls today", status === null ? "…" : String(status.stats.total), "total"],
  ];
  return (
    <section
      className="card queue-tile"
      aria-labelledby={headingId}
      data-queue-id={queue.id}
      data-below-target={level !== undefined && level.percent !== null && level.percent < level.targetPercent ? "true" : undefined}
      data-alerting={alerts.length > 0 ? "true" : undefined}
    >
      <h3 id={headingId}>{queue.name}</h3>
      {alerts.length > 0 ? (
        <ul className="queue-alerts" aria-label={`${queue.name} alerts`} data-testid="board-alerts">
          {alerts.map((alert, i) => (
            <li key={queueAlertKey(alert)} data-alert-kind={alert.kind}>
              {alertText(alert, alertNames[i] ?? "")}
            </li>
          ))}
        </ul>
      ) : null}
      <dl className="queue-figures">
        {figures.map(([label, value, key]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`board-${key}`}>{value}</dd>
          </div>
        ))}
      </dl>
      {staffing !== undefined ? <StaffingWhatIf queueId={queue.id} name={queue.name} measured={staffing} /> : null}
      <QueueDayChart queueId={queue.id} name={queue.name} />
    </section>
  );
});

/**
 * What if: sliders for calls per hour, handle time and the target, starting from the measured
 * estimate; each change asks the server again (the latest answer wins).
 */
function StaffingWhatIf({ queueId, name, measured }: { queueId: string; name: string; measured: Staffing }) {
  const estimate = useAppStore((state) => state.estimateStaffing);
  const [inputs, setInputs] = useState(() => ({
    callsPerHour: Math.round(measured.callsPerHour),
    handleTime: Math.round(measured.handleTime ?? 180),
    targetPercent: measured.targetPercent,
  }));
  const [result, setResult] = useState<Staffing | null>(null);
  const asked = useRef(0);
  const change = (key: keyof typeof inputs, value: number): void => {
    const next = { ...inputs, [key]: value };
    setInputs(next);
    const mine = ++asked.current;
    void estimate(queueId, next).then((answer) => {
      if (mine === asked.current) setResult(answer);
    });
  };
  const sliders: [keyof typeof inputs, string, number, number, string][] = [
    ["callsPerHour", "Calls per hour", 0, 1000, ""],
    ["handleTime", "Handle time", 10, 1800, " s"],
    ["targetPercent", "Target", 50, 99, "%"],
  ];
  return (
    <details className="staffing-what-if">
      <summary>What if…</summary>
      {sliders.map(([key, label, min, max, unit]) => (
        <label key={key} className="what-if-slider">
          {label}: {inputs[key]}
          {unit}
          <input type="range" min={min} max={max} value={inputs[key]} aria-label={`${label} (${name})`} onChange={(e) => change(key, Number(e.target.value))} />
        </label>
      ))}
      <p data-testid="what-if-result" aria-live="polite">
        {result === null || result.agentsNeeded === null
          ? "Move a slider for an estimate."
          : `${result.agentsNeeded} agents needed for ${result.targetPercent}% in ${result.answeredWithinS} s (Erlang C estimate${result.agentsNeededWithAbandonment === null ? "" : `; ${result.agentsNeededWithAbandonment} with abandonment, Erlang A`}); ${result.ready} Ready of ${result.loggedIn} logged in.`}
      </p>
    </details>
  );
}

/** "75% (target 80% in 20 s)"; a dash before anyone stopped waiting today. */
const NO_ALERTS: readonly QueueAlert[] = [];

/** What an alert says on the card; `who`: the member of a state alert, by name. */
function alertText(alert: QueueAlert, who: string): string {
  switch (alert.kind) {
    case "service_level":
      return `Service level ${alert.value}% below the ${alert.limit}% target`;
    case "longest_wait":
      return `A caller has waited over ${formatDuration(alert.limit * 1000)}`;
    case "state_too_long":
      return `${who} ${alert.state ?? "in a state"} over ${formatDuration(alert.limit * 1000)}`;
  }
}

function serviceLevelText(level: ServiceLevel | undefined): string {
  if (level === undefined) return "–";
  const target = `target ${level.targetPercent}% in ${level.withinS} s`;
  return level.percent === null ? `– (${target})` : `${level.percent}% (${target})`;
}

/** Erlang C's agents, Erlang A's beside them where callers abandoned; a dash with nothing to go by. */
function staffingText(staffing: Staffing | undefined): string {
  if (staffing === undefined || staffing.agentsNeeded === null) return "–";
  const withAbandonment = staffing.agentsNeededWithAbandonment === null ? "" : ` (${staffing.agentsNeededWithAbandonment} with abandonment)`;
  return `${staffing.agentsNeeded}${withAbandonment}`;
}

/** From this many agents the table renders only the rows in its scrolled view (and a few around). */
const WINDOW_FROM = 100;
/** A row's height in a windowed table (fixed there by CSS: the window counts rows by it). */
const ROW_PX = 40;
/** Rows rendered beyond each edge of the view, so a scroll shows rows already there. */
const OVERSCAN = 8;

function RecipientBoard() {
  const { ids, loading, error } = useAppStore(useShallow((state) => ({ ids: state.supervisor.ids, loading: state.supervisor.loading, error: state.supervisor.error })));
  const now = useFreshNow(1000);
  // The recipients list names agents by username (the hosted API's shape); the directory the
  // console already keeps has their names. One map per change of the directory, not a search per row.
  const colleagues = useAppStore((state) => state.directory.colleagues);
  const names = useMemo(() => new Map(colleagues.map((c) => [c.id, c.name])), [colleagues]);
  // The rows in view of a windowed table: 500 rows re-rendered each second (their timers) and laid
  // out on every change kept the board from its frames.
  const [view, setView] = useState({ first: 0, rows: 15 });
  const windowed = ids.length >= WINDOW_FROM;
  const start = windowed ? Math.max(0, view.first - OVERSCAN) : 0;
  const end = windowed ? Math.min(ids.length, view.first + view.rows + OVERSCAN) : ids.length;
  const box = useRef<HTMLDivElement | null>(null);
  const measure = (element: HTMLDivElement): void => {
    const next = { first: Math.floor(element.scrollTop / ROW_PX), rows: Math.ceil(element.clientHeight / ROW_PX) };
    setView((v) => (v.first === next.first && v.rows === next.rows ? v : next));
  };
  const onScroll = (e: UIEvent<HTMLDivElement>): void => measure(e.currentTarget);
  // The box's own height decides how many rows are in view, once it is laid out.
  useEffect(() => {
    if (windowed && box.current !== null) measure(box.current);
  }, [windowed]);
  return (
    <section className="board-section" aria-labelledby="board-agents">
      <h2 id="board-agents">Agents</h2>
      {error !== null ? <p className="form-error">{error}</p> : null}
      {ids.length === 0 ? (
        <p className="muted">{loading ? "Reading the agents…" : "No agents."}</p>
      ) : (
        <div ref={box} className={windowed ? "scroll-x board-window" : "scroll-x"} role="group" aria-labelledby="board-agents" tabIndex={0} onScroll={windowed ? onScroll : undefined}>
          <table className="board-table" aria-rowcount={ids.length + 1}>
            <thead>
              <tr aria-rowindex={1}>
                <th scope="col">Agent</th>
                <th scope="col">State</th>
                <th scope="col">For</th>
                <th scope="col">Caller</th>
                <th scope="col">Calls</th>
                <th scope="col">
                  <abbr title="Average handle time (talk and wrap-up)">AHT</abbr>
                </th>
                <th scope="col">Missed</th>
                <th scope="col">Occupancy</th>
                <th scope="col">Supervise</th>
              </tr>
            </thead>
            <tbody>
              {start > 0 ? <tr aria-hidden="true" style={{ height: start * ROW_PX }} /> : null}
              {ids.slice(start, end).map((id, i) => (
                <RecipientLine key={id} id={id} tick={now} rowIndex={start + i + 2} displayName={names.get(id)} />
              ))}
              {end < ids.length ? <tr aria-hidden="true" style={{ height: (ids.length - end) * ROW_PX }} /> : null}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const RecipientLine = memo(function RecipientLine({ id, tick, rowIndex, displayName }: { id: string; tick: number; rowIndex: number; displayName: string | undefined }) {
  const now = Math.max(tick, systemClock.now());
  const row = useAppStore((state) => state.supervisor.rows[id]);
  const me = useAppStore((state) => state.session?.ownerId ?? "");
  const monitorMode = useAppStore((state) => (state.supervisor.monitor?.target === id ? state.supervisor.monitor.mode : null));
  const monitor = useAppStore((state) => state.monitorRecipient);
  const labels = useAppStore((state) => state.agent.awayReasons.reasons);
  if (row === undefined) return null;
  const call = row.call;
  const onCall = row.state === "On-A-Call";
  const reason = stateReasonShort(row, labels);
  const day = row.day;
  const occupancy = day === null ? null : liveDay(day, now).occupancy;
  return (
    <tr data-recipient-id={id} data-state={row.state} aria-rowindex={rowIndex}>
      <th scope="row">
        {displayName !== undefined && displayName !== row.name ? (
          <>
            {displayName} <span className="muted board-username">{row.name}</span>
          </>
        ) : (
          row.name
        )}
      </th>
      <td>
        <StateName state={row.state} />
        {row.state === "Wrapup-Time" && row.wrapupEndsAt !== null ? <span className="muted"> ({formatDuration(Math.max(0, row.wrapupEndsAt - now) + 999)} left)</span> : null}
        {reason !== null ? (
          <span className="board-reason" data-testid="agent-reason">
            {" "}
            · {reason}
          </span>
        ) : null}
      </td>
      <td className="state-timer">{row.since === null || row.state === "Not-Logged-In" ? "–" : formatDuration(now - row.since)}</td>
      <td>
        {call === null ? (
          "–"
        ) : (
          <>
            {call.callerName || call.callerNumber || "Unknown caller"}
            {call.queueName ? <span className="muted"> · {call.queueName}</span> : null}
          </>
        )}
      </td>
      <td data-testid="agent-handled">{row.handledCalls ?? "–"}</td>
      <td data-testid="agent-aht">{day === null || day.callsHandled === 0 ? "–" : formatDuration(day.averageHandleTime * 1000)}</td>
      <td data-testid="agent-missed">{row.missedCalls ?? "–"}</td>
      <td data-testid="agent-occupancy">{occupancy === null ? "–" : `${occupancy}%`}</td>
      <td>
        {onCall && id !== me ? (
          <div className="monitor-buttons">
            {MODES.map((mode) => (
              <button
                key={mode}
                type="button"
                className="button button-small"
                aria-pressed={monitorMode === null ? undefined : monitorMode === mode}
                aria-label={`${MODE_LABELS[mode]}: ${row.name}`}
                onClick={() => void monitor(id, mode)}
              >
                {MODE_LABELS[mode]}
              </button>
            ))}
          </div>
        ) : null}
      </td>
    </tr>
  );
});
