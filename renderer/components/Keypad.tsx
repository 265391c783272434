// The in-call keypad: twelve keys that send DTMF on the call (and typed digits too), showing what
// was sent, for IVRs and conference bridges on the far end.
import type { KeyboardEvent } from "react";

const KEYS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "0", "#"];

export function Keypad({ digits, onDigit, label }: { digits: string; onDigit: (digit: string) => void; label: string }) {
  function typed(event: KeyboardEvent<HTMLDivElement>) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (KEYS.includes(event.key)) {
      event.preventDefault();
      onDigit(event.key);
    }
  }

  return (
    <div className="keypad" role="group" aria-label={label} onKeyDown={typed}>
      <output className="keypad-display mono" aria-live="polite" aria-label="Digits sent">
        {digits}
      </output>
      <div className="keypad-keys">
        {KEYS.map((key) => (
          <button key={key} type="button" className="button keypad-key" onClick={() => onDigit(key)} aria-label={`Digit ${key}`}>
            {key}
          </button>
        ))}
      </div>
    </div>
  );
}
