// The built bundles are ASCII only (electron.vite.config.ts: rolldown's charset "ascii", JSDoc
// comments dropped, what is left in licence comments escaped), so a start reads each into a
// one-byte string (Latin-1) instead of decoding UTF-8 into a two-byte one; a bundle that is not
// ASCII (an older build, a hand edit) is still read as UTF-8 and runs the same.
import { isAscii } from "node:buffer";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compileBundle } from "../../server/code-cache.js";
import { SERVER_ENTRY } from "../helpers/serve.js";

const seen = globalThis as typeof globalThis & { __asciiTest?: string[] };
let dir: string | undefined;

afterEach(async () => {
  delete seen.__asciiTest;
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the bundles' text", () => {
  it("is ASCII only in the build's server.cjs", () => {
    for (const name of ["server.cjs"]) {
      const bytes = readFileSync(join(dirname(SERVER_ENTRY), name));
      expect(bytes.length).toBeGreaterThan(100_000);
      expect(isAscii(bytes), name).toBe(true);
    }
  });

  it("runs a bundle the same whether it is ASCII (escaped) or UTF-8", async () => {
    dir = await mkdtemp(join(tmpdir(), "sb-bundle-ascii-"));
    seen.__asciiTest = [];
    const texts = ['globalThis.__asciiTest.push("J\\u00e4rvi \\u2665 \\ud83d\\ude00");', 'globalThis.__asciiTest.push("Järvi ♥ 😀");'];
    texts.forEach((text, i) => {
      mkdirSync(join(dir ?? "", `b${i}`));
      const path = join(dir ?? "", `b${i}`, "server.cjs");
      writeFileSync(path, text);
      compileBundle(path, null).run();
    });
    expect(seen.__asciiTest).toEqual(["Järvi ♥ 😀", "Järvi ♥ 😀"]);
  });
});
