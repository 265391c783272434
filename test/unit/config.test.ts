import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { ConfigError, USAGE, parseArgs, wantsHelp, type ServerConfig } from "../../server/config.js";

const defaults: ServerConfig = {
  host: "127.0.0.1",
  port: 8000,
  portExplicit: false,
  dataDir: "/tmp/d",
  assetsDir: "/tmp/a",
  rendererDir: null,
  demo: true,
  allowOrigins: [],
  logLevel: "info",
};

describe("serve-mode flags", () => {
  it("keeps the loopback default and port 8000 when nothing is given", () => {
    expect(parseArgs([], defaults)).toMatchObject({ host: "127.0.0.1", port: 8000, portExplicit: false, demo: true });
  });

  it("reads every flag, with = or a separate value", () => {
    const c = parseArgs(
      ["--port", "0", "--data-dir=/x", "--no-demo", "--host", "0.0.0.0", "--allow-origin", "http://a.example:5173/", "--log-level", "warn"],
      defaults,
    );
    expect(c).toMatchObject({ port: 0, portExplicit: true, dataDir: "/x", demo: false, host: "0.0.0.0", logLevel: "warn" });
    expect(c.allowOrigins).toEqual(["http://a.example:5173"]);
  });

  it("refuses bad values and unknown flags with a clear error", () => {
    expect(() => parseArgs(["--port", "http"], defaults)).toThrow(ConfigError);
    expect(() => parseArgs(["--port", "70000"], defaults)).toThrow(/0\.\.65535/);
    expect(() => parseArgs(["--data-dir"], defaults)).toThrow(/needs a value/);
    expect(() => parseArgs(["--allow-origin", "not a url"], defaults)).toThrow(/origin/);
    expect(() => parseArgs(["--frobnicate"], defaults)).toThrow(/unknown option/);
  });

  it("reads the device grace in seconds, fractions allowed, and refuses anything else", () => {
    expect(parseArgs(["--device-grace", "0.5"], defaults).deviceGraceMs).toBe(500);
    expect(parseArgs(["--device-grace=3"], defaults).deviceGraceMs).toBe(3000);
    expect(parseArgs([], defaults).deviceGraceMs).toBeUndefined();
    expect(() => parseArgs(["--device-grace", "-1"], defaults)).toThrow(/--device-grace must be a number of seconds/);
    expect(() => parseArgs(["--device-grace", "soon"], defaults)).toThrow(ConfigError);
  });

  it("asks for help with --help or -h, wherever it stands", () => {
    expect(wantsHelp(["--help"])).toBe(true);
    expect(wantsHelp(["--port", "0", "-h"])).toBe(true);
    expect(wantsHelp(["--port", "0"])).toBe(false);
  });

  it("the usage text names every flag parseArgs reads", () => {
    const source = readFileSync(new URL("../../server/config.ts", import.meta.url), "utf8");
    const flags = [...source.matchAll(/case "(--[a-z-]+)":/g)].map((m) => m[1] ?? "");
    expect(flags.length).toBeGreaterThan(5);
    for (const flag of flags) expect(USAGE).toContain(flag);
  });
});
