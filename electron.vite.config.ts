import { execFile } from "node:child_process";
import { readFile, stat, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib";
import { defineConfig } from "electron-vite";
import react from "@vitejs/plugin-react";
import { rolldown } from "rolldown";
import type { Plugin } from "vite";
import { DIGEST_SUFFIX, digestFileText } from "./server/code-cache.js";

/**
 * Writes a .br and a .gz beside each text file of the renderer's build, once, so the server sends
 * them compressed without compressing on every request (@fastify/static's preCompressed).
 */
function precompress(): Plugin {
  return {
    name: "switchboard-precompress",
    apply: "build",
    async writeBundle(options, bundle) {
      const dir = options.dir ?? "";
      for (const name of Object.keys(bundle).filter((n) => /\.(js|css|html|svg)$/.test(n))) {
        const path = join(dir, name);
        const data = await readFile(path);
        await writeFile(`${path}.gz`, gzipSync(data, { level: 9 }));
        await writeFile(`${path}.br`, brotliCompressSync(data, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: data.length } }));
      }
    },
  };
}

/**
 * Packages the server bundle leaves to node_modules: werift and libphonenumber-js are loaded on
 * first use through createRequire (a media worker's file carries its own werift), and the docs
 * page's two plug-ins at the first /docs request (swagger-ui serves files kept beside its code).
 * Everything else the server imports is in the one file.
 */
const SERVER_EXTERNAL = ["werift", "libphonenumber-js", "@fastify/swagger", "@fastify/swagger-ui", "electron"];

/**
 * Source patches the server's bundle applies to its dependencies, each to one file, each required
 * to match exactly once (a dependency upgraded under it fails the build rather than losing it).
 * - find-my-way (Fastify's router) compiled each static node's prefix test with `new Function`
 *   as routes registered: one eval per node, a few hundred per start, and code a V8 code cache
 *   never holds. `String.prototype.startsWith` at the same index is the same test (true when the
 *   path has the prefix at `i`; the router has matched the first character before asking).
 * - find-my-way's handler storage compiled, per route, a function making the params object
 *   (`new Function` again): a closure over the route's parameter names fills the same object
 *   in the same order.
 * - The same storage compiled, per route again, its constraint matcher (a `new Function` of the
 *   node's constraints, their masks and the must-match strategies, 628 a start): a closure over
 *   the same values, computed at the same moment, walks the constraints in the same order and
 *   answers the same handler (or null).
 */
export const SERVER_PATCHES: readonly { file: string; from: string; to: string }[] = [
  {
    file: "/node_modules/find-my-way/lib/node.js",
    from: "return new Function('path', 'i', `'use strict'\\nreturn ${lines.join(' && ')}`) // eslint-disable-line",
    to: "return function matchPrefix (path, i) { return path.startsWith(prefix, i) } // switchboard: no eval per route node",
  },
  {
    file: "/node_modules/find-my-way/lib/handler-storage.js",
    from: "return new Function('NullObject', fnBody.join('\\n'))(NullObject)  // eslint-disable-line",
    to:
      "const names = params.slice(); return function _createParamsObject (param0, param1, param2, param3, extraParams) { " +
      "const out = new NullObject(); for (let i = 0; i < names.length; i++) out[names[i]] = i === 0 ? param0 : i === 1 ? param1 : i === 2 ? param2 : i === 3 ? param3 : extraParams[i - 4]; " +
      "return out } // switchboard: no eval per route",
  },
  {
    file: "/node_modules/find-my-way/lib/handler-storage.js",
    from: "this._getHandlerMatchingConstraints = new Function('derivedConstraints', lines.join('\\n')) // eslint-disable-line",
    to:
      "const names = this.constraints.slice(); const masks = names.map((c) => this._constrainedIndexBitmask(c)); " +
      "const mustMatch = names.map((c) => Boolean(constrainer.strategies[c].mustMatchWhenDerived)); " +
      "const excluded = Object.keys(constrainer.strategies).filter((c) => constrainer.strategies[c].mustMatchWhenDerived && !names.includes(c)); " +
      "const all = (1 << this.handlers.length) - 1; " +
      "this._getHandlerMatchingConstraints = function _getHandlerMatchingConstraints (derivedConstraints) { let candidates = all; " +
      "for (let i = 0; i < names.length; i++) { const value = derivedConstraints[names[i]]; " +
      "if (value === undefined) candidates &= masks[i]; else { const matches = this.constrainedHandlerStores[names[i]].get(value) || 0; candidates &= mustMatch[i] ? matches : (matches | masks[i]) } " +
      "if (candidates === 0) return null } " +
      "for (let i = 0; i < excluded.length; i++) if (derivedConstraints[excluded[i]] !== undefined) return null; " +
      "return this.handlers[31 - Math.clz32(candidates)] } // switchboard: no eval per route",
  },
];

/** Applies SERVER_PATCHES while the server's bundle is made. */
function serverPatches(): { name: string; transform(code: string, id: string): string | null } {
  return { ...patcher(SERVER_PATCHES), name: "switchboard-server-patches" };
}

function patcher(list: readonly { file: string; from: string; to: string }[]): { name: string; transform(code: string, id: string): string | null } {
  return {
    name: "switchboard-patches",
    transform(code, id) {
      const patches = list.filter((p) => id.replaceAll("\\", "/").endsWith(p.file));
      if (patches.length === 0) return null;
      let out = code;
      for (const { file, from, to } of patches) {
        const at = out.indexOf(from);
        if (at < 0 || out.indexOf(from, at + 1) >= 0) throw new Error(`server patch for ${file}: its text is not there exactly once (dependency upgraded?)`);
        out = out.slice(0, at) + to + out.slice(at + from.length);
      }
      return out;
    },
  };
}

/**
 * Source patches of the media worker's bundle, applied as SERVER_PATCHES are (each must match once).
 * - werift's DTLS cipher context required @peculiar/x509 (and through it asn1js, the @peculiar/asn1
 *   schemas, tsyringe and reflect-metadata) at its top, for one use: making a self-signed
 *   certificate. A media worker makes its certificate with node:crypto
 *   (server/media/dtls-certificate.ts) and hands it to werift first, so the package is now
 *   required at that one use, the first time werift makes a certificate itself (never, in a worker).
 */
const PECULIAR_X509_CIPHER = "/node_modules/werift/lib/dtls/src/context/cipher.js";
export const WORKER_PATCHES: readonly { file: string; from: string; to: string }[] = [
  {
    file: PECULIAR_X509_CIPHER,
    from: 'const x509 = __importStar(require("@peculiar/x509"));',
    to:
      "let peculiarX509; const loadPeculiarX509 = () => { if (peculiarX509 === undefined) { " +
      'peculiarX509 = __importStar(require("@peculiar/x509")); peculiarX509.cryptoProvider.set(crypto_1.webcrypto); } ' +
      "return peculiarX509 }; // switchboard: @peculiar/x509 on first use",
  },
  { file: PECULIAR_X509_CIPHER, from: "x509.cryptoProvider.set(crypto);", to: "// switchboard: set at the first load (loadPeculiarX509)" },
  {
    file: PECULIAR_X509_CIPHER,
    from: "const cert = await x509.X509CertificateGenerator.createSelfSigned({",
    to: "const x509 = loadPeculiarX509(); const cert = await x509.X509CertificateGenerator.createSelfSigned({",
  },
];

/** Applies WORKER_PATCHES while the media worker's bundle is made. */
function workerPatches(): { name: string; transform(code: string, id: string): string | null } {
  return { ...patcher(WORKER_PATCHES), name: "switchboard-worker-patches" };
}

/**
 * The first requests' validators compiled ahead (issue 17, "Start"): ajv's standalone code for the
 * schemas server/api/precompiled-schemas.ts lists (server/http/precompile.ts), made in a child
 * process (tsx: the schemas are constants of the server's TypeScript modules), written beside the
 * bundle as `precompiled-validators.js` (PRECOMPILED_VALIDATORS_FILE; the staleness test reads it)
 * and put in the bundle in place of server/http/precompiled-validators.ts, whose source holds none.
 */
export const PRECOMPILED_VALIDATORS_FILE = "precompiled-validators.js";
const PRECOMPILED_VALIDATORS_SOURCE = "/server/http/precompiled-validators.ts";

async function precompiledValidatorsCode(): Promise<string> {
  const url = (path: string) => JSON.stringify(pathToFileURL(resolve(import.meta.dirname, path)).href);
  const script = `const { PRECOMPILED_SCHEMAS } = await import(${url("server/api/precompiled-schemas.ts")});
const { precompiledValidatorsModule } = await import(${url("server/http/precompile.ts")});
process.stdout.write(precompiledValidatorsModule(PRECOMPILED_SCHEMAS));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: import.meta.dirname,
    // The server's modules read these at import: the build's output must not depend on the shell's.
    env: { ...process.env, VITEST: undefined, SWITCHBOARD_CHECK_SCHEMAS: undefined },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/** Serves the generated validators in place of their source placeholder while the server's bundle is made. */
function precompiledValidators(code: string): { name: string; load(id: string): { code: string; moduleType: "js" } | null } {
  return {
    name: "switchboard-precompiled-validators",
    load(id) {
      return id.replaceAll("\\", "/").endsWith(PRECOMPILED_VALIDATORS_SOURCE) ? { code, moduleType: "js" } : null;
    },
  };
}

/**
 * @fastify/static's `require("glob")` answered by server/http/static-files.ts in the server's bundle
 * (issue 17, "Start"): the glob package and its dependencies were evaluated at every start for the
 * one listing of the renderer folder @fastify/static makes at registration (wildcard: false); a
 * walk with node:fs gives the same list (test/unit/static-files), so the same routes.
 */
export const STATIC_GLOB_SOURCE = "server/http/static-files.ts";

function staticGlob(): { name: string; resolveId(source: string, importer: string | undefined): string | null } {
  return {
    name: "switchboard-static-glob",
    resolveId(source, importer) {
      if (source !== "glob" || importer === undefined) return null;
      return importer.replaceAll("\\", "/").endsWith("/node_modules/@fastify/static/index.js") ? resolve(import.meta.dirname, STATIC_GLOB_SOURCE) : null;
    },
  };
}

/**
 * The server (server/cli.ts and all it imports, its dependencies included) as one CommonJS file,
 * out/main/server.cjs, which out/main/server.js (server/boot.ts) compiles with a V8 code cache:
 * no module resolution at start, one file read, and on later starts little compiling. CommonJS
 * because Node 20 can cache only a vm.Script's code (it has no module.enableCompileCache).
 * Likewise a media worker (server/media/worker/thread.ts, werift inside: only node's built-ins are
 * left out) as out/main/media-worker.cjs, which out/main/media-worker.js
 * (server/media/worker/boot.ts) compiles with a cache of its own.
 * Beside each, its digest (`<file>.digest`: sha256, size, mtime), so a start keys its cache
 * without hashing the bundle.
 */
function cjsBundles(): Plugin {
  const serverExternal = (id: string) =>
    id.startsWith("node:") || builtinModules.includes(id) || SERVER_EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`));
  const builtinsOnly = (id: string) => id.startsWith("node:") || builtinModules.includes(id);
  const bundles = [
    { input: "server/cli.ts", file: "server.cjs", external: serverExternal, server: true },
    { input: "server/media/worker/thread.ts", file: "media-worker.cjs", external: builtinsOnly, server: false },
  ];
  return {
    name: "switchboard-cjs-bundles",
    apply: "build",
    async writeBundle(options) {
      const validators = await precompiledValidatorsCode();
      await writeFile(join(options.dir ?? "", PRECOMPILED_VALIDATORS_FILE), validators);
      for (const { input, file, external, server } of bundles) {
        const path = join(options.dir ?? "", file);
        const bundle = await rolldown({
          input: resolve(import.meta.dirname, input),
          platform: "node",
          external,
          logLevel: "warn",
          plugins: server ? [serverPatches(), precompiledValidators(validators), staticGlob()] : [workerPatches()],
        });
        try {
          // Dynamic imports become requires: a vm.Script has no module loader of its own. Strict, as
          // the ES modules it is made from are.
          // ASCII only (non-ASCII escaped; JSDoc and annotation comments dropped, licences kept):
          // a start decodes it as Latin-1 into a one-byte string, not UTF-8 into a two-byte one.
          await bundle.write({
            format: "cjs",
            file: path,
            codeSplitting: false,
            dynamicImportInCjs: false,
            strict: true,
            charset: "ascii",
            comments: { legal: true, jsdoc: false, annotation: false },
            // A map beside the bundle only when asked (SWITCHBOARD_BUNDLE_SOURCEMAP=1): for reading a
            // CPU profile of a start by source module (scripts/start-profile.ts). Never shipped.
            sourcemap: process.env.SWITCHBOARD_BUNDLE_SOURCEMAP === "1",
          });
        } finally {
          await bundle.close();
        }
        // What charset leaves is in comments (a licence's author's name): escaped there too.
        const text = await readFile(path, "utf8");
        const ascii = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
        if (ascii !== text) await writeFile(path, ascii);
        const { size, mtimeMs } = await stat(path);
        await writeFile(`${path}${DIGEST_SUFFIX}`, digestFileText(await readFile(path), size, mtimeMs));
      }
      // The media worker's entry (what pool.ts and early.ts start): a small ES file of its own,
      // not an entry of the main build, so it shares no chunk with serve mode's entry.
      const boot = await rolldown({ input: resolve(import.meta.dirname, "server/media/worker/boot.ts"), platform: "node", external: builtinsOnly, logLevel: "warn" });
      try {
        await boot.write({ format: "es", file: join(options.dir ?? "", "media-worker.js"), codeSplitting: false });
      } finally {
        await boot.close();
      }
    },
  };
}

// Four outputs: Electron main, the headless server entry (plain Node, no electron),
// the sandboxed preload (must be CommonJS) and the renderer.
export default defineConfig({
  main: {
    plugins: [cjsBundles()],
    build: {
      outDir: "out/main",
      rollupOptions: {
        input: {
          index: resolve(import.meta.dirname, "main/index.ts"),
          // Serve mode's entry: it runs out/main/server.cjs (cjsBundles above) with a code cache.
          server: resolve(import.meta.dirname, "server/boot.ts"),
          // The media worker thread's entry, media-worker.js (pool.ts starts it beside server.js), is
          // cjsBundles' (above): it runs media-worker.cjs, werift inside, with a code cache.
        },
        output: { format: "es", entryFileNames: "[name].js" },
      },
    },
  },
  preload: {
    build: {
      outDir: "out/preload",
      rollupOptions: {
        input: { preload: resolve(import.meta.dirname, "main/preload.ts") },
        output: { format: "cjs", entryFileNames: "[name].cjs" },
      },
    },
  },
  renderer: {
    root: "renderer",
    plugins: [react(), precompress()],
    build: {
      outDir: "out/renderer",
      minify: true,
      // The console, and the wallboard: a page of its own that loads none of the console's code.
      rollupOptions: { input: { index: resolve(import.meta.dirname, "renderer/index.html"), wallboard: resolve(import.meta.dirname, "renderer/wallboard.html") } },
    },
  },
});
