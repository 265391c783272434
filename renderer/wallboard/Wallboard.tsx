// The wallboard: large type for a screen across the room, read-only, nothing to click. Each queue
// is a tile (callers waiting and the longest wait first: what a floor acts on), then the day's
// answered and abandoned calls; the floor's agents by state at the foot.
import { useEffect, useState } from "react";
import { formatDuration, useNow } from "../components/useNow.js";
import type { Board, BoardQueue, FeedState } from "./board-feed.js";

const STATE_ORDER = ["Ready", "Call-Offer", "On-A-Call", "Wrapup-Time", "Away"];
const STATE_LABEL: Record<string, string> = {
  Ready: "Ready",
  "Call-Offer": "Ringing",
  "On-A-Call": "On a call",
  "Wrapup-Time": "Wrap-up",
  Away: "Away",
};

export function Wallboard({ subscribe }: { subscribe: (onState: (state: FeedState) => void) => () => void }) {
  const [state, setState] = useState<FeedState>({ kind: "loading" });
  useEffect(() => subscribe(setState), [subscribe]);
  const now = useNow(1000);

  if (state.kind === "loading") return <main className="wb-message">Opening the wallboard…</main>;
  if (state.kind === "refused") return <main className="wb-message" role="alert">{state.reason}</main>;
  const board = state.board;
  if (board === null) return <main className="wb-message" role="alert">The board cannot be read: {state.kind === "stale" ? state.reason : ""}</main>;
  const readAt = state.readAt ?? now;
  // Waits count on between readings in the queue's time: not while a training run is paused.
  const queueSecondsSince = board.queue_clock?.paused === true ? 0 : Math.max(0, (now - readAt) / 1000);
  return (
    <main
      className={state.kind === "stale" ? "wb stale" : "wb"}
      aria-label={`Wallboard ${board.name}`}
      data-queue-clock={board.queue_clock?.paused === true ? "paused" : "running"}
    >
      <header className="wb-head">
        <h1>{board.name}</h1>
        {state.kind === "stale" ? (
          <p className="wb-stale" role="status">
            Not updated for {formatDuration(now - readAt)}
          </p>
        ) : null}
      </header>
      <section className="wb-queues">
        {board.queues.map((q) => (
          <QueueTile key={q.id} queue={q} secondsSinceRead={queueSecondsSince} />
        ))}
        {board.queues.length === 0 ? <p className="wb-empty">No queues on this board.</p> : null}
      </section>
      <Agents board={board} />
    </main>
  );
}

function QueueTile({ queue, secondsSinceRead }: { queue: BoardQueue; secondsSinceRead: number }) {
  // The longest wait keeps counting between readings while somebody waits.
  const longest = queue.waiting > 0 ? queue.longest_wait + secondsSinceRead : 0;
  return (
    <article className={queue.waiting > 0 ? "wb-queue busy" : "wb-queue"} aria-label={queue.name} data-queue={queue.id}>
      <h2>{queue.name}</h2>
      {(queue.alerts ?? []).map((a) => (
        <p key={`${a.kind}-${a.limit}`} className="wb-alert" role="alert">
          {alertText(a)}
        </p>
      ))}
      <dl>
        <Figure label="Waiting" value={String(queue.waiting)} big />
        <Figure label="Longest wait" value={formatDuration(longest * 1000)} big />
        <ServiceLevel queue={queue} />
        <Figure label="Available" value={`${queue.available} of ${queue.logged_in}`} />
        <Figure label="Answered" value={String(queue.stats.answered_sessions)} />
        <Figure label="Abandoned" value={String(queue.stats.abandoned_sessions)} />
        <Figure label="Average wait" value={formatDuration(queue.stats.average_wait * 1000)} />
      </dl>
    </article>
  );
}

function alertText(a: NonNullable<BoardQueue["alerts"]>[number]): string {
  if (a.kind === "longest_wait") return `A caller has waited over ${formatDuration(a.limit * 1000)}`;
  if (a.kind === "service_level") return `Service level ${Math.round(a.value)}%, under ${a.limit}%`;
  return `An agent over ${formatDuration(a.limit * 1000)} in one state`;
}

/** Today's service level beside its goal; marked when under it. */
function ServiceLevel({ queue }: { queue: BoardQueue }) {
  const level = queue.stats.service_level;
  const goal = queue.service_level_goal;
  if (level === undefined || goal === undefined) return null;
  const under = level !== null && level < goal.target_percent;
  return (
    <div className={under ? "wb-figure under" : "wb-figure"} data-figure="Service level">
      <dt>
        Service level (goal {goal.target_percent}% in {goal.answered_within_s} s)
      </dt>
      <dd>{level === null ? "–" : `${Math.round(level)}%`}</dd>
    </div>
  );
}

function Figure({ label, value, big = false }: { label: string; value: string; big?: boolean }) {
  return (
    <div className={big ? "wb-figure big" : "wb-figure"} data-figure={label}>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}

function Agents({ board }: { board: Board }) {
  const states = [...STATE_ORDER, ...Object.keys(board.recipients_by_state).filter((s) => !STATE_ORDER.includes(s))];
  return (
    <footer className="wb-agents" aria-label="Agents by state">
      {states.map((s) => (
        <div key={s} className="wb-figure" data-state={s}>
          <dt>{STATE_LABEL[s] ?? s}</dt>
          <dd>{board.recipients_by_state[s] ?? 0}</dd>
        </div>
      ))}
    </footer>
  );
}
