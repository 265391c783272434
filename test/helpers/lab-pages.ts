// The browser tiers' globalSetup for the lab pages (test/e2e/fixtures/<fixture>.ts bundled by
// labPageDir, test/helpers/phone-page.ts): one directory for the run, in which the first file that
// asks for a page bundles it and every later file, in a process of its own, takes that bundle
// instead of running Vite again (2-3 s of a serial stream's wall per file, session 21). The bundle
// is the same for every file of a run: the fixtures and what they import do not change during it.
// Several projects name this file: the first setup makes the directory, the last teardown removes
// it (counted on the main process's globalThis, as test/helpers/shared-chromium.ts does).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The run's directory of bundled lab pages, one folder per fixture (set by setup() below). */
export const LAB_PAGES_ENV = "SWITCHBOARD_LAB_PAGES";

interface Shared {
  dir: Promise<string>;
  users: number;
}

const KEY = Symbol.for("switchboard.labPages");
const holder = globalThis as { [KEY]?: Shared };

export async function setup(): Promise<void> {
  // Set from outside (e.g. to keep one directory across runs while working on a file): left alone.
  if (process.env[LAB_PAGES_ENV] !== undefined && holder[KEY] === undefined) return;
  const shared = (holder[KEY] ??= { dir: mkdtemp(join(tmpdir(), "sb-lab-pages-")), users: 0 });
  shared.users += 1;
  // The workers are forked after globalSetup and inherit this process's environment.
  process.env[LAB_PAGES_ENV] = await shared.dir;
}

export async function teardown(): Promise<void> {
  const shared = holder[KEY];
  if (shared === undefined) return;
  shared.users -= 1;
  if (shared.users > 0) return;
  delete holder[KEY];
  delete process.env[LAB_PAGES_ENV];
  await rm(await shared.dir, { recursive: true, force: true });
}
