// The signed-in user's own training scorecards (issue 18 item 7): one row per run they were
// offered a call in, newest first, their figures beside the run's targets. The server answers
// their own row only (GET .../users/{id}/training_scorecards), so a trainee never sees a colleague's.
import { useEffect, useMemo, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import { apiErrorText } from "../api/error-text.js";
import { ownScorecards, type OwnScorecard } from "../api/training.js";
import { connectionOf } from "../state/account-connection.js";
import { useAppStore } from "../state/context.js";
import { DataTable, ErrorAlert } from "./admin/parts.js";
import { againstTarget, figure, textsAnswered, when } from "./training-words.js";
import "./admin/views.css";
import "./training.css";

const STATUS_WORDS: Record<OwnScorecard["status"], string> = { running: "running", paused: "paused", ended: "ended" };

export function TrainingScorecards() {
  const { session, serverUrl } = useAppStore(useShallow((state) => ({ session: state.session, serverUrl: state.serverUrl })));
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  const [rows, setRows] = useState<OwnScorecard[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const userId = session?.ownerId ?? null;

  useEffect(() => {
    if (connection === null || userId === null) return;
    let current = true;
    ownScorecards(connection, userId).then(
      (answer) => {
        if (current) setRows(answer);
      },
      (err: unknown) => {
        if (current) setError(`Your scorecards could not be read: ${apiErrorText(err)}`);
      },
    );
    return () => {
      current = false;
    };
  }, [connection, userId]);

  return (
    <section aria-labelledby="scorecards-heading">
      <h1 id="scorecards-heading">My training scorecards</h1>
      <p className="view-intro">How you did in each training run you took calls in, newest first, against the run&apos;s targets.</p>
      <ErrorAlert message={error} />
      <DataTable
        caption="My scorecards, newest first"
        columns={[
          "Run",
          "Started",
          { key: "offered", label: "Offered", numeric: true },
          { key: "answered", label: "Answered", numeric: true },
          { key: "missed", label: "Missed", numeric: true },
          { key: "asa", label: "Speed of answer (s)", numeric: true },
          { key: "talk", label: "Talk (s)", numeric: true },
          { key: "hold", label: "Hold (s)", numeric: true },
          { key: "wrapup", label: "Wrap-up (s)", numeric: true },
          { key: "aht", label: "Handle time (s)", numeric: true },
          { key: "transfers", label: "Transfers", numeric: true },
          { key: "digits", label: "Digits collected", numeric: true },
          { key: "texts", label: "Texts answered", numeric: true },
          { key: "sl", label: "Run's service level", numeric: true },
        ]}
        loading={rows === null && error === null}
        rowCount={rows?.length ?? 0}
        emptyText="You have not taken calls in a training run yet."
      >
        {(rows ?? []).map((row) => {
          const p = row.person;
          const sl = row.run.service_level;
          return (
            <tr key={row.run_id} data-run-id={row.run_id}>
              <th scope="row">
                {row.scenario_name}
                {row.status === "ended" ? "" : ` (${STATUS_WORDS[row.status]}, so far)`}
              </th>
              <td>{when(row.started)}</td>
              <td className="numeric">{p.offered}</td>
              <td className="numeric">{p.answered}</td>
              <td className="numeric">{p.missed}</td>
              <td className="numeric">{figure(p.average_speed_of_answer_s)}</td>
              <td className="numeric">{p.talk_s}</td>
              <td className="numeric">{p.hold_s}</td>
              <td className="numeric">{p.wrapup_s}</td>
              <td className="numeric" data-figure="handle-time">
                {againstTarget(p.average_handle_time_s, row.targets.handle_time_s, p.handle_time_met, "", "over")}
              </td>
              <td className="numeric">{p.transfers}</td>
              <td className="numeric">{p.digits_collected}</td>
              <td className="numeric" data-figure="texts">
                {textsAnswered(p.texts_received, p.texts_answered, p.average_text_response_s, p.text_response_met, row.targets.text_response_s)}
              </td>
              <td className="numeric">
                {againstTarget(sl.percent, sl.target_percent, sl.met, " %")} in {sl.answered_within_s} s
              </td>
            </tr>
          );
        })}
      </DataTable>
    </section>
  );
}
