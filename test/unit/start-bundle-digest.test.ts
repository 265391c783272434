// The bundle's digest from the build (server/code-cache.ts, issue 17): a start keys its code cache
// by the digest the build wrote beside the bundle (`<bundle>.digest`) instead of hashing the
// bundle, while the bundle's size and mtime are the ones the file names; a bundle changed after the
// build (edited, even at the same length; copied) or a digest file that is missing or malformed is
// hashed as before, so it never runs another text's cached code. A save replaces the folder's older
// builds' caches (`server-*.v8`) and leaves its other files alone.
import { mkdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bundleDigest, cacheFileFor, compileBundle, DIGEST_SUFFIX, digestFileText } from "../../server/code-cache.js";

let dir: string;
let cacheDir: string;
let copies: number;
const seen = globalThis as typeof globalThis & { __bundleDigestTest?: unknown[] };

const bundleText = (value: string) => `
const fns = [];
for (let i = 0; i < 20; i++) fns.push(new Function("x", "return x + " + i));
globalThis.__bundleDigestTest.push(${JSON.stringify(value)} + fns[3](0));
`;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-bundle-digest-"));
  cacheDir = join(dir, "cache");
  copies = 0;
  seen.__bundleDigestTest = [];
});

afterEach(async () => {
  delete seen.__bundleDigestTest;
  await rm(dir, { recursive: true, force: true });
});

/** A bundle in a folder of its own (V8 hands back a script it compiled by source and name), with a digest file as the build writes it. */
function built(text: string, name = "server.cjs"): string {
  const copy = join(dir, `install-${copies++}`);
  mkdirSync(copy);
  const path = join(copy, name);
  writeFileSync(path, text);
  const { size, mtimeMs } = statSync(path);
  writeFileSync(`${path}${DIGEST_SUFFIX}`, digestFileText(Buffer.from(text), size, mtimeMs));
  return path;
}

/** A digest file naming this digest, and the bundle's present size and mtime. */
function claimDigest(path: string, sha256: string): void {
  const { size, mtimeMs } = statSync(path);
  writeFileSync(`${path}${DIGEST_SUFFIX}`, `${JSON.stringify({ sha256, size, mtimeMs })}\n`);
}

describe("the bundle's digest from the build", () => {
  it("keys the cache by the build's digest while the bundle is as built, without hashing the bundle", () => {
    const text = bundleText("a");
    const first = compileBundle(built(text), cacheDir);
    first.run();
    expect(first.digestFrom).toBe("build");
    expect(first.save()).toBe(cacheFileFor({ digest: bundleDigest(text) }, cacheDir));
    // A digest file the bundle's text does not have, but about its size and mtime: used as it is
    // (the proof the start did not hash the bundle).
    const path = built(text);
    const claimed = "ab".repeat(32);
    claimDigest(path, claimed);
    const second = compileBundle(path, cacheDir);
    second.run();
    expect(second).toMatchObject({ digestFrom: "build", outcome: "missing" });
    expect(second.save()).toBe(cacheFileFor({ digest: claimed }, cacheDir));
    expect(seen.__bundleDigestTest).toEqual(["a3", "a3"]);
  });

  it("the next start of the same build is compiled from the cache", () => {
    const text = bundleText("b");
    const first = compileBundle(built(text), cacheDir);
    first.run();
    first.save();
    const second = compileBundle(built(text), cacheDir);
    second.run();
    expect(second).toMatchObject({ digestFrom: "build", outcome: "accepted" });
  });

  it("hashes a bundle changed after the build (same length, new mtime): the old text's cache is not used", async () => {
    const old = bundleText("c");
    const path = built(old);
    const first = compileBundle(path, cacheDir);
    first.run();
    const oldCache = first.save();
    // Edited in place at the same length, the digest file left as the build wrote it.
    const edited = bundleText("d");
    expect(edited.length).toBe(old.length);
    const copy = built(old);
    writeFileSync(copy, edited);
    const later = new Date(statSync(copy).mtimeMs + 5000);
    utimesSync(copy, later, later);
    const second = compileBundle(copy, cacheDir);
    second.run();
    expect(second).toMatchObject({ digestFrom: "hashed", outcome: "missing" });
    expect(second.save()).toBe(cacheFileFor(edited, cacheDir));
    expect(seen.__bundleDigestTest).toEqual(["c3", "d3"]);
    expect(await readdir(cacheDir)).not.toContain(oldCache?.slice(cacheDir.length + 1));
  });

  it("hashes a bundle whose digest file is missing, malformed, or about another size", () => {
    const text = bundleText("e");
    const keyed = cacheFileFor(text, cacheDir);
    const missing = join(dir, "lone.cjs");
    writeFileSync(missing, text);
    const damaged: ((path: string) => void)[] = [
      (path) => writeFileSync(`${path}${DIGEST_SUFFIX}`, "{not json"),
      (path) => writeFileSync(`${path}${DIGEST_SUFFIX}`, "null\n"),
      (path) => writeFileSync(`${path}${DIGEST_SUFFIX}`, JSON.stringify({ sha256: "xyz", size: text.length, mtimeMs: statSync(path).mtimeMs })),
      (path) => writeFileSync(`${path}${DIGEST_SUFFIX}`, JSON.stringify({ sha256: "ab".repeat(32), size: text.length + 1, mtimeMs: statSync(path).mtimeMs })),
      (path) => writeFileSync(`${path}${DIGEST_SUFFIX}`, JSON.stringify({ sha256: "ab".repeat(32), size: String(text.length), mtimeMs: statSync(path).mtimeMs })),
    ];
    const paths = [missing, ...damaged.map((damage) => {
      const path = built(text);
      damage(path);
      return path;
    })];
    // The first writes the cache under the text's own hash; each later one is compiled from it
    // (the claimed digests would have missed).
    paths.forEach((path, i) => {
      const compiled = compileBundle(path, cacheDir);
      compiled.run();
      expect(compiled.digestFrom).toBe("hashed");
      expect(compiled.outcome).toBe(i === 0 ? "missing" : "accepted");
      if (i === 0) expect(compiled.save()).toBe(keyed);
    });
    expect(seen.__bundleDigestTest).toHaveLength(paths.length);
  });

  it("a save replaces older builds' caches and leaves the folder's other files", async () => {
    const older = compileBundle(built(bundleText("old")), cacheDir);
    older.run();
    const olderFile = older.save();
    expect(olderFile).toMatch(/\/server-[0-9a-f]{32}\.v8$/);
    writeFileSync(join(cacheDir, "media-worker-0123456789abcdef0123456789abcdef.v8"), "not ours");
    writeFileSync(join(cacheDir, "notes.txt"), "not ours");
    const newer = compileBundle(built(bundleText("new")), cacheDir);
    newer.run();
    const newerFile = newer.save();
    expect(newerFile).toMatch(/\/server-[0-9a-f]{32}\.v8$/);
    expect(newerFile).not.toBe(olderFile);
    expect((await readdir(cacheDir)).sort()).toEqual(["media-worker-0123456789abcdef0123456789abcdef.v8", "notes.txt", newerFile?.slice(cacheDir.length + 1)].sort());
  });
});
