// A media worker's entry as built (out/main/media-worker.js, started by pool.ts): runs the worker,
// bundled with werift into one CommonJS file beside it (out/main/media-worker.cjs, from thread.ts),
// through the same V8 code cache as the server's bundle (server/code-cache.ts, its own cache file:
// "media-worker"). Without it, each worker compiled werift's 1.9 MB afresh, and the first call
// waited for that. The cache is written once the worker is ready (werift loaded, its first offer
// rehearsed, so those functions are in it), only when it had none that fitted.
import { fileURLToPath } from "node:url";
import { codeCacheDir, compileBundle, MEDIA_WORKER_READY_EVENT } from "../../code-cache.js";

const bundle = compileBundle(fileURLToPath(new URL("./media-worker.cjs", import.meta.url)), codeCacheDir(), "media-worker");
process.once(MEDIA_WORKER_READY_EVENT, () => setImmediate(() => bundle.save()));
bundle.run();
