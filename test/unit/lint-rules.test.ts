// The lint step enforces the process boundaries and the ban on `any`; prove each rule bites.
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: new URL("../..", import.meta.url).pathname });

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe("lint rules", () => {
  it("fails on any", async () => {
    expect(await ruleIds("export const f = (x: any): number => x;\n", "server/x.ts")).toContain("@typescript-eslint/no-explicit-any");
  });

  it("fails on Node imports in the renderer", async () => {
    expect(await ruleIds('import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n', "renderer/x.ts")).toContain(
      "no-restricted-imports",
    );
    expect(await ruleIds('import path from "path";\nexport const p = path;\n', "renderer/x.tsx")).toContain("no-restricted-imports");
  });

  it("fails on electron imports in the server", async () => {
    expect(await ruleIds('import { app } from "electron";\nexport const a = app;\n', "server/x.ts")).toContain("no-restricted-imports");
  });

  it("lets the server use Node", async () => {
    expect(await ruleIds('import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n', "server/x.ts")).toEqual([]);
  });
});
