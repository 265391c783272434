// Live training runs in the trainer's view (issue 18): the open run's live view (its status and
// run time, pause, resume and stop, its callers waiting, talking and gone, each person's figures
// so far, faults on cue), the scorecard with its CSV export once it ends, and the runs kept as
// history; an ended run's replay and its printable report.
import { useEffect, useId, useMemo, useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import type { Colleague } from "../api/directory.js";
import { FAULT_KINDS, scorecardCsvUrl, type FaultKind, type RunAction, type RunCaller, type RunDoc, type RunFault, type RunTimelineEntry, type Scorecard } from "../api/training.js";
import { connectionOf } from "../state/account-connection.js";
import { useAppStore } from "../state/context.js";
import { FAULT_WORDS } from "../state/training.js";
import { DataTable, ErrorAlert } from "./admin/parts.js";
import { TrainingReplay } from "./TrainingReplay.js";
import { CALLER_OUTCOMES, figure, textsAnswered, when } from "./training-words.js";

const STATUS_WORDS: Record<RunDoc["status"], string> = { running: "Running", paused: "Paused", ended: "Ended" };

const CALLER_STATES: Record<RunCaller["state"], string> = {
  planned: "Still to call",
  calling: "Calling",
  waiting: "Waiting",
  talking: "Talking",
  ended: "Gone",
};

export function TrainingRuns() {
  const s = useAppStore(
    useShallow((state) => ({
      runs: state.training.runs,
      session: state.session,
      serverUrl: state.serverUrl,
      loadRuns: state.loadRuns,
      openRun: state.openRun,
      driveRun: state.driveRun,
      injectFault: state.injectFault,
      followRun: state.followRun,
      colleagues: state.directory.colleagues,
    })),
  );
  const { runs, loadRuns, followRun, session, serverUrl } = s;
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  useEffect(() => void loadRuns(), [loadRuns]);
  useEffect(() => followRun(), [followRun]);
  const current = runs.current;
  // The run whose replay is open: another run opened closes it.
  const [replaying, setReplaying] = useState<string | null>(null);

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
          <>
            <LiveRun run={current} busy={runs.busy} drive={(action) => void s.driveRun(action)} />
            {current.status === "running" ? <FaultControls busy={runs.busy} trainees={s.colleagues} inject={(fault) => void s.injectFault(fault)} /> : null}
            <FaultTimeline timeline={current.timeline} />
            {current.status === "ended" ? (
              <div className="toolbar training-run-tools">
                <button type="button" className="button" aria-pressed={replaying === current.id} onClick={() => setReplaying(replaying === current.id ? null : current.id)}>
                  Replay the run
                </button>
                <Link className="button" to={`/training/runs/${encodeURIComponent(current.id)}/report`}>
                  Printable report
                </Link>
              </div>
            ) : null}
            {current.status === "ended" && replaying === current.id && connection !== null ? <TrainingReplay connection={connection} runId={current.id} /> : null}
          </>
        )}
        {runs.scorecard !== null ? <ScorecardTable card={runs.scorecard} csvUrl={connection === null ? null : scorecardCsvUrl(connection, runs.scorecard.run_id)} /> : null}
      </section>

      <section className="panel" aria-labelledby="runs-heading">
        <h2 id="runs-heading" className="section-heading">
          Runs
        </h2>
        <DataTable caption="Training runs" columns={["Scenario", "Started", "Status", "Actions"]} loading={runs.reading} rowCount={runs.rows.length} emptyText="No runs yet.">
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
            <td>{c.outcome === null ? "" : (CALLER_OUTCOMES[c.outcome] ?? c.outcome)}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

/** The form's words for each kind (contract/training.ts lists the kinds, once). */
const FAULT_CHOICES: Record<FaultKind, string> = {
  burst: "A burst of callers",
  drop_registration: "Drop a trainee's registration",
  webhook_failure: "Webhooks fail",
  text_stop: "A caller texts STOP",
  one_way_audio: "One-way audio",
  text_undelivered: "Texts to a caller undelivered",
};
const DIRECTIONS = ["to_agent", "from_agent"] as const;

/** The trainer's hand: one fault now, its own fields by kind. */
function FaultControls({ busy, trainees, inject }: { busy: boolean; trainees: readonly Colleague[]; inject: (fault: RunFault) => void }) {
  const id = useId();
  const [kind, setKind] = useState<FaultKind>("burst");
  const [count, setCount] = useState("5");
  const [trainee, setTrainee] = useState("");
  const [seconds, setSeconds] = useState("60");
  const [number, setNumber] = useState("");
  const [direction, setDirection] = useState<(typeof DIRECTIONS)[number]>("to_agent");
  const chosen = trainee !== "" ? trainee : (trainees[0]?.id ?? "");

  function submit(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    if (busy) return;
    if (kind === "burst") inject({ kind, count: Number(count) });
    else if (kind === "drop_registration") inject({ kind, target: chosen });
    else if (kind === "webhook_failure") inject({ kind, duration_s: Number(seconds) });
    else if (kind === "one_way_audio") inject({ kind, target: chosen, direction, duration_s: Number(seconds) });
    else if (kind === "text_undelivered") inject({ kind, target: number.trim(), duration_s: Number(seconds) });
    else inject({ kind, target: number.trim() });
  }

  return (
    <form className="training-faults" aria-labelledby={`${id}-legend`} onSubmit={submit}>
      <h3 id={`${id}-legend`} className="section-heading">
        Faults
      </h3>
      <div className="toolbar">
        <div className="field">
          <label htmlFor={`${id}-kind`}>Fault</label>
          <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(FAULT_KINDS.find((k) => k === e.target.value) ?? "burst")}>
            {FAULT_KINDS.map((k) => (
              <option key={k} value={k}>
                {FAULT_CHOICES[k]}
              </option>
            ))}
          </select>
        </div>
        {kind === "burst" ? (
          <div className="field">
            <label htmlFor={`${id}-count`}>Callers</label>
            <input id={`${id}-count`} type="number" min={1} max={500} required value={count} onChange={(e) => setCount(e.target.value)} />
          </div>
        ) : null}
        {kind === "drop_registration" || kind === "one_way_audio" ? (
          <div className="field">
            <label htmlFor={`${id}-trainee`}>Trainee</label>
            <select id={`${id}-trainee`} value={chosen} required onChange={(e) => setTrainee(e.target.value)}>
              {trainees.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        {kind === "one_way_audio" ? (
          <div className="field">
            <label htmlFor={`${id}-direction`}>Silent</label>
            <select id={`${id}-direction`} value={direction} onChange={(e) => setDirection(DIRECTIONS.find((d) => d === e.target.value) ?? "to_agent")}>
              <option value="to_agent">What the trainee hears</option>
              <option value="from_agent">What the trainee says</option>
            </select>
          </div>
        ) : null}
        {kind === "webhook_failure" || kind === "one_way_audio" || kind === "text_undelivered" ? (
          <div className="field">
            <label htmlFor={`${id}-seconds`}>For (seconds of run time)</label>
            <input id={`${id}-seconds`} type="number" min={1} max={3600} required value={seconds} onChange={(e) => setSeconds(e.target.value)} />
          </div>
        ) : null}
        {kind === "text_undelivered" ? (
          <div className="field">
            <label htmlFor={`${id}-number`}>Caller (persona name or number)</label>
            <input id={`${id}-number`} type="text" required placeholder="+14155550101" value={number} onChange={(e) => setNumber(e.target.value)} />
          </div>
        ) : null}
        {kind === "text_stop" ? (
          <div className="field">
            <label htmlFor={`${id}-number`}>To the texting number</label>
            <input id={`${id}-number`} type="tel" required placeholder="+14155550101" value={number} onChange={(e) => setNumber(e.target.value)} />
          </div>
        ) : null}
        <button type="submit" className="button" aria-disabled={busy}>
          Inject fault
        </button>
      </div>
    </form>
  );
}

function faultLine(entry: RunTimelineEntry): string {
  const kind = entry.fault?.kind;
  const known = FAULT_KINDS.find((k) => k === kind);
  const what = known !== undefined ? FAULT_WORDS[known] : (kind ?? "fault");
  if (entry.name === "fault_cleared") return `${what}: over`;
  const by = entry.source === "trainer" ? "by the trainer" : "from the scenario";
  return entry.applied === false ? `${what} (${by}): not applied${entry.reason === undefined ? "" : `, ${entry.reason}`}` : `${what} (${by})`;
}

/** The run's faults so far, injected and cleared, at their run time. */
function FaultTimeline({ timeline }: { timeline: readonly RunTimelineEntry[] }) {
  const faults = timeline.filter((e) => e.name === "fault_injected" || e.name === "fault_cleared");
  if (faults.length === 0) return null;
  return (
    <ul className="training-fault-list" aria-label="Faults so far">
      {faults.map((e, i) => (
        <li key={i}>
          {Math.floor(e.at_s)} s: {faultLine(e)}
        </li>
      ))}
    </ul>
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
        {sl.met === null ? "" : sl.met ? " (met)" : " (missed)"}; average speed of answer {figure(r.average_speed_of_answer_s, " s")}; digits collected {r.digits_collected}
        {r.texts > 0 ? `; texts answered ${textsAnswered(r.texts, r.texts_answered, r.average_text_response_s, r.text_response_met, card.targets.text_response_s)}` : ""}.
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
          { key: "texts", label: "Texts answered", numeric: true },
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
            <td className="numeric" data-figure="texts">
              {textsAnswered(p.texts_received, p.texts_answered, p.average_text_response_s, p.text_response_met, card.targets.text_response_s)}
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
