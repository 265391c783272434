// Serve mode's entry as built (out/main/server.js, also what Electron's main process forks): runs
// the server, bundled into one CommonJS file beside it (out/main/server.cjs, from server/cli.ts),
// through a V8 code cache (server/code-cache.ts). The cache is written once the server serves (a
// turn of the event loop after it says so, so the start's own work is done), only when it had
// none that fitted: later starts of the same bundle skip most of the compiling.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { codeCacheDir, compileBundle, SERVING_EVENT } from "./code-cache.js";
import { startEarlyMediaWorker, wantsMediaWorkers } from "./media/worker/early.js";

// The first media worker starts loading werift now, on its own thread, while this one compiles and
// starts the server (media/worker/early.ts); the server's worker pool adopts it.
const workerScript = new URL("./media-worker.js", import.meta.url);
if (wantsMediaWorkers(process.argv.slice(2)) && existsSync(workerScript)) startEarlyMediaWorker(workerScript);

const bundle = compileBundle(fileURLToPath(new URL("./server.cjs", import.meta.url)), codeCacheDir());
process.once(SERVING_EVENT, () => setImmediate(() => bundle.save()));
bundle.run();
