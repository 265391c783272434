// The agent's call-queue state as the server has it: the state and how long it has lasted,
// one-click Login / Ready / Away / Logout, the wrap-up countdown with Extend and Cancel, and
// whether the agent takes each of their queues' calls.
import { useEffect, useId, useMemo, useRef, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { AvailabilityState, DispositionCode } from "../api/callq.js";
import { systemClock } from "../clock.js";
import { useAppStore } from "../state/context.js";
import { keysOf } from "./shortcuts.js";
import { formatDuration, useNow } from "./useNow.js";
import "./callq.css";

export const STATE_LABELS: Record<AvailabilityState, string> = {
  Ready: "Ready",
  Away: "Away",
  "Wrapup-Time": "Wrap-up",
  "Call-Offer": "Ringing",
  "On-A-Call": "On a call",
  "Not-Logged-In": "Logged out",
};

/**
 * The time now, re-rendering every `everyMs`. Read at each render, not kept from the last tick:
 * a state that changed between ticks must not show a time from before it began.
 */
export function useFreshNow(everyMs = 1000, active = true): number {
  useNow(everyMs, active);
  return systemClock.now();
}

export function StateName({ state }: { state: AvailabilityState }) {
  return (
    <span className={`state-${state}`}>
      <span className="state-dot" aria-hidden="true" />
      {STATE_LABELS[state]}
    </span>
  );
}

export function AgentState() {
  const { agent, setStatus, extend, cancel } = useAppStore(
    useShallow((state) => ({ agent: state.agent, setStatus: state.setAgentStatus, extend: state.extendWrapup, cancel: state.cancelWrapup })),
  );
  const live = useAppStore((state) => state.connection.events === "online");
  const headingId = useId();
  const now = useFreshNow(1000, agent.status !== null);
  const status = agent.status;

  if (agent.isRecipient === false) {
    return (
      <section className="card agent-state" aria-labelledby={headingId}>
        <h2 id={headingId}>Queue state</h2>
        <p className="muted">You are not a queue agent. An admin can make you one (Admin, queue membership).</p>
      </section>
    );
  }

  const state = status?.state ?? null;
  const loggedIn = state !== null && state !== "Not-Logged-In";
  const busy = agent.pending !== null;
  const wrapupLeft = state === "Wrapup-Time" && agent.wrapupEndsAt !== null ? Math.max(0, agent.wrapupEndsAt - now) : null;

  return (
    <section className="card agent-state" aria-labelledby={headingId} data-testid="agent-state">
      <h2 id={headingId}>Queue state</h2>
      {state === null ? (
        <p className="muted">{agent.readError ?? "Reading your state…"}</p>
      ) : (
        <>
          <p className="state-line" aria-live="polite">
            <span className="state-name" data-testid="agent-state-name" data-state={state}>
              <StateName state={state} />
            </span>
            {agent.since !== null ? (
              <span className="state-timer muted" data-testid="agent-state-timer">
                <span className="visually-hidden">for </span>
                {formatDuration(now - agent.since)}
              </span>
            ) : null}
          </p>
          <StateReason />
          {!live ? <p className="muted">Not live: this is the last state the server gave; it updates once the connection is back.</p> : null}
          {wrapupLeft !== null ? (
            <div className="wrapup-box" data-testid="wrapup">
              <p>
                Wrap-up ends in{" "}
                <strong className="state-timer" data-testid="wrapup-left">
                  {formatDuration(wrapupLeft + 999)}
                </strong>
              </p>
              <div className="button-row">
                <button type="button" className="button" aria-disabled={busy} onClick={() => void (busy ? null : extend())}>
                  {agent.pending === "wrapup_extend" ? "Extending…" : "Extend wrap-up"}
                </button>
                <button type="button" className="button" aria-disabled={busy} onClick={() => void (busy ? null : cancel())}>
                  {agent.pending === "wrapup_cancel" ? "Ending…" : "Cancel wrap-up"}
                </button>
              </div>
            </div>
          ) : state === "Wrapup-Time" ? (
            <p className="wrapup-box" data-testid="wrapup-open">
              {status?.dispositionPending === true ? "Wrap-up lasts until you give the call its disposition." : "Wrap-up lasts until you choose Ready or Away."}
            </p>
          ) : null}
          <div className="button-row" role="group" aria-label="Change your queue state" aria-busy={busy}>
            {loggedIn ? (
              <>
                <button
                  type="button"
                  className="button"
                  aria-pressed={state === "Ready"}
                  aria-keyshortcuts={keysOf("ready")}
                  onClick={() => void setStatus("ready")}
                >
                  Ready
                </button>
                <button
                  type="button"
                  className="button"
                  aria-pressed={state === "Away"}
                  aria-keyshortcuts={keysOf("away")}
                  onClick={() => void setStatus("away")}
                >
                  Away
                </button>
                <ReasonMenu reasons={agent.awayReasons.reasons} current={state === "Away" ? (status?.awayReason ?? null) : null} choose={(reason) => void setStatus("away", reason)} />
                <button type="button" className="button" onClick={() => void setStatus("logout")}>
                  Logout
                </button>
              </>
            ) : (
              <button type="button" className="button button-primary" onClick={() => void setStatus("login")}>
                Login
              </button>
            )}
          </div>
          {agent.error !== null || agent.readError !== null ? (
            <p className="form-error" role="alert">
              {agent.error ?? agent.readError}
            </p>
          ) : null}
          <QueueAvailability disabled={!loggedIn || busy} />
        </>
      )}
    </section>
  );
}

type ReasonedStatus = { state: AvailabilityState; awayReason: string | null; missedOffers: number; unavailableReason: "no_device" | null; dispositionPending?: boolean };

/** A chosen Away reason's label: the account's, else its code as sent. */
export function reasonLabel(code: string, labels: readonly DispositionCode[]): string {
  return labels.find((r) => r.code === code)?.label ?? code;
}

/** The same reasons as stateReasonText, in the few words the supervisor's board has room for beside the state's name. */
export function stateReasonShort(status: ReasonedStatus, labels: readonly DispositionCode[] = []): string | null {
  if (status.state === "Not-Logged-In") return null;
  if (status.state === "Away" && status.awayReason === "missed_offers") {
    const n = status.missedOffers;
    return n > 0 ? `${n} missed offer${n === 1 ? "" : "s"} in a row` : "missed offers in a row";
  }
  if (status.state === "Away" && status.awayReason !== null) return reasonLabel(status.awayReason, labels);
  if (status.unavailableReason === "no_device") return "No phone registered";
  if (status.dispositionPending === true) return "Disposition needed";
  return null;
}

/** Why the agent gets no queue calls: the server's reasons, or the one they chose for Away. */
export function stateReasonText(status: ReasonedStatus, labels: readonly DispositionCode[] = []): string | null {
  if (status.state === "Not-Logged-In") return null;
  if (status.state === "Away" && status.awayReason === "missed_offers") {
    const n = status.missedOffers;
    return `Set Away after ${n > 0 ? n : "several"} missed offer${n === 1 ? "" : "s"} in a row. Choose Ready when you can take calls again.`;
  }
  if (status.state === "Away" && status.awayReason !== null) return `Away: ${reasonLabel(status.awayReason, labels)}`;
  if (status.unavailableReason === "no_device") return "No phone of yours is registered: you get no queue calls until it is back.";
  return null;
}

/**
 * Away with a reason: a menu of the account's reasons (the plain Away button beside it gives
 * none). Focus goes to the first reason on opening; arrows move, Escape or a click elsewhere closes.
 */
function ReasonMenu({ reasons, current, choose }: { reasons: readonly DispositionCode[]; current: string | null; choose: (reason: string) => void }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLUListElement>(null);
  useEffect(() => {
    if (!open) return;
    menuRef.current?.querySelector<HTMLButtonElement>("[role=menuitemradio]")?.focus();
    const away = (event: MouseEvent): void => {
      const target = event.target;
      if (target instanceof Node && (menuRef.current?.contains(target) === true || buttonRef.current?.contains(target) === true)) return;
      setOpen(false);
    };
    document.addEventListener("mousedown", away);
    return () => document.removeEventListener("mousedown", away);
  }, [open]);
  if (reasons.length === 0) return null;
  const close = (): void => {
    setOpen(false);
    buttonRef.current?.focus();
  };
  return (
    <span className="reason-menu">
      <button
        type="button"
        className="button"
        ref={buttonRef}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => setOpen((was) => !was)}
      >
        Reason…
      </button>
      {open ? (
        <ul
          id={menuId}
          ref={menuRef}
          role="menu"
          aria-label="Go Away for"
          className="reason-menu-list card"
          onKeyDown={(event) => {
            if (event.key === "Escape") {
              close();
              return;
            }
            // Arrow keys, Home and End move between the reasons, as in any menu.
            const items = [...(menuRef.current?.querySelectorAll<HTMLButtonElement>("[role=menuitemradio]") ?? [])];
            const at = items.findIndex((item) => item === document.activeElement);
            const to =
              event.key === "ArrowDown" ? (at + 1) % items.length : event.key === "ArrowUp" ? (at - 1 + items.length) % items.length : event.key === "Home" ? 0 : event.key === "End" ? items.length - 1 : -1;
            if (to < 0) return;
            event.preventDefault();
            items[to]?.focus();
          }}
        >
          {reasons.map((reason) => (
            <li key={reason.code} role="none">
              <button
                type="button"
                role="menuitemradio"
                aria-checked={reason.code === current}
                onClick={() => {
                  close();
                  choose(reason.code);
                }}
              >
                {reason.label}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </span>
  );
}

function StateReason() {
  const text = useAppStore((state) => (state.agent.status === null ? null : stateReasonText(state.agent.status, state.agent.awayReasons.reasons)));
  if (text === null) return null;
  return (
    <p className="state-reason" role="status" data-testid="agent-state-reason">
      {text}
    </p>
  );
}

/**
 * The agent's queue state and its timer in the console's header, on every view (Alt+Y and Alt+W
 * work everywhere, so their outcome shows everywhere); nothing for users who are no agents.
 */
export function AgentStateBadge() {
  const { state, since } = useAppStore(useShallow((s) => ({ state: s.agent.status?.state ?? null, since: s.agent.since })));
  const now = useFreshNow(1000, state !== null);
  if (state === null) return null;
  return (
    <p className="agent-state-badge" data-testid="agent-state-badge" data-state={state}>
      <span className="visually-hidden">Queue state: </span>
      <StateName state={state} />
      {since !== null && state !== "Not-Logged-In" ? <span className="state-timer muted"> {formatDuration(now - since)}</span> : null}
    </p>
  );
}

/** One checkbox per queue the agent is a member of: checked takes that queue's calls. */
function QueueAvailability({ disabled }: { disabled: boolean }) {
  const me = useAppStore((state) => state.session?.ownerId ?? "");
  const { list, members, availability, setQueue } = useAppStore(
    useShallow((state) => ({
      list: state.queues.list,
      members: state.queues.members,
      availability: state.agent.status?.queueAvailability,
      setQueue: state.setQueueAvailability,
    })),
  );
  const mine = useMemo(() => list.filter((q) => members[q.id]?.includes(me) ?? false), [list, members, me]);
  if (mine.length === 0) return null;
  return (
    <fieldset className="queue-availability">
      <legend>Take calls from</legend>
      {mine.map((queue) => {
        const on = availability?.[queue.id] ?? true;
        return (
          <label key={queue.id}>
            <input
              type="checkbox"
              checked={on}
              aria-disabled={disabled}
              onChange={() => {
                if (!disabled) void setQueue(queue.id, !on);
              }}
            />
            {queue.name}
          </label>
        );
      })}
    </fieldset>
  );
}
