// A queue's totals for the current day (reset at local midnight) and the waits behind
// average_wait and estimated_wait, in seconds. Two kinds of "missed": the spec's missed_sessions
// are callers who timed out unhandled; missedOffers (a local addition, Qubicle's "missed") counts
// each offer a recipient let go (rejected, not answered in ring_timeout, no device to ring), the
// same events that add to the recipient's missed_calls.

export class QueueStats {
  #day = "";
  totalSessions = 0;
  missedSessions = 0;
  abandonedSessions = 0;
  answeredSessions = 0;
  missedOffers = 0;
  #waitSum = 0;
  #waitCount = 0;
  #answeredWaitSum = 0;
  #answeredCount = 0;

  /** Starts a new day's totals when `now` is on another local date than the last count. */
  roll(now: number): void {
    const day = new Date(now).toDateString();
    if (day === this.#day) return;
    this.#day = day;
    this.totalSessions = 0;
    this.missedSessions = 0;
    this.abandonedSessions = 0;
    this.answeredSessions = 0;
    this.missedOffers = 0;
    this.#waitSum = 0;
    this.#waitCount = 0;
    this.#answeredWaitSum = 0;
    this.#answeredCount = 0;
  }

  joined(now: number): void {
    this.roll(now);
    this.totalSessions += 1;
  }

  /** An offer of one of the queue's sessions ended unanswered by the recipient's doing. */
  offerMissed(now: number): void {
    this.roll(now);
    this.missedOffers += 1;
  }

  /** A session stopped waiting after `waitMs`: answered, abandoned or timed out. */
  left(now: number, waitMs: number, how: "answered" | "abandoned" | "timeout"): void {
    this.roll(now);
    const wait = waitMs / 1000;
    this.#waitSum += wait;
    this.#waitCount += 1;
    if (how === "answered") {
      this.answeredSessions += 1;
      this.#answeredWaitSum += wait;
      this.#answeredCount += 1;
    } else if (how === "abandoned") this.abandonedSessions += 1;
    else this.missedSessions += 1;
  }

  /** Average wait of the day's sessions that stopped waiting, seconds. */
  averageWait(now: number): number {
    this.roll(now);
    return this.#waitCount === 0 ? 0 : round(this.#waitSum / this.#waitCount);
  }

  /**
   * What a caller joining now should expect: the day's average wait of answered sessions, scaled
   * by how many are ahead per available recipient; 0 with nobody ahead and somebody available.
   */
  estimatedWait(now: number, ahead: number, available: number): number {
    this.roll(now);
    const perCall = this.#answeredCount === 0 ? 0 : this.#answeredWaitSum / this.#answeredCount;
    if (available > 0 && ahead < available) return 0;
    return round(perCall * Math.max(1, Math.ceil((ahead + 1) / Math.max(1, available))));
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
