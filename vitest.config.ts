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
    // One file at a time: the call and browser tests run real WebRTC media (werift, Chromium) on
    // the shared 20 ms clock, and two of them side by side on a 2-core machine starve each other.
    maxWorkers: 1,
    reporters: ["default"],
  },
});
