// A run's report laid out for print (issue 18 item 7): the scenario, when it ran, its seed and
// targets, the run's totals and every person who took calls compared side by side, with a Print
// button and the scorecard's CSV. Printed, the console's header, navigation and docks go (training-report.css) and the
// tables fit an A4 page. For admins and trainers, as the run's reads are.
import { useEffect, useId, useMemo, useState, type ReactNode } from "react";
import { Link, useParams } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import { apiErrorText } from "../api/error-text.js";
import { httpTrainingApi, runReplay, scorecardCsvUrl, type PersonCard, type RunCard, type RunReplay, type Scorecard } from "../api/training.js";
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

      <ReportTable caption="Run totals" name="totals" columns={totalColumns(t)} rows={[r]} rowKey={() => "run"} />
      <ReportTable caption="Trainees compared" name="people" columns={personColumns(t)} rows={card.people} rowKey={(p) => p.user_id} rowData={(p) => ({ "data-user-id": p.user_id })} emptyText="Nobody took a call in this run." />
    </>
  );
}

/** A column of a report table: its header, and its cell of each row (the row's header cell where `rowHeader`). */
interface ReportColumn<Row> {
  label: string;
  cell: (row: Row) => ReactNode;
  rowHeader?: boolean;
}

type Targets = Scorecard["targets"];

function totalColumns(t: Targets): ReportColumn<RunCard>[] {
  return [
    { label: "Callers", cell: (r) => r.callers },
    { label: "Offered", cell: (r) => r.offered },
    { label: "Answered", cell: (r) => r.answered },
    { label: "Abandoned", cell: (r) => r.abandoned },
    { label: "Timed out", cell: (r) => r.timed_out },
    { label: "Abandoned while ringing", cell: (r) => r.abandoned_while_ringing },
    {
      label: "Service level",
      cell: ({ service_level: sl }) => `${againstTarget(sl.percent, sl.target_percent, sl.met, " %")} in ${sl.answered_within_s} s`,
    },
    { label: "Speed of answer (s)", cell: (r) => figure(r.average_speed_of_answer_s) },
    { label: "Digits collected", cell: (r) => r.digits_collected },
    { label: "Texts answered", cell: (r) => textsAnswered(r.texts, r.texts_answered, r.average_text_response_s, r.text_response_met, t.text_response_s) },
  ];
}

function personColumns(t: Targets): ReportColumn<PersonCard>[] {
  return [
    { label: "Person", cell: (p) => `${p.name}${p.simulated ? " (simulated)" : ""}`, rowHeader: true },
    { label: "Offered", cell: (p) => p.offered },
    { label: "Answered", cell: (p) => p.answered },
    { label: "Missed", cell: (p) => p.missed },
    { label: "Abandoned while ringing", cell: (p) => p.abandoned_while_ringing },
    { label: "Speed of answer (s)", cell: (p) => figure(p.average_speed_of_answer_s) },
    { label: "Talk (s)", cell: (p) => p.talk_s },
    { label: "Hold (s)", cell: (p) => p.hold_s },
    { label: "Wrap-up (s)", cell: (p) => p.wrapup_s },
    { label: "Handle time (s)", cell: (p) => againstTarget(p.average_handle_time_s, t.handle_time_s, p.handle_time_met, "", "over") },
    { label: "Transfers", cell: (p) => p.transfers },
    { label: "Digits collected", cell: (p) => p.digits_collected },
    { label: "Texts answered", cell: (p) => textsAnswered(p.texts_received, p.texts_answered, p.average_text_response_s, p.text_response_met, t.text_response_s) },
  ];
}

/**
 * One of the report's tables, header and cells from one column list. Not the admin views'
 * DataTable: the report's caption shows, and printed the table keeps the page's width with fixed
 * columns (training-report.css); on screen it scrolls sideways in a narrow window as DataTable does.
 */
function ReportTable<Row>({
  caption,
  name,
  columns,
  rows,
  rowKey,
  rowData,
  emptyText,
}: {
  caption: string;
  name: string;
  columns: readonly ReportColumn<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  /** The row's data attributes (tests and print find a person's row by them). */
  rowData?: (row: Row) => Record<`data-${string}`, string>;
  /** Said in one row when there are no rows. */
  emptyText?: string;
}) {
  const captionId = useId();
  // Focusable, so the keyboard can scroll a table wider than a narrow window (it has no controls).
  return (
    <div className="scroll-x training-report-scroll" role="group" aria-labelledby={captionId} tabIndex={0}>
      <table className="training-report-table" data-table={name}>
        <caption id={captionId}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col">
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && emptyText !== undefined ? (
            <tr>
              <td colSpan={columns.length}>{emptyText}</td>
            </tr>
          ) : null}
          {rows.map((row) => (
            <tr key={rowKey(row)} {...rowData?.(row)}>
              {columns.map((column) =>
                column.rowHeader === true ? (
                  <th key={column.label} scope="row">
                    {column.cell(row)}
                  </th>
                ) : (
                  <td key={column.label}>{column.cell(row)}</td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
