// A queue's day in a small chart (uPlot on a canvas): new callers per five minutes and the most
// waiting at once, from the samples the console took while it watched today. Redrawn at most once
// a second, whatever the event rate; a text summary stands beside it for screen readers.
import { useEffect, useMemo, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useAppStore } from "../state/context.js";
import { callsPerBucket, DAY_BUCKET_MINUTES, localMidnight, type QueueDay } from "../state/queues.js";

const REDRAW_MS = 1000;
const HEIGHT = 90;

/** The chart's x values (bucket starts, Unix seconds) and series, trimmed to the hours with data. */
export function chartData(day: QueueDay): uPlot.AlignedData {
  const [year, month, date] = day.date.split("-").map(Number);
  const midnight = localMidnight(new Date(year ?? 1970, (month ?? 1) - 1, date ?? 1).getTime());
  const calls = callsPerBucket(day);
  const seen = day.waiting.map((w, i) => (w !== null || day.total[i] !== null ? i : -1)).filter((i) => i >= 0);
  const hour = 60 / DAY_BUCKET_MINUTES;
  const first = seen.length === 0 ? 0 : Math.floor((seen[0] ?? 0) / hour) * hour;
  const last = seen.length === 0 ? 0 : Math.min(day.waiting.length, (Math.floor((seen.at(-1) ?? 0) / hour) + 1) * hour);
  const xs: number[] = [];
  for (let i = first; i < last; i++) xs.push(midnight / 1000 + i * DAY_BUCKET_MINUTES * 60);
  return [xs, calls.slice(first, last), day.waiting.slice(first, last)];
}

export function QueueDayChart({ queueId, name }: { queueId: string; name: string }) {
  const day = useAppStore((state) => state.queues.day[queueId]);
  const box = useRef<HTMLDivElement | null>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef<QueueDay | undefined>(day);
  const timer = useRef<number | null>(null);
  latest.current = day;

  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    const style = getComputedStyle(element);
    const text = style.color;
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height: HEIGHT,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(2, max)] } },
      axes: [
        {
          stroke: text,
          grid: { show: false },
          ticks: { show: false },
          size: 24,
          font: "11px system-ui",
          // A label like "10:45 AM" is about 55 px at 11 px: ticks at least this far apart never touch
          // (uPlot's default of 50 px let them overlap on a narrow tile).
          space: 72,
          values: (_u, splits) => splits.map((s) => new Date(s * 1000).toLocaleTimeString([], { hour: "numeric", minute: "2-digit" })),
        },
        { stroke: text, grid: { stroke: "rgba(127,127,127,0.25)", width: 1 }, ticks: { show: false }, size: 28, font: "11px system-ui" },
      ],
      // New callers are counts per bucket: bars, so a single bucket (the first five minutes watched)
      // shows too; a line needs two points.
      series: [
        {},
        { label: "New callers", stroke: "#2563eb", width: 1.5, fill: "rgba(37,99,235,0.35)", paths: uPlot.paths.bars?.({ size: [0.8, 24] }) },
        { label: "Most waiting", stroke: "#d97706", width: 1.5, points: { show: true, size: 4 } },
      ],
    };
    const instance = new uPlot(options, latest.current ? chartData(latest.current) : [[], [], []], element);
    plot.current = instance;
    const resize = new ResizeObserver(() => instance.setSize({ width: Math.max(200, element.clientWidth), height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      instance.destroy();
      plot.current = null;
      if (timer.current !== null) window.clearTimeout(timer.current);
      timer.current = null;
    };
  }, []);

  useEffect(() => {
    if (timer.current !== null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      const current = latest.current;
      if (current !== undefined) plot.current?.setData(chartData(current));
    }, REDRAW_MS);
  }, [day]);

  const summary = useMemo(() => summaryOf(day), [day]);
  return (
    <figure className="day-chart-figure">
      <div ref={box} className="day-chart" role="img" aria-label={`${name} today: ${summary}`} />
      <figcaption className="muted">
        <span className="visually-hidden">{summary}</span>
        <span aria-hidden="true">Today, per {DAY_BUCKET_MINUTES} min: new callers (blue), most waiting (orange)</span>
      </figcaption>
    </figure>
  );
}

function summaryOf(day: QueueDay | undefined): string {
  if (day === undefined) return "no samples yet";
  const calls = callsPerBucket(day).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  const most = day.waiting.reduce<number>((max, n) => Math.max(max, n ?? 0), 0);
  return `${calls} new callers seen while watched, at most ${most} waiting at once`;
}
