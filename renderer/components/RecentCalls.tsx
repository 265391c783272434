// The user's recent calls from the CDRs, newest first, each with a button to call back; an
// outgoing call that did not connect says why (busy, no such number ...).
import { useShallow } from "zustand/react/shallow";
import type { CallRecord } from "../api/platform.js";
import { useAppStore } from "../state/context.js";
import { recordFailureText } from "../state/failure-reason.js";

const TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "short" });

/** An unanswered call: why an outgoing one failed ("Busy"); a missed one needs no more words. */
function outcomeOf(row: CallRecord): string {
  if (row.direction === "inbound") return "–";
  return recordFailureText(row.hangupCause, row.hangupCode) ?? "Not answered";
}

export function RecentCalls() {
  const { rows, loading, error, dial, ready, reload } = useAppStore(
    useShallow((state) => ({
      rows: state.recentCalls.rows,
      loading: state.recentCalls.loading,
      error: state.recentCalls.error,
      dial: state.dial,
      ready: state.phone.status === "registered",
      reload: state.loadRecentCalls,
    })),
  );

  return (
    <section className="card recent-calls" aria-labelledby="recent-heading" aria-busy={loading}>
      <div className="card-heading">
        <h2 id="recent-heading">Recent calls</h2>
        <button type="button" className="button button-small" onClick={() => void reload()}>
          Refresh
        </button>
      </div>
      {error !== null ? <p className="form-error">{error}</p> : null}
      {rows.length === 0 && error === null ? <p className="muted">{loading ? "Loading…" : "No calls yet."}</p> : null}
      {rows.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Direction</th>
              <th scope="col">Who</th>
              <th scope="col">When</th>
              <th scope="col">Duration</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const who = row.otherName && row.otherName !== row.otherNumber ? `${row.otherName} (${row.otherNumber})` : row.otherNumber || "Unknown";
              return (
                <tr key={row.id}>
                  <td>{row.direction === "inbound" ? (row.answered ? "In" : "Missed") : "Out"}</td>
                  <td>{who}</td>
                  <td>{row.startedAt > 0 ? TIME.format(row.startedAt) : ""}</td>
                  <td className={row.answered ? "mono" : "call-outcome"}>{row.answered ? `${Math.floor(row.durationS / 60)}:${String(row.durationS % 60).padStart(2, "0")}` : outcomeOf(row)}</td>
                  <td>
                    {row.otherNumber !== "" ? (
                      <button type="button" className="button button-small" disabled={!ready} onClick={() => void dial(row.otherNumber)} aria-label={`Call ${who}`}>
                        Call
                      </button>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
