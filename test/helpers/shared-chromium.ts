// The browser tiers' globalSetup: one Chromium for the whole run (playwright-core's launchServer,
// with the flags every browser test needs), reached by each file over its WebSocket. A file's
// launchBrowser() without extra flags connects to it instead of launching a Chromium of its own;
// what it opens lives in contexts of that connection, closed when the file closes it (so cookies,
// storage, caches and permissions stay the file's own). Launching Chromium cost a file 5-16 s of
// wall time on the shared machine (bench/suite-overhead.ts).
// Several projects name this file: the first setup launches, the others share it, the last
// teardown closes it (test/helpers/run-shared.ts).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chromium, type BrowserServer } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH, SHARED_CHROMIUM_ENV } from "./browser.js";
import { runShared } from "./run-shared.js";

const shared = runShared("switchboard.sharedChromium", SHARED_CHROMIUM_ENV, {
  make: launchSettled,
  describe: (server: BrowserServer) => server.wsEndpoint(),
  release: (server: BrowserServer) => server.close(),
});

export async function setup(): Promise<void> {
  // No Chromium installed: each file's launchBrowser() says so itself.
  if (!existsSync(CHROMIUM_PATH)) return;
  // `off`: each file launches its own, as before (to compare the two).
  if (process.env[SHARED_CHROMIUM_ENV] === "off") return;
  await shared.setup();
}

export const teardown = (): Promise<void> => shared.teardown();

/** CPU ticks (1/100 s) used so far by `root` and every live process under it. */
function treeTicks(root: number): number {
  const stats = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      stats.set(Number(name), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // Gone meanwhile.
    }
  }
  let total = 0;
  const walk = (pid: number): void => {
    total += stats.get(pid)?.ticks ?? 0;
    for (const [child, stat] of stats) if (stat.ppid === pid) walk(child);
  };
  walk(root);
  return total;
}

/**
 * Launches Chromium, opens and closes one page, and returns once its processes are nearly idle
 * (under 40 ms of CPU in a 250 ms window, or after 15 s): its start-up work (a few seconds of CPU)
 * must not overlap the first file's real-time media (test/calls/channels-api lost tone 2 times in
 * 7 short runs started right after the launch, 0 in 5 without the shared Chromium).
 */
async function launchSettled(): Promise<BrowserServer> {
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const browser = await chromium.connect(server.wsEndpoint());
  await (await browser.newPage()).close();
  await browser.close();
  const pid = server.process().pid;
  if (pid === undefined) return server;
  const deadline = Date.now() + 15_000;
  let before = treeTicks(pid);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = treeTicks(pid);
    if (now - before < 4) break;
    before = now;
  }
  return server;
}
