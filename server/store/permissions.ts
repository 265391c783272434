// The data directory holds the API key, password digests and SIP passwords: only its owner may
// read it. New directories are 0700 and new files 0600; a directory left looser (an older
// version, a copy, a restore from backup) is tightened when the store opens.
import { chmod, lstat, mkdir, readdir } from "node:fs/promises";
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
 * Clears the group and other bits of `root` and everything under it (symbolic links are left
 * alone: their target may be outside the data directory).
 */
export async function tightenTree(root: string): Promise<Tightened> {
  const result: Tightened = { count: 0, examples: [] };
  const pending = [root];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    let info;
    try {
      info = await lstat(path);
    } catch (err) {
      // Removed meanwhile (a journal generation folded away): nothing to tighten.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    if (info.isSymbolicLink()) continue;
    const loose = info.mode & 0o077;
    if (loose !== 0) {
      await chmod(path, info.mode & 0o700);
      result.count++;
      if (result.examples.length < EXAMPLES) result.examples.push(path);
    }
    if (info.isDirectory()) for (const name of await readdir(path)) pending.push(join(path, name));
  }
  return result;
}
