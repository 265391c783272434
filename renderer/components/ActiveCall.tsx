// A call in progress (or being dialled): who, its state and timer, and Mute, Hold, the keypad,
// Transfer and Hang up.
import { useEffect, useRef } from "react";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import type { CallView } from "../state/phone.js";
import { callerOf } from "./CallOffer.js";
import { CallerHistory } from "./CallerHistory.js";
import { Keypad } from "./Keypad.js";
import { lineTitle } from "./LineDock.js";
import { MonitorCue } from "./MonitorCue.js";
import { RecordingCue } from "./RecordingCue.js";
import { keysOf } from "./shortcuts.js";
import { TransferPanel } from "./TransferPanel.js";
import { formatDuration, useNow } from "./useNow.js";

const STATE_TEXT: Record<CallView["state"], string> = {
  dialing: "Calling…",
  ringing: "Ringing…",
  incoming: "Ringing",
  active: "Connected",
  held: "On hold",
  ended: "Ended",
};

export function ActiveCall({ call }: { call: CallView }) {
  const { hangup, toggleMute, toggleHold, sendDigits } = useAppStore(
    useShallow((state) => ({ hangup: state.hangupCall, toggleMute: state.toggleMute, toggleHold: state.toggleHold, sendDigits: state.sendDigits })),
  );
  const now = useNow();
  const heading = useRef<HTMLHeadingElement>(null);
  const caller = callerOf(call);
  const connected = call.state === "active" || call.state === "held";
  const headingId = `call-${call.id}`;

  // Accepting removes the offer and its focused button: the agent's focus lands on the call instead.
  useEffect(() => {
    if (document.activeElement === document.body || document.activeElement === null) heading.current?.focus();
  }, []);

  return (
    <section className={`card active-call state-${call.state}`} aria-labelledby={headingId} data-call-id={call.callId}>
      <h2 id={headingId} ref={heading} tabIndex={-1}>
        {call.merged.length > 0 ? lineTitle(call) : `${call.direction === "inbound" ? "Call with" : "Call to"} ${caller.name}`}
      </h2>
      {caller.number !== "" && call.merged.length === 0 ? <p className="caller-number mono">{caller.number}</p> : null}
      <p className="call-meta">
        <span className="call-state">{STATE_TEXT[call.state]}</span>
        {call.muted ? <span className="badge">Muted</span> : null}
        <RecordingCue callId={call.callId} />
        {call.offer.queueName !== undefined ? <span className="muted"> · {call.offer.queueName}</span> : null}
        {call.offer.callbackNumber !== undefined ? <span className="badge">Callback</span> : null}
        <span className="call-timer mono" aria-label="Call duration">
          {formatDuration(now - (call.answeredAt ?? call.startedAt))}
        </span>
      </p>
      <MonitorCue call={call} />
      {call.merged.length === 0 ? <CallerHistory call={call} /> : null}
      {call.error !== null ? (
        <p className="form-error" role="alert">
          {call.error}
        </p>
      ) : null}
      <div className="button-row">
        <button
          type="button"
          className="button"
          aria-pressed={call.muted}
          aria-keyshortcuts={keysOf("mute")}
          disabled={!connected}
          onClick={() => toggleMute(call.id)}
        >
          {call.muted ? "Unmute" : "Mute"}
        </button>
        <button
          type="button"
          className="button"
          aria-pressed={call.state === "held"}
          aria-keyshortcuts={keysOf("hold")}
          aria-disabled={call.pending !== null}
          disabled={!connected}
          onClick={() => void toggleHold(call.id)}
        >
          {call.state === "held" ? "Resume" : call.pending === "holding" ? "Holding…" : "Hold"}
        </button>
        <button
          type="button"
          className="button button-danger"
          aria-keyshortcuts={keysOf("hangup")}
          aria-disabled={call.pending === "hanging up"}
          onClick={() => void hangup(call.id)}
        >
          Hang up
        </button>
      </div>
      {connected ? (
        <>
          <details className="call-tool keypad-details">
            <summary aria-keyshortcuts={keysOf("keypad")}>Keypad</summary>
            <Keypad digits={call.digits} onDigit={(digit) => sendDigits(call.id, digit)} label={`Keypad for the call with ${caller.name}`} />
          </details>
          <details className="call-tool" open={call.transfer !== null ? true : undefined}>
            <summary>Transfer</summary>
            <TransferPanel call={call} />
          </details>
        </>
      ) : null}
    </section>
  );
}
