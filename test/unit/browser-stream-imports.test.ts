// The serial-browser project's files drive Chromium against a serve-mode server in a child process:
// their process holds no server. Importing one anyway (directly, or through a helper such as
// test/helpers/api.ts, which imports startServer) loads and transforms the server's whole module
// graph in that process for nothing: ~5 s of CPU a run (session 25, helper slim). This walks the
// import graph of the project's files (vitest.config.ts names them) and of its globalSetup files,
// and refuses any server/ module outside ALLOWED; the second case proves the walk bites.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config.js";
import { DISK, reachable, runtimeSpecifiers, showChain, type GraphSource } from "../helpers/import-graph.js";

const ROOT = join(import.meta.dirname, "../..");
const SERVER = join(ROOT, "server/");

/**
 * server/ modules the serial-browser files may load, each with why: a small leaf, no server.
 * (Session 26: the files load none.)
 */
const ALLOWED: readonly string[] = [];

const isServer = (path: string) => path.startsWith(SERVER);

/** The serial-browser project's test files and globalSetup files, as vitest.config.ts lists them. */
function serialBrowserFiles(): string[] {
  const project = (config.test?.projects ?? []).find((p) => typeof p === "object" && "test" in p && p.test?.name === "serial-browser");
  if (typeof project !== "object" || !("test" in project)) throw new Error("vitest.config.ts has no serial-browser project");
  const include = project.test?.include ?? [];
  const setup = project.test?.globalSetup ?? [];
  const files = [...include, ...(typeof setup === "string" ? [setup] : setup)];
  // Paths, not globs: a glob here would be walked as no file at all.
  for (const file of files) if (/[*?{[]/.test(file)) throw new Error(`serial-browser names ${file}: this check walks named files only`);
  return files.map((f) => join(ROOT, f));
}

/** The server/ modules `entries` load that ALLOWED does not list, each with the chain that loads it. */
function serverLoads(entries: string[], source: GraphSource = DISK): string[] {
  const reached = reachable(entries, source, isServer);
  return [...reached]
    .filter(([file]) => isServer(file) && !ALLOWED.includes(file.slice(ROOT.length + 1)))
    .map(([, chain]) => showChain(ROOT, chain));
}

describe("the browser stream's files load no server", () => {
  it("serial-browser's files and its globalSetup import nothing under server/, directly or through helpers", () => {
    const files = serialBrowserFiles();
    expect(files.length).toBeGreaterThan(20);
    expect(serverLoads(files)).toEqual([]);
  });

  it("bites: a file importing test/helpers/api.ts, or a server module, is caught; a type-only import is not", () => {
    const fake = join(ROOT, "test/e2e/fake-browser.test.ts");
    const withFake = (text: string): GraphSource => ({
      read: (path) => (path === fake ? text : DISK.read(path)),
      exists: (path) => path === fake || DISK.exists(path),
    });
    const throughHelper = serverLoads([fake], withFake('import { startApi } from "../helpers/api.js";\nexport const s = startApi;\n'));
    expect(throughHelper).toContain("test/e2e/fake-browser.test.ts -> test/helpers/api.ts -> server/index.ts");
    expect(serverLoads([fake], withFake('export { DEMO_ACCOUNT_NAME } from "../../server/demo.js";\n'))).toEqual([
      "test/e2e/fake-browser.test.ts -> server/demo.ts",
    ]);
    expect(serverLoads([fake], withFake('const m = await import("../../server/clock.js");\nexport const c = m;\n'))).toEqual([
      "test/e2e/fake-browser.test.ts -> server/clock.ts",
    ]);
    // Erased before the code runs: these load nothing.
    expect(
      serverLoads(
        [fake],
        withFake(
          'import type { TestApi } from "../helpers/api.js";\nimport { type Channel } from "../../server/calls/index.js";\nexport type { Clock } from "../../server/clock.js";\nexport type T = [TestApi, Channel];\n',
        ),
      ),
    ).toEqual([]);
  });

  it("reads each kind of import", () => {
    const text = [
      'import a from "./a.js";',
      'import * as b from "./b.js";',
      'import { c, type C } from "./c.js";',
      'import "./d.js";',
      'import type { E } from "./e.js";',
      'import { type F } from "./f.js";',
      'export { g } from "./g.js";',
      'export * from "./h.js";',
      'export type { I } from "./i.js";',
      'const j = () => import("./j.js");',
    ].join("\n");
    expect(runtimeSpecifiers("x.ts", text)).toEqual(["./a.js", "./b.js", "./c.js", "./d.js", "./g.js", "./h.js", "./j.js"]);
  });
});
