// The training slice: the trainer's scenarios (list, read, save with the server's refusal kept per
// field, delete, import of a shared file) and the headless preview of one. Built on
// state/resource.ts like the admin lists; who may use it comes from the signed-in user's profile.
import type { StateCreator } from "zustand/vanilla";
import { ApiRequestError } from "../api/client.js";
import { apiErrorText } from "../api/error-text.js";
import { httpTrainingApi, type PreviewSummary, type ScenarioDoc, type ScenarioRow, type TrainingApi } from "../api/training.js";
import { connectionOf } from "./account-connection.js";
import { emptyResource, homeIn, resourceList, type ResourceState } from "./resource.js";
import type { AppState } from "./store.js";

export interface PreviewState {
  /** The scenario previewed (or being previewed); null before the first. */
  scenarioId: string | null;
  running: boolean;
  summary: PreviewSummary | null;
  error: string | null;
}

export interface TrainingState extends ResourceState<ScenarioRow> {
  preview: PreviewState;
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
}

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

export function createTrainingSlice(deps: { trainingApi?: TrainingApi }): StateCreator<AppState, [], [], TrainingSlice> {
  const api = deps.trainingApi ?? httpTrainingApi;
  return (set, get) => {
    const home = homeIn(set, get, "training", () => connectionOf(get()));
    const list = resourceList<TrainingState>(home, {
      many: "scenarios",
      list: async (connection) => ({ rows: await api.list(connection) }),
    });
    // Bumped by every preview, so a slow earlier run never replaces a newer one's figures.
    let previewGeneration = 0;
    const patchPreview = (changes: Partial<PreviewState>) => home.patch({ preview: { ...home.get().preview, ...changes } });

    return {
      training: { ...emptyResource<ScenarioRow>(), preview: NO_PREVIEW },

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
