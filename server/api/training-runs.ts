// Live training runs (local addition, issue 18): POST .../training_scenarios/{id}/runs starts one
// (one at a time per account); /v2/accounts/{account_id}/training_runs lists them (newest first),
// reads one (its callers, timeline, live state), drives it (POST {action: pause|resume|stop}, or
// {action: fault, fault: {kind, target, count, duration_s, direction}} for a fault now);
// .../training_runs/{id}/scorecard answers the scorecard (accept=csv for CSV);
// .../training_runs/{id}/replay what a replay needs (the timeline, the recipients' steps on run
// time); .../users/{user_id}/training_scorecards a user's own row of every run they took calls in.
//
// Admins and trainers (training.trainer) do everything; any other user of the account may read
// the scorecard of a run they took calls in, which then holds their own row and the run's figures
// alone (a trainee sees how they did, not how their colleagues did), and their own list of those.
import type { FastifyInstance } from "fastify";
import { registerEndpoint, type AuthContext, type Ctx } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { isObject, wantsCsv } from "../http/request.js";
import { clientFields, notFound, publicFields } from "../http/resource.js";
import { validate, type JsonSchema } from "../http/validation.js";
import type { StoredDoc } from "../store/index.js";
import {
  FAULT_KINDS,
  FaultError,
  LiveRuns,
  ONE_WAY_DIRECTIONS,
  RunConflictError,
  RunScenarioError,
  RUNS_COLLECTION,
  RunStateError,
  ScenarioTooBigError,
  scenarioProblems,
  scenarioSchema,
  scorecard,
  scorecardRows,
  withDefaults,
  type FaultRequest,
  type ObservedEvent,
  type RunEvent,
  type Scenario,
  type Scorecard,
} from "../training/index.js";
import type { ApiDeps } from "./deps.js";
import type { OwnScorecard, ReplayAgentStep, RunReplay, RunStatus } from "../../contract/training.js";

export const RUN_ACTIONS = ["pause", "resume", "stop", "fault"] as const;

const faultSchema: JsonSchema = {
  type: "object",
  required: ["kind"],
  additionalProperties: false,
  description: "action fault: burst (count callers now at target, a queue_id or number of the scenario; the first queue unless named), drop_registration (target: a trainee's user id), one_way_audio (target: a trainee's username or user id; direction to_agent, the default, or from_agent; duration_s), webhook_failure (duration_s), text_undelivered (target: a persona's name or number, or a number; duration_s and/or count), text_stop (a persona's number texts STOP to target, a texting number); duration_s is 60 unless given (text_undelivered with count alone: until that many texts failed)",
  properties: {
    kind: { type: "string", enum: [...FAULT_KINDS] },
    target: { type: "string", minLength: 1, maxLength: 128 },
    count: { type: "integer", minimum: 1, maximum: 1000 },
    duration_s: { type: "number", minimum: 1, maximum: 3600 },
    direction: { type: "string", enum: [...ONE_WAY_DIRECTIONS] },
  },
};

const actionSchema: JsonSchema = {
  type: "object",
  required: ["action"],
  additionalProperties: false,
  properties: { action: { type: "string", enum: [...RUN_ACTIONS] }, fault: faultSchema },
};

async function isTrainer(deps: ApiDeps, auth: AuthContext): Promise<boolean> {
  if (auth.isAdmin) return true;
  const user = auth.ownerId === null ? undefined : (await deps.collection(auth.accountId, "users")).get(auth.ownerId);
  const training = user?.data.training;
  return isObject(training) && training.trainer === true;
}

async function mustBeTrainer(deps: ApiDeps, auth: AuthContext): Promise<void> {
  if (await isTrainer(deps, auth)) return;
  throw new ApiError("forbidden", { user: { trainer: { message: "training runs are for admins and trainers (training.trainer in the user's document)" } } });
}

const authOf = (ctx: Ctx): AuthContext => {
  if (!ctx.auth) throw new ApiError("invalid_credentials");
  return ctx.auth;
};

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function userName(user: StoredDoc | undefined): string | undefined {
  if (!user) return undefined;
  const name = [user.data.first_name, user.data.last_name].filter((p): p is string => typeof p === "string" && p !== "").join(" ");
  return name !== "" ? name : typeof user.data.username === "string" ? user.data.username : undefined;
}

/** A run's simulated agents by id, with the names the run keeps (their user documents go with the run). */
function botsOf(data: Record<string, unknown>): Map<string, string> {
  return new Map((Array.isArray(data.agents) ? (data.agents as { id: string; name: string }[]) : []).map((a) => [a.id, a.name]));
}

const idOf = (routingKey: string): string => routingKey.slice(routingKey.lastIndexOf(".") + 1);

/**
 * Run seconds at an instant of the server's clock, read off the timeline (each entry carries both):
 * run time goes on from the last entry before the instant, unless that left the run paused.
 */
function runSecondsAt(timeline: readonly RunEvent[], atMs: number): number {
  let last: RunEvent | undefined;
  let paused = false;
  for (const entry of timeline) {
    if (entry.at_ms > atMs) break;
    last = entry;
    if (entry.name === "paused") paused = true;
    else if (entry.name === "resumed") paused = false;
  }
  if (last === undefined) return 0;
  const seconds = last.at_s + (paused || last.name === "ended" ? 0 : (atMs - last.at_ms) / 1000);
  return Math.round(seconds * 10) / 10;
}

const RUN_STATUSES: readonly RunStatus[] = ["running", "paused", "ended"];
/** A stored run's status; a document without a known one (hand-edited) is read as over. */
const statusOf = (v: unknown): RunStatus => RUN_STATUSES.find((s) => s === v) ?? "ended";

export function registerTrainingRuns(app: FastifyInstance, deps: ApiDeps): void {
  const { sim, callq, events } = deps;
  if (!sim || !callq || !events) return;
  const runs = new LiveRuns({
    store: deps.store,
    sim,
    callq,
    bus: events.bus,
    clock: deps.clock,
    ...(deps.sip ? { registrar: deps.sip.registrar } : {}),
    ...(deps.webhookFaults ? { webhookFaults: deps.webhookFaults } : {}),
    ...(deps.texting ? { texting: deps.texting } : {}),
    ...(deps.calls ? { audio: { channels: deps.calls.channels, mutes: deps.calls.context.media.mutes } } : {}),
    onError: (err, what) => app.log.warn({ err }, `training: ${what} failed`) });
  app.addHook("onClose", () => runs.close());
  // Runs a stopped server left live end now; in the background, so the start does not wait for every account's runs.
  app.addHook("onReady", async () => {
    void runs.recover().catch((err: unknown) => app.log.warn({ err }, "training: ending the runs of a previous start failed"));
  });
  const base = "/v2/accounts/:account_id/training_runs";
  const accountOf = (ctx: Ctx): string => ctx.params.account_id ?? "";

  /** The run's data: a live run from memory (fresher than its document), else its document. */
  const runData = async (ctx: Ctx): Promise<{ doc: StoredDoc; data: Record<string, unknown> }> => {
    const id = ctx.params.id ?? "";
    const doc = (await deps.collection(accountOf(ctx), RUNS_COLLECTION)).get(id);
    if (!doc) throw notFound(id);
    const live = runs.live(accountOf(ctx));
    return { doc, data: live?.id === id ? runs.snapshot(live) : doc.data };
  };

  const cardOf = async (ctx: Ctx, id: string, data: Record<string, unknown>): Promise<Scorecard> => {
    const startedMs = num(data.pvt_started_ms);
    const endedMs = typeof data.pvt_ended_ms === "number" ? data.pvt_ended_ms : deps.clock.now();
    const cdrs = (await deps.collection(accountOf(ctx), "cdrs")).all().filter((c) => {
      const at = num(c.data.pvt_started_ms);
      return at >= startedMs && at <= endedMs;
    });
    const users = await deps.collection(accountOf(ctx), "users");
    const bots = botsOf(data);
    const callers = Array.isArray(data.callers) ? data.callers.length : 0;
    return scorecard({
      runId: id,
      scenarioName: typeof data.scenario_name === "string" ? data.scenario_name : "",
      status: statusOf(data.status),
      targets: data.targets as Scenario["targets"],
      startedMs,
      endedMs,
      callers,
      timeline: Array.isArray(data.timeline) ? (data.timeline as RunEvent[]) : [],
      observed: Array.isArray(data.pvt_observed) ? (data.pvt_observed as ObservedEvent[]) : [],
      cdrs: cdrs.map((c) => c.data),
      bots: new Set(bots.keys()),
      nameOf: (userId) => bots.get(userId) ?? userName(users.get(userId)),
    });
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/training_scenarios/:id/runs",
    access: "account",
    tag: RUNS_COLLECTION,
    verbs: {
      POST: {
        summary: "Start a live run of the scenario (local addition; admins and trainers): its callers call, its simulated agents log in; one run at a time per account",
        answers: [201],
        handler: async (ctx) => {
          const auth = authOf(ctx);
          await mustBeTrainer(deps, auth);
          const id = ctx.params.id ?? "";
          const doc = (await deps.collection(accountOf(ctx), "training_scenarios")).get(id);
          if (!doc) throw notFound(id);
          const scenario = withDefaults(clientFields(doc.data)) as unknown as Scenario;
          // A stored document may be hand-edited: it is checked again before it runs.
          validate(scenarioSchema, scenario);
          if (scenarioProblems(scenario).length > 0) throw new ApiError("invalid_data", { scenario: { invalid: { message: "the stored scenario does not pass its checks: save it again" } } });
          let runId: string;
          try {
            runId = await runs.start({ accountId: accountOf(ctx), scenarioId: id, scenario, startedBy: auth.ownerId });
          } catch (err) {
            if (err instanceof RunConflictError) throw new ApiError("datastore_conflict", { run: { unique: { message: err.message, value: err.runId } } });
            if (err instanceof RunScenarioError) throw new ApiError("invalid_data", { [err.field]: { [err.rule]: err.value === undefined ? { message: err.message } : { message: err.message, value: err.value } } });
            if (err instanceof ScenarioTooBigError) throw new ApiError("invalid_data", { scenario: { too_big: { message: err.message, value: Math.round(err.callers), target: err.limit } } });
            throw err;
          }
          const live = runs.live(accountOf(ctx));
          const data = live?.id === runId ? runs.snapshot(live) : {};
          return { data: { ...publicFields(data), id: runId }, status: 201, headers: { Location: `/v2/accounts/${accountOf(ctx)}/training_runs/${runId}` } };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: base,
    access: "account",
    tag: RUNS_COLLECTION,
    verbs: {
      GET: {
        summary: "The account's training runs, newest first (local addition; admins and trainers)",
        handler: async (ctx) => {
          await mustBeTrainer(deps, authOf(ctx));
          const live = runs.live(accountOf(ctx));
          const all = (await deps.collection(accountOf(ctx), RUNS_COLLECTION)).all();
          const rows = all.map((doc) => {
            const d = live?.id === doc.id ? runs.snapshot(live) : doc.data;
            return { id: doc.id, scenario_id: d.scenario_id, scenario_name: d.scenario_name, seed: d.seed, status: d.status, started: d.started, ended: d.ended ?? null, started_ms: num(d.pvt_started_ms) };
          });
          rows.sort((a, b) => b.started_ms - a.started_ms || (a.id < b.id ? 1 : -1));
          return { data: rows.map(({ started_ms: _ms, ...row }) => row) };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id`,
    access: "account",
    tag: RUNS_COLLECTION,
    verbs: {
      GET: {
        summary: "A training run: its status, callers, simulated agents and timeline (local addition; admins and trainers)",
        handler: async (ctx) => {
          await mustBeTrainer(deps, authOf(ctx));
          const { doc, data } = await runData(ctx);
          return { data: { ...publicFields(data), id: doc.id } };
        },
      },
      POST: {
        summary: "Drive a live run: pause, resume, stop, or a fault now (local addition; admins and trainers; a fault on a run not running is 409)",
        body: actionSchema,
        handler: async (ctx) => {
          await mustBeTrainer(deps, authOf(ctx));
          const { doc } = await runData(ctx);
          const data = ctx.req.data;
          const action = isObject(data) ? data.action : undefined;
          if (typeof action === "string" && !RUN_ACTIONS.some((a) => a === action)) {
            throw new ApiError("invalid_data", { action: { enum: { message: `unknown action; use one of ${RUN_ACTIONS.join(", ")}`, value: action } } });
          }
          validate(actionSchema, data);
          const fault = isObject(data) && isObject(data.fault) ? (data.fault as unknown as FaultRequest) : undefined;
          if (action === "fault" && fault === undefined) throw new ApiError("invalid_data", { fault: { required: { message: "action fault says which fault: {kind, ...}" } } });
          if (action !== "fault" && fault !== undefined) throw new ApiError("invalid_data", { fault: { action: { message: "a fault goes with action fault", value: action } } });
          try {
            if (action === "pause") runs.pause(accountOf(ctx), doc.id);
            else if (action === "resume") runs.resume(accountOf(ctx), doc.id);
            else if (fault !== undefined) await runs.fault(accountOf(ctx), doc.id, fault);
            else await runs.stop(accountOf(ctx), doc.id);
          } catch (err) {
            if (err instanceof RunStateError && action === "fault") throw new ApiError("datastore_conflict", { run: { state: { message: err.message } } });
            if (err instanceof RunStateError) throw new ApiError("invalid_data", { action: { state: { message: err.message, value: action } } });
            if (err instanceof FaultError) throw new ApiError("invalid_data", { [err.field]: { [err.rule]: err.value === undefined ? { message: err.message } : { message: err.message, value: err.value } } });
            throw err;
          }
          const after = await runData(ctx);
          return { data: { ...publicFields(after.data), id: doc.id } };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/scorecard`,
    access: "account",
    tag: RUNS_COLLECTION,
    verbs: {
      GET: {
        summary:
          "A run's scorecard per person and for the run, from its queue and recipient events and the CDRs of its window; accept=csv for CSV (local addition; admins and trainers see everyone, a trainee their own row)",
        handler: async (ctx) => {
          const auth = authOf(ctx);
          const { doc, data } = await runData(ctx);
          const card = await cardOf(ctx, doc.id, data);
          let shown = card;
          if (!(await isTrainer(deps, auth))) {
            const own = card.people.filter((p) => p.user_id === auth.ownerId);
            if (own.length === 0) throw new ApiError("forbidden", { user: { trainee: { message: "a run's scorecard is for admins, trainers and the people who took calls in it" } } });
            shown = { ...card, people: own };
          }
          return { data: wantsCsv(ctx.req.accept) ? scorecardRows(shown) : shown };
        },
      },
    },
  });
  registerEndpoint(app, deps, {
    path: `${base}/:id/replay`,
    access: "account",
    tag: RUNS_COLLECTION,
    verbs: {
      GET: {
        summary: "What a replay of a run needs, all of it stored: its timeline and its people's availability steps on the run's time (local addition; admins and trainers)",
        handler: async (ctx) => {
          await mustBeTrainer(deps, authOf(ctx));
          const { doc, data } = await runData(ctx);
          const timeline = Array.isArray(data.timeline) ? (data.timeline as RunEvent[]) : [];
          const observed = Array.isArray(data.pvt_observed) ? (data.pvt_observed as ObservedEvent[]) : [];
          const steps: ReplayAgentStep[] = observed
            .filter((e) => e.routing_key.startsWith("callq.recipient."))
            .map((e) => ({ at_s: runSecondsAt(timeline, e.at_ms), user_id: idOf(e.routing_key), name: e.name, availability_state: typeof e.data.availability_state === "string" ? e.data.availability_state : null }));
          const bots = botsOf(data);
          const users = await deps.collection(accountOf(ctx), "users");
          const ids = new Set([...steps.map((step) => step.user_id), ...bots.keys()]);
          const people = [...ids]
            .map((id) => ({ user_id: id, name: bots.get(id) ?? userName(users.get(id)) ?? id, simulated: bots.has(id) }))
            .sort((a, b) => Number(a.simulated) - Number(b.simulated) || a.name.localeCompare(b.name));
          const replay: RunReplay = {
            run_id: doc.id,
            scenario_name: typeof data.scenario_name === "string" ? data.scenario_name : "",
            seed: num(data.seed),
            status: statusOf(data.status),
            started: num(data.started),
            ended: typeof data.ended === "number" ? data.ended : null,
            duration_s: num(data.duration_s),
            run_seconds: num(data.run_seconds),
            people,
            timeline: timeline.map(({ at_ms: _ms, ...entry }) => entry),
            agent_steps: steps,
          };
          return { data: replay };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:user_id/training_scorecards",
    access: "account",
    tag: RUNS_COLLECTION,
    verbs: {
      GET: {
        summary: "The user's own row of the scorecard of every run they were offered a call in, with the run's figures and targets, newest first (local addition; the user themself, admins and trainers)",
        handler: async (ctx) => {
          const auth = authOf(ctx);
          const userId = ctx.params.user_id ?? "";
          if (auth.ownerId !== userId && !(await isTrainer(deps, auth))) {
            throw new ApiError("forbidden", { user_id: { own: { message: "a user reads their own training scorecards; admins and trainers read anyone's" } } });
          }
          if (!(await deps.collection(accountOf(ctx), "users")).get(userId)) throw notFound(userId);
          const live = runs.live(accountOf(ctx));
          const rows: (OwnScorecard & { started_ms: number })[] = [];
          for (const doc of (await deps.collection(accountOf(ctx), RUNS_COLLECTION)).all()) {
            const data = live?.id === doc.id ? runs.snapshot(live) : doc.data;
            const observed = Array.isArray(data.pvt_observed) ? (data.pvt_observed as ObservedEvent[]) : [];
            // Only runs that offered them a call: the card is worked out for those alone.
            if (!observed.some((e) => e.name === "offer" && e.routing_key === `callq.recipient.${userId}`)) continue;
            const card = await cardOf(ctx, doc.id, data);
            const person = card.people.find((p) => p.user_id === userId);
            if (person === undefined) continue;
            rows.push({
              run_id: doc.id,
              scenario_name: card.scenario_name,
              seed: num(data.seed),
              status: card.status,
              started: num(data.started),
              ended: typeof data.ended === "number" ? data.ended : null,
              targets: card.targets,
              run: card.run,
              person,
              started_ms: num(data.pvt_started_ms),
            });
          }
          rows.sort((a, b) => b.started_ms - a.started_ms || (a.run_id < b.run_id ? 1 : -1));
          return { data: rows.map(({ started_ms: _ms, ...row }) => row) };
        },
      },
    },
  });
}
