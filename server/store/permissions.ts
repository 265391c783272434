// The data directory holds the API key, password digests and SIP passwords: only its owner may
// read it. New directories are 0700 and new files 0600; a directory left looser (an older
// version, a copy, a restore from backup) is tightened when the store opens.
import { chmod, lstat, mkdir, readdir } from "node:fs/promises";
import type { Stats } from "node:fs";
import { join } from "node:path";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** `mkdir -p` with the owner-only mode for every directory it makes. */
export async function makeDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: DIR_MODE });
}

export interface Tightened {
  /** How many files and directories had group or other bits, now cleared. */
  count: number;
  /** A few of them, for the log line. */
  examples: string[];
}

const EXAMPLES = 5;

/**
 * What Switchboard keeps at the top of a data directory. Anything else there is someone else's
 * (a data directory pointed at a folder already in use): its modes are left alone.
 */
const OURS = /^(accounts|events|recordings\.partial|switchboard\.lock.*|[a-z][a-z0-9_]*(\.json(\.bak|\.tmp|\.damaged-.*)?|\.\d+\.journal|\.attachments))$/;

/**
 * Clears the group and other bits of `root` and of everything of ours under it (symbolic links
 * are left alone: their target may be outside the data directory).
 */
export async function tightenTree(root: string): Promise<Tightened> {
  const result: Tightened = { count: 0, examples: [] };
  await tighten(root, result);
  for (const name of await readdir(root)) if (OURS.test(name)) await tightenBelow(join(root, name), result);
  return result;
}

async function tightenBelow(top: string, result: Tightened): Promise<void> {
  const pending = [top];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const info = await tighten(path, result);
    if (info?.isDirectory()) for (const name of await readdir(path).catch(() => [])) pending.push(join(path, name));
  }
}

/** Tightens one entry; undefined when it is gone or a symbolic link. */
async function tighten(path: string, result: Tightened): Promise<Stats | undefined> {
  let info: Stats;
  try {
    info = await lstat(path);
  } catch (err) {
    // Removed meanwhile (a journal generation folded away): nothing to tighten.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  if (info.isSymbolicLink()) return undefined;
  if ((info.mode & 0o077) !== 0) {
    await chmod(path, info.mode & 0o700);
    result.count++;
    if (result.examples.length < EXAMPLES) result.examples.push(path);
  }
  return info;
}
