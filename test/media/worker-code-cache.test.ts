// The built media worker (out/main/media-worker.js) compiles its bundle (media-worker.cjs, werift
// inside) through a V8 code cache of its own (server/code-cache.ts, files `media-worker-<key>.v8`):
// a first worker finds none and writes it once ready; the next is compiled from it and leaves it as
// it was; a damaged, cut or refused file, or another build's, never stops a worker from starting
// and is replaced by a whole file; workers starting at once leave one whole file and no temporary.
// The worker also makes its DTLS certificate with node:crypto, so it never evaluates @peculiar/x509
// (which would bring reflect-metadata's Reflect.getMetadata into the thread).
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SERVER_ENTRY } from "../helpers/serve.js";

const WORKER_JS = join(dirname(SERVER_ENTRY), "media-worker.js");
let cacheDir: string;

beforeEach(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), "sb-worker-cache-"));
});

afterEach(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

/**
 * Starts one built worker with `cacheDir` as its cache folder, waits for it to be ready, then stops it
 * the way the pool does ("stop", then "stopped"): the worker writes its cache a turn after ready,
 * so by its "stopped" any write is done. Resolves with what `probe` (code run in the thread) saw.
 */
async function startWorker(probe = false): Promise<{ reflectMetadata?: string }> {
  const script = probe
    ? `const { parentPort } = require("node:worker_threads");
       process.once("switchboard:media-worker-ready", () => parentPort.postMessage({ type: "probe", reflectMetadata: typeof Reflect.getMetadata }));
       import(${JSON.stringify(pathToFileURL(WORKER_JS).href)});`
    : WORKER_JS;
  const worker = new Worker(script, {
    eval: probe,
    workerData: { host: "127.0.0.1" },
    env: { ...process.env, SWITCHBOARD_CODE_CACHE: cacheDir },
    execArgv: [],
  });
  const seen: { reflectMetadata?: string } = {};
  try {
    await new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on("message", (message: { type: string; reflectMetadata?: string }) => {
        if (message.type === "probe") seen.reflectMetadata = message.reflectMetadata;
        if (message.type === "ready") ready = true;
        if (ready && (!probe || seen.reflectMetadata !== undefined) && message.type !== "stopped") {
          ready = false;
          probe = false;
          worker.postMessage({ type: "stop" });
        }
        if (message.type === "stopped") resolve();
      });
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the worker exited (${code}) before it stopped`)));
    });
  } finally {
    await worker.terminate();
  }
  return seen;
}

async function cacheFiles(): Promise<string[]> {
  return (await readdir(cacheDir)).sort();
}

/** The one cache file of the worker's bundle, whole: its first 32 bytes are the sha256 of the rest. */
async function wholeCache(): Promise<Buffer> {
  const files = (await cacheFiles()).filter((f) => f.startsWith("media-worker-"));
  expect(files).toHaveLength(1);
  const data = await readFile(join(cacheDir, files[0] ?? ""));
  expect(data.length).toBeGreaterThan(32);
  expect(createHash("sha256").update(data.subarray(32)).digest().equals(data.subarray(0, 32))).toBe(true);
  return data;
}

describe("the media worker's code cache", () => {
  it("is written by a first worker once ready, and a later worker is compiled from it, leaving it as it was", async () => {
    await startWorker();
    expect(await cacheFiles()).toEqual([expect.stringMatching(/^media-worker-[0-9a-f]{32}\.v8$/)]);
    const written = await wholeCache();
    await startWorker();
    // A worker whose data V8 took writes nothing: the file is the first worker's, byte for byte.
    expect(await wholeCache()).toEqual(written);
  });

  it("starts a worker from a damaged, cut or refused file, and writes the file whole again", async () => {
    await startWorker();
    const name = (await cacheFiles())[0] ?? "";
    const good = await wholeCache();
    const damaged = Buffer.from(good);
    damaged[damaged.length - 100] = (damaged[damaged.length - 100] ?? 0) ^ 0xff;
    // Well formed for our check, but V8's data for another script: V8 refuses it.
    const foreign = new Script("(function () { return 1 + 1; })").createCachedData();
    const refused = Buffer.concat([createHash("sha256").update(foreign).digest(), foreign]);
    for (const bad of [damaged, good.subarray(0, 20), good.subarray(0, good.length >> 1), Buffer.alloc(0), refused]) {
      await writeFile(join(cacheDir, name), bad);
      await startWorker();
      expect(await cacheFiles()).toEqual([name]);
      const rewritten = await wholeCache();
      expect(rewritten.equals(bad)).toBe(false);
    }
  });

  it("drops another build's cache when it writes its own, and leaves the server's cache and other files alone", async () => {
    const stale = "media-worker-0123456789abcdef0123456789abcdef.v8";
    const server = "server-0123456789abcdef0123456789abcdef.v8";
    await writeFile(join(cacheDir, stale), "an older build's");
    await writeFile(join(cacheDir, server), "the server's");
    await writeFile(join(cacheDir, "notes.txt"), "not a cache");
    await startWorker();
    const files = await cacheFiles();
    expect(files).not.toContain(stale);
    expect(files).toEqual(expect.arrayContaining([server, "notes.txt"]));
    expect(files.filter((f) => f.startsWith("media-worker-"))).toHaveLength(1);
    await wholeCache();
  });

  it("has workers starting at once on an empty folder leave one whole file and no temporary", async () => {
    await Promise.all([startWorker(), startWorker(), startWorker()]);
    expect(await cacheFiles()).toEqual([expect.stringMatching(/^media-worker-[0-9a-f]{32}\.v8$/)]);
    await wholeCache();
    await startWorker();
    await wholeCache();
  });
});

describe("the media worker's DTLS certificate", () => {
  it("is made without evaluating @peculiar/x509: a ready worker's thread has no reflect-metadata", async () => {
    // Twice: without a code cache and from it.
    expect(await startWorker(true)).toEqual({ reflectMetadata: "undefined" });
    expect(await startWorker(true)).toEqual({ reflectMetadata: "undefined" });
  });
});
