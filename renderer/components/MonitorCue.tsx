// Tells the agent that a supervisor is listening in on this call: whispering (only the agent hears
// them), barging (everyone does), or silently listening when the account announces that. It comes
// from the agent's own status (`wiretapped_by`), read again on each of the agent's events, so a
// mode switched live or a supervisor hanging up shows at once.
import { useShallow } from "zustand/react/shallow";
import type { MonitorMode, WiretapListener } from "../api/callq.js";
import { useAppStore } from "../state/context.js";
import type { CallView } from "../state/phone.js";
import "./callq.css";

const DOING: Record<MonitorMode, string> = { eavesdrop: "listening in", whisper: "whispering to you", barge: "talking on the call" };

/** The cue's words for one listener: "Supervisor Sam Super is whispering to you". */
export function cueText(listener: WiretapListener): string {
  return `Supervisor ${listener.name || "(unnamed)"} is ${DOING[listener.mode]}`;
}

export function MonitorCue({ call }: { call: CallView }) {
  const listeners = useAppStore(
    useShallow((state) => (state.agent.status?.wiretappedBy ?? []).filter((l) => l.callId === "" || l.callId === call.callId)),
  );
  if (listeners.length === 0 || (call.state !== "active" && call.state !== "held")) return null;
  return (
    <ul className="monitor-cue" aria-label="Supervision" data-testid="monitor-cue">
      {listeners.map((l) => (
        <li key={l.supervisorId} role="status" data-mode={l.mode}>
          {cueText(l)}
        </li>
      ))}
    </ul>
  );
}
