// JSON-schema validation with the hosted API's error shape: `data.{field}.{rule}.message`,
// dotted paths for nested fields, rule names as Kazoo writes them (required, minLength,
// maxLength, minimum, maximum, enum, type, pattern, unique ...).
import { Ajv, type ErrorObject } from "ajv";
import addFormatsPlugin from "ajv-formats";
import { ApiError } from "./errors.js";
import { PRECOMPILED_VALIDATORS } from "./precompiled-validators.js";

export type JsonSchema = Record<string, unknown>;

export type FieldErrors = Record<string, Record<string, { message: string; value?: unknown; target?: unknown }>>;

// Our schemas are constants in the code, so checking each against JSON Schema's meta-schema is for
// the test runner (which compiles every route's), not every start: the check compiles the
// meta-schema on the first use of any schema, a first request's largest cost (issue 17, "Start").
export const CHECK_SCHEMAS = process.env.VITEST !== undefined || process.env.SWITCHBOARD_CHECK_SCHEMAS === "1";
/** ajv's options here and in the build's precompiled validators (server/http/precompile.ts): the same code and errors. */
export const AJV_OPTIONS = { allErrors: true, strict: false, useDefaults: false, coerceTypes: false, verbose: true } as const;
/** The formats our schemas may name (ajv-formats' full ones). */
export const AJV_FORMATS = ["uri", "email", "date-time", "uuid"] as const;

/** A schema's check: true when `data` passes, else false with `errors` set (ajv's validate function). */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = (addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin;

/** Made at the first schema compiled here, not at a start: the first requests' schemas come precompiled. */
let ajv: Ajv | undefined;
function compiler(): Ajv {
  if (ajv === undefined) {
    ajv = new Ajv({ ...AJV_OPTIONS, validateSchema: CHECK_SCHEMAS });
    addFormats(ajv, [...AJV_FORMATS]);
  }
  return ajv;
}

const compiled = new WeakMap<JsonSchema, Validator>();

/**
 * The schema's check, made at its first use: the build's precompiled one when the build compiled
 * this schema (PRECOMPILED_VALIDATORS, found by the schema's JSON text, so a schema changed since
 * the build is compiled here instead), else compiled by ajv now.
 */
export function validator(schema: JsonSchema): Validator {
  let v = compiled.get(schema);
  if (!v) {
    v = (PRECOMPILED_VALIDATORS.size === 0 ? undefined : PRECOMPILED_VALIDATORS.get(JSON.stringify(schema))) ?? compiler().compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

/** Throws a 400 `validation error` naming each failing field and rule. */
export function validate(schema: JsonSchema, data: unknown): void {
  const v = validator(schema);
  if (v(data)) return;
  throw new ApiError("validation_error", toFieldErrors(v.errors ?? []));
}

export function toFieldErrors(errors: ErrorObject[]): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors) {
    const path = e.instancePath
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
    let rule = e.keyword;
    let message = e.message ?? "is not valid";
    const params = e.params as Record<string, unknown>;
    const entry: { message: string; value?: unknown; target?: unknown } = { message };
    switch (e.keyword) {
      case "required":
        path.push(String(params.missingProperty));
        message = "Field is required but missing";
        break;
      case "additionalProperties":
        path.push(String(params.additionalProperty));
        message = "Field is not allowed";
        break;
      case "minLength":
      case "maxLength":
      case "minimum":
      case "maximum":
      case "minItems":
      case "maxItems":
        entry.target = params.limit;
        message = `Value ${e.keyword.startsWith("min") ? "is below" : "exceeds"} the ${e.keyword} of ${String(params.limit)}`;
        break;
      case "enum":
        entry.target = params.allowedValues;
        message = `Value not found in enumerated list of values`;
        break;
      case "type":
        entry.target = params.type;
        message = `Value is not of type ${String(params.type)}`;
        break;
      case "pattern":
        entry.target = params.pattern;
        message = `Value does not match pattern ${String(params.pattern)}`;
        break;
      case "format":
        rule = "format";
        message = `Value is not a valid ${String(params.format)}`;
        break;
      default:
        break;
    }
    entry.message = message;
    if (e.keyword !== "required" && e.keyword !== "additionalProperties") entry.value = e.data;
    const field = path.length ? path.join(".") : "data";
    out[field] = { ...out[field], [rule]: entry };
  }
  return out;
}

/** One field error, for checks a schema cannot express (unique numbers, E.164 ...). */
export function fieldError(field: string, rule: string, message: string, value?: unknown): ApiError {
  return new ApiError("validation_error", { [field]: { [rule]: value === undefined ? { message } : { message, value } } });
}
