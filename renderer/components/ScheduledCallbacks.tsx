// Scheduled callbacks (local addition): the reminders that came due, each with "Call now", and
// the agent's list of callbacks with their time, note and Cancel; and the form a caller's history
// schedules one from.
import { useState, type FormEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import { systemClock } from "../clock.js";
import { useAppStore } from "../state/context.js";

function when(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function CallbackReminders() {
  const { reminders, errors, callNow, dismiss } = useAppStore(
    useShallow((state) => ({ reminders: state.callbacks.reminders, errors: state.callbacks.reminderErrors, callNow: state.callBackNow, dismiss: state.dismissReminder })),
  );
  if (reminders.length === 0) return null;
  return (
    <section className="card callback-reminders" aria-label="Callback reminders" aria-live="assertive">
      {reminders.map((r) => (
        <div key={r.id} className="callback-reminder" data-callback-id={r.id}>
          <p>
            Time to call back <strong className="mono">{r.number}</strong>
            {r.note !== "" ? <span> · {r.note}</span> : null}
          </p>
          {errors[r.id] !== undefined ? (
            <p className="form-error" role="alert">
              {errors[r.id]}
            </p>
          ) : null}
          <div className="button-row">
            <button type="button" className="button button-accept" onClick={() => void callNow(r.id)}>
              Call now
            </button>
            <button type="button" className="button" onClick={() => dismiss(r.id)}>
              Dismiss
            </button>
          </div>
        </div>
      ))}
    </section>
  );
}

export function ScheduledCallbacks() {
  const { list, error, cancel } = useAppStore(useShallow((state) => ({ list: state.callbacks.list, error: state.callbacks.error, cancel: state.cancelCallback })));
  return (
    <section className="card scheduled-callbacks" aria-labelledby="scheduled-callbacks">
      <h2 id="scheduled-callbacks">Scheduled callbacks</h2>
      {error !== null ? <p className="form-error">{error}</p> : null}
      {list.length === 0 ? <p className="muted">None scheduled. Schedule one from a caller's history.</p> : null}
      {list.length > 0 ? (
        <ul>
          {list.map((c) => (
            <li key={c.id} data-callback-id={c.id} data-state={c.state}>
              <span className="mono">{c.number}</span> <span>{when(c.remindAt)}</span>
              {c.state === "reminded" ? <span className="badge">Due</span> : null}
              {c.note !== "" ? <span className="muted"> · {c.note}</span> : null}{" "}
              <button type="button" className="button button-small" aria-label={`Cancel the callback to ${c.number}`} onClick={() => void cancel(c.id)}>
                Cancel
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** The local date and time `ms` falls in, as a datetime-local input holds it. */
function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

export function ScheduleCallbackForm({ number }: { number: string }) {
  const schedule = useAppStore((state) => state.scheduleCallback);
  const [open, setOpen] = useState(false);
  const [at, setAt] = useState(() => localInput(systemClock.now() + 3600_000));
  const [note, setNote] = useState("");
  const [result, setResult] = useState<string | null>(null);
  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    const remindAt = new Date(at).getTime();
    const refused = Number.isFinite(remindAt) ? await schedule(number, remindAt, note) : "Give a date and time.";
    setResult(refused === null ? `Callback scheduled for ${when(remindAt)}.` : `Not scheduled: ${refused}`);
    if (refused === null) setOpen(false);
  };
  return (
    <div className="schedule-callback">
      {!open ? (
        <button type="button" className="button button-small" onClick={() => setOpen(true)}>
          Schedule a callback
        </button>
      ) : (
        <form aria-label={`Schedule a callback to ${number}`} onSubmit={(e) => void submit(e)}>
          <label>
            When <input type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)} required />
          </label>
          <label>
            Note <input type="text" value={note} maxLength={2000} onChange={(e) => setNote(e.target.value)} />
          </label>
          <button type="submit" className="button button-small">
            Schedule
          </button>
        </form>
      )}
      {result !== null ? <p className="muted" role="status">{result}</p> : null}
    </div>
  );
}
