// Live training runs in the trainer's view (issue 18): the open run's live view (its status and
// run time, pause, resume and stop, its callers waiting, talking and gone, each person's figures
// so far), the scorecard with its CSV export once it ends, and the runs kept as history.
import { useEffect, useMemo } from "react";
import { useShallow } from "zustand/react/shallow";
import { gregorianToMs } from "../api/gregorian.js";
import { scorecardCsvUrl, type RunAction, type RunCaller, type RunDoc, type Scorecard } from "../api/training.js";
import { connectionOf } from "../state/account-connection.js";
import { useAppStore } from "../state/context.js";
import { DataTable, ErrorAlert } from "./admin/parts.js";

const STATUS_WORDS: Record<RunDoc["status"], string> = { running: "Running", paused: "Paused", ended: "Ended" };

const CALLER_STATES: Record<RunCaller["state"], string> = {
  planned: "Still to call",
  calling: "Calling",
  waiting: "Waiting",
  talking: "Talking",
  ended: "Gone",
};

const OUTCOMES: Record<string, string> = {
  answered: "answered",
  abandoned: "abandoned",
  timeout: "timed out",
  hung_up: "hung up",
  not_placed: "not placed",
  stopped: "ended by the stop",
};

function figure(value: number | null, unit = ""): string {
  return value === null ? "—" : `${value}${unit}`;
}

function when(gregorianSeconds: number | null): string {
  return gregorianSeconds === null ? "—" : new Date(gregorianToMs(gregorianSeconds)).toLocaleString();
}

export function TrainingRuns() {
  const s = useAppStore(
    useShallow((state) => ({
      runs: state.training.runs,
      session: state.session,
      serverUrl: state.serverUrl,
      loadRuns: state.loadRuns,
      openRun: state.openRun,
      driveRun: state.driveRun,
      followRun: state.followRun,
    })),
  );
  const { runs, loadRuns, followRun, session, serverUrl } = s;
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  useEffect(() => void loadRuns(), [loadRuns]);
  useEffect(() => followRun(), [followRun]);
  const current = runs.current;

  return (
    <>
      <section className="panel" aria-labelledby="run-heading" aria-busy={runs.busy}>
        <h2 id="run-heading" className="section-heading">
          {current === null ? "Live run" : `Run of ${current.scenario_name}`}
        </h2>
        <ErrorAlert message={runs.error} />
        {current === null ? (
          <p className="muted">Choose Start run on a scenario: its callers call the account&apos;s queues, its simulated agents log in beside the trainees.</p>
        ) : (
          <LiveRun run={current} busy={runs.busy} drive={(action) => void s.driveRun(action)} />
        )}
        {runs.scorecard !== null ? <ScorecardTable card={runs.scorecard} csvUrl={connection === null ? null : scorecardCsvUrl(connection, runs.scorecard.run_id)} /> : null}
      </section>

      <section className="panel" aria-labelledby="runs-heading">
        <h2 id="runs-heading" className="section-heading">
          Runs
        </h2>
        <DataTable caption="Training runs" columns={["Scenario", "Started", "Status", "Actions"]} loading={false} rowCount={runs.rows.length} emptyText="No runs yet.">
          {runs.rows.map((row) => (
            <tr key={row.id} data-run-id={row.id}>
              <th scope="row">{row.scenario_name}</th>
              <td>{when(row.started)}</td>
              <td>{STATUS_WORDS[row.status]}</td>
              <td>
                <button type="button" className="button button-small" aria-label={`Open the run of ${row.scenario_name} started ${when(row.started)}`} onClick={() => void s.openRun(row.id)}>
                  Open
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      </section>
    </>
  );
}

function LiveRun({ run, busy, drive }: { run: RunDoc; busy: boolean; drive: (action: RunAction) => void }) {
  const waiting = run.callers.filter((c) => c.state === "waiting").length;
  const abandoned = run.callers.filter((c) => c.outcome === "abandoned").length;
  const answered = run.callers.filter((c) => c.outcome === "answered").length;
  const button = (action: RunAction, label: string, danger = false) => (
    <button type="button" className={`button${danger ? " button-danger" : ""}`} aria-disabled={busy} onClick={() => (busy ? undefined : drive(action))}>
      {label}
    </button>
  );
  return (
    <>
      <p role="status" aria-live="polite" data-run-status={run.status}>
        {STATUS_WORDS[run.status]}: {Math.floor(run.run_seconds)} s of {run.duration_s} s
      </p>
      {run.status !== "ended" ? (
        <div className="toolbar">
          {run.status === "running" ? button("pause", "Pause run") : button("resume", "Resume run")}
          {button("stop", "Stop run", true)}
        </div>
      ) : null}
      <dl className="training-run-counts" aria-label="Callers so far">
        <dt>Waiting</dt>
        <dd data-count="waiting">{waiting}</dd>
        <dt>Answered</dt>
        <dd data-count="answered">{answered}</dd>
        <dt>Abandoned</dt>
        <dd data-count="abandoned">{abandoned}</dd>
        <dt>Callers</dt>
        <dd data-count="callers">{run.callers.length}</dd>
      </dl>
      <DataTable
        caption="The run's callers"
        columns={[{ key: "n", label: "#", numeric: true }, "Caller", "Number", "State", { key: "wait", label: "Waiting (s)", numeric: true }, "Outcome"]}
        loading={false}
        rowCount={run.callers.length}
        emptyText="The scenario has no callers."
      >
        {run.callers.map((c) => (
          <tr key={c.index}>
            <td className="numeric">{c.index + 1}</td>
            <th scope="row">{c.persona}</th>
            <td className="mono">{c.caller_id_number}</td>
            <td>{CALLER_STATES[c.state]}</td>
            <td className="numeric">{c.wait_s === undefined ? "" : c.wait_s}</td>
            <td>{c.outcome === null ? "" : (OUTCOMES[c.outcome] ?? c.outcome)}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

function ScorecardTable({ card, csvUrl }: { card: Scorecard; csvUrl: string | null }) {
  const r = card.run;
  const sl = r.service_level;
  return (
    <>
      <h3 className="section-heading">{card.status === "ended" ? "Scorecard" : "Scorecard so far"}</h3>
      <p className="muted">
        Offered {r.offered}, answered {r.answered}, abandoned {r.abandoned}; service level {figure(sl.percent, " %")} against {sl.target_percent} % within {sl.answered_within_s} s
        {sl.met === null ? "" : sl.met ? " (met)" : " (missed)"}; average speed of answer {figure(r.average_speed_of_answer_s, " s")}; digits collected {r.digits_collected}.
      </p>
      {csvUrl !== null ? (
        <a className="button button-small" href={csvUrl} download>
          Export the scorecard as CSV
        </a>
      ) : null}
      <DataTable
        caption="Scorecard per person"
        columns={[
          "Person",
          { key: "offered", label: "Offered", numeric: true },
          { key: "answered", label: "Answered", numeric: true },
          { key: "missed", label: "Missed", numeric: true },
          { key: "awr", label: "Abandoned while ringing", numeric: true },
          { key: "asa", label: "Speed of answer (s)", numeric: true },
          { key: "talk", label: "Talk (s)", numeric: true },
          { key: "hold", label: "Hold (s)", numeric: true },
          { key: "wrapup", label: "Wrap-up (s)", numeric: true },
          { key: "aht", label: `Handle time (s, target ${card.targets.handle_time_s})`, numeric: true },
          { key: "transfers", label: "Transfers", numeric: true },
          { key: "digits", label: "Digits collected", numeric: true },
        ]}
        loading={false}
        rowCount={card.people.length}
        emptyText="Nobody has taken a call yet."
      >
        {card.people.map((p) => (
          <tr key={p.user_id} data-user-id={p.user_id}>
            <th scope="row">
              {p.name}
              {p.simulated ? " (simulated)" : ""}
            </th>
            <td className="numeric">{p.offered}</td>
            <td className="numeric">{p.answered}</td>
            <td className="numeric">{p.missed}</td>
            <td className="numeric">{p.abandoned_while_ringing}</td>
            <td className="numeric">{figure(p.average_speed_of_answer_s)}</td>
            <td className="numeric">{p.talk_s}</td>
            <td className="numeric">{p.hold_s}</td>
            <td className="numeric">{p.wrapup_s}</td>
            <td className="numeric">
              {figure(p.average_handle_time_s)}
              {p.handle_time_met === null ? "" : p.handle_time_met ? " (met)" : " (over)"}
            </td>
            <td className="numeric">{p.transfers}</td>
            <td className="numeric">{p.digits_collected}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
