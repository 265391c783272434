// The account's queue time as this console knows it: a training run's clock, behind the server's
// by the run's pauses and standing still while one is paused (the queue statuses' queue_clock and
// the callq.clock events tell it). Read by the queues slice, which keeps it, and by the phone
// slice, whose queue offers count their callers' waits on it.
import type { QueueClock } from "../api/callq.js";

/** The account's queue time as last told, and when (this console's clock, ms). */
export interface QueueTime extends QueueClock {
  toldAt: number;
}

/**
 * The account's queue time at `now` (this console's clock, ms), on which callers' entry stamps are:
 * behind by a training run's pauses, and standing still while one is paused; `now` itself when
 * the server has not told otherwise.
 */
export function queueTimeAt(queueTime: QueueTime | null, now: number): number {
  if (queueTime === null) return now;
  return (queueTime.paused ? queueTime.toldAt : now) - queueTime.behindMs;
}
