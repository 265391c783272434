// Transfer of a call in progress to an extension, a user (picked from the directory) or a number:
// blind (the caller goes straight to the target) or attended (consult the target first, then
// complete the transfer or return to the caller). The account's quick connects transfer in one click.
import { useEffect, useId, useState, type FormEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import type { TransferType } from "../api/platform.js";
import { useAppStore } from "../state/context.js";
import type { CallView } from "../state/phone.js";

export function TransferPanel({ call }: { call: CallView }) {
  const { directory, quick, loadDirectory, transfer, complete, cancel } = useAppStore(
    useShallow((state) => ({
      directory: state.phone.directory,
      quick: state.directory.quickConnects,
      loadDirectory: state.loadDirectory,
      transfer: state.transferCall,
      complete: state.completeTransfer,
      cancel: state.cancelTransfer,
    })),
  );
  const id = useId();
  const [target, setTarget] = useState("");
  const [type, setType] = useState<TransferType>("blind");
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    void loadDirectory();
  }, [loadDirectory]);

  const consulting = call.transfer?.stage === "consulting" ? call.transfer : null;
  if (consulting !== null) {
    return (
      <div className="transfer-panel" role="group" aria-label="Attended transfer">
        <p role="status">
          Consulting <strong>{nameOf(consulting.target, directory)}</strong>. The caller is on hold.
        </p>
        <div className="button-row">
          <button type="button" className="button button-accept" onClick={() => void complete(call.id)}>
            Complete transfer
          </button>
          <button type="button" className="button" onClick={() => cancel(call.id)}>
            Return to caller
          </button>
        </div>
      </div>
    );
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const to = target.trim();
    if (!/^[0-9A-Za-z+*#]+$/.test(to)) {
      setProblem("Enter an extension or a number to transfer to.");
      return;
    }
    setProblem(null);
    void transfer(call.id, to, type);
  }

  return (
    <form className="transfer-panel" onSubmit={submit} aria-label="Transfer" noValidate>
      <div className="field">
        <label htmlFor={`${id}-target`}>Transfer to (extension, user or number)</label>
        <input
          id={`${id}-target`}
          list={`${id}-directory`}
          value={target}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={problem !== null}
          aria-describedby={problem !== null ? `${id}-problem` : undefined}
          onChange={(event) => setTarget(event.target.value)}
        />
        <datalist id={`${id}-directory`}>
          {directory.map((entry) => (
            <option key={entry.id} value={entry.extension}>
              {entry.name}
            </option>
          ))}
        </datalist>
        {problem !== null ? (
          <p id={`${id}-problem`} className="field-error">
            {problem}
          </p>
        ) : null}
      </div>
      <fieldset className="radio-row">
        <legend>Kind of transfer</legend>
        <label>
          <input type="radio" name={`${id}-type`} value="blind" checked={type === "blind"} onChange={() => setType("blind")} /> Blind
        </label>
        <label>
          <input type="radio" name={`${id}-type`} value="attended" checked={type === "attended"} onChange={() => setType("attended")} /> Attended
          (consult first)
        </label>
      </fieldset>
      <button type="submit" className="button" aria-disabled={call.pending !== null}>
        {call.pending === "transferring" ? "Transferring…" : "Transfer"}
      </button>
      {quick.some((q) => q.number !== "") ? (
        <div className="button-row" role="group" aria-label="Quick connects">
          {quick
            .filter((q) => q.number !== "")
            .map((q) => (
              <button key={q.id} type="button" className="button" aria-disabled={call.pending !== null} onClick={() => void transfer(call.id, q.number, type)} aria-label={`Transfer to ${q.name}`}>
                {q.name}
              </button>
            ))}
        </div>
      ) : null}
    </form>
  );
}

function nameOf(target: string, directory: readonly { extension: string; name: string }[]): string {
  const entry = directory.find((d) => d.extension === target);
  return entry ? `${entry.name} (${target})` : target;
}
