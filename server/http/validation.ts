// JSON-schema validation with the hosted API's error shape: `data.{field}.{rule}.message`,
// dotted paths for nested fields, rule names as Kazoo writes them (required, minLength,
// maxLength, minimum, maximum, enum, type, pattern, unique ...).
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsPlugin from "ajv-formats";
import { ApiError } from "./errors.js";

export type JsonSchema = Record<string, unknown>;

export type FieldErrors = Record<string, Record<string, { message: string; value?: unknown; target?: unknown }>>;

// Our schemas are constants in the code, so checking each against JSON Schema's meta-schema is for
// the test runner (which compiles every route's), not every start: the check compiles the
// meta-schema on the first use of any schema, a first request's largest cost (issue 17, "Start").
export const CHECK_SCHEMAS = process.env.VITEST !== undefined || process.env.SWITCHBOARD_CHECK_SCHEMAS === "1";
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: false, coerceTypes: false, verbose: true, validateSchema: CHECK_SCHEMAS });
// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = (addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin;
addFormats(ajv, ["uri", "email", "date-time", "uuid"]);

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

export function validator(schema: JsonSchema): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(schema);
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
