// The session (a caller in a queue) state machine, checked in one place like the recipient's.
//
//   (join) --create--> waiting --offer--> offering --answered--> answered --handled--> handled
//                        ^  |                |                                          |
//                        |  +----missed------+                                         end
//                        |                                                              v
//   waiting / offering --abandoned (caller hung up) / timeout / removed (API)--> ... --end--> ended
//
// Every step emits one `callq.session.<id>` event named as in the table.

export const SESSION_STATES = ["waiting", "offering", "answered", "handled", "abandoned", "timeout", "removed", "ended"] as const;
export type SessionState = (typeof SESSION_STATES)[number];

/** A session's state as a queue's session list shows it (fidelity: waiting | offering | handled). */
export type ListedSessionState = Extract<SessionState, "waiting" | "offering" | "handled">;

export type SessionTrigger = "offer" | "missed" | "answered" | "handled" | "abandoned" | "timeout" | "removed" | "end";

export type SessionEventName = "offer" | "missed" | "answered" | "handled" | "abandoned" | "timeout" | "removed" | "end";

export class IllegalSessionTransition extends Error {
  constructor(
    readonly from: SessionState,
    readonly trigger: SessionTrigger,
  ) {
    super(`a session ${from} cannot go ${trigger}`);
    this.name = "IllegalSessionTransition";
  }
}

const TABLE: Record<SessionTrigger, { from: readonly SessionState[]; to: SessionState }> = {
  offer: { from: ["waiting"], to: "offering" },
  missed: { from: ["offering"], to: "waiting" },
  answered: { from: ["offering"], to: "answered" },
  handled: { from: ["answered"], to: "handled" },
  abandoned: { from: ["waiting", "offering"], to: "abandoned" },
  timeout: { from: ["waiting", "offering"], to: "timeout" },
  removed: { from: ["waiting", "offering"], to: "removed" },
  end: { from: ["handled", "abandoned", "timeout", "removed"], to: "ended" },
};

export function sessionStep(from: SessionState, trigger: SessionTrigger): { from: SessionState; to: SessionState; event: SessionEventName } {
  const row = TABLE[trigger];
  if (!row.from.includes(from)) throw new IllegalSessionTransition(from, trigger);
  return { from, to: row.to, event: trigger };
}

export function listedState(state: SessionState): ListedSessionState {
  if (state === "waiting" || state === "offering") return state;
  return "handled";
}
