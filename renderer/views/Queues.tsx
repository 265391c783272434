// The agent's queues: for each queue they are a member of, the callers waiting (longest first)
// and for how long, the longest wait, who is available to take a call, and the expected wait,
// live from the queue events while the view is open.
import { memo, useEffect, useMemo } from "react";
import { useShallow } from "zustand/react/shallow";
import type { QueueEntry } from "../api/callq.js";
import { useFreshNow } from "../components/AgentState.js";
import "../components/callq.css";
import { formatDuration } from "../components/useNow.js";
import { useAppStore } from "../state/context.js";
import { longestWaitSince, waitingCallbacks, waitingSessions } from "../state/queues.js";
import { queueTimeAt } from "../state/queue-time.js";

export function Queues() {
  const watch = useAppStore((state) => state.watchQueues);
  useEffect(() => watch(), [watch]);
  const me = useAppStore((state) => state.session?.ownerId ?? "");
  const { list, members, loadedAt, error } = useAppStore(
    useShallow((state) => ({ list: state.queues.list, members: state.queues.members, loadedAt: state.queues.loadedAt, error: state.queues.error })),
  );
  const mine = useMemo(() => list.filter((q) => members[q.id]?.includes(me) ?? false), [list, members, me]);

  return (
    <div className="queues-view">
      <h1>Queues</h1>
      {error !== null ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {loadedAt === null ? (
        <p className="muted">Reading your queues…</p>
      ) : mine.length === 0 ? (
        <p className="muted">You are a member of no queue. An admin can add you to one.</p>
      ) : (
        <div className="queues-grid">
          {mine.map((queue) => (
            <QueueCard key={queue.id} queue={queue} />
          ))}
        </div>
      )}
    </div>
  );
}

const QueueCard = memo(function QueueCard({ queue }: { queue: QueueEntry }) {
  const live = useAppStore((state) => state.queues.live[queue.id]);
  const tick = useFreshNow(1000);
  const queueTime = useAppStore((state) => state.queues.queueTime);
  // Callers' entry stamps are in the account's queue time, which a paused training run holds.
  const now = queueTimeAt(queueTime, tick);
  const waiting = waitingSessions(live);
  const callbacks = waitingCallbacks(live);
  const oldest = longestWaitSince(live);
  const status = live?.status ?? null;
  const headingId = `queue-${queue.id}`;

  return (
    <section className="card queue-card" aria-labelledby={headingId} data-queue-id={queue.id}>
      <h2 id={headingId}>{queue.name}</h2>
      <dl className="queue-figures">
        <div>
          <dt>Waiting</dt>
          <dd data-testid="queue-waiting">{waiting.length}</dd>
        </div>
        {callbacks.length > 0 || status?.stats.callbacksWaiting !== undefined ? (
          <div>
            <dt>Callbacks waiting</dt>
            <dd data-testid="queue-callbacks">{callbacks.length}</dd>
          </div>
        ) : null}
        <div>
          <dt>Longest wait</dt>
          <dd data-testid="queue-longest">{oldest === null ? "–" : formatDuration(now - oldest)}</dd>
        </div>
        <div>
          <dt>Available</dt>
          <dd data-testid="queue-available">{status === null ? "…" : `${status.available} of ${status.loggedIn}`}</dd>
        </div>
      </dl>
      {status !== null && status.stats.estimatedWait > 0 ? <p className="muted">Expected wait for a new caller: {formatDuration(status.stats.estimatedWait * 1000)}</p> : null}
      {waiting.length === 0 ? (
        <p className="muted">Nobody is waiting.</p>
      ) : (
        <table className="callers-table">
          <caption className="visually-hidden">Callers waiting in {queue.name}</caption>
          <thead>
            <tr>
              <th scope="col">Caller</th>
              <th scope="col">Waiting</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {waiting.map((s) => (
              <tr key={s.sessionId} data-session-id={s.sessionId}>
                <td>
                  {s.callerName || s.callerNumber || "Unknown caller"}
                  {s.callerName && s.callerNumber && s.callerName !== s.callerNumber ? <span className="muted mono"> {s.callerNumber}</span> : null}
                </td>
                <td className="state-timer">{s.enteredAt > 0 ? formatDuration(now - s.enteredAt) : "–"}</td>
                <td>{s.state === "offering" ? "Ringing an agent" : "Waiting"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
});
