// The renderer folder's file list for @fastify/static, in the server's bundle only (issue 17,
// "Start"). @fastify/static (wildcard: false) lists its root with `glob("**/**", { cwd, absolute:
// false, follow: true, nodir: true, dot, ignore })` once, at registration, and makes a GET and a
// HEAD route for each file. The `glob` package (with minimatch, path-scurry, lru-cache, minipass)
// was evaluated at every start for that one call. The build resolves @fastify/static's
// `require("glob")` to this module instead (electron.vite.config.ts, STATIC_GLOB_SOURCE): one
// synchronous walk of the folder with node:fs, the same list (test/unit/static-files checks it
// against glob's on the same trees), so the same routes and the same answers. Tests and tsx runs
// from source keep glob itself.
import { readdirSync, realpathSync, statSync, type Dirent } from "node:fs";
import { join } from "node:path";

/** The options @fastify/static passes; any other use is refused rather than answered wrongly. */
export interface StaticGlobOptions {
  cwd: string;
  absolute?: boolean;
  follow?: boolean;
  nodir?: boolean;
  dot?: boolean;
  ignore?: unknown;
}

/**
 * The files under `cwd` (relative paths, the platform's separator), as glob's `**` + `/**` with
 * follow, nodir and no ignore lists them: every file (and symlink to a file) at any depth,
 * symlinked directories followed (one that leads back to a directory above it is not), names starting with "." left
 * out unless `dot`, symlinks that lead nowhere listed as files (glob cannot tell them from one).
 */
export function staticFileList(pattern: string, options: StaticGlobOptions): string[] {
  if (pattern !== "**/**" || options.absolute === true || options.follow !== true || options.nodir !== true || options.ignore !== undefined) {
    throw new Error(`static-files: only @fastify/static's own glob("**/**", { follow, nodir }) is answered, not ${pattern} ${JSON.stringify(options)}`);
  }
  const files: string[] = [];
  // The real directories on the way down: a link back to one of them is not walked again.
  const ancestors = new Set<string>();
  const walk = (dir: string, relative: string): void => {
    let real: string;
    try {
      real = realpathSync(dir);
    } catch {
      return;
    }
    if (ancestors.has(real)) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    ancestors.add(real);
    for (const entry of entries) {
      if (options.dot !== true && entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      const name = relative === "" ? entry.name : join(relative, entry.name);
      let isDirectory = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        try {
          isDirectory = statSync(path).isDirectory();
        } catch {
          isDirectory = false;
        }
      }
      if (isDirectory) walk(path, name);
      else files.push(name);
    }
    ancestors.delete(real);
  };
  walk(options.cwd, "");
  return files;
}

/** glob's export as @fastify/static calls it (`const { glob } = require("glob")`, awaited). */
export async function glob(pattern: string, options: StaticGlobOptions): Promise<string[]> {
  return staticFileList(pattern, options);
}
