// How a supervisor joins an agent's call: the one list the API accepts, the queue engine shows in
// statuses and the mixer applies. A shared leaf at server/'s root, so media/ (the lowest layer
// that acts on it) and callq/ (which may not import media/) read the same union.

/**
 * Everyone in the bridge is heard by the supervisor in every mode; eavesdrop = nobody hears the
 * supervisor, whisper = only the target (the agent) does, barge = every party does.
 */
export const MONITOR_MODES = ["eavesdrop", "whisper", "barge"] as const;

export type MonitorMode = (typeof MONITOR_MODES)[number];
