// The call card's "Recording" badge: shown while the server says it records this call (its
// RECORD_START / RECORD_STOP call events), so the agent knows what they say is kept.
import { useAppStore } from "../state/context.js";

export function RecordingCue({ callId }: { callId: string }) {
  const recording = useAppStore((state) => state.recordingCalls.includes(callId));
  if (!recording) return null;
  return (
    <span className="badge recording-cue" role="status" aria-label="This call is being recorded">
      Recording
    </span>
  );
}
