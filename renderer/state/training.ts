// The training slice: the trainer's scenarios (list, read, save with the server's refusal kept per
// field, delete, import of a shared file) and the headless preview of one. Built on
// state/resource.ts like the admin lists; who may use it comes from the signed-in user's profile.
import type { StateCreator } from "zustand/vanilla";
import { ApiRequestError } from "../api/client.js";
import { apiErrorText } from "../api/error-text.js";
import { httpTrainingApi, type FaultKind, type PreviewSummary, type RunAction, type RunDoc, type RunFault, type RunRow, type ScenarioDoc, type ScenarioRow, type Scorecard, type TrainingApi } from "../api/training.js";
import { systemClock, type Clock } from "../clock.js";
import { connectionOf } from "./account-connection.js";
import { readOrder } from "./read-order.js";
import { emptyResource, homeIn, resourceList, type ResourceState } from "./resource.js";
import type { AppState } from "./store.js";

export interface PreviewState {
  /** The scenario previewed (or being previewed); null before the first. */
  scenarioId: string | null;
  running: boolean;
  summary: PreviewSummary | null;
  error: string | null;
}

/** Live runs: the history, and the run the trainer has open with its scorecard. */
export interface RunsState {
  rows: RunRow[];
  current: RunDoc | null;
  scorecard: Scorecard | null;
  /** A start, pause, resume or stop under way. */
  busy: boolean;
  error: string | null;
  /** A read of the runs' list is on its way (the table says nothing of "no runs" meanwhile). */
  reading: boolean;
}

export interface TrainingState extends ResourceState<ScenarioRow> {
  preview: PreviewState;
  runs: RunsState;
}

/** One field the server refused, by its dotted path ("queues.0.rate_per_hour"), in its words. */
export interface FieldProblem {
  field: string;
  message: string;
}

export type SaveOutcome = { saved: ScenarioDoc } | { error: string; fields: FieldProblem[] };

export type TrainerAccess = "checking" | "trainer" | "refused" | "unknown";

export interface TrainingSlice {
  training: TrainingState;
  loadScenarios(): Promise<void>;
  /** The scenario, or why it could not be read. */
  readScenario(id: string): Promise<ScenarioDoc | string>;
  /** Creates (no id) or replaces it, then reads the list again. */
  saveScenario(doc: ScenarioDoc): Promise<SaveOutcome>;
  deleteScenario(id: string): Promise<boolean>;
  /** Imports a scenario file's text as a new scenario; resolves it, or null (the reason is the list's error). */
  importScenario(fileText: string): Promise<ScenarioDoc | null>;
  /** Runs the scenario headless on the server; the summary lands in `training.preview`. */
  previewScenario(id: string): Promise<void>;
  loadRuns(): Promise<void>;
  /** Starts a live run of the scenario and opens it. */
  startRun(scenarioId: string): Promise<void>;
  /** Opens a run: its state and scorecard. */
  openRun(id: string): Promise<void>;
  driveRun(action: RunAction): Promise<void>;
  /** Injects a fault into the open run now (admins and trainers, a running run). */
  injectFault(fault: RunFault): Promise<void>;
  /**
   * Reads the open run and its scorecard again every second while it is live (the live view);
   * the answer stops it.
   */
  followRun(): () => void;
}

/** How often the live view reads the run again. */
export const RUN_REFRESH_MS = 1000;

/**
 * Whether the signed-in user may use the training view: admins and users whose document says
 * `training.trainer`, as the server decides; "checking" until the profile is read, "unknown"
 * when it could not be.
 */
export function trainerAccess(state: Pick<AppState, "session" | "profile" | "connection">): TrainerAccess {
  const { session, profile } = state;
  if (session === null) return "refused";
  if (profile !== null && profile.id === session.ownerId) return profile.isTrainer ? "trainer" : "refused";
  return state.connection.profileError === null ? "checking" : "unknown";
}

export function isTrainingView(state: AppState): boolean {
  return trainerAccess(state) === "trainer";
}

/** The server's validation refusal (data.{field}.{rule}.message), one problem per field. */
export function fieldProblems(error: unknown): FieldProblem[] {
  if (!(error instanceof ApiRequestError) || error.status !== 400 || typeof error.data !== "object" || error.data === null) return [];
  const problems: FieldProblem[] = [];
  for (const [field, rules] of Object.entries(error.data)) {
    if (typeof rules !== "object" || rules === null) continue;
    const messages = Object.values(rules).flatMap((rule: unknown) => {
      const message: unknown = typeof rule === "object" && rule !== null ? Reflect.get(rule, "message") : undefined;
      return typeof message === "string" ? [message] : [];
    });
    if (messages.length > 0) problems.push({ field, message: messages.join("; ") });
  }
  return problems;
}

function nameOf(doc: ScenarioDoc): string {
  return typeof doc.name === "string" && doc.name !== "" ? doc.name : "untitled";
}

const SIGNED_OUT = "You are signed out.";
const NO_PREVIEW: PreviewState = { scenarioId: null, running: false, summary: null, error: null };
const NO_RUNS: RunsState = { rows: [], current: null, scorecard: null, busy: false, error: null, reading: false };

const ACTION_WORDS: Record<RunAction, string> = { pause: "paused", resume: "resumed", stop: "stopped" };

export const FAULT_WORDS: Record<FaultKind, string> = {
  burst: "a burst of callers",
  drop_registration: "a trainee's registration dropped",
  webhook_failure: "the account's webhooks failing",
  text_stop: "a STOP text from a caller",
  one_way_audio: "one-way audio on a trainee's calls",
  text_undelivered: "texts to a caller undelivered",
};

export function createTrainingSlice(deps: { trainingApi?: TrainingApi; clock?: Clock }): StateCreator<AppState, [], [], TrainingSlice> {
  const api = deps.trainingApi ?? httpTrainingApi;
  const clock = deps.clock ?? systemClock;
  return (set, get) => {
    const home = homeIn(set, get, "training", () => connectionOf(get()));
    const list = resourceList<TrainingState>(home, {
      many: "scenarios",
      list: async (connection) => ({ rows: await api.list(connection) }),
    });
    // Bumped by every preview, so a slow earlier run never replaces a newer one's figures.
    let previewGeneration = 0;
    const patchPreview = (changes: Partial<PreviewState>) => home.patch({ preview: { ...home.get().preview, ...changes } });
    const patchRuns = (changes: Partial<RunsState>) => home.patch({ runs: { ...home.get().runs, ...changes } });
    // Bumped by every opening, so a slow read of a run left behind never lands over the new one.
    let runGeneration = 0;
    /**
     * The open run's reads and changes in order, per run: a read asked before a pause, resume or
     * fault was taken does not land after it (on a slow link a pause's read of the run landed
     * after the resume and showed it paused); of two changes, the older answer does not land last.
     */
    const runOrder = readOrder();
    /**
     * A change of run `id` sent as `sent`, answered `after`: reads asked before the server took it
     * are older now; `after` is shown unless something newer of the run already is.
     */
    const tookRun = (id: string, sent: number, after: RunDoc): void => {
      const newest = runOrder.land(sent, id);
      runOrder.changed(id);
      if (newest) patchRuns({ current: after });
    };

    /** The run and its scorecard read again; only the newest opening's answers land. */
    const readRun = async (id: string, mine: number): Promise<void> => {
      const connection = home.connection();
      if (connection === null) return;
      const asked = runOrder.ask();
      try {
        const [current, scorecard] = await Promise.all([api.readRun(connection, id), api.scorecard(connection, id)]);
        if (mine === runGeneration && runOrder.land(asked, id)) patchRuns({ current, scorecard, error: null });
      } catch (error) {
        if (mine === runGeneration && runOrder.current(asked, id)) patchRuns({ error: `The run could not be read: ${apiErrorText(error)}` });
      }
    };

    // The runs' list is read as the view opens and again after a start or an end: only the newest
    // read's answer lands (a slow read asked before a start left the new run out of the list).
    const listOrder = readOrder();
    const loadRuns = async (): Promise<void> => {
      const connection = home.connection();
      if (connection === null) return;
      const mine = listOrder.ask();
      patchRuns({ reading: true });
      try {
        const rows = await api.listRuns(connection);
        if (listOrder.latest(mine)) patchRuns({ rows, reading: false });
      } catch (error) {
        if (listOrder.latest(mine)) patchRuns({ error: `The runs could not be listed: ${apiErrorText(error)}`, reading: false });
      }
    };

    return {
      training: { ...emptyResource<ScenarioRow>(), preview: NO_PREVIEW, runs: NO_RUNS },

      loadRuns,

      async startRun(scenarioId) {
        const connection = home.connection();
        if (connection === null) return;
        patchRuns({ busy: true, error: null });
        try {
          const started = await api.startRun(connection, scenarioId);
          const mine = ++runGeneration;
          patchRuns({ busy: false, current: started, scorecard: null });
          home.patch({ notice: `Run of “${started.scenario_name}” started.` });
          await Promise.all([readRun(started.id, mine), loadRuns()]);
        } catch (error) {
          patchRuns({ busy: false, error: `The run did not start: ${apiErrorText(error)}` });
        }
      },

      async openRun(id) {
        const mine = ++runGeneration;
        patchRuns({ current: null, scorecard: null, error: null });
        await readRun(id, mine);
      },

      async driveRun(action) {
        const connection = home.connection();
        const current = home.get().runs.current;
        if (connection === null || current === null) return;
        patchRuns({ busy: true, error: null });
        const sent = runOrder.ask();
        try {
          const after = await api.driveRun(connection, current.id, action);
          const mine = runGeneration;
          patchRuns({ busy: false });
          if (home.get().runs.current?.id === current.id) tookRun(current.id, sent, after);
          home.patch({ notice: `Run ${ACTION_WORDS[action]}.` });
          await Promise.all([readRun(current.id, mine), loadRuns()]);
        } catch (error) {
          patchRuns({ busy: false, error: `The run was not ${ACTION_WORDS[action]}: ${apiErrorText(error)}` });
        }
      },

      async injectFault(fault) {
        const connection = home.connection();
        const current = home.get().runs.current;
        if (connection === null || current === null) return;
        patchRuns({ busy: true, error: null });
        const sent = runOrder.ask();
        try {
          const after = await api.injectFault(connection, current.id, fault);
          const mine = runGeneration;
          patchRuns({ busy: false });
          if (home.get().runs.current?.id === current.id) tookRun(current.id, sent, after);
          home.patch({ notice: `Fault injected: ${FAULT_WORDS[fault.kind]}.` });
          await readRun(current.id, mine);
        } catch (error) {
          // 409 here is the run's state, not a conflicting edit: the general words would mislead.
          const why = error instanceof ApiRequestError && error.status === 409 ? "the run is not running (resume it first, or it has ended)." : apiErrorText(error);
          patchRuns({ busy: false, error: `The fault was not injected: ${why}` });
        }
      },

      followRun() {
        let cancel: (() => void) | null = null;
        let stopped = false;
        const tick = (): void => {
          cancel = clock.after(RUN_REFRESH_MS, () => {
            const current = home.get().runs.current;
            const live = current !== null && current.status !== "ended";
            // The run that ends under the live view goes to the history as ended.
            const refresh = live ? readRun(current.id, runGeneration).then(() => (home.get().runs.current?.status === "ended" ? loadRuns() : undefined)) : Promise.resolve();
            void refresh.finally(() => {
              if (!stopped) tick();
            });
          });
        };
        tick();
        return () => {
          stopped = true;
          cancel?.();
        };
      },

      async loadScenarios() {
        await list.load();
      },

      async readScenario(id) {
        const connection = home.connection();
        if (connection === null) return SIGNED_OUT;
        try {
          return await api.read(connection, id);
        } catch (error) {
          return `The scenario could not be read: ${apiErrorText(error)}`;
        }
      },

      async saveScenario(doc) {
        const connection = home.connection();
        if (connection === null) return { error: SIGNED_OUT, fields: [] };
        try {
          const saved = await api.save(connection, doc);
          home.patch({ notice: `Scenario “${nameOf(saved)}” saved.` });
          await list.load();
          return { saved };
        } catch (error) {
          return { error: `The scenario was not saved: ${apiErrorText(error)}`, fields: fieldProblems(error) };
        }
      },

      deleteScenario(id) {
        return list.change({
          key: id,
          failure: "The scenario was not deleted",
          work: async (connection) => {
            await api.remove(connection, id);
            const preview = home.get().preview;
            home.patch({
              rows: home.get().rows.filter((row) => row.id !== id),
              notice: "Scenario deleted.",
              preview: preview.scenarioId === id ? NO_PREVIEW : preview,
            });
          },
        });
      },

      async importScenario(fileText) {
        let file: unknown;
        try {
          file = JSON.parse(fileText);
        } catch {
          home.patch({ error: "The file was not imported: it is not JSON (a scenario file is the JSON an export gives).", notice: null });
          return null;
        }
        if (typeof file !== "object" || file === null || Array.isArray(file)) {
          home.patch({ error: "The file was not imported: it is not a scenario file (a JSON object).", notice: null });
          return null;
        }
        const fields = file as ScenarioDoc;
        let imported: ScenarioDoc | null = null;
        const took = await list.change({
          failure: "The file was not imported",
          work: async (connection) => {
            imported = await api.importFile(connection, fields);
            home.patch({ notice: `Scenario “${nameOf(imported)}” imported.` });
          },
        });
        if (took) await list.load();
        return imported;
      },

      async previewScenario(id) {
        const connection = home.connection();
        if (connection === null) return;
        const mine = ++previewGeneration;
        home.patch({ preview: { scenarioId: id, running: true, summary: null, error: null } });
        try {
          const summary = await api.preview(connection, id);
          if (mine === previewGeneration) patchPreview({ running: false, summary });
        } catch (error) {
          if (mine === previewGeneration) patchPreview({ running: false, error: `The preview did not run: ${apiErrorText(error)}` });
        }
      },
    };
  };
}
