// The server's V8 flags (server/v8-flags.ts: no memory reducer, whose idle-time compaction paused
// the main thread 70-90 ms at 50 callers + 5 trainees and cost every leg its frames) reach V8 at
// the process's start, which only its launchers can do: package.json's serve script, npm start's
// serve mode (scripts/start.mjs), Electron's fork of the server (main/index.ts), and server/boot.ts
// for the heaps made after it (the media workers'). Each is read here as the code that runs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_V8_FLAGS } from "../../server/v8-flags.js";

const root = join(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

describe("the server's V8 flags", () => {
  it("are one flag V8 knows, as one command-line word", () => {
    expect(SERVER_V8_FLAGS).toMatch(/^--[a-z-]+$/);
  });

  it("are passed by npm run serve, before the server's entry", () => {
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.serve).toBe(`node ${SERVER_V8_FLAGS} out/main/server.js`);
  });

  it("are passed by npm start's serve mode, before the server's entry", () => {
    expect(read("scripts/start.mjs")).toContain(`spawn(process.execPath, ["${SERVER_V8_FLAGS}", "out/main/server.js", ...args]`);
  });

  it("are passed by Electron's fork of the server", () => {
    const source = read("main/index.ts");
    const fork = source.slice(source.indexOf("utilityProcess.fork("));
    expect(fork.slice(0, fork.indexOf("});"))).toContain(`execArgv: ["${SERVER_V8_FLAGS}"]`);
  });

  it("are set by the built entry before it starts a media worker or the server", () => {
    const boot = read("out/main/server.js");
    expect(boot, "the flag in out/main/server.js (npx electron-vite build)").toContain(`"${SERVER_V8_FLAGS}"`);
    const set = boot.indexOf("setFlagsFromString(");
    expect(set).toBeGreaterThan(-1);
    expect(set).toBeLessThan(boot.indexOf("startEarlyMediaWorker(workerScript)"));
    expect(set).toBeLessThan(boot.indexOf("bundle.run()"));
  });
});
