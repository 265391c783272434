// /v2/accounts/{account_id}/callq_away_reasons (a local addition): why a recipient may be Away.
// The account's own list, which recipients choose from when going Away and admins edit, and the
// reasons the queue engine sets itself, listed for their labels but never chosen.
import type { FastifyInstance } from "fastify";
import { registerEndpoint, type Ctx } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { isObject } from "../http/request.js";
import { dataObject, storeError } from "../http/resource.js";
import { validate, type FieldErrors, type JsonSchema } from "../http/validation.js";
import type { ApiDeps } from "./deps.js";

export interface AwayReason {
  code: string;
  label: string;
}

/** The account's list until an admin sets one. */
export const DEFAULT_AWAY_REASONS: readonly AwayReason[] = [
  { code: "break", label: "Break" },
  { code: "lunch", label: "Lunch" },
  { code: "meeting", label: "Meeting" },
  { code: "training", label: "Training" },
];

/**
 * Set by the engine, never chosen: too many offers missed in a row (Away), and no registered
 * device (Ready but offered nothing: the status's unavailable_reason).
 */
export const ENGINE_REASONS: readonly AwayReason[] = [
  { code: "missed_offers", label: "Missed offers" },
  { code: "no_device", label: "No device" },
];

/** Where the account's list is kept: one document of the account's call-queue settings. */
const SETTINGS_COLLECTION = "callq_settings";
const REASONS_ID = "away_reasons";

const CODE_PATTERN = "^[a-z0-9][a-z0-9_-]{0,63}$";

const reasonsSchema: JsonSchema = {
  type: "object",
  required: ["reasons"],
  properties: {
    reasons: {
      type: "array",
      maxItems: 50,
      description: "the reasons recipients choose from, in the order the console lists them; codes unique, none of the engine's",
      items: {
        type: "object",
        required: ["code", "label"],
        additionalProperties: false,
        properties: {
          code: { type: "string", pattern: CODE_PATTERN, description: "lower case letters, digits, _ and -, at most 64" },
          label: { type: "string", minLength: 1, maxLength: 64 },
        },
      },
    },
  },
};

function reasonsOf(value: unknown): AwayReason[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isObject).map((r) => ({ code: String(r.code), label: String(r.label) }));
}

/** The account's reasons a recipient may choose when going Away. */
export async function accountAwayReasons(deps: ApiDeps, accountId: string): Promise<AwayReason[]> {
  const settings = await deps.collection(accountId, SETTINGS_COLLECTION);
  return reasonsOf(settings.get(REASONS_ID)?.data.reasons) ?? [...DEFAULT_AWAY_REASONS];
}

function listed(reasons: readonly AwayReason[]): { reasons: AwayReason[]; engine_reasons: AwayReason[] } {
  return { reasons: reasons.map((r) => ({ ...r })), engine_reasons: ENGINE_REASONS.map((r) => ({ ...r })) };
}

function reasonErrors(reasons: readonly AwayReason[]): FieldErrors {
  const errors: FieldErrors = {};
  const codes = reasons.map((r) => r.code);
  const twice = codes.find((code, i) => codes.indexOf(code) !== i);
  if (twice !== undefined) errors.reasons = { unique: { message: "each reason code may be given once", value: twice } };
  const engine = codes.find((code) => ENGINE_REASONS.some((r) => r.code === code));
  if (engine !== undefined) errors.reasons = { reserved: { message: `${engine} is set by the queue engine and cannot be chosen`, value: engine } };
  return errors;
}

export function registerCallqAwayReasons(app: FastifyInstance, deps: ApiDeps): void {
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/callq_away_reasons",
    access: "account",
    tag: "callq_away_reasons",
    verbs: {
      GET: {
        summary: "Local addition: the account's Away reasons (reasons) and the queue engine's own (engine_reasons)",
        handler: async (ctx) => ({ data: listed(await accountAwayReasons(deps, accountOf(ctx))) }),
      },
      POST: {
        summary: "Local addition: replace the account's Away reasons; answers the lists",
        admin: true,
        body: reasonsSchema,
        handler: async (ctx) => {
          const data = dataObject(ctx);
          validate(reasonsSchema, data);
          const reasons = reasonsOf(data.reasons) ?? [];
          const errors = reasonErrors(reasons);
          if (Object.keys(errors).length > 0) throw new ApiError("validation_error", errors);
          const settings = await deps.collection(accountOf(ctx), SETTINGS_COLLECTION);
          try {
            if (settings.has(REASONS_ID)) await settings.update(REASONS_ID, { reasons });
            else await settings.create({ reasons }, { id: REASONS_ID });
          } catch (err) {
            throw storeError(err);
          }
          return { data: listed(reasons) };
        },
      },
    },
  });
}
