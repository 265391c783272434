// The server's bundle answers @fastify/static's glob("**/**") with server/http/static-files.ts
// rather than the glob package (not evaluated at a start): the same list on the same trees, so
// @fastify/static makes the same routes.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { glob } from "glob";
import { afterAll, describe, expect, it } from "vitest";
import { staticFileList } from "../../server/http/static-files.js";

const root = resolve(import.meta.dirname, "../..");
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** @fastify/static's call, word for word (node_modules/@fastify/static/index.js). */
const staticOptions = (cwd: string, dot?: boolean) => ({ cwd, absolute: false, follow: true, nodir: true, dot, ignore: undefined });

async function bothLists(cwd: string, dot?: boolean): Promise<{ ours: string[]; globs: string[] }> {
  return { ours: staticFileList("**/**", staticOptions(cwd, dot)).sort(), globs: (await glob("**/**", staticOptions(cwd, dot))).sort() };
}

function tree(): string {
  const dir = mkdtempSync(join(tmpdir(), "static-files-"));
  made.push(dir);
  const file = (path: string) => {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), path);
  };
  for (const path of ["index.html", "index.html.br", "index.html.gz", "assets/app-1a2b.js", "assets/app-1a2b.js.gz", "deep/er/still/x.css", ".hidden", ".dotdir/inside.txt", "assets/.env", "a b/c%20d.txt", "other/index.html"]) file(path);
  mkdirSync(join(dir, "empty"));
  symlinkSync(join(dir, "assets/app-1a2b.js"), join(dir, "link-to-file.js"));
  symlinkSync(join(dir, "deep"), join(dir, "link-to-dir"));
  symlinkSync(join(dir, "nowhere"), join(dir, "broken-link"));
  return dir;
}

describe("static-files: @fastify/static's file list without glob", () => {
  it("lists the built renderer folder as glob does", async () => {
    const renderer = join(root, "out/renderer");
    const { ours, globs } = await bothLists(renderer);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours).toEqual(globs);
  });

  it("lists nested folders, dotfiles left out or in, and symlinks to files and folders as glob does", async () => {
    const dir = tree();
    for (const dot of [undefined, false, true]) {
      const { ours, globs } = await bothLists(dir, dot);
      expect(ours).toEqual(globs);
      expect(ours).toContain(join("link-to-dir", "er", "still", "x.css"));
      expect(ours.includes(".hidden")).toBe(dot === true);
    }
  });

  it("ends at a link back to a folder above it (glob's own walk of one runs for a minute)", () => {
    const dir = tree();
    symlinkSync(dir, join(dir, "deep/er/loop"));
    const ours = staticFileList("**/**", staticOptions(dir));
    expect(ours).toContain(join("deep", "er", "still", "x.css"));
    expect(ours.filter((p) => p.includes("loop"))).toEqual([]);
  });

  it("refuses a call @fastify/static does not make", () => {
    expect(() => staticFileList("**/*.js", staticOptions(root))).toThrow(/only @fastify\/static's own/);
    expect(() => staticFileList("**/**", { ...staticOptions(root), ignore: ["x"] })).toThrow(/only @fastify\/static's own/);
  });
});
