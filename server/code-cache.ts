// A V8 code cache for serve mode's bundle (issue 17, "Start"). Node 20 has no
// module.enableCompileCache, so the server is built as one CommonJS file (out/main/server.cjs) and
// compiled here with vm.Script: with the cached data of an earlier start when there is some for
// exactly this bundle on this V8, without it otherwise. Only node's built-ins are imported: this
// file is the whole of what loads before the bundle.
//
// The cache file is `<dir>/<name>-<key>.v8` (name: "server" for serve mode's bundle, "media-worker"
// for a media worker's: one cache per bundle), key = sha256 of the bundle's digest, the V8 version and the architecture (V8 itself only checks
// the source's length). The bundle's digest (sha256 of its bytes) is the build's, written beside it
// (`<bundle>.digest`, with the bundle's size and mtime): used when the bundle's size and mtime are
// still those, so a start does not hash 3 MB; computed from the bytes read otherwise (a copied or
// edited bundle, no digest file), which costs only time. Its first 32 bytes are the
// sha256 of the rest, checked before V8 sees the data: a truncated or damaged file is a normal
// compile, never a crash. V8 may still reject data it made itself (other flags): a normal compile
// too (`cachedDataRejected`). Writes are atomic (a temporary file renamed over), so starts running
// at once never read half a file; a write that fails (a read-only home) is given up quietly.
import { isAscii } from "node:buffer";
import { createHash } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Script } from "node:vm";
import { threadId } from "node:worker_threads";

const DIGEST_BYTES = 32;
/** A cache file's name is `<name>-<key>.v8`; serve mode's bundle is "server". */
const SERVER = "server";
const SUFFIX = ".v8";
/** The bundles cached, each a name of its own. */
export type BundleName = "server" | "media-worker";
/** The build's digest of a bundle, beside it: `<bundle>.digest`. */
export const DIGEST_SUFFIX = ".digest";

/** How a bundle was compiled: with accepted cached data, with data refused, or with none found. */
export type CacheOutcome = "accepted" | "rejected" | "damaged" | "missing" | "off";

export interface CachedBundle {
  outcome: CacheOutcome;
  /** Where the bundle's digest came from: the build's file beside it, or hashing the bytes read. */
  digestFrom: "build" | "hashed";
  /** Runs the bundle as a CommonJS module (its own require, module, __filename, __dirname). */
  run(): void;
  /**
   * Writes the cache from what V8 has compiled so far (call it after the start's work, so the
   * functions the start ran are in it); a no-op when the data was accepted or caching is off.
   * Returns the file written, or null.
   */
  save(): string | null;
}

/**
 * Where the cache lives: $SWITCHBOARD_CODE_CACHE ("off" for none), else the user's cache folder
 * ($XDG_CACHE_HOME or ~/.cache) under Switchboard. Never beside the bundle: an installed app's
 * folder is not the user's to write.
 */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const configured = env.SWITCHBOARD_CODE_CACHE;
  if (configured === "off") return null;
  if (configured) return configured;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "Switchboard", "code-cache");
}

/** sha256 of a bundle's bytes, hex: what the build writes beside it. */
export function bundleDigest(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The digest file's text for a bundle of these bytes, size and mtime (the build writes it). */
export function digestFileText(bytes: Buffer, size: number, mtimeMs: number): string {
  return `${JSON.stringify({ sha256: bundleDigest(bytes), size, mtimeMs })}\n`;
}

/** The cache file of the bundle `name` with this text (or digest, from the build) in `dir`. */
export function cacheFileFor(source: string | { digest: string }, dir: string, name: BundleName = SERVER): string {
  const digest = typeof source === "string" ? bundleDigest(source) : source.digest;
  const key = createHash("sha256").update(digest).update(`\0${process.versions.v8}\0${process.arch}`).digest("hex").slice(0, 32);
  return join(dir, `${name}-${key}${SUFFIX}`);
}

/** The build's digest, if its file is there, well formed and about a bundle of this size and mtime. */
function buildDigest(bundlePath: string, size: number, mtimeMs: number): string | undefined {
  let recorded: unknown;
  try {
    recorded = JSON.parse(readFileSync(`${bundlePath}${DIGEST_SUFFIX}`, "utf8"));
  } catch {
    return undefined;
  }
  if (typeof recorded !== "object" || recorded === null) return undefined;
  const { sha256, size: recordedSize, mtimeMs: recordedMtime } = recorded as Record<string, unknown>;
  if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) return undefined;
  return recordedSize === size && recordedMtime === mtimeMs ? sha256 : undefined;
}

function readCache(file: string): Buffer | "missing" | "damaged" {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return "missing";
  }
  if (data.length <= DIGEST_BYTES) return "damaged";
  const payload = data.subarray(DIGEST_BYTES);
  const digest = createHash("sha256").update(payload).digest();
  return digest.equals(data.subarray(0, DIGEST_BYTES)) ? payload : "damaged";
}

function writeCache(file: string, payload: Buffer, name: BundleName): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The thread too: a process's media workers may write their bundle's cache at once.
  const temporary = `${file}.${process.pid}-${threadId}.tmp`;
  try {
    writeFileSync(temporary, Buffer.concat([createHash("sha256").update(payload).digest(), payload]), { mode: 0o600 });
    renameSync(temporary, file);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
  // Caches of other builds of this bundle are of no further use (another bundle's are kept).
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith(`${name}-`) && entry.endsWith(SUFFIX) && entry !== basename(file)) rmSync(join(dir, entry), { force: true });
  }
}

type CommonJsWrapper = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;

/** A bundle's text, and its cache file in `cacheDir` (null: caching off), as a start reads them. */
export function readBundle(
  bundlePath: string,
  cacheDir: string | null,
  name: BundleName = SERVER,
): { source: string; file: string | null; digestFrom: "build" | "hashed" } {
  // Size and mtime from the descriptor the bytes are read from: they describe exactly those bytes.
  const fd = openSync(bundlePath, "r");
  let bytes: Buffer;
  let built: string | undefined;
  try {
    const { size, mtimeMs } = fstatSync(fd);
    bytes = readFileSync(fd);
    built = cacheDir === null || bytes.length !== size ? undefined : buildDigest(bundlePath, size, mtimeMs);
  } finally {
    closeSync(fd);
  }
  // The build writes the bundles ASCII only: Latin-1 then reads the same text, copying the bytes
  // into a one-byte string, where UTF-8 decodes them (a non-ASCII file: a two-byte string).
  const source = isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  const digestFrom = built === undefined ? "hashed" : "build";
  const file = cacheDir === null ? null : cacheFileFor({ digest: built ?? bundleDigest(bytes) }, cacheDir, name);
  return { source, file, digestFrom };
}

/**
 * Compiles the CommonJS file at `bundlePath`, with the cached data in `cacheDir` when it fits.
 * A save removes the folder's older `<name>-*.v8` files (other builds' of this bundle), nothing else.
 */
export function compileBundle(bundlePath: string, cacheDir: string | null, name: BundleName = SERVER): CachedBundle {
  const { source, file, digestFrom } = readBundle(bundlePath, cacheDir, name);
  const found = file === null ? "missing" : readCache(file);
  const cachedData = typeof found === "string" ? undefined : found;
  // The same wrapper as node's own CommonJS loader, so line 1 of the file is line 1 in traces.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${source}\n})`, { filename: bundlePath, cachedData });
  const outcome: CacheOutcome = file === null ? "off" : cachedData === undefined ? (found as "missing" | "damaged") : script.cachedDataRejected ? "rejected" : "accepted";
  let saved = false;
  return {
    outcome,
    digestFrom,
    run() {
      const wrapper = script.runInThisContext() as CommonJsWrapper;
      const module = { exports: {} };
      wrapper.call(module.exports, module.exports, createRequire(bundlePath), module, bundlePath, dirname(bundlePath));
    },
    save() {
      if (file === null || outcome === "accepted" || saved) return null;
      saved = true;
      try {
        writeCache(file, script.createCachedData(), name);
        return file;
      } catch {
        return null;
      }
    },
  };
}

/** The event serve mode's entry emits on `process` once it serves (server/cli.ts). */
export const SERVING_EVENT = "switchboard:serving";

/**
 * The event a media worker emits on its thread's `process` once it is ready (werift loaded, its
 * certificate made, an offer rehearsed: server/media/worker/thread.ts), for the worker's built
 * entry (server/media/worker/boot.ts) to write the worker bundle's code cache then.
 */
export const MEDIA_WORKER_READY_EVENT = "switchboard:media-worker-ready";
