// The built server is one file (electron.vite.config.ts, serverBundle): out/main/server.js is the
// small entry that compiles out/main/server.cjs, which is strict and carries the server's
// dependencies itself, requiring from node_modules only what is loaded on first use (werift,
// libphonenumber-js, the docs page's plug-ins); the media worker's file still carries werift. The
// router in it tests a route node's prefix without compiling code per node (SERVER_PATCHES).
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_ENTRY } from "../helpers/serve.js";

const BUNDLED = ["fastify", "@fastify/static", "@fastify/websocket", "ws", "ajv", "ajv-formats", "pino", "lowdb", "secure-json-parse", "find-my-way", "avvio"];
// Loaded from node_modules on purpose; ws's two optional native helpers are tried and may be absent.
const LEFT_OUT = ["@fastify/swagger", "@fastify/swagger-ui", "bufferutil", "utf-8-validate"];

describe("the built server's files", () => {
  it("has server.js compile server.cjs, a strict bundle holding the server's dependencies", async () => {
    const bundlePath = join(dirname(SERVER_ENTRY), "server.cjs");
    expect(existsSync(bundlePath), "run npm run build first").toBe(true);
    const entry = await readFile(SERVER_ENTRY, "utf8");
    expect(entry).toContain("server.cjs");
    expect(entry.length).toBeLessThan(20_000);
    const bundle = await readFile(bundlePath, "utf8");
    expect(bundle.startsWith('"use strict";')).toBe(true);
    const required = new Set([...bundle.matchAll(/(?<![\w$.`])require\("([^"]+)"\)/g)].map((m) => m[1] ?? ""));
    for (const name of BUNDLED) expect(required.has(name), `${name} is required from node_modules`).toBe(false);
    const unexpected = [...required].filter((name) => !name.startsWith("node:") && !builtinModules.includes(name) && !LEFT_OUT.includes(name));
    expect(unexpected).toEqual([]);
    // Loaded through createRequire on first use (server/media/werift.ts, server/phone-numbers.ts).
    expect(bundle).toContain('("werift")');
    expect(bundle).toContain('("libphonenumber-js")');
  });

  it("has the router test static prefixes and make params objects without an eval per route node", async () => {
    const bundle = await readFile(join(dirname(SERVER_ENTRY), "server.cjs"), "utf8");
    expect(bundle).toContain("path.startsWith(prefix, i)");
    expect(bundle).not.toMatch(/new Function\("path", "i"/);
    // Nor per route for its params object.
    expect(bundle).not.toMatch(/new Function\("NullObject", fnBody/);
  });
});
