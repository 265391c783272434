// The agent's own day (issue 19 item 8): calls handled, average handle time (talk and wrap-up),
// missed offers, occupancy, the time in each state with Away by reason, and the state in
// progress, as the server counts them. The figures come with the agent's status, read again after
// each of their events; the state in progress keeps counting on screen between reads.
import { useId } from "react";
import { useShallow } from "zustand/react/shallow";
import { DAY_STATES } from "../api/callq.js";
import { useAppStore } from "../state/context.js";
import { liveDay } from "../state/agent-day.js";
import { reasonLabel, STATE_LABELS, useFreshNow } from "./AgentState.js";
import { formatDuration } from "./useNow.js";

export function MyDay() {
  const { day, reasons, engineReasons } = useAppStore(
    useShallow((state) => ({ day: state.agent.status?.day ?? null, reasons: state.agent.awayReasons.reasons, engineReasons: state.agent.awayReasons.engineReasons })),
  );
  const headingId = useId();
  const now = useFreshNow(1000, day?.current !== null);
  if (day === null) return null;
  const live = liveDay(day, now);
  const awayName = (reason: string | null): string => (reason === null ? "No reason given" : reasonLabel(reason, [...reasons, ...engineReasons]));
  const figures: [string, string, string][] = [
    ["Calls handled", String(day.callsHandled), "calls"],
    ["Average handle time", day.callsHandled === 0 ? "–" : formatDuration(day.averageHandleTime * 1000), "aht"],
    ["Missed offers", String(day.missedOffers), "missed"],
    ["Occupancy", live.occupancy === null ? "–" : `${live.occupancy}%`, "occupancy"],
  ];
  const current = day.current;
  return (
    <section className="card my-day" aria-labelledby={headingId} data-testid="my-day">
      <h2 id={headingId}>My day</h2>
      <dl className="queue-figures">
        {figures.map(([label, value, key]) => (
          <div key={key}>
            <dt>{label}</dt>
            <dd data-testid={`day-${key}`}>{value}</dd>
          </div>
        ))}
      </dl>
      {current !== null && live.currentSeconds !== null ? (
        <p data-testid="day-current">
          Now: {STATE_LABELS[current.state]}
          {current.awayReason !== null ? ` · ${awayName(current.awayReason)}` : ""} for {formatDuration(live.currentSeconds * 1000)}
        </p>
      ) : null}
      <h3 className="my-day-subheading">Time in each state</h3>
      <dl className="my-day-states">
        {DAY_STATES.map((state) => (
          <div key={state}>
            <dt>{STATE_LABELS[state]}</dt>
            <dd data-testid={`day-time-${state}`}>{formatDuration(live.timeInState[state] * 1000)}</dd>
          </div>
        ))}
      </dl>
      {live.awayByReason.length > 0 ? (
        <ul className="my-day-away" aria-label="Away by reason">
          {live.awayByReason.map((a) => (
            <li key={a.reason ?? ""} data-testid={`day-away-${a.reason ?? "none"}`}>
              {awayName(a.reason)}: {formatDuration(a.seconds * 1000)}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
