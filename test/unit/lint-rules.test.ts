// The lint step enforces the process boundaries, the server's layers and the ban on `any`; prove each rule bites.
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

  it("keeps the server's layers: a layer may import those below it, never one above", async () => {
    // store is the lowest layer, api the highest (docs/architecture.md).
    expect(await ruleIds('import { ApiError } from "../http/errors.js";\nexport const e = ApiError;\n', "server/store/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import type { Channel } from "../../calls/index.js";\nexport type C = Channel;\n', "server/sip/deep/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import { CallqEngine } from "../callq/index.js";\nexport const c = CallqEngine;\n', "server/calls/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import { ApiError } from "../http/errors.js";\nexport const e = ApiError;\n', "server/api/x.ts")).toEqual([]);
    expect(await ruleIds('import type { Channel } from "../calls/index.js";\nexport type C = Channel;\n', "server/callq-host/x.ts")).toEqual([]);
    // The shared leaves at server/'s root, and the composition root, are free.
    expect(await ruleIds('import type { Clock } from "../clock.js";\nexport type C = Clock;\n', "server/store/x.ts")).toEqual([]);
    expect(await ruleIds('import { CallqEngine } from "./callq/index.js";\nexport const c = CallqEngine;\n', "server/index.ts")).toEqual([]);
  });

  it("keeps the queue engine pure: server/callq/ imports no other layer, type imports included", async () => {
    for (const below of ["store/index.js", "calls/channel.js", "sip/registrar.js", "media/index.js", "auth/index.js", "http/errors.js"]) {
      expect(await ruleIds(`import type { X } from "../${below}";\nexport type Y = X;\n`, "server/callq/x.ts")).toContain("no-restricted-imports");
    }
    expect(await ruleIds('import type { CallqEngine } from "../callq/engine.js";\nexport type E = CallqEngine;\n', "server/calls/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import type { CallqEngine } from "../callq-host/index.js";\nexport type E = CallqEngine;\n', "server/callq/x.ts")).toContain("no-restricted-imports");
    // Its own files and the shared leaves at server/'s root are free; its host may import it and below.
    expect(await ruleIds('import type { Queue } from "./queue.js";\nimport type { MonitorMode } from "../monitor-mode.js";\nexport type Q = [Queue, MonitorMode];\n', "server/callq/x.ts")).toEqual([]);
    expect(await ruleIds('import type { CallqEngine } from "../callq/engine.js";\nimport type { Store } from "../store/index.js";\nexport type E = [CallqEngine, Store];\n', "server/callq-host/x.ts")).toEqual([]);
    expect(await ruleIds('import { startCallqHost } from "../callq-host/index.js";\nexport const s = startCallqHost;\n', "server/events/x.ts")).toEqual([]);
  });

  it("keeps the server on one clock and one random source", async () => {
    const banned: [string, string][] = [
      ["export const t = setTimeout(() => undefined, 10);\n", "no-restricted-globals"],
      ["export const t = setInterval(() => undefined, 10);\n", "no-restricted-globals"],
      ["export const n = Date.now();\n", "no-restricted-properties"],
      ["export const n = performance.now();\n", "no-restricted-properties"],
      ["export const r = Math.random();\n", "no-restricted-properties"],
      ["export const d = new Date();\n", "no-restricted-syntax"],
      ['import { randomBytes } from "node:crypto";\nexport const b = randomBytes(4);\n', "no-restricted-syntax"],
      ['import { randomUUID as id } from "crypto";\nexport const u = id();\n', "no-restricted-syntax"],
      ['import { setTimeout as sleep } from "node:timers/promises";\nexport const s = sleep(5);\n', "no-restricted-syntax"],
    ];
    for (const [code, rule] of banned) {
      expect(await ruleIds(code, "server/calls/x.ts"), code).toContain(rule);
    }
    // The layer rules still hold beside the clock rule.
    expect(await ruleIds('import { CallqEngine } from "../callq/index.js";\nexport const t = setTimeout(() => CallqEngine, 1);\n', "server/calls/x.ts")).toEqual(
      expect.arrayContaining(["no-restricted-imports", "no-restricted-globals"]),
    );
    // Allowed: a date from a given time, a turn of the event loop, and the clocks themselves.
    expect(await ruleIds("export const d = new Date(0);\nexport const y = new Promise((r) => setImmediate(r));\n", "server/calls/x.ts")).toEqual([]);
    expect(await ruleIds("export const n = Date.now();\nexport const t = setTimeout(() => undefined, 1);\n", "server/clock-control.ts")).toEqual([]);
    expect(await ruleIds("export const n = performance.now();\n", "server/media/frame-clock.ts")).toEqual([]);
  });

  it("keeps the console's api/ and phone/ below its store and views", async () => {
    expect(await ruleIds('import type { AppState } from "../state/store.js";\nexport type S = AppState;\n', "renderer/api/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import { Console } from "../views/Console.js";\nexport const c = Console;\n', "renderer/phone/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import { DialPad } from "../components/DialPad.js";\nexport const d = DialPad;\n', "renderer/api/x.ts")).toContain("no-restricted-imports");
    // The renderer's own restrictions still hold there.
    expect(await ruleIds('import path from "path";\nexport const p = path;\n', "renderer/phone/x.ts")).toContain("no-restricted-imports");
    // Down and sideways is free: phone/ on api/ and the clock, and the store on both.
    expect(await ruleIds('import { errorMessage } from "../api/error-text.js";\nimport type { Clock } from "../clock.js";\nexport const e = errorMessage;\nexport type C = Clock;\n', "renderer/phone/x.ts")).toEqual([]);
    expect(await ruleIds('import type { PhoneLine } from "../phone/phone-line.js";\nexport type P = PhoneLine;\n', "renderer/state/x.ts")).toEqual([]);
  });

  it("keeps contract/ below both sides: the server and the console import it, it imports neither", async () => {
    expect(await ruleIds('import type { Scorecard } from "../server/training/index.js";\nexport type S = Scorecard;\n', "contract/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import type { RunDoc } from "../renderer/api/training.js";\nexport type R = RunDoc;\n', "contract/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n', "contract/x.ts")).toContain("no-restricted-imports");
    expect(await ruleIds('import type { Scorecard } from "../../contract/training.js";\nexport type S = Scorecard;\n', "server/api/x.ts")).toEqual([]);
    expect(await ruleIds('import type { Scorecard } from "../../contract/training.js";\nexport type S = Scorecard;\n', "renderer/api/x.ts")).toEqual([]);
  });
});
