// A run's report laid out for print (issue 18 item 7): the scenario, when it ran, its seed and
// targets, the run's totals and every person who took calls compared side by side, with a Print
// button and the scorecard's CSV. Printed, the console's header, navigation and docks go (training-report.css) and the
// tables fit an A4 page. For admins and trainers, as the run's reads are.
import { useEffect, useMemo, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import { apiErrorText } from "../api/error-text.js";
import { httpTrainingApi, runReplay, scorecardCsvUrl, type RunReplay, type Scorecard } from "../api/training.js";
import { connectionOf } from "../state/account-connection.js";
import { useAppStore } from "../state/context.js";
import { trainerAccess } from "../state/training.js";
import { ErrorAlert } from "./admin/parts.js";
import { againstTarget, figure, textsAnswered, when } from "./training-words.js";
import "./training-report.css";

const STATUS_WORDS: Record<Scorecard["status"], string> = { running: "Running (figures so far)", paused: "Paused (figures so far)", ended: "Ended" };

interface Report {
  card: Scorecard;
  run: RunReplay;
}

export function TrainingReport() {
  const { runId = "" } = useParams();
  const access = useAppStore(trainerAccess);
  const { session, serverUrl } = useAppStore(useShallow((state) => ({ session: state.session, serverUrl: state.serverUrl })));
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  const [report, setReport] = useState<Report | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (connection === null || access !== "trainer") return;
    let current = true;
    Promise.all([httpTrainingApi.scorecard(connection, runId), runReplay(connection, runId)]).then(
      ([card, run]) => {
        if (current) setReport({ card, run });
      },
      (err: unknown) => {
        if (current) setError(`The run could not be read: ${apiErrorText(err)}`);
      },
    );
    return () => {
      current = false;
    };
  }, [connection, access, runId]);

  if (access !== "trainer") {
    return (
      <section className="training-report" aria-labelledby="report-heading">
        <h1 id="report-heading">Run report</h1>
        <p className={access === "checking" ? undefined : "form-error"} role={access === "checking" ? "status" : "alert"}>
          {access === "checking"
            ? "Checking your access…"
            : access === "unknown"
              ? "Your access could not be checked. Reload the page to try again."
              : "Run reports are for trainers: the account's admins and users marked as trainers."}
        </p>
      </section>
    );
  }

  return (
    <section className="training-report" aria-labelledby="report-heading" aria-busy={report === null && error === null}>
      <h1 id="report-heading">{report === null ? "Run report" : `Run report: ${report.card.scenario_name}`}</h1>
      <div className="toolbar training-report-tools">
        <button type="button" className="button" onClick={() => window.print()} disabled={report === null}>
          Print
        </button>
        {connection === null ? null : (
          <a className="button" href={scorecardCsvUrl(connection, runId)} download>
            Export as CSV
          </a>
        )}
        <Link className="button" to="/training">
          Back to Training
        </Link>
      </div>
      <ErrorAlert message={error} />
      {report === null ? null : <ReportBody card={report.card} run={report.run} />}
    </section>
  );
}

function ReportBody({ card, run }: Report) {
  const r = card.run;
  const sl = r.service_level;
  const t = card.targets;
  return (
    <>
      <dl className="training-report-facts" aria-label="The run">
        <dt>Scenario</dt>
        <dd>{card.scenario_name}</dd>
        <dt>Started</dt>
        <dd>{when(run.started)}</dd>
        <dt>Ended</dt>
        <dd>{when(run.ended)}</dd>
        <dt>Seed</dt>
        <dd data-fact="seed">{run.seed}</dd>
        <dt>Run time</dt>
        <dd>
          {Math.round(run.run_seconds)} s of {run.duration_s} s planned
        </dd>
        <dt>Status</dt>
        <dd>{STATUS_WORDS[card.status]}</dd>
        <dt>Targets</dt>
        <dd data-fact="targets">
          Service level {t.service_level.percent} % answered within {t.service_level.answered_within_s} s; handle time {t.handle_time_s} s
        </dd>
      </dl>

      <table className="training-report-table" data-table="totals">
        <caption>Run totals</caption>
        <thead>
          <tr>
            <th scope="col">Callers</th>
            <th scope="col">Offered</th>
            <th scope="col">Answered</th>
            <th scope="col">Abandoned</th>
            <th scope="col">Timed out</th>
            <th scope="col">Abandoned while ringing</th>
            <th scope="col">Service level</th>
            <th scope="col">Speed of answer (s)</th>
            <th scope="col">Digits collected</th>
            <th scope="col">Texts answered</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <td>{r.callers}</td>
            <td>{r.offered}</td>
            <td>{r.answered}</td>
            <td>{r.abandoned}</td>
            <td>{r.timed_out}</td>
            <td>{r.abandoned_while_ringing}</td>
            <td>
              {againstTarget(sl.percent, sl.target_percent, sl.met, " %")} in {sl.answered_within_s} s
            </td>
            <td>{figure(r.average_speed_of_answer_s)}</td>
            <td>{r.digits_collected}</td>
            <td>{textsAnswered(r.texts, r.texts_answered, r.average_text_response_s, r.text_response_met, t.text_response_s)}</td>
          </tr>
        </tbody>
      </table>

      <table className="training-report-table" data-table="people">
        <caption>Trainees compared</caption>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Offered</th>
            <th scope="col">Answered</th>
            <th scope="col">Missed</th>
            <th scope="col">Abandoned while ringing</th>
            <th scope="col">Speed of answer (s)</th>
            <th scope="col">Talk (s)</th>
            <th scope="col">Hold (s)</th>
            <th scope="col">Wrap-up (s)</th>
            <th scope="col">Handle time (s)</th>
            <th scope="col">Transfers</th>
            <th scope="col">Digits collected</th>
            <th scope="col">Texts answered</th>
          </tr>
        </thead>
        <tbody>
          {card.people.length === 0 ? (
            <tr>
              <td colSpan={13}>Nobody took a call in this run.</td>
            </tr>
          ) : null}
          {card.people.map((p) => (
            <tr key={p.user_id} data-user-id={p.user_id}>
              <th scope="row">
                {p.name}
                {p.simulated ? " (simulated)" : ""}
              </th>
              <td>{p.offered}</td>
              <td>{p.answered}</td>
              <td>{p.missed}</td>
              <td>{p.abandoned_while_ringing}</td>
              <td>{figure(p.average_speed_of_answer_s)}</td>
              <td>{p.talk_s}</td>
              <td>{p.hold_s}</td>
              <td>{p.wrapup_s}</td>
              <td>{againstTarget(p.average_handle_time_s, t.handle_time_s, p.handle_time_met, "", "over")}</td>
              <td>{p.transfers}</td>
              <td>{p.digits_collected}</td>
              <td>{textsAnswered(p.texts_received, p.texts_answered, p.average_text_response_s, p.text_response_met, t.text_response_s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
