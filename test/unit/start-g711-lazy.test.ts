// G.711's encoder tables (64 KiB each, 30-45 ms of a start's CPU) are built at their first use,
// not when the module is imported: serve mode imports it on every start. Checked in a fresh
// process, since the unit files share one module graph and another file may have encoded already.
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeAlaw, encodeUlaw } from "../../server/media/g711.js";

const root = resolve(import.meta.dirname, "../..");

describe("G.711 encoder tables", () => {
  it("are not built by importing the module, each is built by its first encode", () => {
    const script = `
      const g711 = await import(${JSON.stringify(resolve(root, "server/media/g711.ts"))});
      const seen = [g711.encoderTablesBuilt()];
      g711.encodeUlaw(new Int16Array([0, 1000]));
      seen.push(g711.encoderTablesBuilt());
      g711.encodeUlaw(new Int16Array([5]));
      seen.push(g711.encoderTablesBuilt());
      g711.encodeAlaw(new Int16Array([0, 1000]));
      seen.push(g711.encoderTablesBuilt());
      process.stdout.write(JSON.stringify(seen));
    `;
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual([0, 1, 1, 2]);
  });

  it("encode the same bytes built late as the formulas give", () => {
    // Known points of both laws (ITU-T G.711): silence, the extremes, a mid value.
    expect(Array.from(encodeUlaw(new Int16Array([0, 32767, -32768, 1000])))).toEqual([0xff, 0x80, 0x00, 0xce]);
    expect(Array.from(encodeAlaw(new Int16Array([0, 32767, -32768, 1000])))).toEqual([0xd5, 0xaa, 0x2a, 0xfa]);
  });
});
