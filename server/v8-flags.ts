// The V8 flags the server runs with, one place for its launchers (package.json's serve script,
// scripts/start.mjs, Electron's fork in main/index.ts, the benches' server children) and for
// server/boot.ts, which sets them for the heaps made after it starts (the media workers').
// test/unit/server-v8-flags checks each launcher passes them.

/** No memory reducer: see server/boot.ts. As one command-line word. */
export const SERVER_V8_FLAGS = "--no-memory-reducer";
