// The agent's working view: the phone line's state, calls ringing and in progress, the queue
// call's disposition, the dial pad and recent calls, with the agent's call-queue state
// (AgentState) and their day's figures (MyDay) on top of the side column.
import { useShallow } from "zustand/react/shallow";
import { ActiveCall } from "../components/ActiveCall.js";
import { AgentState } from "../components/AgentState.js";
import { CallOffer } from "../components/CallOffer.js";
import { DialPad } from "../components/DialPad.js";
import { DispositionForm } from "../components/DispositionForm.js";
import { MyDay } from "../components/MyDay.js";
import { PhoneStatus } from "../components/PhoneStatus.js";
import { RecentCalls } from "../components/RecentCalls.js";
import { CallbackReminders, ScheduledCallbacks } from "../components/ScheduledCallbacks.js";
import { SHORTCUTS } from "../components/shortcuts.js";
import { useAppStore } from "../state/context.js";

export function Agent() {
  const calls = useAppStore(useShallow((state) => state.phone.calls));
  const offers = calls.filter((c) => c.state === "incoming");
  const current = calls.filter((c) => c.state !== "incoming");

  return (
    <div className="agent-view">
      <h1 className="visually-hidden">Agent</h1>
      <div className="agent-columns">
        <div className="agent-calls">
          <CallbackReminders />
          {offers.map((call) => (
            <CallOffer key={call.id} call={call} />
          ))}
          {current.map((call) => (
            <ActiveCall key={call.id} call={call} />
          ))}
          {calls.length === 0 ? (
            <section className="card idle-card" aria-label="Calls">
              <p className="muted">No calls right now. Incoming calls appear here and ring.</p>
            </section>
          ) : null}
          <DispositionForm />
          <RecentCalls />
          <ScheduledCallbacks />
        </div>
        <div className="agent-side">
          <AgentState />
          <MyDay />
          <PhoneStatus />
          <DialPad />
          <details className="card shortcuts-card">
            <summary>Keyboard shortcuts</summary>
            <dl>
              {SHORTCUTS.map((s) => (
                <div key={s.action}>
                  <dt>
                    <kbd>{s.keys}</kbd>
                  </dt>
                  <dd>{s.label}</dd>
                </div>
              ))}
            </dl>
          </details>
        </div>
      </div>
    </div>
  );
}
