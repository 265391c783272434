// The code cache serve mode's entry compiles its bundle with (server/code-cache.ts): a first start
// finds none and writes one; the next is compiled from it; a damaged, truncated or foreign file,
// or data V8 refuses, is a normal compile (the bundle runs all the same) and is written afresh;
// another bundle's text never uses this one's cache, and writing a new cache drops the old ones.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cacheFileFor, codeCacheDir, compileBundle } from "../../server/code-cache.js";

let dir: string;
let text: string;
let cacheDir: string;
let copies: number;
const seen = globalThis as typeof globalThis & { __codeCacheTest?: unknown[] };

// A CommonJS bundle in miniature: its own require (a relative file), __dirname, module.exports,
// and enough functions for V8 to have code worth caching.
const BUNDLE = `
const helper = require("./helper.cjs");
const fns = [];
for (let i = 0; i < 50; i++) fns.push(new Function("x", "return x + " + i));
function sum(n) { let t = 0; for (let i = 0; i < n; i++) t += fns[i % fns.length](i); return t; }
module.exports = { sum };
globalThis.__codeCacheTest.push({ dirname: __dirname, filename: __filename, helper: helper.name, sum: sum(100), self: this === exports });
`;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-code-cache-"));
  cacheDir = join(dir, "cache");
  text = BUNDLE;
  copies = 0;
  seen.__codeCacheTest = [];
});

afterEach(async () => {
  delete seen.__codeCacheTest;
  await rm(dir, { recursive: true, force: true });
});

/**
 * The bundle, copied to a folder of its own: V8 keeps the scripts an isolate compiled by source
 * and file name and would hand the same script back without looking at any cached data, so
 * each start in this one process compiles a file of another name (the cache's key is the text).
 */
function bundleCopy(): string {
  const copy = join(dir, `install-${copies++}`);
  mkdirSync(copy);
  writeFileSync(join(copy, "server.cjs"), text);
  writeFileSync(join(copy, "helper.cjs"), 'module.exports = { name: "helper" };');
  return join(copy, "server.cjs");
}

function runOnce(): { outcome: string; saved: string | null } {
  const compiled = compileBundle(bundleCopy(), cacheDir);
  compiled.run();
  return { outcome: compiled.outcome, saved: compiled.save() };
}

function expectRan(times: number): void {
  expect(seen.__codeCacheTest).toHaveLength(times);
  for (const run of seen.__codeCacheTest ?? []) {
    const { filename } = run as { filename: string };
    expect(run).toEqual({ dirname: dirname(filename), filename: expect.stringMatching(/install-\d+\/server\.cjs$/), helper: "helper", sum: 7400, self: true });
  }
}

describe("the bundle's code cache", () => {
  it("is missing on a first start and written then; the next start is compiled from it and writes nothing", async () => {
    const first = runOnce();
    expect(first.outcome).toBe("missing");
    expect(first.saved).toBe(cacheFileFor(BUNDLE, cacheDir));
    const written = await readFile(first.saved ?? "");
    // The digest of the payload, then V8's data.
    expect(createHash("sha256").update(written.subarray(32)).digest().equals(written.subarray(0, 32))).toBe(true);
    const second = runOnce();
    expect(second).toEqual({ outcome: "accepted", saved: null });
    expect(await readFile(first.saved ?? "")).toEqual(written);
    expectRan(2);
  });

  it("compiles normally from a damaged file (a byte changed, or cut short) and writes it afresh", async () => {
    const file = runOnce().saved ?? "";
    const good = await readFile(file);
    const damaged = Buffer.from(good);
    damaged[damaged.length - 100] = (damaged[damaged.length - 100] ?? 0) ^ 0xff;
    await writeFile(file, damaged);
    expect(runOnce()).toEqual({ outcome: "damaged", saved: file });
    expect(runOnce().outcome).toBe("accepted");
    for (const cut of [good.subarray(0, 20), good.subarray(0, 32), good.subarray(0, good.length >> 1), Buffer.alloc(0)]) {
      await writeFile(file, cut);
      expect(runOnce()).toEqual({ outcome: "damaged", saved: file });
      expect(runOnce().outcome).toBe("accepted");
    }
    expectRan(1 + 2 + 4 * 2);
  });

  it("compiles normally when V8 refuses the data (well formed for us, not V8's), and writes it afresh", async () => {
    const file = cacheFileFor(BUNDLE, cacheDir);
    runOnce();
    const garbage = Buffer.alloc(4096, 7);
    await writeFile(file, Buffer.concat([createHash("sha256").update(garbage).digest(), garbage]));
    expect(runOnce()).toEqual({ outcome: "rejected", saved: file });
    expect(runOnce().outcome).toBe("accepted");
    expectRan(3);
  });

  it("keys the cache by the bundle's text: a changed bundle misses, and its cache replaces the old one", async () => {
    const old = runOnce().saved ?? "";
    // Same length, other text: V8's own check (the source's length) would take the old data.
    text = BUNDLE.replace("return x + ", "return x - ");
    const changed = runOnce();
    expect(changed.outcome).toBe("missing");
    expect(changed.saved).not.toBe(old);
    expect(await readdir(cacheDir)).toEqual([changed.saved?.slice(cacheDir.length + 1)]);
    expect(runOnce().outcome).toBe("accepted");
  });

  it("has both of two starts that found no cache write it whole: the later write wins, the file stays good", async () => {
    const a = compileBundle(bundleCopy(), cacheDir);
    const b = compileBundle(bundleCopy(), cacheDir);
    a.run();
    b.run();
    expect([a.outcome, b.outcome]).toEqual(["missing", "missing"]);
    expect(a.save()).toBe(b.save());
    expect(await readdir(cacheDir)).toHaveLength(1);
    expect(runOnce().outcome).toBe("accepted");
    expectRan(3);
  });

  it("runs without a cache when it is off, and gives up writing quietly where it cannot", async () => {
    const off = compileBundle(bundleCopy(), null);
    off.run();
    expect(off.outcome).toBe("off");
    expect(off.save()).toBeNull();
    // A file where the folder should be: the write fails, the start goes on.
    await writeFile(cacheDir, "not a folder");
    const blocked = compileBundle(bundleCopy(), cacheDir);
    blocked.run();
    expect(blocked.outcome).toBe("missing");
    expect(blocked.save()).toBeNull();
    expectRan(2);
  });

  it("lives in $SWITCHBOARD_CODE_CACHE, else the user's cache folder; 'off' turns it off", () => {
    expect(codeCacheDir({ SWITCHBOARD_CODE_CACHE: "/x/y" })).toBe("/x/y");
    expect(codeCacheDir({ SWITCHBOARD_CODE_CACHE: "off" })).toBeNull();
    expect(codeCacheDir({ XDG_CACHE_HOME: "/c" })).toBe(join("/c", "Switchboard", "code-cache"));
  });
});
