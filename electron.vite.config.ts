import { resolve } from "node:path";
import { defineConfig } from "electron-vite";
import react from "@vitejs/plugin-react";

// Four outputs: Electron main, the headless server entry (plain Node, no electron),
// the sandboxed preload (must be CommonJS) and the renderer.
export default defineConfig({
  main: {
    build: {
      outDir: "out/main",
      externalizeDeps: true,
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
    plugins: [react()],
    build: {
      outDir: "out/renderer",
      rollupOptions: { input: resolve(import.meta.dirname, "renderer/index.html") },
    },
  },
});
