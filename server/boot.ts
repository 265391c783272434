// Serve mode's entry as built (out/main/server.js, also what Electron's main process forks): runs
// the server, bundled into one CommonJS file beside it (out/main/server.cjs, from server/cli.ts),
// through a V8 code cache (server/code-cache.ts). The cache is written once the server serves (a
// turn of the event loop after it says so, so the start's own work is done), only when it had
// none that fitted: later starts of the same bundle skip most of the compiling.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { codeCacheDir, compileBundle, SERVING_EVENT } from "./code-cache.js";
import { SERVER_V8_FLAGS } from "./v8-flags.js";
import { startEarlyMediaWorker, wantsMediaWorkers } from "./media/worker/early.js";

// No memory reducer (V8's idle-time compacting collections): on a server whose threads allocate
// little between real-time ticks, V8 takes them for idle and compacts the whole heap in one pause:
// 70-90 ms on the main thread at 50 callers + 5 trainees (bench/training-live, session 26), past
// the 60 ms a frame may be late, so every leg lost its frames. The launchers (npm run serve, npm
// start's serve mode, Electron's fork) pass --no-memory-reducer on the command line, which covers
// this thread; a heap takes the flag when it is made, so setting it here covers the media workers'
// heaps of a start that was not given it (node out/main/server.js typed by hand).
setFlagsFromString(SERVER_V8_FLAGS);

// The first media worker starts loading werift now, on its own thread, while this one compiles and
// starts the server (media/worker/early.ts); the server's worker pool adopts it.
const workerScript = new URL("./media-worker.js", import.meta.url);
if (wantsMediaWorkers(process.argv.slice(2)) && existsSync(workerScript)) startEarlyMediaWorker(workerScript);

const bundle = compileBundle(fileURLToPath(new URL("./server.cjs", import.meta.url)), codeCacheDir());
process.once(SERVING_EVENT, () => setImmediate(() => bundle.save()));
bundle.run();
