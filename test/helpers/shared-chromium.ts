// The browser tiers' globalSetup: one Chromium for the whole run (playwright-core's launchServer,
// with the flags every browser test needs), reached by each file over its WebSocket. A file's
// launchBrowser() without extra flags connects to it instead of launching a Chromium of its own;
// what it opens lives in contexts of that connection, closed when the file closes it (so cookies,
// storage, caches and permissions stay the file's own). Launching Chromium cost a file 5-16 s of
// wall time on the shared machine (bench/suite-overhead.ts).
// Several projects name this file: the first setup launches, the others share it, the last
// teardown closes it (counted on the main process's globalThis, whichever module copy runs).
import { existsSync } from "node:fs";
import { chromium, type BrowserServer } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH, SHARED_CHROMIUM_ENV } from "./browser.js";

interface Shared {
  server: Promise<BrowserServer>;
  users: number;
}

const KEY = Symbol.for("switchboard.sharedChromium");
const holder = globalThis as { [KEY]?: Shared };

export async function setup(): Promise<void> {
  // No Chromium installed: each file's launchBrowser() says so itself.
  if (!existsSync(CHROMIUM_PATH)) return;
  // `off`: each file launches its own, as before (to compare the two).
  if (process.env[SHARED_CHROMIUM_ENV] === "off") return;
  const shared = (holder[KEY] ??= { server: chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }), users: 0 });
  shared.users += 1;
  // The workers are forked after globalSetup and inherit this process's environment.
  process.env[SHARED_CHROMIUM_ENV] = (await shared.server).wsEndpoint();
}

export async function teardown(): Promise<void> {
  const shared = holder[KEY];
  if (shared === undefined) return;
  shared.users -= 1;
  if (shared.users > 0) return;
  delete holder[KEY];
  delete process.env[SHARED_CHROMIUM_ENV];
  await (await shared.server).close();
}
