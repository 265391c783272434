import { defineConfig } from "vitest/config";

// One runner for every tier. Browser tests drive Debian Chromium through playwright-core,
// and the serve-mode tests run the built out/main/server.js, so `npm test` builds first.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
