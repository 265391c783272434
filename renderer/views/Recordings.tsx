// The recordings view: the account's call recordings, newest first, filtered by date, caller and
// queue and paged; a player whose seek bar streams the audio by Range; download; and, for admins,
// delete after a confirmation. The parts of one customer interaction (a transferred call's
// recordings, sharing an interaction_id) are labelled "Part 1 of 2" and so on, oldest first.
import { useEffect, useId, useMemo, useRef, useState, type FormEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import { recordingAudioUrl, type Recording } from "../api/recordings.js";
import { TextField } from "../components/TextField.js";
import { connectionOf } from "../state/account-connection.js";
import { privilegeOf } from "../state/admin.js";
import { useAppStore } from "../state/context.js";
import { fromGregorianSeconds } from "../api/gregorian.js";
import { interactionParts, NO_RECORDING_FILTERS, type RecordingFilters } from "../state/recordings.js";
import { ConfirmDialog } from "./admin/ConfirmDialog.js";
import { DataTable, ErrorAlert, type Column } from "./admin/parts.js";
import "./admin/views.css";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

const RECORDING_COLUMNS: Column[] = ["Started", "Caller", "Called", "Direction", { key: "length", label: "Length", numeric: true }, "Actions"];

/** m:ss (or h:mm:ss) for a number of seconds. */
export function clockText(seconds: number): string {
  const whole = Number.isFinite(seconds) && seconds > 0 ? Math.floor(seconds) : 0;
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

function party(name: string | undefined, number: string | undefined): string {
  if (name && number && name !== number) return `${name} (${number})`;
  return name || number || "Unknown";
}

function startedText(recording: Recording): string {
  return recording.start === undefined ? "Unknown time" : dateTime.format(fromGregorianSeconds(recording.start));
}

/** How the recording is named to screen readers in its row's buttons. */
function recordingLabel(recording: Recording): string {
  return `${party(recording.caller_id_name, recording.caller_id_number)}, ${startedText(recording)}`;
}

export function Recordings() {
  const state = useAppStore(
    useShallow((s) => ({
      recordings: s.recordings,
      queues: s.recordingQueues,
      privilege: privilegeOf(s),
      session: s.session,
      serverUrl: s.serverUrl,
      loadRecordings: s.loadRecordings,
      loadRecordingQueues: s.loadRecordingQueues,
      applyRecordingFilters: s.applyRecordingFilters,
      showRecentRecordings: s.showRecentRecordings,
      nextRecordingsPage: s.nextRecordingsPage,
      previousRecordingsPage: s.previousRecordingsPage,
      deleteRecording: s.deleteRecording,
      checkPrivilege: s.checkPrivilege,
    })),
  );
  const { recordings, queues, session, serverUrl } = state;
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  const [draft, setDraft] = useState<RecordingFilters>(recordings.filters);
  const [playing, setPlaying] = useState<Recording | null>(null);
  const [confirming, setConfirming] = useState<Recording | null>(null);
  const { loadRecordings, loadRecordingQueues, checkPrivilege } = state;

  // Read again for each new session (a sign-in after the token expired keeps this view).
  const token = session?.token ?? null;
  useEffect(() => {
    if (token === null) return;
    void loadRecordings();
    void loadRecordingQueues();
    void checkPrivilege();
  }, [loadRecordings, loadRecordingQueues, checkPrivilege, token]);

  // The filters shown follow the ones in force (a date preset sets them from the slice).
  useEffect(() => setDraft(recordings.filters), [recordings.filters]);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    void state.applyRecordingFilters(draft);
  }

  async function confirmDelete() {
    if (confirming === null) return;
    const deleted = await state.deleteRecording(confirming.id);
    if (deleted && playing?.id === confirming.id) setPlaying(null);
    setConfirming(null);
  }

  const pageNumber = recordings.pageKeys.length;
  const isAdmin = state.privilege === "admin";
  const parts = useMemo(() => interactionParts(recordings.rows), [recordings.rows]);

  return (
    <section aria-labelledby="recordings-heading">
      <h1 id="recordings-heading">Recordings</h1>
      <p className="view-intro">
        {isAdmin
          ? "Recorded calls of the account, newest first."
          : "Recorded calls you took part in (and, if you supervise a queue, its calls), newest first."}
      </p>

      <form className="toolbar" role="search" aria-label="Filter recordings" onSubmit={submit}>
        <TextField label="From" type="date" name="from" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        <TextField label="To" type="date" name="to" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        <TextField
          label="Caller number"
          name="caller"
          inputMode="tel"
          autoComplete="off"
          spellCheck={false}
          value={draft.caller}
          onChange={(e) => setDraft({ ...draft, caller: e.target.value })}
        />
        {queues !== null ? <QueueSelect queues={queues} value={draft.queueId} onChange={(queueId) => setDraft({ ...draft, queueId })} /> : null}
        <div className="inline-actions">
          <button type="submit" className="button">
            Apply filters
          </button>
          <button type="button" className="button" onClick={() => void state.applyRecordingFilters(NO_RECORDING_FILTERS)}>
            Clear
          </button>
          <button type="button" className="button" onClick={() => void state.showRecentRecordings(1, draft)}>
            Today
          </button>
          <button type="button" className="button" onClick={() => void state.showRecentRecordings(7, draft)}>
            Last 7 days
          </button>
        </div>
      </form>

      <div role="status" aria-live="polite" className="status-text">
        {recordings.loading ? "Loading recordings…" : (recordings.notice ?? "")}
      </div>
      <ErrorAlert message={recordings.error} />

      {playing !== null && connection !== null ? (
        <Player key={playing.id} recording={playing} src={recordingAudioUrl(connection, playing, "play")} onClose={() => setPlaying(null)} />
      ) : null}

      <DataTable
        caption={`Recordings, page ${pageNumber}`}
        columns={RECORDING_COLUMNS}
        loading={recordings.loading}
        rowCount={recordings.rows.length}
        emptyText="No recordings match."
      >
          {recordings.rows.map((recording) => (
            <tr
              key={recording.id}
              aria-current={playing?.id === recording.id ? "true" : undefined}
              data-recording-id={recording.id}
              data-interaction-id={recording.interaction_id}
            >
              <td>
                {startedText(recording)}
                {parts.has(recording.id) ? (
                  <span className="badge interaction-part">
                    {" "}
                    Part {parts.get(recording.id)?.part} of {parts.get(recording.id)?.of}
                  </span>
                ) : null}
              </td>
              <td>{party(recording.caller_id_name, recording.caller_id_number)}</td>
              <td>{party(recording.callee_id_name, recording.callee_id_number)}</td>
              <td>{recording.direction === "outbound" ? "Outbound" : "Inbound"}</td>
              <td className="numeric">{clockText((recording.duration_ms ?? 0) / 1000)}</td>
              <td>
                <div className="inline-actions">
                  <button
                    type="button"
                    className="button button-small"
                    aria-label={`Play recording: ${recordingLabel(recording)}`}
                    onClick={() => setPlaying(recording)}
                  >
                    Play
                  </button>
                  {connection !== null ? (
                    <a
                      className="button button-small"
                      href={recordingAudioUrl(connection, recording, "download")}
                      download={recording.name ?? `${recording.id}.wav`}
                      aria-label={`Download recording: ${recordingLabel(recording)}`}
                    >
                      Download
                    </a>
                  ) : null}
                  {isAdmin ? (
                    <button
                      type="button"
                      className="button button-small button-danger"
                      aria-label={`Delete recording: ${recordingLabel(recording)}`}
                      onClick={() => setConfirming(recording)}
                    >
                      Delete
                    </button>
                  ) : null}
                </div>
              </td>
            </tr>
          ))}
      </DataTable>

      <nav className="pager" aria-label="Recording pages">
        <button
          type="button"
          className="button"
          aria-disabled={pageNumber < 2}
          onClick={() => void state.previousRecordingsPage()}
        >
          Previous page
        </button>
        <span>Page {pageNumber}</span>
        <button
          type="button"
          className="button"
          aria-disabled={recordings.nextStartKey === null}
          onClick={() => void state.nextRecordingsPage()}
        >
          Next page
        </button>
      </nav>

      <ConfirmDialog
        open={confirming !== null}
        title="Delete this recording?"
        message={confirming === null ? "" : `The recording of ${recordingLabel(confirming)} and its audio will be deleted for everyone. This cannot be undone.`}
        confirmLabel="Delete recording"
        busy={recordings.deleting !== null}
        onConfirm={() => void confirmDelete()}
        onCancel={() => setConfirming(null)}
      />
    </section>
  );
}

function QueueSelect({ queues, value, onChange }: { queues: { id: string; name: string }[]; value: string; onChange(id: string): void }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Queue</label>
      <select id={id} name="queue" value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">All queues</option>
        {queues.map((queue) => (
          <option key={queue.id} value={queue.id}>
            {queue.name}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Plays one recording. The <audio> element fetches the audio itself: seeking asks the server for
 * the bytes from that point (Range), so a long recording starts at once and never loads whole.
 */
function Player({ recording, src, onClose }: { recording: Recording; src: string; onClose(): void }) {
  const audio = useRef<HTMLAudioElement>(null);
  const [playing, setPlaying] = useState(false);
  const [position, setPosition] = useState(0);
  const [duration, setDuration] = useState((recording.duration_ms ?? 0) / 1000);
  const [error, setError] = useState<string | null>(null);
  const headingId = useId();

  useEffect(() => {
    // Opened by the row's Play button, so it starts playing at once.
    audio.current?.play().catch(() => setError("The recording could not be played."));
  }, []);

  function toggle() {
    const element = audio.current;
    if (element === null) return;
    if (element.paused) element.play().catch(() => setError("The recording could not be played."));
    else element.pause();
  }

  function seek(seconds: number) {
    const element = audio.current;
    if (element === null) return;
    element.currentTime = seconds;
    setPosition(seconds);
  }

  return (
    <section className="panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Playing: {recordingLabel(recording)}</h2>
      <audio
        ref={audio}
        src={src}
        preload="metadata"
        data-recording-id={recording.id}
        onTimeUpdate={(e) => setPosition(e.currentTarget.currentTime)}
        onLoadedMetadata={(e) => {
          if (Number.isFinite(e.currentTarget.duration)) setDuration(e.currentTarget.duration);
        }}
        onPlay={() => setPlaying(true)}
        onPause={() => setPlaying(false)}
        onEnded={() => setPlaying(false)}
        onError={() => setError("The recording's audio could not be loaded.")}
      />
      <div className="player">
        <button type="button" className="button" onClick={toggle}>
          {playing ? "Pause" : "Play"}
        </button>
        <input
          type="range"
          min={0}
          max={duration > 0 ? duration : 0}
          step={1}
          value={Math.min(position, duration)}
          aria-label="Position in the recording"
          aria-valuetext={`${clockText(position)} of ${clockText(duration)}`}
          onChange={(e) => seek(Number(e.target.value))}
        />
        <span className="mono" aria-hidden="true">
          {clockText(position)} / {clockText(duration)}
        </span>
      </div>
      <ErrorAlert message={error} />
      <p>
        <button type="button" className="button button-small" onClick={onClose}>
          Close player
        </button>
      </p>
    </section>
  );
}
