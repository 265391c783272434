// A media worker's entry as built (out/main/media-worker.js, started by pool.ts and early.ts): runs
// the worker, bundled with werift into one CommonJS file beside it (out/main/media-worker.cjs, made
// from thread.ts), through the same V8 code cache as serve mode's bundle (server/code-cache.ts; a
// cache file of its own name, "media-worker"). Without it every worker compiled its 1.9 MB afresh
// while the first call waited for worker 1. The cache is written by the worker once it is ready
// (werift loaded, certificate made, an offer rehearsed: those functions are in it), on its own
// thread, only when it had none that fitted; a damaged, stale or refused file is a normal compile.
// The write delays the thread's first message after "ready" by one createCachedData(), on the
// first start of a build only.
import { fileURLToPath } from "node:url";
import { codeCacheDir, compileBundle, MEDIA_WORKER_READY_EVENT } from "../../code-cache.js";

const bundle = compileBundle(fileURLToPath(new URL("./media-worker.cjs", import.meta.url)), codeCacheDir(), "media-worker");
// At once, not a turn later: the worker's start is done by then, and a worker stopped right after
// it said it was ready (a test's, a bench's) would otherwise be torn down before the write.
process.once(MEDIA_WORKER_READY_EVENT, () => bundle.save());
bundle.run();
