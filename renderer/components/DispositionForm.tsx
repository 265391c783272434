// The disposition of the queue call the agent handles or handled last: one of its queue's codes
// and a note, sent to the server, which keeps it on the call's records. Shown during the call and
// its wrap-up, and for as long as the queue requires one before Ready.
import { useId, useState } from "react";
import type { Disposition, DispositionCode } from "../api/callq.js";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import "./callq.css";

export function DispositionForm() {
  const { status, saving, error, save } = useAppStore(
    useShallow((state) => ({ status: state.agent.status, saving: state.agent.savingDisposition, error: state.agent.dispositionError, save: state.setDisposition })),
  );
  const headingId = useId();
  const call = status?.lastCall ?? null;
  const given = call?.disposition ?? null;

  if (status === null || call === null || call.dispositions.length === 0) return null;
  const during = status.state === "On-A-Call" || status.state === "Wrapup-Time";
  if (!during && !status.dispositionPending) return null;
  const caller = call.callerName || call.callerNumber || "the caller";

  return (
    <section className="card disposition-card" aria-labelledby={headingId} data-testid="disposition">
      <h2 id={headingId}>Disposition</h2>
      <p className="muted">
        {call.queueName}: {caller}
        {call.callerName && call.callerNumber ? ` (${call.callerNumber})` : ""}
      </p>
      {status.dispositionPending ? (
        <p className="state-reason" role="status" data-testid="disposition-required">
          {call.queueName} needs a disposition for this call before you can be Ready.
        </p>
      ) : null}
      {/* Keyed by the call: a new call starts from what the server has for it, not from the last one's. */}
      <DispositionFields key={call.sessionId} codes={call.dispositions} given={given} saving={saving} save={(code, note) => void save(code, note)} />
      {given !== null ? (
        <p className="muted" role="status" data-testid="disposition-saved">
          Saved: {given.label}
          {given.note !== "" ? ` — ${given.note}` : ""}
        </p>
      ) : null}
      {error !== null ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}

function DispositionFields({ codes, given, saving, save }: { codes: readonly DispositionCode[]; given: Disposition | null; saving: boolean; save: (code: string, note: string) => void }) {
  const codeId = useId();
  const noteId = useId();
  const [code, setCode] = useState(given?.code ?? "");
  const [note, setNote] = useState(given?.note ?? "");
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        if (code !== "" && !saving) save(code, note.trim());
      }}
    >
      <div className="field">
        <label htmlFor={codeId}>How did the call end?</label>
        <select id={codeId} value={code} required onChange={(event) => setCode(event.target.value)}>
          <option value="" disabled>
            Choose…
          </option>
          {codes.map((d) => (
            <option key={d.code} value={d.code}>
              {d.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={noteId}>Note</label>
        <textarea id={noteId} value={note} rows={3} maxLength={2000} onChange={(event) => setNote(event.target.value)} />
      </div>
      <div className="button-row">
        <button type="submit" className="button button-primary" aria-disabled={saving || code === ""}>
          {saving ? "Saving…" : "Save disposition"}
        </button>
      </div>
    </form>
  );
}
