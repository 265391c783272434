// The header's Sign out. An agent logged in to their queues is asked first what becomes of them:
// logged out (the default, so the queue stops counting on them), or left Away; either way the
// phone goes and nobody is offered calls meant for a console that is gone.
import { useEffect, useId, useRef, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import { STATE_LABELS } from "./AgentState.js";
import "./sign-out.css";

export function SignOutButton() {
  const { state, known, signOut, leaveQueues, readState } = useAppStore(
    useShallow((s) => ({
      state: s.agent.status?.state ?? null,
      // Whether the agent's queue state is known: read, or no recipient, or unreadable.
      known: s.agent.status !== null || s.agent.isRecipient === false || s.agent.readError !== null,
      signOut: s.signOut,
      leaveQueues: s.leaveQueues,
      readState: s.loadAgentStatus,
    })),
  );
  const [asking, setAsking] = useState(false);
  // Sign out was pressed before the queue state was read (a slow link): the question waits for it.
  const [waiting, setWaiting] = useState(false);
  const [leaving, setLeaving] = useState<"logout" | "away" | null>(null);
  const headingId = useId();
  const first = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const loggedIn = state !== null && state !== "Not-Logged-In";

  useEffect(() => {
    if (asking) first.current?.focus();
  }, [asking]);

  // Signing out at once then left an agent who was logged in to their queues logged in, unasked.
  useEffect(() => {
    if (!waiting || !known) return;
    setWaiting(false);
    if (loggedIn) setAsking(true);
    else signOut();
  }, [waiting, known, loggedIn, signOut]);

  const close = (): void => {
    setAsking(false);
    opener.current?.focus();
  };

  const leave = async (choice: "logout" | "away"): Promise<void> => {
    if (leaving !== null) return;
    setLeaving(choice);
    await leaveQueues(choice);
    signOut();
  };

  return (
    <>
      <button
        ref={opener}
        type="button"
        className="button"
        aria-expanded={loggedIn ? asking : undefined}
        aria-busy={waiting}
        onClick={() => {
          if (loggedIn) setAsking(!asking);
          else if (known) signOut();
          else if (!waiting) {
            setWaiting(true);
            void readState();
          }
        }}
      >
        {waiting ? "Signing out…" : "Sign out"}
      </button>
      {asking && loggedIn && state !== null ? (
        <div
          className="card sign-out-dialog"
          role="dialog"
          aria-labelledby={headingId}
          data-testid="sign-out-dialog"
          onKeyDown={(event) => {
            if (event.key === "Escape") {
              event.stopPropagation();
              close();
            }
          }}
        >
          <h2 id={headingId}>Sign out</h2>
          <p>
            You are logged in to your queues ({STATE_LABELS[state]}). Signed out, your phone is gone: log out of the queues so that
            callers are offered to your colleagues, or stay Away in them.
          </p>
          <div className="button-row">
            <button ref={first} type="button" className="button button-primary" aria-disabled={leaving !== null} onClick={() => void leave("logout")}>
              {leaving === "logout" ? "Signing out…" : "Sign out and log out of queues"}
            </button>
            <button type="button" className="button" aria-disabled={leaving !== null} onClick={() => void leave("away")}>
              {leaving === "away" ? "Signing out…" : "Sign out, stay Away"}
            </button>
            <button type="button" className="button" onClick={close}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
    </>
  );
}
