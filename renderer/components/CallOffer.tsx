// A ringing call: who calls (name and number), from which queue and how long they waited when the
// queue's offer says so, with Accept and Reject, and which call accepting puts on hold. A queue
// callback says so: accepting it has the server dial that number.
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import { partyOf, type CallParty, type CallView } from "../state/phone.js";
import { queueTimeAt } from "../state/queue-time.js";
import { CallerHistory } from "./CallerHistory.js";
import { keysOf } from "./shortcuts.js";
import { formatDuration, useNow } from "./useNow.js";

export function callerOf(call: CallView): CallParty {
  return partyOf(call);
}

export function CallOffer({ call }: { call: CallView }) {
  const { accept, reject } = useAppStore(useShallow((state) => ({ accept: state.acceptCall, reject: state.rejectCall })));
  const inProgress = useAppStore((state) => state.phone.calls.find((c) => c.state === "active" && c.id !== call.id));
  const now = useNow();
  const caller = callerOf(call);
  const headingId = `offer-${call.id}`;
  const callback = call.offer.callbackNumber;
  const queueTime = useAppStore((state) => state.queues.queueTime);
  // The caller's wait goes on in the queue's time: it stands still while a training run is paused.
  const waited = call.offer.waitedS === undefined ? null : call.offer.waitedS * 1000 + Math.max(0, queueTimeAt(queueTime, now) - call.startedAtQueueTime);

  return (
    <section className="card call-offer" aria-labelledby={headingId} data-call-id={call.callId}>
      <h2 id={headingId}>
        <span className="ringing-dot" aria-hidden="true" />
        {callback !== undefined ? `Callback to ${callback}` : "Incoming call"}
      </h2>
      <p className="caller-name">{caller.name}</p>
      {caller.number !== "" ? <p className="caller-number mono">{caller.number}</p> : null}
      {callback !== undefined ? <p className="muted">The caller asked to be called back. Accept, and the server dials them for you.</p> : null}
      <dl className="offer-facts">
        {call.offer.queueName !== undefined || call.offer.queueId !== undefined ? (
          <>
            <dt>Queue</dt>
            <dd>{call.offer.queueName ?? call.offer.queueId}</dd>
          </>
        ) : null}
        {waited !== null ? (
          <>
            <dt>Waited</dt>
            <dd data-queue-clock={queueTime?.paused === true ? "paused" : "running"}>{formatDuration(waited)}</dd>
          </>
        ) : null}
        <dt>Ringing for</dt>
        <dd>{formatDuration(now - call.startedAt)}</dd>
      </dl>
      <CallerHistory call={call} />
      {inProgress !== undefined ? <p className="muted">Accepting puts your call with {callerOf(inProgress).name} on hold.</p> : null}
      {call.error !== null ? <p className="form-error">{call.error}</p> : null}
      <div className="button-row">
        <button
          type="button"
          className="button button-accept"
          aria-keyshortcuts={keysOf("accept")}
          aria-disabled={call.pending !== null}
          onClick={() => void accept(call.id)}
        >
          {call.pending === "answering" ? "Accepting…" : "Accept"}
        </button>
        <button
          type="button"
          className="button button-danger"
          aria-keyshortcuts={keysOf("reject")}
          aria-disabled={call.pending !== null}
          onClick={() => void reject(call.id)}
        >
          Reject
        </button>
      </div>
    </section>
  );
}
