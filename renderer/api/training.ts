// The account's training scenarios (a local addition of this server, issue 18): the list, each
// scenario read, created, replaced and deleted, the shareable file imported and exported, and a
// headless preview's summary.
import type { OwnScorecard, RunReplay, RunStatus, Scorecard } from "../../contract/training.js";
import { accountList, accountMediaUrl, accountRequest, type AccountConnection } from "./account.js";

// The scorecard's and the replay's shapes are the API's contract, written once (contract/training.ts).
export type { FaultKind, OwnScorecard, PersonCard, ReplayAgentStep, RunCard, RunReplay, RunStatus, Scorecard } from "../../contract/training.js";
export { FAULT_KINDS } from "../../contract/training.js";

export interface ScenarioRow {
  id: string;
  name: string;
  duration_s: number;
  seed: number;
}

/**
 * A scenario as the document view shows it: any JSON object. The form reads and writes its fields
 * by path, and the server checks it on save, so the console holds whatever the trainer typed.
 */
export type ScenarioDoc = Record<string, unknown>;

export interface QueuePreview {
  queue: string;
  offered: number;
  answered: number;
  abandoned: number;
  timed_out: number;
  service_level_percent: number | null;
  average_speed_of_answer_s: number | null;
}

export interface AgentPreview {
  agent_id: string;
  name: string;
  answered: number;
  talk_s: number;
  wrapup_s: number;
  average_handle_time_s: number | null;
  occupancy_percent: number;
}

/** POST .../{id}/preview: the headless run's summary. */
export interface PreviewSummary {
  scenario_id: string;
  name: string;
  seed: number;
  duration_s: number;
  callers: number;
  offered: number;
  answered: number;
  abandoned: number;
  timed_out: number;
  texted: number;
  abandoned_while_ringing: number;
  service_level: { answered_within_s: number; target_percent: number; percent: number | null; met: boolean | null };
  abandoned_percent: number | null;
  average_speed_of_answer_s: number | null;
  longest_wait_s: number | null;
  average_talk_s: number | null;
  average_handle_time_s: number | null;
  handle_time_target_s: number;
  offered_load_erlangs: number;
  ended_at_s: number;
  queues: QueuePreview[];
  agents: AgentPreview[];
  faults: { at_s: number; kind: string; target: string | null; applied: boolean }[];
}

/** A row of GET .../training_runs, newest first. */
export interface RunRow {
  id: string;
  scenario_id: string;
  scenario_name: string;
  seed: number;
  status: RunStatus;
  /** Gregorian seconds, as the server's other times. */
  started: number;
  ended: number | null;
}

export interface RunCaller {
  index: number;
  queue: string;
  arrival_s: number;
  persona: string;
  caller_id_number: string;
  state: "planned" | "calling" | "waiting" | "talking" | "ended";
  outcome: string | null;
  agent_id: string | null;
  /** Seconds waited so far, while waiting (run time: a pause holds it). */
  wait_s?: number;
}

/** GET .../training_runs/{id}: the run as it stands. */
export interface RunDoc {
  id: string;
  scenario_id: string;
  scenario_name: string;
  status: RunStatus;
  run_seconds: number;
  duration_s: number;
  agents: { id: string; name: string }[];
  callers: RunCaller[];
  timeline: RunTimelineEntry[];
}

/** A step of the run; faults carry what was asked, where it came from and whether it acted. */
export interface RunTimelineEntry {
  name: string;
  at_s: number;
  fault?: { kind: string; target?: string; count?: number; duration_s?: number };
  source?: "scenario" | "trainer";
  applied?: boolean;
  reason?: string;
}

export type RunAction = "pause" | "resume" | "stop";

/** A fault the trainer injects into a live run now (POST {action: "fault", fault}). */
export type RunFault =
  | { kind: "burst"; count: number; target?: string }
  | { kind: "drop_registration"; target: string }
  | { kind: "webhook_failure"; duration_s: number }
  | { kind: "text_stop"; target: string }
  | { kind: "one_way_audio"; target: string; direction: "to_agent" | "from_agent"; duration_s: number }
  | { kind: "text_undelivered"; target: string; duration_s: number };

/** Everything the training slice asks of the server, so tests can hand it a fake. */
export interface TrainingApi {
  list(connection: AccountConnection): Promise<ScenarioRow[]>;
  read(connection: AccountConnection, id: string): Promise<ScenarioDoc>;
  /** PUT on the collection without an id (create), POST on the scenario with one (replace); answers it as stored. */
  save(connection: AccountConnection, doc: ScenarioDoc): Promise<ScenarioDoc>;
  remove(connection: AccountConnection, id: string): Promise<void>;
  /** POST of a scenario file on the collection; answers the new scenario. */
  importFile(connection: AccountConnection, file: ScenarioDoc): Promise<ScenarioDoc>;
  preview(connection: AccountConnection, id: string): Promise<PreviewSummary>;
  /** Starts a live run of the scenario. */
  startRun(connection: AccountConnection, scenarioId: string): Promise<RunDoc>;
  listRuns(connection: AccountConnection): Promise<RunRow[]>;
  readRun(connection: AccountConnection, id: string): Promise<RunDoc>;
  driveRun(connection: AccountConnection, id: string, action: RunAction): Promise<RunDoc>;
  injectFault(connection: AccountConnection, id: string, fault: RunFault): Promise<RunDoc>;
  scorecard(connection: AccountConnection, id: string): Promise<Scorecard>;
}

const RUNS = "/training_runs";
const run = (id: string) => `${RUNS}/${encodeURIComponent(id)}`;

const PATH = "/training_scenarios";
const one = (id: string) => `${PATH}/${encodeURIComponent(id)}`;

export const httpTrainingApi: TrainingApi = {
  list: (connection) => accountList<ScenarioRow>(connection, PATH),
  async read(connection, id) {
    return (await accountRequest<ScenarioDoc>(connection, "GET", one(id))).data;
  },
  async save(connection, doc) {
    const { id, ...fields } = doc;
    const envelope = typeof id === "string" ? await accountRequest<ScenarioDoc>(connection, "POST", one(id), fields) : await accountRequest<ScenarioDoc>(connection, "PUT", PATH, fields);
    return envelope.data;
  },
  async remove(connection, id) {
    await accountRequest<unknown>(connection, "DELETE", one(id));
  },
  async importFile(connection, file) {
    return (await accountRequest<ScenarioDoc>(connection, "POST", PATH, file)).data;
  },
  async preview(connection, id) {
    return (await accountRequest<PreviewSummary>(connection, "POST", `${one(id)}/preview`, {})).data;
  },
  async startRun(connection, scenarioId) {
    return (await accountRequest<RunDoc>(connection, "POST", `${one(scenarioId)}/runs`, {})).data;
  },
  listRuns: (connection) => accountList<RunRow>(connection, RUNS),
  async readRun(connection, id) {
    return (await accountRequest<RunDoc>(connection, "GET", run(id))).data;
  },
  async driveRun(connection, id, action) {
    return (await accountRequest<RunDoc>(connection, "POST", run(id), { action })).data;
  },
  async injectFault(connection, id, fault) {
    return (await accountRequest<RunDoc>(connection, "POST", run(id), { action: "fault", fault })).data;
  },
  async scorecard(connection, id) {
    return (await accountRequest<Scorecard>(connection, "GET", `${run(id)}/scorecard`)).data;
  },
};

/** Where the browser downloads a run's scorecard as CSV. */
export function scorecardCsvUrl(connection: AccountConnection, id: string): string {
  return accountMediaUrl(connection, `${run(id)}/scorecard`, { accept: "csv", file_name: `scorecard-${id}.csv` });
}

/** Where the browser downloads a scenario's file from (the server names it, as an attachment). */
export function scenarioFileUrl(connection: AccountConnection, id: string): string {
  return accountMediaUrl(connection, `${one(id)}/export`, {});
}

/** GET .../users/{userId}/training_scorecards: the user's own row of every run they took calls in, newest first. */
export async function ownScorecards(connection: AccountConnection, userId: string): Promise<OwnScorecard[]> {
  return (await accountRequest<OwnScorecard[]>(connection, "GET", `/users/${encodeURIComponent(userId)}/training_scorecards`)).data;
}

/** GET .../training_runs/{id}/replay: the run's stored timeline and its recipients' steps, for a replay in the console. */
export async function runReplay(connection: AccountConnection, id: string): Promise<RunReplay> {
  return (await accountRequest<RunReplay>(connection, "GET", `${run(id)}/replay`)).data;
}
