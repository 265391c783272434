// The session (a caller in a queue) state machine, checked in one place like the recipient's.
//
//   (join) --create--> waiting --offer--> offering --answered--> answered --handled--> handled
//                        ^  |                |                                          |
//                        |  +----missed------+                                         end
//                        |                                                              v
//   waiting / offering --abandoned (caller hung up) / timeout / removed (API)--> ... --end--> ended
//
// A callback (local addition): a caller who asked to be called back leaves the line and the
// session keeps its place, waiting with no call; its offers and their outcome have steps of their own:
//
//   waiting / offering --callback_requested--> waiting --callback_offered--> offering
//   offering --callback_dialing (the recipient accepted)--> dialing --callback_connected--> answered
//   dialing --callback_failed--> failed --callback_retry--> waiting   (attempts left)
//                                       --end--> ended                 (none left)
//
// Every step emits one `callq.session.<id>` event named as in the table.

export const SESSION_STATES = ["waiting", "offering", "dialing", "answered", "handled", "abandoned", "timeout", "removed", "failed", "ended"] as const;
export type SessionState = (typeof SESSION_STATES)[number];

/** A session's state as a queue's session list shows it (fidelity: waiting | offering | handled). */
export type ListedSessionState = Extract<SessionState, "waiting" | "offering" | "handled">;

type CallbackTrigger = "callback_requested" | "callback_offered" | "callback_dialing" | "callback_connected" | "callback_failed" | "callback_retry";

export type SessionTrigger = "offer" | "missed" | "answered" | "handled" | "abandoned" | "timeout" | "removed" | "end" | CallbackTrigger;

export type SessionEventName = SessionTrigger;

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
  end: { from: ["handled", "abandoned", "timeout", "removed", "failed"], to: "ended" },
  callback_requested: { from: ["waiting", "offering"], to: "waiting" },
  callback_offered: { from: ["waiting"], to: "offering" },
  callback_dialing: { from: ["offering"], to: "dialing" },
  callback_connected: { from: ["dialing"], to: "answered" },
  callback_failed: { from: ["dialing"], to: "failed" },
  callback_retry: { from: ["failed"], to: "waiting" },
};

export function sessionStep(from: SessionState, trigger: SessionTrigger): { from: SessionState; to: SessionState; event: SessionEventName } {
  const row = TABLE[trigger];
  if (!row.from.includes(from)) throw new IllegalSessionTransition(from, trigger);
  return { from, to: row.to, event: trigger };
}

export function listedState(state: SessionState): ListedSessionState {
  if (state === "waiting" || state === "offering") return state;
  // A callback being dialled is still the recipient's offer until the caller answers.
  if (state === "dialing") return "offering";
  return "handled";
}
