// Outgoing calls that did not connect, on every view above the page: "Call to 1099 failed: No such
// number", each with Dismiss; they also go by themselves after a few seconds (call-failures.ts).
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";

export function CallFailures() {
  const { notices, dismiss } = useAppStore(useShallow((state) => ({ notices: state.callFailures, dismiss: state.dismissCallFailure })));
  if (notices.length === 0) return null;
  return (
    <div className="call-failures">
      {notices.map((notice) => (
        <div key={notice.id} className="card call-failure" role="alert" data-code={notice.code}>
          <p>
            Call to <strong>{notice.target}</strong> failed: <span className="call-failure-reason">{notice.reason}</span>
          </p>
          <button type="button" className="button button-small" onClick={() => dismiss(notice.id)} aria-label={`Dismiss the failed call to ${notice.target}`}>
            Dismiss
          </button>
        </div>
      ))}
    </div>
  );
}
