// Every line on the phone when there is more than one: who, its state and timer, Hold or Resume
// and Hang up for each, and Swap and Merge for the pair. Shown on every view, above the view.
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import { mergePair, partyOf, swapPair, type CallView } from "../state/phone.js";
import { keysOf } from "./shortcuts.js";
import { formatDuration, useNow } from "./useNow.js";

const LINE_STATE: Record<CallView["state"], string> = {
  dialing: "Dialling",
  ringing: "Ringing",
  incoming: "Ringing",
  active: "Connected",
  held: "On hold",
  ended: "Ended",
};

/** The line's far end: its party, or every party of a conference. */
export function lineTitle(call: CallView): string {
  const parties = [partyOf(call), ...call.merged].map((p) => p.name);
  return call.merged.length > 0 ? `Conference with ${parties.join(" and ")}` : (parties[0] ?? "");
}

export function LineDock({ calls }: { calls: readonly CallView[] }) {
  const { toggleHold, hangup, swap, merge } = useAppStore(
    useShallow((state) => ({ toggleHold: state.toggleHold, hangup: state.hangupCall, swap: state.swapCalls, merge: state.mergeCalls })),
  );
  const now = useNow();
  const busy = calls.some((c) => c.pending !== null);
  const canSwap = swapPair(calls) !== undefined && !busy;
  const canMerge = mergePair(calls) !== undefined && !busy;

  return (
    <section className="card line-dock" aria-labelledby="line-dock-heading">
      <h2 id="line-dock-heading" className="line-dock-heading">
        Lines
      </h2>
      <ol className="line-list">
        {calls.map((call, index) => {
          const title = lineTitle(call);
          const connected = call.state === "active" || call.state === "held";
          return (
            <li key={call.id} className={`line state-${call.state}`} data-call-id={call.callId}>
              <span className="line-number muted">Line {index + 1}</span>
              <strong className="line-party">{title}</strong>
              <span className="line-state">{call.pending !== null ? `${call.pending}…` : LINE_STATE[call.state]}</span>
              <span className="call-timer mono" aria-label="Call duration">
                {formatDuration(now - (call.answeredAt ?? call.startedAt))}
              </span>
              {call.error !== null ? (
                <span className="form-error line-error" role="alert">
                  {call.error}
                </span>
              ) : null}
              <span className="line-actions">
                {connected ? (
                  <button type="button" className="button" aria-label={`${call.state === "held" ? "Resume" : "Hold"} ${title}`} aria-disabled={busy} onClick={() => void toggleHold(call.id)}>
                    {call.state === "held" ? "Resume" : "Hold"}
                  </button>
                ) : null}
                {call.state !== "incoming" ? (
                  <button type="button" className="button button-danger" aria-label={`Hang up ${title}`} aria-disabled={call.pending === "hanging up"} onClick={() => void hangup(call.id)}>
                    Hang up
                  </button>
                ) : null}
              </span>
            </li>
          );
        })}
      </ol>
      <div className="button-row">
        <button type="button" className="button" aria-keyshortcuts={keysOf("swap")} disabled={!canSwap} onClick={() => void swap()}>
          Swap <kbd>{keysOf("swap")}</kbd>
        </button>
        <button type="button" className="button" aria-keyshortcuts={keysOf("merge")} disabled={!canMerge} onClick={() => void merge()}>
          Merge calls <kbd>{keysOf("merge")}</kbd>
        </button>
      </div>
    </section>
  );
}
