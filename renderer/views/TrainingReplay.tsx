// A finished run replayed for the trainer (issue 18 item 7): a scrubber over its run time and Play
// at 1x to 10x, showing at each moment the callers waiting, answered and abandoned, each caller's
// state, and each person's state and the caller they are talking to, as the live view showed them.
// Everything comes from what the server stored of the run (GET .../replay): nothing runs again.
import { useEffect, useId, useMemo, useRef, useState } from "react";
import { apiErrorText } from "../api/error-text.js";
import { runReplay, type RunReplay } from "../api/training.js";
import type { AccountConnection } from "../api/account.js";
import { REPLAY_SPEEDS, replayAt, replayLength, type ReplayCaller } from "../state/training-replay.js";
import { DataTable, ErrorAlert } from "./admin/parts.js";
import { CALLER_OUTCOMES, figure } from "./training-words.js";

/** How often a playing replay moves its scrubber, in ms of real time. */
const FRAME_MS = 100;

const CALLER_STATES: Record<ReplayCaller["state"], string> = { calling: "Calling", waiting: "Waiting", talking: "Talking", ended: "Gone" };

export function TrainingReplay({ connection, runId }: { connection: AccountConnection; runId: string }) {
  const [replay, setReplay] = useState<RunReplay | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let current = true;
    setReplay(null);
    setError(null);
    runReplay(connection, runId).then(
      (answer) => {
        if (current) setReplay(answer);
      },
      (err: unknown) => {
        if (current) setError(`The run's timeline could not be read: ${apiErrorText(err)}`);
      },
    );
    return () => {
      current = false;
    };
  }, [connection, runId]);

  return (
    <section className="training-replay" aria-labelledby="replay-heading" aria-busy={replay === null && error === null}>
      <h3 id="replay-heading" className="section-heading">
        Replay
      </h3>
      <ErrorAlert message={error} />
      {replay === null ? null : <ReplayPlayer replay={replay} />}
    </section>
  );
}

function ReplayPlayer({ replay }: { replay: RunReplay }) {
  const id = useId();
  const length = replayLength(replay);
  const [atS, setAtS] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState<number>(1);
  const moment = useMemo(() => replayAt(replay, atS), [replay, atS]);
  const names = useMemo(() => new Map(replay.people.map((p) => [p.user_id, p.name])), [replay]);
  const lastTick = useRef(0);

  useEffect(() => {
    if (!playing) return;
    lastTick.current = performance.now();
    const timer = window.setInterval(() => {
      const now = performance.now();
      const elapsedS = ((now - lastTick.current) / 1000) * speed;
      lastTick.current = now;
      setAtS((was) => Math.min(length, Math.round((was + elapsedS) * 10) / 10));
    }, FRAME_MS);
    return () => window.clearInterval(timer);
  }, [playing, speed, length]);

  // At the end the replay stops, and Play starts it again from the beginning.
  useEffect(() => {
    if (playing && atS >= length) setPlaying(false);
  }, [playing, atS, length]);

  function play(): void {
    if (playing) {
      setPlaying(false);
      return;
    }
    if (atS >= length) setAtS(0);
    setPlaying(true);
  }

  return (
    <>
      <div className="toolbar training-replay-controls">
        <button type="button" className="button" onClick={play}>
          {playing ? "Pause replay" : "Play replay"}
        </button>
        <div className="field">
          <label htmlFor={`${id}-speed`}>Speed</label>
          <select id={`${id}-speed`} value={speed} onChange={(e) => setSpeed(Number(e.target.value))}>
            {REPLAY_SPEEDS.map((s) => (
              <option key={s} value={s}>
                {s}x
              </option>
            ))}
          </select>
        </div>
        <div className="field training-replay-scrubber">
          <label htmlFor={`${id}-at`}>Run time (s)</label>
          <input
            id={`${id}-at`}
            type="range"
            min={0}
            max={length}
            step={0.1}
            value={atS}
            aria-valuetext={`${atS} s of ${length} s`}
            onChange={(e) => {
              setPlaying(false);
              setAtS(Number(e.target.value));
            }}
          />
        </div>
      </div>
      <p className="status-text" data-replay-at={atS}>
        {atS.toFixed(1)} s of {length} s
      </p>
      <dl className="training-run-counts" aria-label="Callers at this moment">
        <dt>Waiting</dt>
        <dd data-count="waiting">{moment.waiting}</dd>
        <dt>Answered</dt>
        <dd data-count="answered">{moment.answered}</dd>
        <dt>Abandoned</dt>
        <dd data-count="abandoned">{moment.abandoned}</dd>
        <dt>Arrived</dt>
        <dd data-count="arrived">{moment.arrived}</dd>
      </dl>
      <DataTable
        caption="People at this moment"
        columns={["Person", "State", "On a call with"]}
        loading={false}
        rowCount={moment.people.length}
        emptyText="Nobody was logged in to the run's queues."
      >
        {moment.people.map((p) => {
          const caller = p.call === null ? undefined : moment.callers.find((c) => c.index === p.call);
          return (
            <tr key={p.user_id} data-user-id={p.user_id}>
              <th scope="row">
                {p.name}
                {p.simulated ? " (simulated)" : ""}
              </th>
              <td data-cell="state">{p.state ?? "—"}</td>
              <td data-cell="call">{caller === undefined ? "" : `#${caller.index + 1} ${caller.persona}`}</td>
            </tr>
          );
        })}
      </DataTable>
      <DataTable
        caption="Callers at this moment"
        columns={[{ key: "n", label: "#", numeric: true }, "Caller", "Number", "State", { key: "wait", label: "Waiting (s)", numeric: true }, "Outcome", "Answered by"]}
        loading={false}
        rowCount={moment.callers.length}
        emptyText="No caller yet."
      >
        {moment.callers.map((c) => (
          <tr key={c.index} data-caller-state={c.state}>
            <td className="numeric">{c.index + 1}</td>
            <th scope="row">{c.persona}</th>
            <td className="mono">{c.caller_id_number}</td>
            <td>{CALLER_STATES[c.state]}</td>
            <td className="numeric">{figure(c.wait_s)}</td>
            <td>{c.outcome === null ? "" : (CALLER_OUTCOMES[c.outcome] ?? c.outcome)}</td>
            <td>{c.agent_id === null ? "" : (names.get(c.agent_id) ?? c.agent_id)}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
