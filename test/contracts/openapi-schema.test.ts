// The JSON Schema -> OpenAPI 3.0 translation: each keyword 3.0 lacks comes out in 3.0 terms, and
// the result accepts what the original accepts (checked with Ajv, which reads `nullable`).
import { describe, expect, it } from "vitest";
import { Ajv } from "ajv";
import { toOpenApi30 } from "../../server/http/openapi-schema.js";

const ajv = new Ajv({ strict: false });
const accepts = (schema: Record<string, unknown>, value: unknown): boolean => ajv.validate(schema, value);

describe("toOpenApi30", () => {
  it("turns a type array with null into nullable, and several types into anyOf", () => {
    expect(toOpenApi30({ type: ["string", "null"], format: "uri" })).toEqual({ type: "string", nullable: true, format: "uri" });
    const several = toOpenApi30({ type: ["string", "integer"] });
    expect(several).toEqual({ anyOf: [{ type: "string" }, { type: "integer" }] });
    expect(accepts(several, 3) && accepts(several, "x") && !accepts(several, true)).toBe(true);
    expect(toOpenApi30({ type: "null" })).toEqual({ nullable: true, enum: [null] });
  });

  it("walks every nested schema: properties, items, additionalProperties, anyOf", () => {
    const out = toOpenApi30({
      type: "object",
      properties: { a: { type: "array", items: { type: ["integer", "null"] } }, b: { anyOf: [{ const: "x" }, { type: "null" }] } },
      additionalProperties: { type: ["boolean", "null"] },
    });
    expect(out).toEqual({
      type: "object",
      properties: { a: { type: "array", items: { type: "integer", nullable: true } }, b: { enum: ["x"], nullable: true } },
      additionalProperties: { type: "boolean", nullable: true },
    });
  });

  it("translates const, examples, numeric exclusive bounds and boolean schemas", () => {
    expect(toOpenApi30({ const: 5 })).toEqual({ enum: [5] });
    expect(toOpenApi30({ type: "string", examples: ["a", "b"] })).toEqual({ type: "string", example: "a" });
    expect(toOpenApi30({ type: "number", exclusiveMinimum: 0 })).toEqual({ type: "number", minimum: 0, exclusiveMinimum: true });
    expect(toOpenApi30({ type: "object", properties: { no: false, yes: true } })).toEqual({ type: "object", properties: { no: { not: {} }, yes: {} } });
  });

  it("keeps what 3.0 cannot say as x-jsonschema- extensions, never stricter than the original", () => {
    const original = { type: "object", patternProperties: { "^[a-z]+$": { type: "integer" } }, additionalProperties: false, propertyNames: { maxLength: 3 }, $schema: "http://json-schema.org/draft-07/schema#" };
    const out = toOpenApi30(original);
    expect(out).toMatchObject({ type: "object", additionalProperties: { type: "integer" }, "x-jsonschema-propertyNames": { maxLength: 3 } });
    expect(out).not.toHaveProperty("$schema");
    expect(out).not.toHaveProperty("patternProperties");
    expect(accepts(original, { abc: 1 }) && accepts(out, { abc: 1 })).toBe(true);
  });

  it("inlines local refs and keeps refs to the OpenAPI components", () => {
    const out = toOpenApi30({ $defs: { n: { type: ["integer", "null"] } }, type: "object", properties: { n: { $ref: "#/$defs/n" }, f: { $ref: "#/components/schemas/Failure" } } });
    expect(out).toEqual({ type: "object", properties: { n: { type: "integer", nullable: true }, f: { $ref: "#/components/schemas/Failure" } } });
  });

  it("leaves its input untouched", () => {
    const input = { type: ["string", "null"], const: "a" };
    toOpenApi30(input);
    expect(input).toEqual({ type: ["string", "null"], const: "a" });
  });
});
