// werift, loaded on first use: it takes 0.3-0.4 s to load from node_modules, and the server's main
// thread needs it only for a leg it runs itself (media workers 0). Loaded through require (its
// CommonJS build) so a leg can still be made synchronously. A media worker instead hands over the
// copy its own entry imported (bundled into the worker's built file, which loads about twice as
// fast): every werift value in one thread comes from here, so `instanceof` checks meet one copy.
import { createRequire } from "node:module";
import type * as Werift from "werift";

let loaded: typeof Werift | undefined;

export function werift(): typeof Werift {
  loaded ??= createRequire(import.meta.url)("werift") as typeof Werift;
  return loaded;
}

/** The thread's werift is `module`: called before any leg is made, and only once. */
export function provideWerift(module: typeof Werift): void {
  if (loaded !== undefined && loaded !== module) throw new Error("werift is already loaded in this thread");
  loaded = module;
}
