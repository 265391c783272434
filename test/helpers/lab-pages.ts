// The browser tiers' globalSetup for the lab pages (test/e2e/fixtures/<fixture>.ts bundled by
// labPageDir, test/helpers/phone-page.ts): one directory for the run, in which the first file that
// asks for a page bundles it and every later file, in a process of its own, takes that bundle
// instead of running Vite again (2-3 s of a serial stream's wall per file, session 21). The bundle
// is the same for every file of a run: the fixtures and what they import do not change during it.
// Several projects name this file: the first setup makes the directory, the last teardown removes
// it (test/helpers/run-shared.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runShared } from "./run-shared.js";

/** The run's directory of bundled lab pages, one folder per fixture (set by setup() below). */
export const LAB_PAGES_ENV = "SWITCHBOARD_LAB_PAGES";

const shared = runShared(
  "switchboard.labPages",
  LAB_PAGES_ENV,
  {
    make: () => mkdtemp(join(tmpdir(), "sb-lab-pages-")),
    describe: (dir: string) => dir,
    release: (dir: string) => rm(dir, { recursive: true, force: true }),
  },
);

export async function setup(): Promise<void> {
  // Set from outside (e.g. to keep one directory across runs while working on a file): left alone.
  if (process.env[LAB_PAGES_ENV] !== undefined && !shared.active) return;
  await shared.setup();
}

export const teardown = (): Promise<void> => shared.teardown();
