// Wall screens for the floor, on the supervisor's board: the account's wallboards, making one of
// some queues (its address, key included, shown once to put on the screen) and deleting one,
// which blanks its screen.
import { useEffect, useId, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import { gregorianToMs } from "../api/gregorian.js";
import { useAppStore } from "../state/context.js";

export function WallboardsPanel() {
  const { boards, queues, load, make, remove } = useAppStore(
    useShallow((state) => ({
      boards: state.wallboards,
      queues: state.queues.list,
      load: state.loadWallboards,
      make: state.makeWallboard,
      remove: state.deleteWallboard,
    })),
  );
  const [name, setName] = useState("");
  const [chosen, setChosen] = useState<string[]>([]);
  const nameId = useId();
  useEffect(() => void load(), [load]);
  const queueName = (id: string) => queues.find((q) => q.id === id)?.name ?? id;

  return (
    <section className="card wallboards" aria-label="Wallboards">
      <h2>Wallboards</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void make(name, chosen).then((ok) => {
            if (ok) {
              setName("");
              setChosen([]);
            }
          });
        }}
      >
        <div className="field">
          <label htmlFor={nameId}>Name</label>
          <input id={nameId} value={name} onChange={(e) => setName(e.target.value)} maxLength={128} />
        </div>
        <fieldset>
          {/* Short: a legend of two lines at 400 px sat across the box's top border. */}
          <legend>Queues shown</legend>
          <p className="field-hint">None ticked: every queue.</p>
          {queues.map((q) => (
            <label key={q.id} className="checkbox">
              <input type="checkbox" checked={chosen.includes(q.id)} onChange={(e) => setChosen(e.target.checked ? [...chosen, q.id] : chosen.filter((id) => id !== q.id))} />
              {q.name}
            </label>
          ))}
        </fieldset>
        <button type="submit" className="button">
          Make wallboard
        </button>
      </form>
      {boards.made !== null ? (
        <p className="wallboard-made" data-testid="wallboard-address">
          Open this address on the screen for “{boards.made.name}” (it is shown only now): <input readOnly aria-label="Wallboard address" value={boards.made.address} onFocus={(e) => e.target.select()} />
        </p>
      ) : null}
      {boards.error !== null ? (
        <p role="alert" className="form-error">
          {boards.error}
        </p>
      ) : null}
      {boards.notice !== null ? <p role="status">{boards.notice}</p> : null}
      <table aria-busy={boards.loading}>
        <thead>
          <tr>
            <th>Name</th>
            <th>Queues</th>
            <th>Key ends</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {boards.rows.map((b) => (
            <tr key={b.id} data-wallboard={b.id}>
              <td>{b.name}</td>
              <td>{b.queue_ids ? b.queue_ids.map(queueName).join(", ") : "Every queue"}</td>
              <td>{new Date(gregorianToMs(b.expires)).toLocaleDateString()}</td>
              <td>
                <button type="button" className="button button-small" disabled={boards.pending.includes(b.id)} onClick={() => void remove(b.id)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
