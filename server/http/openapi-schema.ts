// Our routes validate with JSON Schema (draft 2020-12 keywords, read by Ajv); OpenAPI 3.0's
// Schema Object is an older, narrower dialect that validators and code generators enforce. This
// translates any of our schemas into it, keyword by keyword, so the published document loads in
// every OpenAPI 3.0 tool:
// - type arrays: `null` becomes `nullable: true`, several types become `anyOf` (3.0 has one type);
// - `const` becomes a one-value `enum`; `examples` becomes `example` (the first one);
// - exclusiveMinimum/Maximum as numbers become the 3.0 pair minimum + exclusiveMinimum: true;
// - boolean schemas become `{}` (true) and `{not: {}}` (false);
// - tuple `items` (an array) and `prefixItems` become items matching any of the positions;
// - local `$ref`s into `$defs`/`definitions` are inlined (3.0 resolves refs only in components);
//   refs to `#/components/...` are kept;
// - keywords 3.0 has no equivalent for (patternProperties, propertyNames, if/then/else,
//   dependentRequired ...) cannot be expressed; they are kept as `x-jsonschema-<keyword>`
//   extensions so nothing is silently lost, and the schema accepts at least what the route does
//   (patternProperties' values are folded into additionalProperties).
// The translation never makes a schema stricter than the route's validator: a document a route
// accepts is valid against the published schema.
import type { JsonSchema } from "./validation.js";

type Schema = Record<string, unknown>;

/** Keywords OpenAPI 3.0 takes as they are, with a schema (or schemas) as value. */
const SUBSCHEMA = new Set(["not", "additionalProperties", "items"]);
const SUBSCHEMA_LISTS = new Set(["allOf", "anyOf", "oneOf"]);
/** Keywords OpenAPI 3.0 takes as they are, with a plain value. */
const PLAIN = new Set([
  "title",
  "description",
  "default",
  "format",
  "multipleOf",
  "maximum",
  "minimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "maxProperties",
  "minProperties",
  "required",
  "enum",
  "readOnly",
  "writeOnly",
  "deprecated",
  "nullable",
  "example",
  "discriminator",
  "xml",
  "externalDocs",
]);
/** Keywords that only identify or annotate a JSON Schema document; meaningless inside OpenAPI. */
const DROPPED = new Set(["$schema", "$id", "$comment", "$defs", "definitions", "$anchor", "$vocabulary"]);
const TYPES_3_0 = new Set(["string", "number", "integer", "boolean", "array", "object"]);
const MAX_REF_DEPTH = 32;

function isSchemaObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The OpenAPI 3.0 Schema Object for a JSON Schema (the input is left untouched). */
export function toOpenApi30(schema: JsonSchema | boolean): Schema {
  const root = typeof schema === "boolean" ? {} : schema;
  return translate(schema, root, 0);
}

function translate(schema: unknown, root: Schema, refDepth: number): Schema {
  if (schema === true || schema === undefined) return {};
  if (schema === false) return { not: {} };
  if (!isSchemaObject(schema)) return {};
  // A reference into the OpenAPI document's own components is already in 3.0 terms.
  if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/components/")) return { $ref: schema.$ref };
  if (typeof schema.$ref === "string") return translate({ ...resolveRef(schema.$ref, root, refDepth), ...without(schema, "$ref") }, root, refDepth + 1);
  const out: Schema = {};
  const sub = (s: unknown): Schema => translate(s, root, refDepth);
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-") || PLAIN.has(key)) out[key] = value;
    else if (key === "type") Object.assign(out, typeOf(value));
    else if (key === "properties" && isSchemaObject(value)) out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, sub(s)]));
    else if (key === "items" && Array.isArray(schema.prefixItems)) continue;
    else if (key === "items" && Array.isArray(value)) out.items = anyOfPositions(value.map(sub), schema.additionalItems === undefined ? undefined : sub(schema.additionalItems));
    else if (SUBSCHEMA.has(key)) out[key] = typeof value === "boolean" && key === "additionalProperties" ? value : sub(value);
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map(sub);
    else if (key === "const") out.enum = [value];
    else if (key === "examples" && Array.isArray(value)) {
      if (value.length > 0 && !("example" in schema)) out.example = value[0];
    } else if ((key === "exclusiveMinimum" || key === "exclusiveMaximum") && typeof value === "number") {
      const bound = key === "exclusiveMinimum" ? "minimum" : "maximum";
      out[bound] = value;
      out[key] = true;
    } else if (key === "exclusiveMinimum" || key === "exclusiveMaximum") out[key] = value;
    else if (key === "prefixItems" && Array.isArray(value)) {
      out.items = anyOfPositions(value.map(sub), schema.items === undefined ? undefined : sub(schema.items));
      out[`x-jsonschema-${key}`] = value;
    } else if (key === "patternProperties" && isSchemaObject(value)) out[`x-jsonschema-${key}`] = value;
    else if (key === "additionalItems") continue;
    else if (!DROPPED.has(key)) out[`x-jsonschema-${key}`] = value;
  }
  if (isSchemaObject(schema.patternProperties)) foldPatternProperties(out, Object.values(schema.patternProperties).map(sub));
  if (Array.isArray(schema.items)) out["x-jsonschema-items"] = schema.items;
  return nullableFromMembers(nullableFromEnum(out));
}

/** A type or type array in 3.0 words. */
function typeOf(value: unknown): Schema {
  const types = (Array.isArray(value) ? value : [value]).filter((t): t is string => typeof t === "string");
  const nullable = types.includes("null");
  const rest = types.filter((t) => TYPES_3_0.has(t));
  if (rest.length === 0) return nullable ? { nullable: true, enum: [null] } : {};
  if (rest.length === 1) return nullable ? { type: rest[0], nullable: true } : { type: rest[0] };
  return { anyOf: rest.map((t) => (nullable ? { type: t, nullable: true } : { type: t })) };
}

/** An enum that lists null needs `nullable: true` in 3.0, or a validator refuses the null. */
function nullableFromEnum(schema: Schema): Schema {
  if (Array.isArray(schema.enum) && schema.enum.includes(null) && typeof schema.type === "string") schema.nullable = true;
  return schema;
}

/** `anyOf`/`oneOf` with a `{type: null}` member: the member goes, the others become nullable. */
function nullableFromMembers(schema: Schema): Schema {
  for (const key of ["anyOf", "oneOf"] as const) {
    const members = schema[key];
    if (!Array.isArray(members)) continue;
    const isNull = (m: unknown): boolean => isSchemaObject(m) && m.nullable === true && Array.isArray(m.enum) && m.enum.length === 1 && m.enum[0] === null && m.type === undefined;
    if (!members.some(isNull)) continue;
    const rest = members.filter((m) => !isNull(m)).map((m) => (isSchemaObject(m) ? { ...m, nullable: true } : m));
    if (rest.length === 1 && isSchemaObject(rest[0])) {
      delete schema[key];
      Object.assign(schema, rest[0]);
    } else schema[key] = rest;
  }
  return schema;
}

function anyOfPositions(positions: Schema[], rest: Schema | undefined): Schema {
  const all = rest === undefined ? positions : [...positions, rest];
  if (all.length === 0) return {};
  if (all.length === 1 && all[0]) return all[0];
  return { anyOf: all };
}

/** Property names are not checked in 3.0; their values must match one of the pattern schemas. */
function foldPatternProperties(out: Schema, patterns: Schema[]): void {
  if (out.additionalProperties === undefined || out.additionalProperties === true) return;
  const extra = out.additionalProperties === false ? [] : isSchemaObject(out.additionalProperties) ? [out.additionalProperties] : [];
  const all = [...patterns, ...extra];
  out.additionalProperties = all.length === 1 && all[0] ? all[0] : { anyOf: all };
}

function resolveRef(ref: string, root: Schema, depth: number): Schema {
  if (depth > MAX_REF_DEPTH) throw new Error(`schema $ref ${ref} nests deeper than ${MAX_REF_DEPTH} levels (recursive?)`);
  if (!ref.startsWith("#")) throw new Error(`schema $ref ${ref} is not local; only local refs can be inlined`);
  let target: unknown = root;
  for (const part of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    target = isSchemaObject(target) ? target[key] : undefined;
  }
  if (!isSchemaObject(target)) throw new Error(`schema $ref ${ref} points at nothing`);
  return target;
}

function without(schema: Schema, key: string): Schema {
  const { [key]: _dropped, ...rest } = schema;
  return rest;
}
