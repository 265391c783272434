// Every stylesheet of the console closes each block it opens: a rule left open (as a merge once
// left one in callq.css) swallows every rule after it, and no compiler or linter here reads CSS.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const RENDERER = join(import.meta.dirname, "../../renderer");

function stylesheets(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? stylesheets(join(dir, e.name)) : e.name.endsWith(".css") ? [join(dir, e.name)] : []));
}

/** Where the first block that is not closed starts (line), or a stray close, or null when every block closes. */
export function unbalanced(css: string): string | null {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, (s) => " ".repeat(s.length));
  const open: number[] = [];
  let line = 1;
  for (const ch of text) {
    if (ch === "\n") line++;
    else if (ch === "{") open.push(line);
    else if (ch === "}" && open.pop() === undefined) return `a } with no block at line ${line}`;
  }
  return open.length > 0 ? `the block opened at line ${open[0]} is never closed` : null;
}

describe("the console's stylesheets", () => {
  it("finds an open block and a stray close", () => {
    expect(unbalanced(".a { color: red; }\n.b { x: y;\n.c { z: w; }")).toBe("the block opened at line 2 is never closed");
    expect(unbalanced(".a { content: '}'; } /* { */")).toBeNull();
    expect(unbalanced(".a { }\n}")).toBe("a } with no block at line 2");
  });

  it("close every block they open", () => {
    const files = stylesheets(RENDERER);
    expect(files.length).toBeGreaterThan(3);
    for (const file of files) expect(unbalanced(readFileSync(file, "utf8")), file).toBeNull();
  });
});
