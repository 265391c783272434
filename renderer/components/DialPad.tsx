// The dial pad for outbound calls: a number field (typed or keyed in) and Call, and the account's
// quick connects, each called in one click.
import { useState, type FormEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import { keysOf } from "./shortcuts.js";

export const DIAL_INPUT_ID = "dial-number";
const KEYS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "0", "#"];

export function DialPad() {
  const { dial, ready, quickConnects } = useAppStore(
    useShallow((state) => ({ dial: state.dial, ready: state.phone.status === "registered", quickConnects: state.directory.quickConnects })),
  );
  const quick = quickConnects.filter((q) => q.number !== "");
  const [number, setNumber] = useState("");
  const [problem, setProblem] = useState<string | null>(null);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const target = number.replace(/[\s()-]/g, "");
    if (!/^[0-9A-Za-z+*#]+$/.test(target)) {
      setProblem("Enter an extension or a phone number.");
      return;
    }
    if (!ready) {
      setProblem("Your phone is not registered yet.");
      return;
    }
    setProblem(null);
    void dial(target);
    setNumber("");
  }

  return (
    <section className="card dial-pad" aria-labelledby="dial-heading">
      <h2 id="dial-heading">Dial</h2>
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={DIAL_INPUT_ID}>Number or extension</label>
          <input
            id={DIAL_INPUT_ID}
            inputMode="tel"
            autoComplete="off"
            value={number}
            aria-keyshortcuts={keysOf("dial")}
            aria-invalid={problem !== null}
            aria-describedby={problem !== null ? "dial-problem" : undefined}
            onChange={(event) => setNumber(event.target.value)}
          />
          {problem !== null ? (
            <p id="dial-problem" className="field-error">
              {problem}
            </p>
          ) : null}
        </div>
        <div className="keypad-keys" role="group" aria-label="Dial pad keys">
          {KEYS.map((key) => (
            <button key={key} type="button" className="button keypad-key" tabIndex={-1} onClick={() => setNumber(number + key)} aria-label={`Dial ${key}`}>
              {key}
            </button>
          ))}
        </div>
        <button type="submit" className="button button-accept">
          Call
        </button>
      </form>
      {quick.length > 0 ? (
        <div className="button-row" role="group" aria-label="Quick connects">
          {quick.map((q) => (
            <button key={q.id} type="button" className="button" disabled={!ready} onClick={() => void dial(q.number)} aria-label={`Call ${q.name}`}>
              {q.name}
            </button>
          ))}
        </div>
      ) : null}
    </section>
  );
}
