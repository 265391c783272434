// Serve mode's entry as built (out/main/server.js, also what Electron's main process forks): runs
// the server, bundled into one CommonJS file beside it (out/main/server.cjs, from server/cli.ts),
// through a V8 code cache (server/code-cache.ts). The cache is written once the server serves (a
// turn of the event loop after it says so, so the start's own work is done), only when it had
// none that fitted: later starts of the same bundle skip most of the compiling.
import { fileURLToPath } from "node:url";
import { codeCacheDir, compileBundle, SERVING_EVENT } from "./code-cache.js";

const bundle = compileBundle(fileURLToPath(new URL("./server.cjs", import.meta.url)), codeCacheDir());
process.once(SERVING_EVENT, () => setImmediate(() => bundle.save()));
bundle.run();
