// /v2/accounts/{account_id}/sim/calls: simulated callers for demos, training and tests. POST starts
// one (201 with its call id), GET lists the live ones, POST /sim/calls/{id} sends DTMF or hangs up.
// Each row says the call's `state` and its `media`: `connecting` until the call is answered and the
// caller's WebRTC leg is up with the server's (ICE, DTLS), then `connected`; a test or a trainer
// polls it to know the server's media workers carry the call.
// A caller either plays one `audio` once answered or follows a `script` (server/sim/script.ts):
// lines of speech or media, pauses, digits for prompts, patience, talk time, hold patience.
//
// Any user of the account may list them (a console can show that a call is simulated); starting
// and driving one needs an admin, since a simulated caller presents any caller id to anyone.
import type { FastifyInstance } from "fastify";
import { toGregorianSeconds } from "../clock.js";
import { registerEndpoint, type Ctx, type Handler, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { filterFromQuery } from "../http/filters.js";
import { paginate } from "../http/paging.js";
import { isObject } from "../http/request.js";
import { dataObject, notFound, type Data } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import { SimCallStateError, type SimulatedCaller } from "../sim/caller.js";
import { SimCallLimitError, SimCallOverloadError, SimCallRequestError, type SimCallers, type SimCallRequest } from "../sim/callers.js";
import { PHONE_ANSWERS } from "../sim/phones.js";
import type { CallerScript, ScriptStep } from "../sim/script.js";
import { DEFAULT_LANGUAGE } from "../sim/speech.js";
import type { ApiDeps } from "./deps.js";

export const SIM_CALL_ACTIONS = ["dtmf", "hangup"] as const;

/** A dialled string or caller id number as a SIP user part can carry it. */
const DIALABLE = "^[0-9A-Za-z+*#]+$";
const DIGITS = "^[0-9*#A-Da-d]+$";
/** A BCP 47 tag as espeak-ng names its languages (en-US, fr, pt-BR, cmn). */
const LANGUAGE = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$";
/** An espeak-ng voice variant (f3, m2, klatt, Annie ...). */
const VOICE = "^[A-Za-z0-9_]{1,32}$";
/** The steps a script step may name, one each. */
const STEP_ACTIONS = ["say", "play", "wait_s", "digits", "hangup"] as const;
/** A day: far more than any call lasts, a bound on the server's timers. */
const MAX_SECONDS = 86_400;
const seconds = (description: string) => ({ type: "number", minimum: 0, maximum: MAX_SECONDS, description });
const MEDIA = { type: "string", minLength: 1, maxLength: 1024 };

const stepSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    say: { type: "string", minLength: 1, maxLength: 1000, description: "a line of text the caller speaks (espeak-ng, or a stock phrase)" },
    language: { type: "string", maxLength: 35, pattern: LANGUAGE, description: "say: the line's language (default: the script's)" },
    voice: { type: "string", pattern: VOICE, description: "say: an espeak-ng voice variant (default: the script's)" },
    media: { ...MEDIA, description: "say: a media reference played instead when speech cannot be synthesised here" },
    play: { ...MEDIA, description: "a media reference the caller plays as its line: the trainer's recording, a tone" },
    wait_s: seconds("a pause on the server's clock"),
    digits: { type: "string", minLength: 1, maxLength: 64, pattern: DIGITS, description: "digits sent once a prompt has been heard (or after after_s)" },
    after_s: seconds("digits: send after this long instead of waiting for a prompt"),
    hangup: { type: "boolean", enum: [true], description: "the caller hangs up" },
  },
};

const scriptSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["steps"],
  properties: {
    steps: { type: "array", maxItems: 200, items: stepSchema, description: "what the caller does from the answer on, in order" },
    language: { type: "string", maxLength: 35, pattern: LANGUAGE, description: `the caller's language (default ${DEFAULT_LANGUAGE})` },
    voice: { type: "string", pattern: VOICE, description: "the caller's espeak-ng voice variant" },
    patience_s: seconds("abandons when no one has answered after this long (ringing, queued)"),
    talk_s: seconds("hangs up after this long talking, when no step hangs up"),
    hold_patience_s: seconds("hangs up after this long on hold at once (default: waits)"),
    asks_for_supervisor: { type: "boolean", description: "says a line asking for a supervisor first, once answered" },
  },
};

/** A simulated caller's start (POST .../sim/calls); precompiled by the build (precompiled-schemas.ts). */
export const SIM_CALL_START_SCHEMA: JsonSchema = {
  type: "object",
  required: ["to", "caller_id_number"],
  properties: {
    to: { type: "string", minLength: 1, maxLength: 64, pattern: DIALABLE, description: "the number or extension to dial" },
    caller_id_name: { type: "string", minLength: 1, maxLength: 128, description: "default: the caller id number" },
    caller_id_number: { type: "string", minLength: 1, maxLength: 64, pattern: DIALABLE },
    audio: { type: "string", minLength: 1, maxLength: 1024, description: "what the caller plays once answered: a media id, tone_stream://... or silence_stream://... (or give script)" },
    script: { ...scriptSchema, description: "what the caller says and does (or give audio)" },
    phone: {
      type: "object",
      additionalProperties: false,
      required: ["answer"],
      description:
        "local addition: makes caller_id_number a phone that calls can reach for 24 hours (a queue callback, an agent calling back; without it they reach nothing): answer, busy, or no_answer; answered, it plays audio on a loop (default: the call's audio, else a steady 440 Hz tone) until the server hangs up",
      properties: {
        answer: { type: "string", enum: [...PHONE_ANSWERS] },
        audio: { type: "string", minLength: 1, maxLength: 1024, description: "a media id, tone_stream://... or silence_stream://..." },
      },
    },
  },
};

/** The validated script document as the simulator's script; throws the API's 400 for what the schema cannot say. */
function scriptOf(data: Record<string, unknown>): CallerScript {
  const language = typeof data.language === "string" ? data.language : DEFAULT_LANGUAGE;
  const voice = typeof data.voice === "string" ? data.voice : undefined;
  const steps = (data.steps as Record<string, unknown>[]).map((step, index): ScriptStep => {
    const field = `script.steps.${index}`;
    const actions = STEP_ACTIONS.filter((a) => step[a] !== undefined);
    if (actions.length !== 1) {
      throw fieldError(field, "step", `a step does exactly one of ${STEP_ACTIONS.join(", ")}`, actions.length === 0 ? step : actions);
    }
    const onlyWith = (key: string, action: string): void => {
      if (step[key] !== undefined && actions[0] !== action) throw fieldError(`${field}.${key}`, "step", `${key} goes only with ${action}`, step[key]);
    };
    onlyWith("language", "say");
    onlyWith("voice", "say");
    onlyWith("media", "say");
    onlyWith("after_s", "digits");
    if (typeof step.say === "string") {
      const lineVoice = typeof step.voice === "string" ? step.voice : voice;
      return {
        kind: "say",
        line: { text: step.say, language: typeof step.language === "string" ? step.language : language, ...(lineVoice === undefined ? {} : { voice: lineVoice }) },
        ...(typeof step.media === "string" ? { media: step.media } : {}),
      };
    }
    if (typeof step.play === "string") return { kind: "play", media: step.play };
    if (typeof step.wait_s === "number") return { kind: "wait", seconds: step.wait_s };
    if (typeof step.digits === "string") return { kind: "digits", digits: step.digits, ...(typeof step.after_s === "number" ? { afterS: step.after_s } : {}) };
    return { kind: "hangup" };
  });
  if (typeof data.talk_s === "number" && steps.some((s) => s.kind === "hangup")) {
    throw fieldError("script.talk_s", "conflict", "give talk_s or a hangup step, not both", data.talk_s);
  }
  const number = (key: string): number | undefined => (typeof data[key] === "number" ? data[key] : undefined);
  const patienceS = number("patience_s");
  const talkS = number("talk_s");
  const holdPatienceS = number("hold_patience_s");
  return {
    steps,
    language,
    ...(voice === undefined ? {} : { voice }),
    ...(patienceS === undefined ? {} : { patienceS }),
    ...(talkS === undefined ? {} : { talkS }),
    ...(holdPatienceS === undefined ? {} : { holdPatienceS }),
    asksForSupervisor: data.asks_for_supervisor === true,
  };
}

const actionSchema: JsonSchema = {
  type: "object",
  required: ["action"],
  properties: {
    action: { type: "string", enum: [...SIM_CALL_ACTIONS] },
    digits: { type: "string", minLength: 1, maxLength: 64, pattern: "^[0-9*#A-Da-d]+$", description: "dtmf: the digits to send (RFC 4733)" },
  },
};

export function simCallRow(caller: SimulatedCaller): Data {
  const progress = caller.progress;
  return {
    id: caller.id,
    to: caller.to,
    caller_id_name: caller.caller.name,
    caller_id_number: caller.caller.number,
    ...(caller.audioName === undefined ? {} : { audio: caller.audioName }),
    ...(progress === undefined ? {} : { script: { phase: progress.phase, step: progress.step, steps: progress.steps, ...(progress.left === undefined ? {} : { left: progress.left }) } }),
    state: caller.state,
    media: caller.media,
    timestamp: toGregorianSeconds(caller.createdAt),
  };
}

/** The validated `phone` as the simulator's, when given. */
function phoneOf(value: unknown): Pick<SimCallRequest, "phone"> {
  if (!isObject(value)) return {};
  const answer = PHONE_ANSWERS.find((a) => a === value.answer) ?? "answer";
  return { phone: { answer, ...(typeof value.audio === "string" ? { audio: value.audio } : {}) } };
}

async function start(sim: SimCallers | undefined, ctx: Ctx): Promise<Outcome> {
  const data = dataObject(ctx);
  validate(SIM_CALL_START_SCHEMA, data);
  if (!sim) throw new ApiError("invalid_data", { sim: { unavailable: { message: "the call engine is not running" } } });
  const hasScript = typeof data.script === "object" && data.script !== null;
  if (typeof data.audio === "string" && hasScript) throw fieldError("script", "conflict", "give audio or script, not both");
  if (typeof data.audio !== "string" && !hasScript) throw fieldError("audio", "required", "Field is required but missing: give audio (one line) or script");
  const behaviour = hasScript ? { script: scriptOf(data.script as Record<string, unknown>) } : { audio: String(data.audio) };
  const accountId = ctx.params.account_id ?? "";
  const number = String(data.caller_id_number);
  let caller: SimulatedCaller;
  try {
    caller = await sim.start(accountId, {
      to: String(data.to),
      callerIdNumber: number,
      callerIdName: typeof data.caller_id_name === "string" ? data.caller_id_name : number,
      behaviour,
      ...phoneOf(data.phone),
    });
  } catch (err) {
    if (err instanceof SimCallRequestError) throw fieldError(err.field, err.rule, err.message, err.value);
    if (err instanceof SimCallLimitError) throw new ApiError("too_many_requests", { message: err.message });
    if (err instanceof SimCallOverloadError) {
      ctx.reply.header("Retry-After", String(err.retryAfterS));
      throw new ApiError("service_unavailable", { message: err.message, retry_after_s: err.retryAfterS });
    }
    throw err;
  }
  return { data: simCallRow(caller), status: 201, headers: { Location: `/v2/accounts/${accountId}/sim/calls/${caller.id}` } };
}

function act(caller: SimulatedCaller, ctx: Ctx): Outcome {
  const data = dataObject(ctx);
  const action = data.action;
  // An action the simulator does not know is refused like a channel's: invalid data, not a schema error.
  if (typeof action === "string" && !SIM_CALL_ACTIONS.some((a) => a === action)) {
    throw new ApiError("invalid_data", { action: { enum: { message: `unknown action; use one of ${SIM_CALL_ACTIONS.join(", ")}`, value: action } } });
  }
  validate(actionSchema, data);
  if (action === "hangup") {
    caller.hangup();
    return { data: "hangup initiated", status: 202 };
  }
  if (typeof data.digits !== "string") throw fieldError("digits", "required", "Field is required but missing: the digits to send");
  try {
    caller.sendDtmf(data.digits).catch((err: unknown) => ctx.request.log.warn({ err, call_id: caller.id }, "sim: sending DTMF failed"));
  } catch (err) {
    if (err instanceof SimCallStateError) throw new ApiError("invalid_data", { action: { dtmf: { message: err.message } } });
    throw err;
  }
  return { data: "dtmf sent", status: 202 };
}

export function registerSim(app: FastifyInstance, deps: ApiDeps): void {
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";
  const callOf = (ctx: Ctx): SimulatedCaller => {
    const id = ctx.params.id ?? "";
    const caller = deps.sim?.get(accountOf(ctx), id);
    if (!caller) throw notFound(id);
    return caller;
  };
  const create: Handler = (ctx) => start(deps.sim, ctx);
  const drive: Handler = async (ctx) => act(callOf(ctx), ctx);

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/sim/calls",
    access: "account",
    tag: "sim",
    verbs: {
      GET: {
        summary: "List the account's live simulated calls",
        handler: async (ctx) => {
          const test = filterFromQuery(ctx.req.query);
          const rows = (deps.sim?.ofAccount(accountOf(ctx)) ?? []).map(simCallRow).filter((row) => {
            const at = Number(row.timestamp);
            return test({ id: String(row.id), created: at, modified: at, data: row });
          });
          const page = paginate(rows, { key: (row) => `${String(row.timestamp).padStart(12, "0")}-${String(row.id)}` }, ctx.req.query);
          return { data: page.rows, paging: page.paging };
        },
      },
      POST: { summary: "Start a simulated caller: it dials `to` with the caller id given and plays `audio` or follows `script` once answered", admin: true, body: SIM_CALL_START_SCHEMA, answers: [201], handler: create },
      PUT: { summary: "Start a simulated caller (as POST)", admin: true, body: SIM_CALL_START_SCHEMA, handler: create },
    },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/sim/calls/:id",
    access: "account",
    tag: "sim",
    verbs: {
      GET: { summary: "One live simulated call: its state (new, ringing, answered) and media (connecting, connected)", handler: async (ctx) => ({ data: simCallRow(callOf(ctx)) }) },
      POST: { summary: "Drive a simulated call: dtmf (with digits) or hangup", admin: true, body: actionSchema, answers: [202], handler: drive },
      PUT: { summary: "Drive a simulated call (as POST)", admin: true, body: actionSchema, answers: [202], handler: drive },
    },
  });
}
