// The trainer's view (issue 18): the account's training scenarios, an editor with a form for the
// common fields beside the whole document as JSON (each follows the other; the server's refusal
// is shown next to the field it names), create, save, delete after a confirmation, export the
// shareable file and import one, and a headless preview's figures. For admins and trainers only.
import { useEffect, useId, useMemo, useRef, useState, type ChangeEvent, type FormEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import { scenarioFileUrl, type PreviewSummary, type ScenarioDoc, type ScenarioRow } from "../api/training.js";
import { connectionOf } from "../state/account-connection.js";
import { useAppStore } from "../state/context.js";
import { trainerAccess, type FieldProblem } from "../state/training.js";
import { ConfirmDialog } from "./admin/ConfirmDialog.js";
import { TrainingRuns } from "./TrainingRuns.js";
import { DataTable, DocOpeningPanel, ErrorAlert } from "./admin/parts.js";
import { useDocOpener } from "./admin/use-doc-editor.js";
import "./admin/views.css";
import "./training.css";

const DISTRIBUTIONS = ["fixed", "exponential", "uniform", "normal", "lognormal"];

const NEW_PERSONA: ScenarioDoc = { name: "Caller", weight: 1, number: "+1415555####", patience: { distribution: "exponential", mean_s: 60 }, abandons: true };

const NEW_SCENARIO: ScenarioDoc = {
  name: "",
  duration_s: 1800,
  seed: 1,
  queues: [{ number: "+14155550100", name: "Support", rate_per_hour: 60 }],
  personas: [NEW_PERSONA],
  agents: { count: 2, ring_delay_s: 3, handle_time: { distribution: "exponential", mean_s: 180 }, wrapup_s: 10 },
  targets: { service_level: { answered_within_s: 20, percent: 80 }, handle_time_s: 300 },
  faults: [],
};

export function Training() {
  const access = useAppStore(trainerAccess);
  if (access === "trainer") return <TrainingPage />;
  return (
    <section aria-labelledby="training-heading">
      <h1 id="training-heading">Training</h1>
      {access === "checking" ? (
        <p role="status">Checking your access…</p>
      ) : (
        <p className="form-error" role="alert">
          {access === "unknown"
            ? "Your access could not be checked. Reload the page to try again."
            : "The training view is for trainers: the account's admins and users marked as trainers. Ask an admin if you need it."}
        </p>
      )}
    </section>
  );
}

interface Editing {
  title: string;
  draft: ScenarioDoc;
  /** A new one for every opening, so the editor starts again from its draft. */
  serial: number;
}

function TrainingPage() {
  const s = useAppStore(
    useShallow((state) => ({
      training: state.training,
      session: state.session,
      serverUrl: state.serverUrl,
      loadScenarios: state.loadScenarios,
      readScenario: state.readScenario,
      saveScenario: state.saveScenario,
      deleteScenario: state.deleteScenario,
      importScenario: state.importScenario,
      previewScenario: state.previewScenario,
      startRun: state.startRun,
    })),
  );
  const { training, loadScenarios, session, serverUrl } = s;
  const connection = useMemo(() => connectionOf({ session, serverUrl }), [session, serverUrl]);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [confirming, setConfirming] = useState<ScenarioRow | null>(null);
  const [deleting, setDeleting] = useState(false);
  const importId = useId();
  const openings = useRef(0);
  // A scenario opened for editing: its read shown in the editor's place, a failed one with a
  // retry; only the one opened last opens, and none once another form was opened or the form
  // closed meanwhile (useDocOpener).
  const opener = useDocOpener<ScenarioRow, ScenarioDoc>((row) => s.readScenario(row.id), (row, doc) => setEditing({ title: `Edit ${row.name}`, draft: doc, serial: ++openings.current }));
  const open = (title: string, draft: ScenarioDoc) => {
    opener.settled();
    setEditing({ title, draft, serial: ++openings.current });
  };
  const close = () => {
    opener.settled();
    setEditing(null);
  };

  useEffect(() => void loadScenarios(), [loadScenarios]);

  async function edit(row: ScenarioRow): Promise<void> {
    // The editor in the place gives way to the one being opened, which says it is being read.
    setEditing(null);
    await opener.open(row, row.name);
  }

  async function importFile(event: ChangeEvent<HTMLInputElement>): Promise<void> {
    const input = event.target;
    const file = input.files?.[0];
    if (file === undefined) return;
    const imported = await s.importScenario(await file.text());
    // The same file may be picked again (a second copy).
    input.value = "";
    if (imported !== null) open(`Edit ${typeof imported.name === "string" ? imported.name : "the imported scenario"} (imported)`, imported);
  }

  async function confirmDelete(): Promise<void> {
    if (confirming === null) return;
    setDeleting(true);
    await s.deleteScenario(confirming.id);
    setDeleting(false);
    if (editing?.draft.id === confirming.id || opener.opening?.row.id === confirming.id) close();
    setConfirming(null);
  }

  const previewed = training.rows.find((row) => row.id === training.preview.scenarioId);

  return (
    <section aria-labelledby="training-heading">
      <h1 id="training-heading">Training</h1>
      <p className="view-intro">Scenarios for a training shift: who calls, how often, who answers, and the targets. Preview runs one headless on the server.</p>
      <div className="toolbar">
        <button type="button" className="button" onClick={() => open("New scenario", NEW_SCENARIO)}>
          New scenario
        </button>
        <div className="field training-import">
          <label htmlFor={importId}>Import a scenario file</label>
          <input id={importId} type="file" accept=".json,application/json" onChange={(e) => void importFile(e)} />
        </div>
        <button type="button" className="button" onClick={() => void loadScenarios()}>
          Refresh
        </button>
      </div>
      <p className="status-text" role="status" aria-live="polite">
        {training.loading ? "Loading scenarios…" : (training.notice ?? "")}
      </p>
      <ErrorAlert message={training.error} />

      {editing === null && opener.opening !== null ? <DocOpeningPanel opening={opener.opening} retry={opener.retryOpen} cancel={close} /> : null}
      {editing !== null ? (
        <ScenarioEditor
          key={editing.serial}
          title={editing.title}
          initial={editing.draft}
          save={s.saveScenario}
          close={close}
        />
      ) : null}

      <DataTable caption="Training scenarios" columns={["Name", { key: "duration", label: "Duration", numeric: true }, { key: "seed", label: "Seed", numeric: true }, "Actions"]} loading={training.loading} rowCount={training.rows.length} emptyText="No scenarios yet.">
        {training.rows.map((row) => (
          <tr key={row.id} data-scenario-id={row.id}>
            <th scope="row">{row.name}</th>
            <td className="numeric">{minutes(row.duration_s)}</td>
            <td className="numeric">{row.seed}</td>
            <td>
              <div className="inline-actions">
                <button type="button" className="button button-small" aria-label={`Edit ${row.name}`} onClick={() => void edit(row)}>
                  Edit
                </button>
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Preview ${row.name}`}
                  aria-disabled={training.preview.running}
                  onClick={() => (training.preview.running ? undefined : void s.previewScenario(row.id))}
                >
                  Preview
                </button>
                {connection !== null ? (
                  <a className="button button-small" href={scenarioFileUrl(connection, row.id)} download aria-label={`Export ${row.name}`}>
                    Export
                  </a>
                ) : null}
                <button
                  type="button"
                  className="button button-small"
                  aria-label={`Start run of ${row.name}`}
                  aria-disabled={training.runs.busy}
                  onClick={() => (training.runs.busy ? undefined : void s.startRun(row.id))}
                >
                  Start run
                </button>
                <button type="button" className="button button-small button-danger" aria-label={`Delete ${row.name}`} onClick={() => setConfirming(row)}>
                  Delete
                </button>
              </div>
            </td>
          </tr>
        ))}
      </DataTable>

      <section className="panel" aria-labelledby="preview-heading" aria-busy={training.preview.running}>
        <h2 id="preview-heading" className="section-heading">
          Preview{previewed !== undefined ? ` of ${previewed.name}` : ""}
        </h2>
        {training.preview.running ? <p role="status">Running the scenario headless…</p> : null}
        <ErrorAlert message={training.preview.error} />
        {training.preview.summary !== null ? <PreviewFigures summary={training.preview.summary} /> : training.preview.running ? null : <p className="muted">Choose Preview on a scenario to see its service level, waits and each simulated agent's work.</p>}
      </section>

      <TrainingRuns />

      <ConfirmDialog
        open={confirming !== null}
        title="Delete this scenario?"
        message={confirming === null ? "" : `“${confirming.name}” will be gone for every trainer. Export it first to keep a copy. This cannot be undone.`}
        confirmLabel="Delete scenario"
        busy={deleting}
        onConfirm={() => void confirmDelete()}
        onCancel={() => setConfirming(null)}
      />
    </section>
  );
}

function minutes(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

/** A figure as shown: "—" when the run had nothing to measure it on. */
function figure(value: number | null, unit = ""): string {
  return value === null ? "—" : `${value}${unit}`;
}

function PreviewFigures({ summary }: { summary: PreviewSummary }) {
  const sl = summary.service_level;
  const rows: [string, string, string][] = [
    ["Callers", figure(summary.callers), ""],
    ["Offered", figure(summary.offered), ""],
    ["Answered", figure(summary.answered), ""],
    ["Abandoned", figure(summary.abandoned), ""],
    ["Abandoned share", figure(summary.abandoned_percent, " %"), ""],
    ["Abandoned while ringing", figure(summary.abandoned_while_ringing), ""],
    ["Timed out", figure(summary.timed_out), ""],
    ["Texted instead", figure(summary.texted), ""],
    ["Service level", figure(sl.percent, " %"), `${sl.target_percent} % within ${sl.answered_within_s} s${sl.met === null ? "" : sl.met ? ": met" : ": missed"}`],
    ["Average speed of answer", figure(summary.average_speed_of_answer_s, " s"), ""],
    ["Longest wait", figure(summary.longest_wait_s, " s"), ""],
    ["Average handle time", figure(summary.average_handle_time_s, " s"), `${summary.handle_time_target_s} s`],
    ["Offered load", `${summary.offered_load_erlangs} Erlangs`, ""],
  ];
  return (
    <>
      <p className="muted">
        Seed {summary.seed}, {minutes(summary.duration_s)} of arrivals; the last caller left at {summary.ended_at_s} s.
      </p>
      <DataTable caption="Preview figures" columns={["Figure", { key: "value", label: "Value", numeric: true }, "Target"]} loading={false} rowCount={rows.length} emptyText="">
        {rows.map(([name, value, target]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td className="numeric">{value}</td>
            <td>{target}</td>
          </tr>
        ))}
      </DataTable>
      <h3 className="section-heading">Queues</h3>
      <DataTable
        caption="Each queue's figures"
        columns={[
          "Queue",
          { key: "offered", label: "Offered", numeric: true },
          { key: "answered", label: "Answered", numeric: true },
          { key: "abandoned", label: "Abandoned", numeric: true },
          { key: "timed-out", label: "Timed out", numeric: true },
          { key: "sl", label: "Service level (%)", numeric: true },
          { key: "asa", label: "Average speed of answer (s)", numeric: true },
        ]}
        loading={false}
        rowCount={summary.queues.length}
        emptyText=""
      >
        {summary.queues.map((queue) => (
          <tr key={queue.queue}>
            <th scope="row" className="mono">
              {queue.queue}
            </th>
            <td className="numeric">{queue.offered}</td>
            <td className="numeric">{queue.answered}</td>
            <td className="numeric">{queue.abandoned}</td>
            <td className="numeric">{queue.timed_out}</td>
            <td className="numeric">{figure(queue.service_level_percent)}</td>
            <td className="numeric">{figure(queue.average_speed_of_answer_s)}</td>
          </tr>
        ))}
      </DataTable>
      <h3 className="section-heading">Simulated agents</h3>
      <DataTable
        caption="Each simulated agent's figures"
        columns={[
          "Agent",
          { key: "answered", label: "Answered", numeric: true },
          { key: "talk", label: "Talk (s)", numeric: true },
          { key: "wrapup", label: "Wrap-up (s)", numeric: true },
          { key: "aht", label: "Average handle (s)", numeric: true },
          { key: "occupancy", label: "Occupancy (%)", numeric: true },
        ]}
        loading={false}
        rowCount={summary.agents.length}
        emptyText="The scenario has no simulated agents."
      >
        {summary.agents.map((agent) => (
          <tr key={agent.agent_id}>
            <th scope="row">{agent.name}</th>
            <td className="numeric">{agent.answered}</td>
            <td className="numeric">{agent.talk_s}</td>
            <td className="numeric">{agent.wrapup_s}</td>
            <td className="numeric">{figure(agent.average_handle_time_s)}</td>
            <td className="numeric">{agent.occupancy_percent}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

/** One input of the form: the document's field it edits (a dotted path) and how. */
interface InputSpec {
  path: string;
  label: string;
  kind: "text" | "number" | "checkbox" | "distribution" | "queue";
  /** A refusal naming a field under this path is shown here too, with its field named. */
  covers?: string;
}

interface FormSection {
  legend: string;
  inputs: InputSpec[];
  /** The list entry the section edits, with a Remove button. */
  entry?: { list: "queues" | "personas"; index: number };
}

function formSections(doc: ScenarioDoc): FormSection[] {
  const queues = Array.isArray(doc.queues) ? doc.queues : [];
  const personas = Array.isArray(doc.personas) ? doc.personas : [];
  return [
    {
      legend: "Scenario",
      inputs: [
        { path: "name", label: "Name", kind: "text" },
        { path: "duration_s", label: "Duration (seconds)", kind: "number" },
        { path: "seed", label: "Seed", kind: "number" },
      ],
    },
    ...queues.map((_, i): FormSection => ({
      legend: `Queue ${i + 1}`,
      entry: { list: "queues", index: i },
      inputs: [
        { path: `queues.${i}`, label: "Queue id or number", kind: "queue", covers: `queues.${i}` },
        { path: `queues.${i}.name`, label: "Queue name", kind: "text" },
        { path: `queues.${i}.rate_per_hour`, label: "Callers per hour", kind: "number" },
      ],
    })),
    ...personas.map((_, i): FormSection => ({
      legend: `Persona ${i + 1}`,
      entry: { list: "personas", index: i },
      inputs: [
        { path: `personas.${i}.name`, label: "Persona name", kind: "text" },
        { path: `personas.${i}.weight`, label: "Weight", kind: "number" },
        { path: `personas.${i}.number`, label: "Caller number (# is a random digit)", kind: "text" },
        { path: `personas.${i}.patience.distribution`, label: "Patience distribution", kind: "distribution" },
        { path: `personas.${i}.patience.mean_s`, label: "Mean patience (seconds)", kind: "number", covers: `personas.${i}.patience` },
        { path: `personas.${i}.abandons`, label: "Hangs up when patience runs out", kind: "checkbox" },
      ],
    })),
    {
      legend: "Simulated agents",
      inputs: [
        { path: "agents.count", label: "Simulated agents", kind: "number" },
        { path: "agents.ring_delay_s", label: "Ring before answering (seconds)", kind: "number" },
        { path: "agents.handle_time.mean_s", label: "Mean handle time (seconds)", kind: "number", covers: "agents.handle_time" },
        { path: "agents.wrapup_s", label: "Wrap-up (seconds)", kind: "number" },
      ],
    },
    {
      legend: "Targets",
      inputs: [
        { path: "targets.service_level.percent", label: "Service level (% answered)", kind: "number" },
        { path: "targets.service_level.answered_within_s", label: "Answered within (seconds)", kind: "number" },
        { path: "targets.handle_time_s", label: "Handle time target (seconds)", kind: "number" },
      ],
    },
  ];
}

/**
 * Where each refusal is shown: at the input editing that very field, else at the input covering
 * the longest part of its path (with the field named), else beside the document view.
 */
function placeProblems(problems: readonly FieldProblem[], inputs: readonly InputSpec[]): { at: Map<string, string[]>; elsewhere: string[] } {
  const at = new Map<string, string[]>();
  const elsewhere: string[] = [];
  const under = (field: string, prefix: string) => field === prefix || field.startsWith(`${prefix}.`);
  for (const problem of problems) {
    const exact = inputs.find((input) => input.path === problem.field);
    const covering = exact ?? inputs.filter((input) => input.covers !== undefined && under(problem.field, input.covers)).sort((a, b) => (b.covers?.length ?? 0) - (a.covers?.length ?? 0))[0];
    const words = exact !== undefined ? problem.message : `${problem.field}: ${problem.message}`;
    if (covering === undefined) elsewhere.push(words);
    else at.set(covering.path, [...(at.get(covering.path) ?? []), words]);
  }
  return { at, elsewhere };
}

function getAt(doc: unknown, path: string): unknown {
  let here: unknown = doc;
  for (const key of path.split(".")) {
    if (typeof here !== "object" || here === null) return undefined;
    here = Reflect.get(here, Array.isArray(here) ? Number(key) : key);
  }
  return here;
}

/** The document with the field at `path` set (removed when `value` is undefined), copying what it changes. */
function setAt(doc: unknown, keys: readonly string[], value: unknown): unknown {
  const [key, ...rest] = keys;
  if (key === undefined) return value;
  if (Array.isArray(doc)) {
    const copy: unknown[] = [...doc];
    copy[Number(key)] = setAt(copy[Number(key)], rest, value);
    return copy;
  }
  const record: Record<string, unknown> = typeof doc === "object" && doc !== null ? { ...(doc as Record<string, unknown>) } : {};
  const next = setAt(record[key], rest, value);
  if (next === undefined) delete record[key];
  else record[key] = next;
  return record;
}

function withField(doc: ScenarioDoc, path: string, value: unknown): ScenarioDoc {
  return setAt(doc, path.split("."), value) as ScenarioDoc;
}

const asText = (doc: ScenarioDoc) => JSON.stringify(doc, null, 2);

interface ScenarioEditorProps {
  title: string;
  initial: ScenarioDoc;
  save(doc: ScenarioDoc): Promise<{ saved: ScenarioDoc } | { error: string; fields: FieldProblem[] }>;
  close(): void;
}

function ScenarioEditor({ title, initial, save, close }: ScenarioEditorProps) {
  const [draft, setDraft] = useState(initial);
  const [text, setText] = useState(() => asText(initial));
  const [textProblem, setTextProblem] = useState<string | null>(null);
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // The draft the document view's own text gave: the form's changes rewrite the text, not these.
  const fromText = useRef<ScenarioDoc | null>(null);
  const headingId = useId();
  const textId = useId();

  useEffect(() => {
    if (fromText.current === draft) return;
    setText(asText(draft));
    setTextProblem(null);
  }, [draft]);

  const sections = useMemo(() => formSections(draft), [draft]);
  const placed = useMemo(() => placeProblems(problems, sections.flatMap((section) => section.inputs)), [problems, sections]);

  function change(next: ScenarioDoc): void {
    fromText.current = null;
    setDraft(next);
  }

  function typed(value: string): void {
    setText(value);
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      setTextProblem(`Not valid JSON yet: ${error instanceof Error ? error.message : String(error)}. The form shows the last valid document.`);
      return;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      setTextProblem("A scenario is a JSON object ({ … }). The form shows the last valid document.");
      return;
    }
    setTextProblem(null);
    fromText.current = parsed as ScenarioDoc;
    setDraft(parsed as ScenarioDoc);
  }

  function addEntry(list: "queues" | "personas"): void {
    const entries = Array.isArray(draft[list]) ? draft[list] : [];
    change({ ...draft, [list]: [...entries, list === "queues" ? { number: "", rate_per_hour: 60 } : NEW_PERSONA] });
  }

  function removeEntry(list: "queues" | "personas", index: number): void {
    const entries = Array.isArray(draft[list]) ? draft[list] : [];
    change({ ...draft, [list]: entries.filter((_, i) => i !== index) });
  }

  async function submit(event: FormEvent<HTMLFormElement>): Promise<void> {
    event.preventDefault();
    if (saving) return;
    if (textProblem !== null) {
      setFormError("The document view does not hold a valid scenario: correct it before saving.");
      return;
    }
    setSaving(true);
    const outcome = await save(draft);
    setSaving(false);
    if ("saved" in outcome) {
      close();
      return;
    }
    setFormError(outcome.error);
    setProblems(outcome.fields);
  }

  return (
    <form className="panel training-editor" aria-labelledby={headingId} onSubmit={(e) => void submit(e)} noValidate>
      <h2 id={headingId}>{title}</h2>
      <div className="training-columns">
        <div className="training-form">
          {sections.map((section) => (
            <fieldset key={section.legend}>
              <legend>{section.legend}</legend>
              <div className="form-grid">
                {section.inputs.map((input) => (
                  <FormInput key={input.path} input={input} doc={draft} problems={placed.at.get(input.path) ?? []} onChange={change} />
                ))}
              </div>
              {section.entry !== undefined ? (
                <button
                  type="button"
                  className="button button-small"
                  onClick={() => section.entry !== undefined && removeEntry(section.entry.list, section.entry.index)}
                >
                  Remove {section.legend.toLowerCase()}
                </button>
              ) : null}
            </fieldset>
          ))}
          <div className="inline-actions">
            <button type="button" className="button button-small" onClick={() => addEntry("queues")}>
              Add a queue
            </button>
            <button type="button" className="button button-small" onClick={() => addEntry("personas")}>
              Add a persona
            </button>
          </div>
        </div>
        <div className="field training-document">
          <label htmlFor={textId}>Scenario document (JSON)</label>
          <textarea
            id={textId}
            value={text}
            spellCheck={false}
            aria-invalid={textProblem !== null || placed.elsewhere.length > 0}
            aria-describedby={`${textId}-hint ${textId}-problem`}
            onChange={(e) => typed(e.target.value)}
          />
          <p id={`${textId}-hint`} className="field-hint">
            Every field of the scenario, as its file holds it; the fields the form lacks (lines, digits, talk time, profiles, bursts, faults) are edited here.
          </p>
          <div id={`${textId}-problem`}>
            {textProblem !== null ? <p className="field-error">{textProblem}</p> : null}
            {placed.elsewhere.map((words) => (
              <p key={words} className="field-error">
                {words}
              </p>
            ))}
          </div>
        </div>
      </div>
      <ErrorAlert message={formError} />
      <div className="inline-actions">
        <button type="submit" className="button" aria-disabled={saving}>
          {saving ? "Saving…" : "Save scenario"}
        </button>
        <button type="button" className="button" onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface FormInputProps {
  input: InputSpec;
  doc: ScenarioDoc;
  problems: string[];
  onChange(doc: ScenarioDoc): void;
}

function FormInput({ input, doc, problems, onChange }: FormInputProps) {
  const id = useId();
  const problemId = `${id}-problem`;
  const invalid = problems.length > 0;
  const described = invalid ? problemId : undefined;
  const value = getAt(doc, input.path);
  const set = (next: unknown) => onChange(withField(doc, input.path, next));

  let control;
  switch (input.kind) {
    case "checkbox":
      control = <input id={id} type="checkbox" checked={value === true} aria-invalid={invalid} aria-describedby={described} onChange={(e) => set(e.target.checked)} />;
      break;
    case "distribution":
      control = (
        <select id={id} value={typeof value === "string" ? value : ""} aria-invalid={invalid} aria-describedby={described} onChange={(e) => set(e.target.value)}>
          {DISTRIBUTIONS.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
      );
      break;
    case "number":
      control = (
        <input
          id={id}
          type="number"
          value={typeof value === "number" ? String(value) : ""}
          aria-invalid={invalid}
          aria-describedby={described}
          onChange={(e) => set(e.target.value === "" || Number.isNaN(e.target.valueAsNumber) ? undefined : e.target.valueAsNumber)}
        />
      );
      break;
    case "queue": {
      // A call queue of the account is named by its 32-character id, anything else is a dialled number.
      const queue = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
      const shown = typeof queue.queue_id === "string" ? queue.queue_id : typeof queue.number === "string" ? queue.number : "";
      control = (
        <input
          id={id}
          type="text"
          spellCheck={false}
          value={shown}
          aria-invalid={invalid}
          aria-describedby={described}
          onChange={(e) => {
            const { queue_id: _id, number: _number, ...rest } = queue;
            const key = e.target.value.trim();
            set(/^[0-9a-f]{32}$/.test(key) ? { queue_id: key, ...rest } : { number: key, ...rest });
          }}
        />
      );
      break;
    }
    case "text":
      control = <input id={id} type="text" value={typeof value === "string" ? value : ""} aria-invalid={invalid} aria-describedby={described} onChange={(e) => set(e.target.value)} />;
      break;
  }

  return (
    <div className={input.kind === "checkbox" ? "checkbox" : "field"}>
      {input.kind === "checkbox" ? control : null}
      <label htmlFor={id}>{input.label}</label>
      {input.kind === "checkbox" ? null : control}
      {invalid ? (
        <p id={problemId} className="field-error">
          {problems.join(" ")}
        </p>
      ) : null}
    </div>
  );
}
