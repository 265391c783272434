// The server's start does not load werift (0.3-0.4 s) nor libphonenumber-js (0.1 s): no chain of runtime imports leads from
// serve mode's entry (server/cli.ts) to it. The graph is read from the sources with the TypeScript
// parser: static imports and re-exports that survive compilation (type-only ones are erased);
// dynamic import() and require are where a call loads what it needs, so they end the walk.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

/** The modules one source file loads as it is evaluated: relative paths resolved, packages by name. */
function runtimeImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const erased =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!erased) specifiers.push(statement.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.exportClause;
      const erased = statement.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.every((e) => e.isTypeOnly));
      if (!erased) specifiers.push(statement.moduleSpecifier.text);
    }
  }
  return specifiers.map((s) => (s.startsWith(".") ? resolveSource(file, s) : s));
}

function resolveSource(from: string, specifier: string): string {
  const base = join(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), base]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${relative(root, from)} imports ${specifier}, which is not there`);
}

/** The first chain of runtime imports from `entry` to package `target`, or undefined. */
function pathTo(entry: string, target: string): string[] | undefined {
  const cameFrom = new Map<string, string | null>([[entry, null]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const next of runtimeImports(file)) {
      const isPackage = !next.startsWith("/");
      if (isPackage && next !== target && !next.startsWith(`${target}/`)) continue;
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, file);
      if (isPackage) {
        const chain: string[] = [];
        for (let at: string | null | undefined = next; at; at = cameFrom.get(at)) chain.unshift(at.startsWith("/") ? relative(root, at) : at);
        return chain;
      }
      queue.push(next);
    }
  }
  return undefined;
}

describe("serve mode's import graph", () => {
  it("has no static path from server/cli.ts to werift (legs load it on first use)", () => {
    expect(pathTo(join(root, "server/cli.ts"), "werift")).toBeUndefined();
  });

  it("has no static path from server/cli.ts to libphonenumber-js (loaded on first use or once the server is idle)", () => {
    expect(pathTo(join(root, "server/cli.ts"), "libphonenumber-js")).toBeUndefined();
  });

  it("has no static path from server/cli.ts to @fastify/swagger nor @fastify/swagger-ui (the YAML library they load comes with them at the first /docs request)", () => {
    expect(pathTo(join(root, "server/cli.ts"), "@fastify/swagger")).toBeUndefined();
    expect(pathTo(join(root, "server/cli.ts"), "@fastify/swagger-ui")).toBeUndefined();
  });

  it("has no static path from server/cli.ts to ajv's standalone code generator (the build's, server/http/precompile.ts)", () => {
    expect(pathTo(join(root, "server/cli.ts"), "ajv/dist/standalone")).toBeUndefined();
    // The build's generator does reach it: the check would see the path.
    expect(pathTo(join(root, "server/http/precompile.ts"), "ajv/dist/standalone")).toBeDefined();
  });

  it("has no glob package in the server's bundle: @fastify/static's one listing is server/http/static-files.ts's (the build resolves it there)", () => {
    // @fastify/static requires glob at the top of its module, so the source graph cannot show it:
    // the built bundle is read instead (out/main/server.cjs, npx electron-vite build).
    const bundle = join(root, "out/main/server.cjs");
    expect(existsSync(bundle), "out/main/server.cjs is missing: run npx electron-vite build").toBe(true);
    const code = readFileSync(bundle, "utf8");
    // glob's walker (path-scurry) and glob's own exports are not there; the walk that replaces them is.
    expect(/\bPathScurry\b/.test(code), "path-scurry (glob's walker) is in the bundle").toBe(false);
    expect(/\bglobIterateSync\b/.test(code), "glob's exports are in the bundle").toBe(false);
    expect(/\bfunction staticFileList\(/.test(code), "server/http/static-files.ts is not in the bundle").toBe(true);
    // @fastify/static itself still is (it serves the renderer).
    expect(code.includes("FST_STATIC_INVALID_OPTION"), "@fastify/static is not in the bundle").toBe(true);
  });

  it("finds a package the entry does load statically, and none the worker's entry does not", () => {
    expect(pathTo(join(root, "server/media/worker/thread.ts"), "fastify")).toBeUndefined();
    expect(pathTo(join(root, "server/cli.ts"), "fastify")).toEqual(expect.arrayContaining(["server/cli.ts", "fastify"]));
  });
});
