// The one-pass bound check that runs before JSON.parse (issue 14, item 10) must agree exactly with
// the parsed document: fast-check (fixed seed) compares it with a count over the parsed value,
// on documents whose strings hold brackets, commas, quotes and escapes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonShapeRefusal } from "../../server/http/app.js";

/** Values held by containers (members and items at every level), and the deepest nesting. */
function measure(value: unknown, depth = 0): { entries: number; depth: number } {
  if (typeof value !== "object" || value === null) return { entries: 0, depth };
  const children = Object.values(value);
  let entries = children.length;
  let deepest = depth + 1;
  for (const child of children) {
    const m = measure(child, depth + 1);
    entries += m.entries;
    deepest = Math.max(deepest, m.depth);
  }
  return { entries, depth: deepest };
}

const tricky = fc.oneof(fc.string(), fc.constantFrom('{"', "[,]", '\\"', "\\\\", '\\",{[', "\u2028", "}}]]"));
const document = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tricky,
    fc.integer(),
    fc.constant(null),
    fc.boolean(),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(tricky, tie("value"), { maxKeys: 6 }),
  ),
})).value;

describe("the JSON bound check before parsing", () => {
  it("counts exactly the entries and the depth the parsed document has, whitespace or not", () => {
    fc.assert(
      fc.property(document, fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const { entries, depth } = measure(JSON.parse(text));
        expect(jsonShapeRefusal(text, depth, entries)).toBeNull();
        if (entries > 0) expect(jsonShapeRefusal(text, depth, entries - 1)).toBe("entries");
        if (depth > 0) expect(jsonShapeRefusal(text, depth - 1, entries)).toBe("depth");
      }),
      { numRuns: 2_000, seed: 1414 },
    );
  });
});
