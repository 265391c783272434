import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib";
import { defineConfig } from "electron-vite";
import react from "@vitejs/plugin-react";
import type { Plugin } from "vite";

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

// Four outputs: Electron main, the headless server entry (plain Node, no electron),
// the sandboxed preload (must be CommonJS) and the renderer.
export default defineConfig({
  main: {
    build: {
      outDir: "out/main",
      // werift goes into the media worker's file (only the worker imports it statically): one file
      // for node's loader to read instead of a few hundred, so a worker is ready sooner.
      externalizeDeps: { exclude: ["werift"] },
      rollupOptions: {
        input: {
          index: resolve(import.meta.dirname, "main/index.ts"),
          server: resolve(import.meta.dirname, "server/cli.ts"),
          // The media worker thread's entry (server/media/worker/pool.ts starts it beside server.js).
          "media-worker": resolve(import.meta.dirname, "server/media/worker/thread.ts"),
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
