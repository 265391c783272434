// werift, loaded on first use: it takes 0.3-0.4 s to load, and the server's main thread needs it
// only for a leg it runs itself (media workers 0); the workers load it as they start. Loaded
// through require (its CommonJS build) so a leg can still be made synchronously; every werift
// value in this process comes from here, so `instanceof` checks meet one copy of its classes.
import { createRequire } from "node:module";
import type * as Werift from "werift";

let loaded: typeof Werift | undefined;

export function werift(): typeof Werift {
  loaded ??= createRequire(import.meta.url)("werift") as typeof Werift;
  return loaded;
}
