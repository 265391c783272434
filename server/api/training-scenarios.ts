// /v2/accounts/{account_id}/training_scenarios (local addition, issue 18): the account's training
// scenarios in the house conventions, plus the shareable file (GET .../{id}/export answers it as
// an attachment; POST on the collection imports one) and a headless preview of a scenario
// (POST .../{id}/preview: simulated agents only, as fast as the CPU allows, the summary back).
//
// Scenarios are the trainers': admins of the account and users with `training.trainer: true` in
// their user document read and write them; other users get 403, reads included, since a
// scenario says what a trainee will be tested on.
import type { FastifyInstance } from "fastify";
import { registerEndpoint, type AuthContext, type Ctx, type Outcome } from "../http/endpoint.js";
import { contentDisposition } from "../http/binary.js";
import { ApiError } from "../http/errors.js";
import { isObject } from "../http/request.js";
import { clientFields, created, notFound, publicFields, registerDocResource, storeError, type Data } from "../http/resource.js";
import { validate, type FieldErrors, type JsonSchema } from "../http/validation.js";
import type { StoredDoc } from "../store/index.js";
import {
  expectedCallers,
  runHeadless,
  SCENARIO_FILE_FORMAT,
  scenarioProblems,
  scenarioSchema,
  ScenarioTooBigError,
  withDefaults,
  type Scenario,
} from "../training/index.js";
import type { ApiDeps } from "./deps.js";

const NAME = "training_scenarios";

/** A preview runs at most this many callers: a full day of a busy centre, a few seconds of CPU. */
export const MAX_PREVIEW_CALLERS = 20_000;

const fileSchema: JsonSchema = {
  ...scenarioSchema,
  required: ["format", ...(Array.isArray(scenarioSchema.required) ? scenarioSchema.required : [])],
  description: `local addition: a training scenario's shareable file: its fields and format "${SCENARIO_FILE_FORMAT}"`,
  properties: { format: { type: "string", enum: [SCENARIO_FILE_FORMAT] }, ...(scenarioSchema.properties as Record<string, unknown>) },
};

/** Admins, and users whose document says `training: {trainer: true}`. */
async function mustBeTrainer(deps: ApiDeps, auth: AuthContext): Promise<void> {
  if (auth.isAdmin) return;
  const user = auth.ownerId === null ? undefined : (await deps.collection(auth.accountId, "users")).get(auth.ownerId);
  const training = user?.data.training;
  if (isObject(training) && training.trainer === true) return;
  throw new ApiError("forbidden", { user: { trainer: { message: "training scenarios are for admins and trainers (training.trainer in the user's document)" } } });
}

/** The checks past the schema, in the validation error's shape. */
function checkScenario(data: Data): void {
  const problems = scenarioProblems(data as unknown as Scenario);
  if (problems.length === 0) return;
  const errors: FieldErrors = {};
  for (const p of problems) errors[p.field] = { ...errors[p.field], [p.rule]: p.value === undefined ? { message: p.message } : { message: p.message, value: p.value } };
  throw new ApiError("validation_error", errors);
}

/** The file of a scenario: its fields as a read shows them, without the id, and the format. */
export function scenarioFile(doc: StoredDoc): Data {
  return { format: SCENARIO_FILE_FORMAT, ...publicFields(doc.data) };
}

function fileName(name: unknown): string {
  const base = typeof name === "string" ? name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 100) : "";
  return `${base === "" ? "scenario" : base}.scenario.json`;
}

export function registerTrainingScenarios(app: FastifyInstance, deps: ApiDeps): void {
  const base = `/v2/accounts/:account_id/${NAME}`;
  const collectionOf = (ctx: Ctx) => deps.collection(ctx.params.account_id ?? "", NAME);
  const authOf = (ctx: Ctx): AuthContext => {
    if (!ctx.auth) throw new ApiError("invalid_credentials");
    return ctx.auth;
  };
  const existing = async (ctx: Ctx): Promise<StoredDoc> => {
    await mustBeTrainer(deps, authOf(ctx));
    const id = ctx.params.id ?? "";
    const doc = (await collectionOf(ctx)).get(id);
    if (!doc) throw notFound(id);
    return doc;
  };

  /** POST of a file on the collection: the bare file, or the file as the envelope's data. */
  const importFile = async (ctx: Ctx): Promise<Outcome> => {
    const given = ctx.req.data ?? (ctx.req.envelope.format === undefined ? undefined : ctx.req.envelope);
    if (!isObject(given)) throw new ApiError("validation_error", { format: { required: { message: `send a scenario file (format "${SCENARIO_FILE_FORMAT}"), bare or as data` } } });
    const file = clientFields(given);
    // An envelope's own keys travel beside a bare file; they are not the scenario's.
    for (const key of ["auth_token", "verb", "accept", "id"]) delete file[key];
    const complete = withDefaults(file);
    validate(fileSchema, complete);
    const { format: _format, ...fields } = complete;
    checkScenario(fields);
    let doc: StoredDoc;
    try {
      doc = await (await collectionOf(ctx)).create(fields);
    } catch (err) {
      throw storeError(err);
    }
    return created(ctx, doc, `/v2/accounts/${ctx.params.account_id ?? ""}/${NAME}/${doc.id}`);
  };

  registerDocResource(app, deps, {
    name: NAME,
    collection: NAME,
    schema: scenarioSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    allow: (_ctx, auth) => mustBeTrainer(deps, auth),
    prepare: (data) => withDefaults(data),
    check: (data) => checkScenario(data),
    row: (doc) => ({ id: doc.id, name: doc.data.name, duration_s: doc.data.duration_s, seed: doc.data.seed }),
    sortKey: (doc) => `${typeof doc.data.name === "string" ? doc.data.name.toLowerCase() : ""}\u0000${doc.id}`,
    summaries: {
      list: "List the account's training scenarios (local addition; admins and trainers)",
      create: "Create a training scenario (local addition; admins and trainers)",
      read: "Read a training scenario (local addition; admins and trainers)",
      update: "Replace a training scenario (local addition)",
      patch: "Change some fields of a training scenario (local addition)",
      delete: "Delete a training scenario (local addition)",
    },
    collectionVerbs: () => ({
      POST: { summary: `Import a training scenario file (local addition): the file's JSON, format "${SCENARIO_FILE_FORMAT}", bare or as data`, body: fileSchema, answers: [201], handler: importFile },
    }),
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/export`,
    access: "account",
    tag: NAME,
    verbs: {
      GET: {
        summary: "The scenario as a shareable file, sent as an attachment (local addition); POST it on the collection to import it",
        answersFile: { type: "application/json", schema: fileSchema },
        handler: async (ctx): Promise<"sent"> => {
          const doc = await existing(ctx);
          ctx.reply
            .status(200)
            .type("application/json; charset=utf-8")
            .header("Content-Disposition", contentDisposition(false, fileName(doc.data.name)))
            .header("ETag", `"${doc.rev}"`)
            .send(`${JSON.stringify(scenarioFile(doc), null, 2)}\n`);
          return "sent";
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/preview`,
    access: "account",
    tag: NAME,
    verbs: {
      POST: {
        summary: `Run the scenario headless (local addition): simulated agents only, no audio, on a clock of its own; answers the summary. At most ${MAX_PREVIEW_CALLERS} callers`,
        handler: async (ctx) => {
          const doc = await existing(ctx);
          const scenario = withDefaults(clientFields(doc.data)) as unknown as Scenario;
          // A stored document may be hand-edited: it is checked again before it runs.
          validate(scenarioSchema, scenario);
          checkScenario(scenario as unknown as Data);
          const expected = expectedCallers(scenario);
          if (expected > MAX_PREVIEW_CALLERS) throw tooBig(expected);
          const queues = await deps.collection(ctx.params.account_id ?? "", "callq_queues");
          const queueSettings = new Map<string, Record<string, unknown>>();
          for (const q of scenario.queues) {
            const stored = q.queue_id === undefined ? undefined : queues.get(q.queue_id);
            if (q.queue_id !== undefined && stored) queueSettings.set(q.queue_id, stored.data);
          }
          try {
            const run = await runHeadless(scenario, { queueSettings, maxCallers: MAX_PREVIEW_CALLERS });
            return { data: { scenario_id: doc.id, ...run.summary } };
          } catch (err) {
            if (err instanceof ScenarioTooBigError) throw tooBig(err.callers);
            throw err;
          }
        },
      },
    },
  });
}

function tooBig(callers: number): ApiError {
  return new ApiError("invalid_data", {
    scenario: { too_big: { message: `a preview runs at most ${MAX_PREVIEW_CALLERS} callers; this scenario holds about ${Math.round(callers)}`, value: Math.round(callers), target: MAX_PREVIEW_CALLERS } },
  });
}
