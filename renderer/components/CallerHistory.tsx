// The screen pop: beside a ringing or live call, who the caller is and their last calls (when,
// with whom, how they ended and the agent's note), a player for each call's recordings, and the
// CRM link, opened outside the app (the desktop app hands new windows to the system browser).
import { useEffect, useMemo, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import { recordingAudioUrl } from "../api/recordings.js";
import { connectionOf } from "../state/account-connection.js";
import { useAppStore } from "../state/context.js";
import type { CallView } from "../state/phone.js";
import { ScheduleCallbackForm } from "./ScheduledCallbacks.js";
import { formatDuration } from "./useNow.js";
import "./caller-history.css";

function when(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function CallerHistory({ call }: { call: CallView }) {
  const number = call.remoteUser;
  const queueId = call.offer.queueId;
  const { entry, load, session, serverUrl } = useAppStore(
    useShallow((state) => ({ entry: state.callerHistory[number], load: state.loadCallerHistory, session: state.session, serverUrl: state.serverUrl })),
  );
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  const [playing, setPlaying] = useState<string | null>(null);

  useEffect(() => {
    void load(number, queueId);
  }, [load, number, queueId]);

  if (number === "" || entry === undefined) return null;
  const history = entry.history;
  const headingId = `history-${call.id}`;
  return (
    <section className="caller-history" aria-labelledby={headingId} data-number={number}>
      <h3 id={headingId}>{history !== null && history.name !== "" ? `History of ${history.name}` : "Caller history"}</h3>
      {entry.loading && history === null ? <p className="muted">Reading the caller's history…</p> : null}
      {entry.error !== null ? <p className="form-error">The caller's history could not be read: {entry.error}</p> : null}
      {history !== null && history.calls.length === 0 ? <p className="muted">No previous calls.</p> : null}
      {history !== null && history.calls.length > 0 ? (
        <ol className="past-calls" aria-label="Previous calls">
          {history.calls.map((past) => (
            <li key={past.interactionId} className="past-call">
              <span>{when(past.at)}</span> <span className="muted">({formatDuration(past.durationS * 1000)})</span>
              {past.agents.length > 0 ? <span> with {past.agents.join(", ")}</span> : null}
              {past.dispositionLabel !== "" ? (
                <span className="past-disposition">
                  {" "}
                  · <strong>{past.dispositionLabel}</strong>
                </span>
              ) : null}
              {past.note !== "" ? <p className="past-note">{past.note}</p> : null}
              {connection !== null
                ? past.recordingIds.map((id, i) => (
                    <button key={id} type="button" className="button button-small" onClick={() => setPlaying(playing === id ? null : id)}>
                      {playing === id ? "Stop" : past.recordingIds.length > 1 ? `Play part ${i + 1}` : "Play recording"}
                    </button>
                  ))
                : null}
            </li>
          ))}
        </ol>
      ) : null}
      {playing !== null && connection !== null ? (
        <audio key={playing} src={recordingAudioUrl(connection, { id: playing }, "play")} controls autoPlay data-recording-id={playing} onEnded={() => setPlaying(null)} />
      ) : null}
      {/^\+?\d{2,20}$/.test(number) ? <ScheduleCallbackForm number={number} /> : null}
      {history !== null && history.crmLink !== "" ? (
        <p>
          <a href={history.crmLink} target="_blank" rel="noopener noreferrer">
            Open in CRM
          </a>
        </p>
      ) : null}
    </section>
  );
}
