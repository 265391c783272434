// The wallboard's data: the board read every few seconds with the wallboard's key, which the
// page's URL carries in its fragment (`#account=..&board=..&key=..`; a browser never sends a
// fragment to a server, so the key stays out of logs and referrers). A failed read keeps the last
// board on screen, marked stale, and is tried again at the next turn; a refused key stops.
import { ApiClient, ApiRequestError } from "../api/client.js";
import type { Clock } from "../clock.js";

export interface BoardQueue {
  id: string;
  name: string;
  waiting: number;
  /** Seconds the longest-waiting caller has waited. */
  longest_wait: number;
  logged_in: number;
  available: number;
  /** The queue's alerts that hold now (kinds and figures, never who). */
  alerts?: { kind: "service_level" | "longest_wait" | "state_too_long"; value: number; limit: number }[];
  /** The queue's goal: target_percent of callers answered within answered_within_s. */
  service_level_goal?: { answered_within_s: number; target_percent: number };
  stats: {
    /** Percent answered within the goal's seconds of those who stopped waiting today; null before any. */
    service_level?: number | null;
    total_sessions: number;
    answered_sessions: number;
    abandoned_sessions: number;
    missed_sessions: number;
    average_wait: number;
    estimated_wait: number;
    [figure: string]: unknown;
  };
}

export interface Board {
  id: string;
  name: string;
  /** Gregorian seconds, the server's time of the reading. */
  at: number;
  queues: BoardQueue[];
  recipients_by_state: Record<string, number>;
  /** The account's queue time against the server's (a training run's pauses); absent with no queue. */
  queue_clock?: { behind_ms: number; paused: boolean };
}

export interface BoardAddress {
  accountId: string;
  boardId: string;
  key: string;
}

/** The board named by a page fragment, or null when it names none. */
export function boardAddress(hash: string): BoardAddress | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const accountId = params.get("account") ?? "";
  const boardId = params.get("board") ?? "";
  const key = params.get("key") ?? "";
  const hex = /^[0-9a-f]{32,64}$/;
  return hex.test(accountId) && hex.test(boardId) && hex.test(key) ? { accountId, boardId, key } : null;
}

export type FeedState =
  | { kind: "loading" }
  | { kind: "live"; board: Board; readAt: number }
  /** The last read failed; the board shown is the last one read, if any. */
  | { kind: "stale"; board: Board | null; readAt: number | null; reason: string }
  /** The key was refused (revoked, expired, another board's): nothing more is tried. */
  | { kind: "refused"; reason: string };

export interface FeedOptions {
  address: BoardAddress;
  baseUrl: string;
  clock: Clock;
  everyMs: number;
  onState(state: FeedState): void;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

/** Starts reading the board; the answer stops it. */
export function startBoardFeed(options: FeedOptions): () => void {
  const client = new ApiClient({ baseUrl: options.baseUrl, token: options.address.key, fetch: options.fetch });
  const path = `/v2/accounts/${options.address.accountId}/wallboards/${options.address.boardId}/board`;
  let stopped = false;
  let cancel: () => void = () => undefined;
  let last: { board: Board; readAt: number } | null = null;

  const read = async (): Promise<void> => {
    try {
      const envelope = await client.request<Board>("GET", path);
      if (stopped) return;
      last = { board: envelope.data, readAt: options.clock.now() };
      options.onState({ kind: "live", ...last });
    } catch (err) {
      if (stopped) return;
      if (err instanceof ApiRequestError && (err.status === 401 || err.status === 403 || err.status === 404)) {
        options.onState({ kind: "refused", reason: err.status === 404 ? "this wallboard no longer exists" : "this wallboard's key is no longer valid" });
        stopped = true;
        return;
      }
      options.onState({ kind: "stale", board: last?.board ?? null, readAt: last?.readAt ?? null, reason: err instanceof Error ? err.message : String(err) });
    }
    if (!stopped) cancel = options.clock.after(options.everyMs, () => void read());
  };
  options.onState({ kind: "loading" });
  void read();
  return () => {
    stopped = true;
    cancel();
  };
}
