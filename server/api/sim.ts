// /v2/accounts/{account_id}/sim/calls: simulated callers for demos, training and tests. POST starts
// one (201 with its call id), GET lists the live ones, POST /sim/calls/{id} sends DTMF or hangs up.
//
// Any user of the account may list them (a console can show that a call is simulated); starting
// and driving one needs an admin, since a simulated caller presents any caller id to anyone.
import type { FastifyInstance } from "fastify";
import { toGregorianSeconds } from "../clock.js";
import { registerEndpoint, type Ctx, type Handler, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { filterFromQuery } from "../http/filters.js";
import { paginate } from "../http/paging.js";
import { dataObject, notFound, type Data } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import { SimCallStateError, type SimulatedCaller } from "../sim/caller.js";
import { SimCallLimitError, SimCallRequestError, type SimCallers } from "../sim/callers.js";
import type { ApiDeps } from "./deps.js";

export const SIM_CALL_ACTIONS = ["dtmf", "hangup"] as const;

/** A dialled string or caller id number as a SIP user part can carry it. */
const DIALABLE = "^[0-9A-Za-z+*#]+$";

const startSchema: JsonSchema = {
  type: "object",
  required: ["to", "caller_id_number", "audio"],
  properties: {
    to: { type: "string", minLength: 1, maxLength: 64, pattern: DIALABLE, description: "the number or extension to dial" },
    caller_id_name: { type: "string", minLength: 1, maxLength: 128, description: "default: the caller id number" },
    caller_id_number: { type: "string", minLength: 1, maxLength: 64, pattern: DIALABLE },
    audio: { type: "string", minLength: 1, maxLength: 1024, description: "what the caller says once answered: a media id, tone_stream://... or silence_stream://..." },
  },
};

const actionSchema: JsonSchema = {
  type: "object",
  required: ["action"],
  properties: {
    action: { type: "string", enum: [...SIM_CALL_ACTIONS] },
    digits: { type: "string", minLength: 1, maxLength: 64, pattern: "^[0-9*#A-Da-d]+$", description: "dtmf: the digits to send (RFC 4733)" },
  },
};

export function simCallRow(caller: SimulatedCaller): Data {
  return {
    id: caller.id,
    to: caller.to,
    caller_id_name: caller.caller.name,
    caller_id_number: caller.caller.number,
    audio: caller.audioName,
    state: caller.state,
    timestamp: toGregorianSeconds(caller.createdAt),
  };
}

async function start(sim: SimCallers | undefined, ctx: Ctx): Promise<Outcome> {
  const data = dataObject(ctx);
  validate(startSchema, data);
  if (!sim) throw new ApiError("invalid_data", { sim: { unavailable: { message: "the call engine is not running" } } });
  const accountId = ctx.params.account_id ?? "";
  const number = String(data.caller_id_number);
  let caller: SimulatedCaller;
  try {
    caller = await sim.start(accountId, {
      to: String(data.to),
      callerIdNumber: number,
      callerIdName: typeof data.caller_id_name === "string" ? data.caller_id_name : number,
      audio: String(data.audio),
    });
  } catch (err) {
    if (err instanceof SimCallRequestError) throw fieldError(err.field, err.rule, err.message, err.value);
    if (err instanceof SimCallLimitError) throw new ApiError("too_many_requests", { message: err.message });
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
      POST: { summary: "Start a simulated caller: it dials `to` with the caller id given and plays `audio` once answered", admin: true, body: startSchema, answers: [201], handler: create },
      PUT: { summary: "Start a simulated caller (as POST)", admin: true, body: startSchema, handler: create },
    },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/sim/calls/:id",
    access: "account",
    tag: "sim",
    verbs: {
      GET: { summary: "One live simulated call", handler: async (ctx) => ({ data: simCallRow(callOf(ctx)) }) },
      POST: { summary: "Drive a simulated call: dtmf (with digits) or hangup", admin: true, body: actionSchema, answers: [202], handler: drive },
      PUT: { summary: "Drive a simulated call (as POST)", admin: true, body: actionSchema, answers: [202], handler: drive },
    },
  });
}
