// A queue's figures per 15-minute interval (intervals.ts), from which the day's totals (the local
// day of the server's clock: they start again at midnight) and the waits behind average_wait and
// estimated_wait come, in seconds. Each change marks its interval for the engine to hand to the
// interval ledger; on start the stored intervals seed them, so a restart keeps the day so far.
// Two kinds of "missed": the spec's missed_sessions are callers who timed out unhandled;
// missed_offers (a local addition, Qubicle's "missed") counts each offer a recipient let go
// (rejected, not answered in ring_timeout, no device to ring), the same events that add to the
// recipient's missed_calls.
import type { StoppedWaiting } from "./alerts.js";
import { addFigures, dayOf, emptyFigures, intervalStart, round, type IntervalFigures, type QueueInterval } from "./intervals.js";

/** Intervals older than this before the newest are dropped from memory (the ledger keeps them). */
const KEEP_MS = 48 * 3600_000;
/** The ends of waiting kept for alerts: their longest window. */
const STOPPED_KEEP_MS = 86_400_000;

export class QueueStats {
  readonly #queueId: string;
  /** Interval start (Unix ms) -> figures; today's, yesterday's and any a late event touched. */
  readonly #intervals = new Map<number, IntervalFigures>();
  readonly #dirty = new Set<number>();
  /** Who stopped waiting in the last day, oldest first, for the service level over an alert's window (not stored). */
  readonly #stopped: StoppedWaiting[] = [];

  constructor(queueId: string) {
    this.#queueId = queueId;
  }

  /** Stored intervals read back at start; a figure already counted in memory is not counted twice. */
  seed(intervals: readonly QueueInterval[]): void {
    for (const stored of intervals) {
      if (stored.queue_id !== this.#queueId || this.#intervals.has(stored.start)) continue;
      const figures = emptyFigures();
      addFigures(figures, stored);
      this.#intervals.set(stored.start, figures);
    }
  }

  joined(enteredAt: number): void {
    this.#count(enteredAt, (f) => (f.offered += 1));
  }

  /** An offer of a session that entered at `enteredAt` ended unanswered by the recipient's doing. */
  offerMissed(enteredAt: number): void {
    this.#count(enteredAt, (f) => (f.missed_offers += 1));
  }

  /** A session stopped waiting at `now`: answered, abandoned or timed out; `thresholdS` is its queue's service-level threshold. */
  left(enteredAt: number, now: number, how: "answered" | "abandoned" | "timeout", thresholdS: number): void {
    const wait = (now - enteredAt) / 1000;
    const within = wait <= thresholdS;
    this.#stopped.push({ at: now, answeredInTime: how === "answered" && within });
    while (this.#stopped.length > 0 && (this.#stopped[0]?.at ?? now) < now - STOPPED_KEEP_MS) this.#stopped.shift();
    this.#count(enteredAt, (f) => {
      f.wait_sum += wait;
      if (how === "answered") {
        f.answered += 1;
        f.answered_wait_sum += wait;
        if (within) f.answered_within += 1;
      } else if (how === "abandoned") {
        f.abandoned += 1;
        if (within) f.abandoned_within += 1;
      } else f.timed_out += 1;
    });
  }

  /**
   * A callback's step: asked for, connected, or given up. A callback's caller left the line by
   * choice, so it counts in neither the waits nor the service level.
   */
  callback(enteredAt: number, what: "requested" | "connected" | "failed"): void {
    this.#count(enteredAt, (f) => (f[`callbacks_${what}`] += 1));
  }

  /** An answered call of a session that entered at `enteredAt` ended after `handleS` seconds. */
  handled(enteredAt: number, handleS: number): void {
    this.#count(enteredAt, (f) => {
      f.handled += 1;
      f.handle_sum += handleS;
    });
  }

  /** The sessions that stopped waiting in the last day (since this server started), oldest first. */
  get stopped(): readonly StoppedWaiting[] {
    return this.#stopped;
  }

  /** The figures of the local day `now` falls in. */
  today(now: number): IntervalFigures {
    const day = dayOf(now);
    const sum = emptyFigures();
    for (const [start, figures] of this.#intervals) if (dayOf(start) === day) addFigures(sum, figures);
    return sum;
  }

  /** The figures of the intervals starting at or after `from` (Unix ms). */
  since(from: number): IntervalFigures {
    const sum = emptyFigures();
    for (const [start, figures] of this.#intervals) if (start >= from) addFigures(sum, figures);
    return sum;
  }

  /** The intervals changed since the last call, for the ledger. */
  takeChanged(): QueueInterval[] {
    const out: QueueInterval[] = [];
    for (const start of this.#dirty) {
      const figures = this.#intervals.get(start);
      if (figures) out.push({ queue_id: this.#queueId, start, ...figures });
    }
    this.#dirty.clear();
    return out;
  }

  get changed(): boolean {
    return this.#dirty.size > 0;
  }

  /**
   * What a caller joining now should expect: the day's average wait of answered sessions, scaled
   * by how many are ahead per available recipient; 0 with nobody ahead and somebody available.
   */
  estimatedWait(now: number, ahead: number, available: number): number {
    const day = this.today(now);
    const perCall = day.answered === 0 ? 0 : day.answered_wait_sum / day.answered;
    if (available > 0 && ahead < available) return 0;
    return round(perCall * Math.max(1, Math.ceil((ahead + 1) / Math.max(1, available))));
  }

  #count(enteredAt: number, change: (f: IntervalFigures) => void): void {
    const start = intervalStart(enteredAt);
    let figures = this.#intervals.get(start);
    if (!figures) {
      figures = emptyFigures();
      this.#intervals.set(start, figures);
      this.#forgetBefore(start - KEEP_MS);
    }
    change(figures);
    this.#dirty.add(start);
  }

  #forgetBefore(limit: number): void {
    for (const start of this.#intervals.keys()) if (start < limit && !this.#dirty.has(start)) this.#intervals.delete(start);
  }
}
