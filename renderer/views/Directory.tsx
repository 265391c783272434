// The directory: every colleague of the account with their live presence (kept by the
// directory.user events), searchable by name, username or extension, with Call and, during a
// call, Transfer; the quick connects the admins chose; the agent's own do not disturb and
// auto-answer; and their missed direct calls with Call back, marked seen once shown here.
import { useEffect, useId, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { Colleague, Presence } from "../api/directory.js";
import { useAppStore } from "../state/context.js";
import { searchColleagues, unseenMissed } from "../state/directory.js";
import { focusedCall } from "../state/phone.js";
import "./directory.css";

const PRESENCE_WORDS: Record<Presence, string> = {
  on_call: "On a call",
  ringing: "Ringing",
  offline: "Offline",
  do_not_disturb: "Do not disturb",
  ready: "Ready",
  away: "Away",
  wrapup: "Wrap-up",
  available: "Available",
};

function presenceText(c: Colleague): string {
  return c.presence === "away" && c.awayReason !== "" ? `Away: ${c.awayReason.replace(/_/g, " ")}` : PRESENCE_WORDS[c.presence];
}

/** The window's title counts the missed calls not yet seen, so they show from the taskbar too. */
export function useMissedCallsTitle(): void {
  const unseen = useAppStore((state) => unseenMissed(state.directory));
  useEffect(() => {
    const base = document.title.replace(/^\(\d+ missed\) /, "");
    document.title = unseen > 0 ? `(${unseen} missed) ${base}` : base;
  }, [unseen]);
}

/** What Call and Transfer act on: dial the target, or transfer the call in progress to it. */
function useReach() {
  return useAppStore(
    useShallow((state) => {
      const current = focusedCall(state.phone.calls, "current");
      return { dial: state.dial, transfer: state.transferCall, currentId: current?.state === "active" ? current.id : null, ready: state.phone.status === "registered" };
    }),
  );
}

export function Directory() {
  const { directory, setQuery, reload } = useAppStore(useShallow((state) => ({ directory: state.directory, setQuery: state.setDirectoryQuery, reload: state.loadColleagues })));
  const searchId = useId();
  const shown = searchColleagues(directory);

  return (
    <div className="directory-view">
      <h1>Directory</h1>
      {directory.error !== null ? (
        <p className="form-error" role="alert">
          {directory.error}{" "}
          <button type="button" className="button" onClick={() => void reload()}>
            Try again
          </button>
        </p>
      ) : null}
      <div className="directory-columns">
        <div>
          <OwnSettings />
          <MissedCalls />
          <QuickConnects />
        </div>
        <section className="card" aria-labelledby="colleagues-heading">
          <h2 id="colleagues-heading">Colleagues</h2>
          <div className="field">
            <label htmlFor={searchId}>Search by name, username or extension</label>
            <input id={searchId} type="search" value={directory.query} autoComplete="off" onChange={(event) => setQuery(event.target.value)} />
          </div>
          {directory.loading && directory.colleagues.length === 0 ? <p className="muted">Reading the directory…</p> : null}
          {!directory.loading && shown.length === 0 ? <p className="muted">Nobody matches.</p> : null}
          <ul className="colleagues" aria-label="Colleagues" aria-busy={directory.loading}>
            {shown.map((c) => (
              <ColleagueRow key={c.id} colleague={c} />
            ))}
          </ul>
        </section>
      </div>
    </div>
  );
}

function ColleagueRow({ colleague: c }: { colleague: Colleague }) {
  const { dial, transfer, currentId, ready } = useReach();
  const me = useAppStore((state) => state.session?.ownerId ?? "");
  const extension = c.extensions[0] ?? "";
  return (
    <li className="colleague" data-user-id={c.id} data-presence={c.presence}>
      <span className="colleague-name">{c.name}</span>
      <span className="muted">{[c.username, extension].filter((p) => p !== "").join(" · ")}</span>
      <span className={`presence presence-${c.presence}`} data-testid="presence">
        {presenceText(c)}
      </span>
      {extension !== "" && c.id !== me ? (
        <span className="button-row">
          <button type="button" className="button" disabled={!ready} onClick={() => void dial(extension)} aria-label={`Call ${c.name}`}>
            Call
          </button>
          {currentId !== null ? (
            <button type="button" className="button" onClick={() => void transfer(currentId, extension, "blind")} aria-label={`Transfer to ${c.name}`}>
              Transfer
            </button>
          ) : null}
        </span>
      ) : null}
    </li>
  );
}

function OwnSettings() {
  const { preferences, setDnd, setAutoAnswer } = useAppStore(
    useShallow((state) => ({ preferences: state.directory.preferences, setDnd: state.setDoNotDisturb, setAutoAnswer: state.setAutoAnswer })),
  );
  const id = useId();
  const [delay, setDelay] = useState<number | null>(null);
  if (preferences === null) return null;
  const delayS = delay ?? preferences.autoAnswer.delayS;
  return (
    <section className="card" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>My availability</h2>
      <label className="check">
        <input type="checkbox" checked={preferences.doNotDisturb} onChange={(event) => void setDnd(event.target.checked)} /> Do not disturb (direct calls are refused; queue offers follow your
        queue state)
      </label>
      <label className="check">
        <input type="checkbox" checked={preferences.autoAnswer.enabled} onChange={(event) => void setAutoAnswer(event.target.checked, delayS)} /> Answer queue offers by
        myself
      </label>
      <div className="field">
        <label htmlFor={`${id}-delay`}>after (seconds)</label>
        <input
          id={`${id}-delay`}
          type="number"
          min={0}
          max={30}
          value={delayS}
          onChange={(event) => setDelay(Math.min(30, Math.max(0, Math.round(Number(event.target.value) || 0))))}
          onBlur={() => {
            if (delay !== null && delay !== preferences.autoAnswer.delayS) void setAutoAnswer(preferences.autoAnswer.enabled, delay);
          }}
        />
      </div>
    </section>
  );
}

function MissedCalls() {
  const { missed, markSeen } = useAppStore(useShallow((state) => ({ missed: state.directory.missed, markSeen: state.markMissedSeen })));
  const { dial, ready } = useReach();
  const unseen = missed.filter((m) => !m.seen).length;
  // Shown here, they are seen: the count on the navigation and in the title goes back to 0.
  useEffect(() => {
    if (unseen > 0) void markSeen();
  }, [unseen, markSeen]);
  return (
    <section className="card" aria-labelledby="missed-heading">
      <h2 id="missed-heading">Missed calls</h2>
      {missed.length === 0 ? <p className="muted">No missed calls.</p> : null}
      <ul className="missed-calls" aria-label="Missed calls">
        {missed.map((m) => (
          <li key={m.id} className="missed-call">
            <span>{m.callerName !== "" && m.callerName !== m.callerNumber ? `${m.callerName} (${m.callerNumber})` : m.callerNumber}</span>
            <time className="muted" dateTime={new Date(m.at).toISOString()}>
              {new Date(m.at).toLocaleString()}
            </time>
            {m.callerNumber !== "" ? (
              <button type="button" className="button" disabled={!ready} onClick={() => void dial(m.callerNumber)} aria-label={`Call back ${m.callerName || m.callerNumber}`}>
                Call back
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

function QuickConnects() {
  const quick = useAppStore((state) => state.directory.quickConnects);
  const { dial, transfer, currentId, ready } = useReach();
  if (quick.length === 0) return null;
  return (
    <section className="card" aria-labelledby="quick-heading">
      <h2 id="quick-heading">Quick connects</h2>
      <ul className="quick-connects" aria-label="Quick connects">
        {quick
          .filter((q) => q.number !== "")
          .map((q) => (
            <li key={q.id}>
              <span>{q.name}</span>
              <span className="button-row">
                <button type="button" className="button" disabled={!ready} onClick={() => void dial(q.number)} aria-label={`Call ${q.name}`}>
                  Call
                </button>
                {currentId !== null ? (
                  <button type="button" className="button" onClick={() => void transfer(currentId, q.number, "blind")} aria-label={`Transfer to ${q.name}`}>
                    Transfer
                  </button>
                ) : null}
              </span>
            </li>
          ))}
      </ul>
    </section>
  );
}
