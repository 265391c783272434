// The built server's code cache (out/main/server.js compiling out/main/server.cjs, server/boot.ts
// and server/code-cache.ts): a first start with none serves and then writes it; a start with it
// serves from it and leaves it alone; a damaged cache file is a normal start and is written
// afresh; two servers starting at once on one empty cache folder both serve, and leave one whole
// cache. Each start must answer its first requests (a sign-in, then a read) first time right.
// Those run without media workers (the server's own cache alone; the workers' bundle is compiled
// without one: server/media/worker/boot.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { demoGrant, REPO_ROOT, SERVER_ENTRY } from "../helpers/serve.js";
import { poll } from "../helpers/poll.js";

// Several cold starts a test: on a loaded machine each takes seconds.
const TEST_TIMEOUT_MS = 300_000;
const URL_LINE = /Switchboard is serving (http:\/\/127\.0\.0\.1:[1-9]\d*)/;

interface Started {
  url: string;
  child: ChildProcess;
}

let scratch: string;
let cacheDir: string;
const running = new Set<Started>();

beforeAll(async () => {
  if (!existsSync(SERVER_ENTRY)) throw new Error(`${SERVER_ENTRY} is missing: run npm run build first`);
  scratch = await mkdtemp(join(tmpdir(), "sb-start-code-cache-"));
});

afterEach(async () => {
  await Promise.all([...running].map(stop));
  await rm(cacheDir, { recursive: true, force: true });
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function start(name: string, mediaWorkers = 0): Promise<Started> {
  const dataDir = await mkdtemp(join(scratch, `${name}-`));
  const args = [SERVER_ENTRY, "--port", "0", "--events-port", "0", "--data-dir", dataDir, "--log-level", "warn", "--media-workers", String(mediaWorkers)];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, SWITCHBOARD_CODE_CACHE: cacheDir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const m = URL_LINE.exec(output);
      if (m?.[1]) resolve(m[1]);
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    child.once("exit", (code) => reject(new Error(`the server exited (${code}) before serving:\n${output}`)));
  });
  const started = { url, child };
  running.add(started);
  return started;
}

async function stop(started: Started): Promise<void> {
  running.delete(started);
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  const exited = new Promise((resolve) => started.child.once("exit", resolve));
  started.child.kill("SIGTERM");
  await exited;
}

/** The first API answers, each first time right: the sign-in's 201, then an authenticated read's 200. */
async function firstAnswers(url: string): Promise<void> {
  const grant = await demoGrant(url);
  const read = await fetch(`${url}/v2/accounts/${grant.accountId}`, { headers: { "X-Auth-Token": grant.token } });
  expect(read.status).toBe(200);
  expect(((await read.json()) as { data: { name: string } }).data.name).toBe("demo");
}

/** The cache files of one bundle, each checked whole (its digest of the rest); waits for the first to appear. */
async function cacheFiles(bundle = "server"): Promise<{ name: string; bytes: Buffer; whole: boolean }[]> {
  const ours = (n: string) => n.startsWith(`${bundle}-`) && n.endsWith(".v8");
  await poll(`the ${bundle} code cache to be written`, async () => ((await readdir(cacheDir).catch(() => [])).some(ours) ? true : undefined));
  const names = (await readdir(cacheDir)).filter(ours);
  return Promise.all(
    names.map(async (name) => {
      const bytes = await readFile(join(cacheDir, name));
      return { name, bytes, whole: createHash("sha256").update(bytes.subarray(32)).digest().equals(bytes.subarray(0, 32)) };
    }),
  );
}

describe("the built server's code cache", () => {
  it("is written by a first start, used by the next, which leaves it as it was", async () => {
    cacheDir = join(scratch, "cache-first");
    const first = await start("first");
    await firstAnswers(first.url);
    const [written, ...others] = await cacheFiles();
    expect(others).toEqual([]);
    expect(written?.whole).toBe(true);
    await stop(first);
    const before = await stat(join(cacheDir, written?.name ?? ""));

    const second = await start("second");
    await firstAnswers(second.url);
    await stop(second);
    const after = await cacheFiles();
    expect(after.map((f) => f.name)).toEqual([written?.name]);
    expect(after[0]?.bytes.equals(written?.bytes ?? Buffer.alloc(0))).toBe(true);
    expect((await stat(join(cacheDir, written?.name ?? ""))).mtimeMs).toBe(before.mtimeMs);
  }, TEST_TIMEOUT_MS);

  it("starts normally from a damaged cache file and writes it afresh", async () => {
    cacheDir = join(scratch, "cache-damaged");
    const first = await start("first");
    await firstAnswers(first.url);
    const [written] = await cacheFiles();
    await stop(first);
    const file = join(cacheDir, written?.name ?? "");
    const damaged = Buffer.from(written?.bytes ?? Buffer.alloc(0));
    for (let i = 64; i < damaged.length; i += 997) damaged[i] = (damaged[i] ?? 0) ^ 0x5a;
    await writeFile(file, damaged);

    const second = await start("second");
    await firstAnswers(second.url);
    await poll("the damaged cache to be written afresh", async () => ((await cacheFiles())[0]?.whole ? true : undefined));
    await stop(second);
    // And a file cut short.
    await writeFile(file, damaged.subarray(0, 40));
    const third = await start("third");
    await firstAnswers(third.url);
    await poll("the cut cache to be written afresh", async () => ((await cacheFiles())[0]?.whole ? true : undefined));
  }, TEST_TIMEOUT_MS);

  it("serves two servers starting at once on one empty cache folder, and leaves one whole cache", async () => {
    cacheDir = join(scratch, "cache-together");
    const [a, b] = await Promise.all([start("a"), start("b")]);
    await Promise.all([firstAnswers(a.url), firstAnswers(b.url)]);
    const files = await cacheFiles();
    expect(files).toHaveLength(1);
    expect(files[0]?.whole).toBe(true);
    // No temporary file left once both have written.
    await Promise.all([stop(a), stop(b)]);
    expect((await readdir(cacheDir)).filter((n) => !n.endsWith(".v8"))).toEqual([]);
  }, TEST_TIMEOUT_MS);
});

