// Request schemas compiled ahead of their first use (server/http/validation.ts compileInIdle):
// nothing compiled while a request is being served, one per turn, a schema that cannot compile
// left to its first use, and the same answers whether a schema was compiled ahead or on demand.
import { describe, expect, it } from "vitest";
import { ApiError } from "../../server/http/errors.js";
import { compileInIdle, isCompiled, validate, type JsonSchema } from "../../server/http/validation.js";

const device = (): JsonSchema => ({
  type: "object",
  required: ["name"],
  properties: { name: { type: "string", minLength: 1, maxLength: 128 }, enabled: { type: "boolean" }, contact: { type: "string", format: "email" } },
});

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function refusal(schema: JsonSchema, data: unknown): unknown {
  try {
    validate(schema, data);
  } catch (err) {
    return err instanceof ApiError ? { code: err.code, data: err.data } : err;
  }
  return null;
}

describe("compiling request schemas in idle time", () => {
  it("compiles every schema given, none before the caller's turn ends", async () => {
    const schemas = [device(), device(), { type: "string", pattern: "^[0-9]+$" }];
    const compiling = compileInIdle(schemas, () => Promise.resolve());
    expect(schemas.map(isCompiled)).toEqual([false, false, false]);
    await compiling.done;
    expect(schemas.map(isCompiled)).toEqual([true, true, true]);
  });

  it("compiles one schema per turn of the event loop", async () => {
    const schemas = [device(), device(), device()];
    const compiling = compileInIdle(schemas, () => Promise.resolve());
    await nextTurn();
    expect(schemas.filter(isCompiled)).toHaveLength(1);
    await nextTurn();
    expect(schemas.filter(isCompiled)).toHaveLength(2);
    await compiling.done;
  });

  it("waits while a request is in hand and goes on once it is answered", async () => {
    const schema = device();
    let answered = (): void => undefined;
    const inHand = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const compiling = compileInIdle([schema], () => inHand);
    for (let turn = 0; turn < 5; turn++) await nextTurn();
    expect(isCompiled(schema)).toBe(false);
    answered();
    await compiling.done;
    expect(isCompiled(schema)).toBe(true);
  });

  it("compiles nothing more once stopped", async () => {
    const schemas = [device(), device()];
    const compiling = compileInIdle(schemas, () => Promise.resolve());
    compiling.stop();
    await compiling.done;
    expect(schemas.map(isCompiled)).toEqual([false, false]);
  });

  it("answers a schema compiled ahead exactly as one compiled at its first use", async () => {
    const ahead = device();
    await compileInIdle([ahead], () => Promise.resolve()).done;
    const onDemand = device();
    for (const data of [{ name: "desk" }, {}, { name: "", enabled: "yes", contact: "nobody" }, { name: "x".repeat(129) }, "text"]) {
      expect(refusal(ahead, data)).toEqual(refusal(onDemand, data));
    }
    expect(refusal(ahead, {})).toEqual({ code: "validation_error", data: { name: { required: { message: "Field is required but missing" } } } });
  });

  it("leaves a schema that cannot compile to its first use, which throws as before", async () => {
    const broken = (): JsonSchema => ({ type: "object", properties: { name: { $ref: "#/definitions/missing" } } });
    const ahead = broken();
    const after = device();
    await compileInIdle([ahead, after], () => Promise.resolve()).done;
    expect(isCompiled(ahead)).toBe(false);
    expect(isCompiled(after)).toBe(true);
    const thrownAhead = refusal(ahead, { name: "desk" });
    expect(thrownAhead).toBeInstanceOf(Error);
    expect(String(thrownAhead)).toBe(String(refusal(broken(), { name: "desk" })));
  });
});
