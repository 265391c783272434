// The supervisor's History panel: a queue (or every queue) and a local day, its figures per
// 15-minute interval as the server stored them (they survive a restart), charted with uPlot
// (offered, answered and abandoned as lines on the count axis, service level on a percent axis),
// the day's totals and a table of the intervals that had callers for screen readers, and the
// server's CSV of the day. The figures are named with their own queue and day: while a new choice
// is read, the previous choice's stay dimmed under its name (never under the new choice's), and a
// choice that could not be read says why, with Try again.
import { useEffect, useMemo, useRef } from "react";
import { useShallow } from "zustand/react/shallow";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { historyCsvUrl, serviceLevelOf, type HistoryInterval } from "../api/queue-history.js";
import { connectionOf } from "../state/account-connection.js";
import { useAppStore } from "../state/context.js";
import { ALL_QUEUES, shiftDay, type HistoryChoice } from "../state/queue-history.js";

const HEIGHT = 180;

/** The chart's x values (interval starts, Unix seconds) and its four series. */
export function historyChartData(intervals: readonly HistoryInterval[]): uPlot.AlignedData {
  return [
    intervals.map((i) => i.start / 1000),
    intervals.map((i) => i.offered),
    intervals.map((i) => i.answered),
    intervals.map((i) => i.abandoned),
    intervals.map((i) => serviceLevelOf(i)),
  ];
}

export function QueueHistory() {
  const { queues, history, show, session, serverUrl } = useAppStore(
    useShallow((state) => ({ queues: state.queues.list, history: state.queueHistory, show: state.showQueueHistory, session: state.session, serverUrl: state.serverUrl })),
  );
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  const { queueId, day, intervals, shown, loading, error } = history;
  const nameOf = (choice: HistoryChoice) => `${choice.queueId === ALL_QUEUES ? "All queues" : (queues.find((q) => q.id === choice.queueId)?.name ?? choice.queueId)} on ${choice.day}`;
  // The figures on screen are another choice's than the one being read: dimmed, under their own name.
  const previous = loading && shown !== null && (shown.queueId !== queueId || shown.day !== day);

  // The panel opens on today's figures of the queue chosen last; later choices read through `show`.
  const openedOn = useRef(queueId);
  useEffect(() => {
    void show(openedOn.current);
  }, [show]);

  const totals = useMemo(() => (intervals === null ? null : dayTotals(intervals)), [intervals]);
  const csvQueues = queueId === ALL_QUEUES ? queues : queues.filter((q) => q.id === queueId);
  const level = totals === null ? null : serviceLevelOf(totals);

  return (
    <section className="board-section queue-history" aria-labelledby="board-history">
      <h2 id="board-history">History</h2>
      <div className="history-controls">
        <label>
          Queue{" "}
          <select value={queueId} onChange={(e) => void show(e.target.value, day)}>
            <option value={ALL_QUEUES}>All queues</option>
            {queues.map((q) => (
              <option key={q.id} value={q.id}>
                {q.name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="button button-small" onClick={() => void show(queueId, shiftDay(day, -1))}>
          Previous day
        </button>
        <label>
          Day{" "}
          <input type="date" value={day} required onChange={(e) => (e.target.value === "" ? undefined : void show(queueId, e.target.value))} />
        </label>
        <button type="button" className="button button-small" onClick={() => void show(queueId, shiftDay(day, 1))}>
          Next day
        </button>
      </div>
      {error !== null ? (
        <p className="form-error history-error" role="alert">
          {error}{" "}
          <button type="button" className="button button-small" onClick={() => void show(queueId, day)}>
            Try again
          </button>
        </p>
      ) : null}
      <p className="muted" aria-live="polite" data-testid="history-state">
        {loading ? `Loading ${nameOf({ queueId, day })}…` : error === null && shown !== null ? `${nameOf(shown)}, per 15 minutes` : ""}
      </p>
      {intervals !== null && shown !== null && totals !== null ? (
        <div className="history-figures" aria-busy={loading} data-shown={`${shown.queueId} ${shown.day}`}>
          {previous ? (
            <p className="history-previous" data-testid="history-previous">
              Still showing the previous choice: {nameOf(shown)}
            </p>
          ) : null}
          <div className={previous ? "history-body history-dimmed" : "history-body"}>
            <HistoryChart intervals={intervals} label={nameOf(shown)} />
            <dl className="queue-figures history-totals" aria-label={`The day's totals: ${nameOf(shown)}`}>
              <div>
                <dt>Offered</dt>
                <dd data-testid="history-offered">{totals.offered}</dd>
              </div>
              <div>
                <dt>Answered</dt>
                <dd data-testid="history-answered">{totals.answered}</dd>
              </div>
              <div>
                <dt>Abandoned</dt>
                <dd data-testid="history-abandoned">{totals.abandoned}</dd>
              </div>
              <div>
                <dt>Service level</dt>
                <dd data-testid="history-service-level">{level === null ? "–" : `${level}%`}</dd>
              </div>
            </dl>
            <IntervalTable intervals={intervals} />
          </div>
        </div>
      ) : null}
      {connection !== null && csvQueues.length > 0 ? (
        <p className="history-csv">
          CSV of {day}:{" "}
          {csvQueues.map((q, i) => (
            <span key={q.id}>
              {i > 0 ? ", " : null}
              <a href={historyCsvUrl(connection, q.id, day)} download>
                {q.name}
              </a>
            </span>
          ))}
        </p>
      ) : null}
    </section>
  );
}

/** The day's counts: its intervals added up. */
function dayTotals(intervals: readonly HistoryInterval[]): Omit<HistoryInterval, "start" | "time"> {
  const totals = { offered: 0, answered: 0, abandoned: 0, timedOut: 0, answeredWithin: 0 };
  for (const i of intervals) {
    totals.offered += i.offered;
    totals.answered += i.answered;
    totals.abandoned += i.abandoned;
    totals.timedOut += i.timedOut;
    totals.answeredWithin += i.answeredWithin;
  }
  return totals;
}

/** The intervals that had callers, as a table (the chart's figures in words). */
function IntervalTable({ intervals }: { intervals: readonly HistoryInterval[] }) {
  const busy = intervals.filter((i) => i.offered > 0 || i.answered > 0 || i.abandoned > 0);
  if (busy.length === 0) return <p className="muted">No callers that day.</p>;
  return (
    <div className="scroll-x" role="group" aria-label="Intervals with callers" tabIndex={0}>
      <table className="board-table" data-testid="history-table">
        <thead>
          <tr>
            <th scope="col">From</th>
            <th scope="col">Offered</th>
            <th scope="col">Answered</th>
            <th scope="col">Abandoned</th>
            <th scope="col">Service level</th>
          </tr>
        </thead>
        <tbody>
          {busy.map((i) => {
            const level = serviceLevelOf(i);
            return (
              <tr key={i.start}>
                <th scope="row">{i.time}</th>
                <td>{i.offered}</td>
                <td>{i.answered}</td>
                <td>{i.abandoned}</td>
                <td>{level === null ? "–" : `${level}%`}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function HistoryChart({ intervals, label }: { intervals: readonly HistoryInterval[]; label: string }) {
  const box = useRef<HTMLDivElement | null>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(intervals);
  latest.current = intervals;

  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    const text = getComputedStyle(element).color;
    const axisFont = "11px system-ui";
    const options: uPlot.Options = {
      width: Math.max(300, element.clientWidth),
      height: HEIGHT,
      cursor: { show: true, drag: { x: false, y: false } },
      scales: { x: { time: true }, count: { range: (_u, _min, max) => [0, Math.max(2, max)] }, percent: { range: [0, 100] } },
      axes: [
        {
          stroke: text,
          grid: { show: false },
          size: 28,
          font: axisFont,
          values: (_u, splits) => splits.map((s) => new Date(s * 1000).toLocaleTimeString([], { hour: "numeric", minute: "2-digit" })),
        },
        { scale: "count", stroke: text, grid: { stroke: "rgba(127,127,127,0.25)", width: 1 }, size: 32, font: axisFont },
        { scale: "percent", side: 1, stroke: text, grid: { show: false }, size: 48, font: axisFont, values: (_u, splits) => splits.map((s) => `${s}%`) },
      ],
      series: [
        {},
        { label: "Offered", scale: "count", stroke: "#2563eb", width: 1.5 },
        { label: "Answered", scale: "count", stroke: "#16a34a", width: 1.5 },
        { label: "Abandoned", scale: "count", stroke: "#dc2626", width: 1.5 },
        { label: "Service level", scale: "percent", stroke: "#d97706", width: 1.5, dash: [4, 3], spanGaps: false, points: { show: true, size: 4 } },
      ],
    };
    const instance = new uPlot(options, historyChartData(latest.current), element);
    plot.current = instance;
    const resize = new ResizeObserver(() => instance.setSize({ width: Math.max(300, element.clientWidth), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      instance.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(historyChartData(intervals));
  }, [intervals]);

  return (
    <figure className="history-chart-figure">
      <div ref={box} className="history-chart" role="img" aria-label={`${label}: offered, answered, abandoned and service level per 15 minutes; the table gives the figures`} />
    </figure>
  );
}
