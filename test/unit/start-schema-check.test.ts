// A start does not check our schemas against JSON Schema's meta-schema (server/http/validation.ts,
// issue 17 "Start"): that check compiles the meta-schema at the first use of any schema, the first
// request's largest cost. The test runner (VITEST) or SWITCHBOARD_CHECK_SCHEMAS=1 keeps the check,
// so the suite still compiles every route's schema against it. Counted in a fresh process (the
// unit files share one module graph, and the runner's own environment turns the check on): every
// function ajv compiles is one `new Function`.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

interface Seen {
  check: boolean;
  compiled: number;
  valid: boolean;
  invalid: boolean;
  errors: unknown;
  badSchema: string;
}

function firstUse(env: NodeJS.ProcessEnv): Seen {
  const script = `
    let compiled = 0;
    const Original = globalThis.Function;
    globalThis.Function = new Proxy(Original, { construct(target, args) { compiled++; return Reflect.construct(target, args); } });
    const v = await import(${JSON.stringify(resolve(root, "server/http/validation.ts"))});
    const schema = { type: "object", required: ["name"], properties: { name: { type: "string", minLength: 2 } }, additionalProperties: false };
    const check = v.validator(schema);
    const seen = { check: v.CHECK_SCHEMAS, compiled, valid: check({ name: "ok" }), invalid: check({ name: "x" }) };
    let errors;
    try { v.validate(schema, { name: "x", extra: 1 }); } catch (err) { errors = err.data ?? err.message; }
    let badSchema = "compiled";
    try { v.validator({ type: "object", properties: { name: { minLength: "two" } } }); } catch (err) { badSchema = "refused"; }
    process.stdout.write(JSON.stringify({ ...seen, errors, badSchema }));
  `;
  const clean = { ...process.env, ...env };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete clean[key];
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: root, encoding: "utf8", env: clean });
  return JSON.parse(out) as Seen;
}

describe("schema compilation at a start", () => {
  it("compiles a first schema alone, not the meta-schema too, and validates as before", () => {
    const seen = firstUse({ VITEST: undefined, SWITCHBOARD_CHECK_SCHEMAS: undefined });
    expect(seen.check).toBe(false);
    expect(seen.compiled).toBe(1);
    expect(seen.valid).toBe(true);
    expect(seen.invalid).toBe(false);
    expect(seen.errors).toEqual({
      name: { minLength: expect.objectContaining({ target: 2 }) },
      extra: { additionalProperties: expect.objectContaining({ message: "Field is not allowed" }) },
    });
  });

  it("checks schemas against the meta-schema under the test runner or when asked", () => {
    for (const env of [{ VITEST: "true", SWITCHBOARD_CHECK_SCHEMAS: undefined }, { VITEST: undefined, SWITCHBOARD_CHECK_SCHEMAS: "1" }]) {
      const seen = firstUse(env);
      expect(seen.check).toBe(true);
      expect(seen.compiled).toBeGreaterThan(1);
      expect(seen.valid).toBe(true);
      expect(seen.badSchema).toBe("refused");
    }
  });
});
