// A queue's history as the supervisor's History panel reads it: the server's figures per 15-minute
// interval of one local day (GET callq_queues/{id}/intervals?day=, server/api/callq-stats.ts), the
// figures of several queues summed interval by interval, and the URL of the server's CSV.
import { accountMediaUrl, accountRequest, type AccountConnection } from "./account.js";
import { isRecord } from "./client.js";
import { gregorianToMs } from "./gregorian.js";
import { numberOf, text } from "./platform.js";

/** One interval's figures (the counts the panel charts and the service level's inputs). */
export interface HistoryInterval {
  /** Epoch ms of the interval's start. */
  start: number;
  /** Local HH:MM of the start, as the server gives it. */
  time: string;
  offered: number;
  answered: number;
  abandoned: number;
  timedOut: number;
  answeredWithin: number;
}

export interface QueueHistoryApi {
  /** The queue's intervals of `day` (YYYY-MM-DD), every one of the day, oldest first. */
  day(queueId: string, day: string): Promise<HistoryInterval[]>;
}

export function intervalOf(row: Record<string, unknown>): HistoryInterval {
  return {
    start: gregorianToMs(numberOf(row["interval_start"])),
    time: text(row, "time"),
    offered: numberOf(row["offered"]),
    answered: numberOf(row["answered"]),
    abandoned: numberOf(row["abandoned"]),
    timedOut: numberOf(row["timed_out"]),
    answeredWithin: numberOf(row["answered_within"]),
  };
}

export function createQueueHistoryApi(connection: AccountConnection, fetchImpl?: (input: string, init: RequestInit) => Promise<Response>): QueueHistoryApi {
  return {
    async day(queueId, day) {
      const path = `/callq_queues/${encodeURIComponent(queueId)}/intervals?day=${encodeURIComponent(day)}`;
      const data = (await accountRequest<unknown>(connection, "GET", path, undefined, fetchImpl)).data;
      if (!Array.isArray(data)) throw new Error("the server's intervals are not a list");
      return data.filter(isRecord).map(intervalOf);
    },
  };
}

/** Several queues' intervals of one day summed interval by interval (every queue lists the same starts). */
export function sumIntervals(days: readonly (readonly HistoryInterval[])[]): HistoryInterval[] {
  const byStart = new Map<number, HistoryInterval>();
  for (const day of days) {
    for (const interval of day) {
      const sum = byStart.get(interval.start);
      if (sum === undefined) {
        byStart.set(interval.start, { ...interval });
        continue;
      }
      sum.offered += interval.offered;
      sum.answered += interval.answered;
      sum.abandoned += interval.abandoned;
      sum.timedOut += interval.timedOut;
      sum.answeredWithin += interval.answeredWithin;
    }
  }
  return [...byStart.values()].sort((a, b) => a.start - b.start);
}

/**
 * Answered within the threshold over the callers who stopped waiting, in percent to one decimal,
 * as the server counts it (docs/design-notes.md, "service level and intervals"); null before any.
 */
export function serviceLevelOf(figures: Pick<HistoryInterval, "answered" | "abandoned" | "timedOut" | "answeredWithin">): number | null {
  const stopped = figures.answered + figures.abandoned + figures.timedOut;
  return stopped === 0 ? null : Math.round((1000 * figures.answeredWithin) / stopped) / 10;
}

/** The server's CSV of a queue's day: a URL the browser downloads itself (the token in the query, as media URLs carry it). */
export function historyCsvUrl(connection: AccountConnection, queueId: string, day: string): string {
  return accountMediaUrl(connection, `/callq_queues/${encodeURIComponent(queueId)}/intervals`, { day, accept: "csv", file_name: `queue-history-${queueId}-${day}.csv` });
}
