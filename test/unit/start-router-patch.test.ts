// The server's bundle patches find-my-way (Fastify's router, electron.vite.config.ts SERVER_PATCHES):
// a static route node's prefix test is `path.startsWith(prefix, i)` instead of code compiled with
// `new Function` per node as routes register (issue 17, "Start"). Here the installed file still has
// the patched text exactly once (an upgrade fails this, as it fails the build), and the patched
// compilePrefixMatch answers as the original does for every prefix, path and index tried. The same
// for the params object a route's handler storage makes (a closure instead of `new Function`).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { runInNewContext, runInThisContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { SERVER_PATCHES } from "../../electron.vite.config.js";

const require = createRequire(import.meta.url);
const nodeFile = require.resolve("find-my-way/lib/node.js");
const storageFile = require.resolve("find-my-way/lib/handler-storage.js");

type CreateParams = (p0?: string, p1?: string, p2?: string, p3?: string, extra?: string[]) => Record<string, string | undefined>;

/** handler-storage.js run as the CommonJS module it is, from this text; its params-object maker for these names. */
function paramsMaker(source: string, names: string[]): CreateParams {
  const module = { exports: {} as unknown };
  const wrapper = runInThisContext(`(function (exports, require, module) {${source}\n})`, { filename: `${storageFile}-${Math.random()}` }) as (e: unknown, r: NodeJS.Require, m: { exports: unknown }) => void;
  wrapper(module.exports, createRequire(storageFile), module);
  const HandlerStorage = module.exports as new () => { _compileCreateParamsObject(params: string[]): CreateParams };
  return new HandlerStorage()._compileCreateParamsObject(names);
}

interface Storage {
  handlers: unknown[];
  addHandler(constrainer: unknown, route: { params: string[]; opts: { constraints?: Record<string, unknown> }; handler: () => void; store: { n: number } }): void;
  getMatchingHandler(derived: Record<string, unknown> | undefined): { store: { n: number } } | null;
  _getHandlerMatchingConstraints(derived: Record<string, unknown>): unknown;
}

/** A handler storage from handler-storage.js run as the CommonJS module it is, from this text. */
function storageFrom(source: string): Storage {
  const module = { exports: {} as unknown };
  const wrapper = runInThisContext(`(function (exports, require, module) {${source}\n})`, { filename: `${storageFile}-${Math.random()}` }) as (e: unknown, r: NodeJS.Require, m: { exports: unknown }) => void;
  wrapper(module.exports, createRequire(storageFile), module);
  return new (module.exports as new () => Storage)();
}

type PrefixMatch = (prefix: string) => (path: string, i: number) => boolean;

/** compilePrefixMatch as the file defines it, with the constants it reads. */
function prefixMatcher(source: string): PrefixMatch {
  const start = source.indexOf("function compilePrefixMatch");
  const end = source.indexOf("\n}\n", start) + 3;
  const head = source.slice(0, start);
  const constants = ["LONG_PREFIX_MIN_LENGTH", "matchSingleCharPrefix"].map((name) => {
    const found = new RegExp(`(const ${name} = [^\\n]+|function ${name} \\(\\) \\{[^}]*\\})`).exec(head);
    if (!found?.[1]) throw new Error(`${name} not found in find-my-way/lib/node.js`);
    return found[1];
  });
  return runInNewContext(`${constants.join("\n")}\n${source.slice(start, end)}\ncompilePrefixMatch`) as PrefixMatch;
}

describe("the router patch", () => {
  const original = readFileSync(nodeFile, "utf8");
  const patch = SERVER_PATCHES.find((p) => nodeFile.replaceAll("\\", "/").endsWith(p.file));

  it("finds its text exactly once in the installed find-my-way", () => {
    expect(patch).toBeDefined();
    const from = patch?.from ?? "";
    expect(original.split(from)).toHaveLength(2);
  });

  it("tests a prefix as the compiled code did", () => {
    const patched = original.replace(patch?.from ?? "", patch?.to ?? "");
    const before = prefixMatcher(original);
    const after = prefixMatcher(patched);
    expect(after("/v2/accounts/").toString()).toContain("startsWith");
    const prefixes = ["/", "/v2", "v2/accounts/", "/accounts", "calls", "/v2/accounts/0123456789abcdef", "é/ü", "x"];
    const paths = ["/v2/accounts/abc/calls", "/v2", "/v", "", "/accounts/x", "calls/", "/v2/accounts/0123456789abcdef/users", "aé/ü", "xx"];
    let compared = 0;
    for (const prefix of prefixes) {
      const a = before(prefix);
      const b = after(prefix);
      for (const path of paths) {
        for (let i = 0; i <= path.length; i++) {
          // The router asks only where the prefix's first character already matched.
          if (path[i] !== prefix[0]) continue;
          expect(b(path, i), `${prefix} in ${path} at ${i}`).toBe(a(path, i));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(15);
  });

  it("makes a route's params object as the compiled code did", () => {
    const source = readFileSync(storageFile, "utf8");
    const storagePatch = SERVER_PATCHES.find((p) => storageFile.replaceAll("\\", "/").endsWith(p.file));
    expect(source.split(storagePatch?.from ?? "\0")).toHaveLength(2);
    const patched = source.replace(storagePatch?.from ?? "", storagePatch?.to ?? "");
    for (const names of [[], ["id"], ["account_id", "id"], ["a", "b", "c", "d"], ["a", "b", "c", "d", "e", "f"], ["x", "x"], ["__proto__", "constructor"]]) {
      const before = paramsMaker(source, names);
      const after = paramsMaker(patched, names);
      expect(after.toString()).not.toContain("params[");
      for (const args of [[], ["1"], ["1", "2", "3", "4", ["5", "6"]], ["1", undefined, "3"]] as Parameters<CreateParams>[]) {
        // Too few values for the names throws in both (extraParams missing): compared as outcomes.
        const outcome = (make: CreateParams) => {
          try {
            const made = make(...args);
            return { proto: Object.getPrototypeOf(made) as unknown, entries: Object.entries(made) };
          } catch (err) {
            return { threw: (err as Error).constructor.name };
          }
        };
        expect(outcome(after), `${names.join(",")} with ${JSON.stringify(args)}`).toEqual(outcome(before));
      }
    }
  });

  it("matches a route node's constraints as the compiled code did", () => {
    const source = readFileSync(storageFile, "utf8");
    const matcherPatch = SERVER_PATCHES.find((p) => storageFile.replaceAll("\\", "/").endsWith(p.file) && p.from.includes("_getHandlerMatchingConstraints"));
    expect(source.split(matcherPatch?.from ?? "\0")).toHaveLength(2);
    const patched = source.replace(matcherPatch?.from ?? "", matcherPatch?.to ?? "");
    const Constrainer = require("find-my-way/lib/constrainer.js") as new (custom?: Record<string, unknown>) => unknown;
    const mapStore = () => {
      const values = new Map<unknown, number>();
      return { get: (k: unknown) => values.get(k) ?? null, set: (k: unknown, v: number) => values.set(k, v) };
    };
    // A custom strategy that must match when derived, and one that need not.
    const custom = {
      tier: { name: "tier", storage: mapStore, deriveConstraint: () => undefined, mustMatchWhenDerived: false },
      zone: { name: "zone", storage: mapStore, deriveConstraint: () => undefined, mustMatchWhenDerived: true },
    };
    const nodes: Record<string, unknown>[][] = [
      [{}],
      [{ version: "1.2.0" }, {}, { version: "2.0.0" }],
      [{ host: "a.example" }, { host: "b.example", version: "1.0.0" }, {}],
      [{ tier: "gold" }, {}, { tier: "silver", host: "a.example" }],
      [{ zone: "eu" }, { zone: "us", version: "3.1.4" }],
      [{ version: "1.0.0" }, { host: "a.example" }, { tier: "gold", zone: "eu" }, {}],
    ];
    const asked: Record<string, unknown>[] = [
      {},
      { version: "1.x" },
      { version: "2.0.0" },
      { version: "9.9.9" },
      { host: "a.example" },
      { host: "b.example", version: "1.0.0" },
      { host: "c.example" },
      { tier: "gold" },
      { tier: "silver", host: "a.example" },
      { zone: "eu" },
      { zone: "us", version: "3.1.4" },
      { zone: "eu", tier: "gold" },
      { zone: "nowhere" },
    ];
    let compared = 0;
    for (const constraintSets of nodes) {
      const before = storageFrom(source);
      const after = storageFrom(patched);
      const constrainer = new Constrainer(custom);
      // Each handler added one at a time: the matcher is made again after each, as the router does.
      constraintSets.forEach((constraints, n) => {
        for (const storage of [before, after]) storage.addHandler(constrainer, { params: [], opts: { constraints }, handler: () => undefined, store: { n } });
        for (const derived of asked) {
          const found = (s: Storage) => s._getHandlerMatchingConstraints(derived) as { store: { n: number } } | null;
          expect(found(after)?.store.n ?? null, `${JSON.stringify(constraintSets.slice(0, n + 1))} asked ${JSON.stringify(derived)}`).toBe(found(before)?.store.n ?? null);
          compared++;
        }
      });
      expect(after._getHandlerMatchingConstraints.toString()).not.toContain("mask =");
    }
    expect(compared).toBeGreaterThan(100);
  });
});
