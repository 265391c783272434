// Issue 14, items 5 and 14: the data directory on disk. Modes of what the real server writes,
// start-up with damaged collection files (recovered from the last good copy and the journal,
// with a warning naming what was lost), and stale or live locks.
import { execFile } from "node:child_process";
import { chmod, cp, mkdir, mkdtemp, readFile, readdir, rm, stat, truncate, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Store } from "../../server/store/index.js";
import { readCopy } from "../../server/store/collection-file.js";
import { SERVER_ENTRY, REPO_ROOT, demoGrant, serve, type DemoGrant, type Served } from "../helpers/serve.js";

let parent: string;
let dataDir: string;
const running: Served[] = [];

beforeEach(async () => {
  parent = await mkdtemp(join(tmpdir(), "sb-damaged-"));
  dataDir = join(parent, "data");
});

afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
  await rm(parent, { recursive: true, force: true });
});

async function start(): Promise<Served> {
  const served = await serve({ args: ["--data-dir", dataDir, "--media-workers", "0"] });
  running.push(served);
  return served;
}

async function stop(served: Served): Promise<void> {
  running.splice(running.indexOf(served), 1);
  await served.stop();
}

async function createDevice(url: string, grant: DemoGrant, name: string): Promise<string> {
  const res = await fetch(`${url}/v2/accounts/${grant.accountId}/devices`, {
    method: "PUT",
    headers: { "X-Auth-Token": grant.token, "Content-Type": "application/json" },
    body: JSON.stringify({ data: { name } }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

async function deviceNames(url: string, grant: DemoGrant): Promise<string[]> {
  const res = await fetch(`${url}/v2/accounts/${grant.accountId}/devices?page_size=500`, { headers: { "X-Auth-Token": grant.token } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { name: string }[] }).data.map((d) => d.name).sort();
}

/** The server's warning lines (pino JSON, level 40). */
function warnings(served: Served): { msg: string; [key: string]: unknown }[] {
  return served
    .output()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((entry) => entry.level === 40);
}

/** Every file and folder under `root`, with its permission bits. */
async function modes(root: string): Promise<{ path: string; mode: number; dir: boolean }[]> {
  const out: { path: string; mode: number; dir: boolean }[] = [];
  const walk = async (path: string): Promise<void> => {
    const info = await stat(path);
    out.push({ path, mode: info.mode & 0o777, dir: info.isDirectory() });
    if (info.isDirectory()) for (const name of await readdir(path)) await walk(join(path, name));
  };
  await walk(root);
  return out;
}

/**
 * A demo data directory whose devices collection has been rewritten twice (so a `.bak` copy
 * exists) and holds one device only the journal knows besides: the names it should list.
 */
async function twoGenerations(): Promise<{ names: string[]; accountId: string }> {
  let served = await start();
  let grant = await demoGrant(served.url);
  await createDevice(served.url, grant, "before the copy");
  await stop(served);
  served = await start();
  grant = await demoGrant(served.url);
  await createDevice(served.url, grant, "after the copy");
  const names = await deviceNames(served.url, grant);
  await stop(served);
  return { names, accountId: grant.accountId };
}

describe("item 5: the data directory is its owner's alone", () => {
  it("a new data directory is 0700 and everything the server wrote in it 0600 (folders 0700)", async () => {
    // Two runs, so each collection has been rewritten twice (a `.bak` copy beside it).
    for (const name of ["a phone", "another phone"]) {
      const served = await start();
      await createDevice(served.url, await demoGrant(served.url), name);
      await stop(served);
    }
    const entries = await modes(dataDir);
    // Collections, journals, copies, events, attachments (hold music), the lock while it ran.
    expect(entries.some((e) => e.path.endsWith("devices.json.bak"))).toBe(true);
    expect(entries.some((e) => e.path.endsWith(".wav"))).toBe(true);
    expect(entries.some((e) => e.path.includes(`${join(dataDir, "events")}/`))).toBe(true);
    for (const e of entries) expect({ path: e.path, mode: e.mode.toString(8) }).toEqual({ path: e.path, mode: e.dir ? "700" : "600" });
  });

  it("an existing directory with looser modes is tightened on start, with a log line", async () => {
    const served = await start();
    await stop(served);
    await chmod(dataDir, 0o755);
    await writeFile(join(dataDir, "accounts.json.bak"), "{}", { mode: 0o644 });
    await chmod(join(dataDir, "accounts.json.bak"), 0o644);
    await chmod(join(dataDir, "accounts.json"), 0o664);
    await chmod(join(dataDir, "accounts"), 0o775);
    // Not ours: a data directory pointed at a folder already in use leaves its other files be.
    const notOurs = join(dataDir, "README.txt");
    await writeFile(notOurs, "someone else's");
    await chmod(notOurs, 0o644);
    const again = await start();
    const line = warnings(again).find((w) => w.msg.includes("could be read by other users"));
    expect(line?.tightened).toBeGreaterThanOrEqual(4);
    for (const e of await modes(dataDir)) {
      if (e.path === notOurs) continue;
      expect({ path: e.path, mode: e.mode.toString(8) }).toEqual({ path: e.path, mode: e.dir ? "700" : "600" });
    }
    expect(((await stat(notOurs)).mode & 0o777).toString(8)).toBe("644");
  });
});

describe("item 14: damaged collection files on start", () => {
  let prepared: string;
  let expected: { names: string[]; accountId: string };

  beforeAll(async () => {
    prepared = await mkdtemp(join(tmpdir(), "sb-damaged-prepared-"));
    dataDir = join(prepared, "data");
    expected = await twoGenerations();
    expect(expected.names).toContain("after the copy");
  });

  afterAll(async () => {
    await rm(prepared, { recursive: true, force: true });
  });

  for (const [damage, spoil] of [
    ["cut short", async (file: string) => truncate(file, Math.floor((await stat(file)).size / 2))],
    ["empty", (file: string) => truncate(file, 0)],
    ["garbage", (file: string) => writeFile(file, "\u0000\u00ffnot json at all {[")],
  ] as const) {
    it(`a ${damage} collection file is recovered from its last good copy and the journal: nothing lost, said in the log`, async () => {
      const { names, accountId } = expected;
      await cp(join(prepared, "data"), dataDir, { recursive: true });
      await spoil(join(dataDir, "accounts", accountId, "devices.json"));
      const served = await start();
      const grant = await demoGrant(served.url);
      expect(await deviceNames(served.url, grant)).toEqual(names);
      const warning = warnings(served).find((w) => w.msg.startsWith("collection devices:"));
      expect(warning?.msg).toContain("recovered from its last good copy");
      expect(warning?.msg).toContain("nothing lost");
      // The damaged file is set aside, never deleted: someone may want to look at it.
      expect(typeof warning?.set_aside).toBe("string");
      await stat(String(warning?.set_aside));
      // And the collection keeps working on the recovered file, which is whole again.
      await createDevice(served.url, grant, "after the recovery");
      await stop(served);
      const store = await Store.open({ dir: dataDir });
      const devices = await store.account(accountId, "devices");
      expect(devices.all().map((d) => String(d.data.name)).sort()).toEqual([...names, "after the recovery"].sort());
      expect((await readCopyState(join(dataDir, "accounts", accountId, "devices.json")))).toBe("ok");
      await store.close();
    });
  }

  it("with the copy damaged too, the whole documents before the damage and the journal are kept, and the loss is said", async () => {
    await mkdir(dataDir, { recursive: true });
    const account = "0123456789abcdef0123456789abcdef";
    let store = await Store.open({ dir: dataDir });
    let devices = await store.account(account, "devices");
    for (let i = 0; i < 20; i++) await devices.create({ name: `early ${i}` });
    await store.flush();
    for (let i = 0; i < 20; i++) await devices.create({ name: `middle ${i}` });
    await store.flush();
    // The journal the copy needs is gone too: what the file held past the cut is lost.
    const folder = join(dataDir, "accounts", account);
    for (const name of await readdir(folder)) if (name.endsWith(".journal")) await rm(join(folder, name));
    await store.close();
    store = await Store.open({ dir: dataDir });
    devices = await store.account(account, "devices");
    await devices.create({ name: "late" });
    // Killed before any rewrite: "late" is in the journal only.
    const file = join(folder, "devices.json");
    const text = await readFile(file, "utf8");
    const cut = text.indexOf('"name":"middle 5"');
    await writeFile(file, text.slice(0, cut));
    await writeFile(join(folder, "devices.json.bak"), "garbage");
    const told: { message: string; details: Record<string, unknown> }[] = [];
    const reopened = await Store.open({ dir: dataDir, onWarning: (message, details) => told.push({ message, details }) });
    const names = (await reopened.account(account, "devices")).all().map((d) => String(d.data.name));
    expect(names).toEqual([...Array.from({ length: 20 }, (_, i) => `early ${i}`), ...Array.from({ length: 5 }, (_, i) => `middle ${i}`), "late"]);
    expect(told).toHaveLength(1);
    expect(told[0]?.message).toMatch(/^collection devices: not JSON .*no good copy; kept 25 whole documents/);
    expect(told[0]?.message).toContain("are lost");
    expect(told[0]?.details).toMatchObject({ salvaged_documents: 25, journal_changes: 1, documents_now: 26 });
    await reopened.close();
  });
});

describe("item 14: a damaged journal", () => {
  it("skips lines that are not changes, keeps every other one and says how many were lost", async () => {
    const account = "0123456789abcdef0123456789abcdef";
    const store = await Store.open({ dir: dataDir });
    const devices = await store.account(account, "devices");
    const first = await devices.create({ name: "first" });
    const folder = join(dataDir, "accounts", account);
    const journal = join(folder, (await readdir(folder)).find((n) => n.endsWith(".journal")) ?? "");
    // Garbage, a JSON number and a put without an id between two good lines; a torn last line.
    const second = JSON.stringify({ put: { ...first, id: "b".repeat(32), data: { name: "second" } } });
    await writeFile(journal, `${await readFile(journal, "utf8")}\u0000garbage\n123\n{"put":{"rev":"1-x"}}\n${second}\n{"put":{"id":`);
    const told: { message: string; details: Record<string, unknown> }[] = [];
    const reopened = await Store.open({ dir: dataDir, onWarning: (message, details) => told.push({ message, details }) });
    const names = (await reopened.account(account, "devices")).all().map((d) => d.data.name);
    expect(names).toEqual(["first", "second"]);
    expect(told.map((t) => t.message)).toEqual(["collection devices: 3 journal lines were unreadable and skipped: the changes they held are lost"]);
    await reopened.close();
  });
});

describe("item 14: the lock", () => {
  const lock = () => join(dataDir, "switchboard.lock");

  it("a lock naming a live process that is not a Switchboard server is taken over, said in the log", async () => {
    await mkdir(dataDir, { recursive: true });
    // pid 1 is alive (init), as is the test's own process, which another lock names with a start
    // time that is not its own (its pid reused). The lock's owner runs in another process here.
    const owner = await new Promise<{ pid: number; kill: () => void }>((resolve) => {
      const child = execFile(process.execPath, ["-e", "setInterval(() => {}, 1000)"]);
      resolve({ pid: child.pid ?? 0, kill: () => child.kill() });
    });
    try {
      for (const content of [
        "1",
        String(owner.pid),
        "",
        JSON.stringify({ pid: owner.pid, host: hostname(), boot: null, started: 1, since: new Date().toISOString() }),
      ]) {
        await writeFile(lock(), content);
        const told: string[] = [];
        const store = await Store.open({ dir: dataDir, onWarning: (message) => told.push(message) });
        expect(told.filter((m) => m.includes("taking over a stale lock"))).toHaveLength(1);
        await store.close();
      }
    } finally {
      owner.kill();
    }
    // The real server says so in its log.
    await writeFile(lock(), "1");
    const served = await start();
    expect(warnings(served).some((w) => w.msg.includes("taking over a stale lock"))).toBe(true);
  });

  it("a lock held by a running server still refuses a second one, with a clear message and nothing changed", async () => {
    const first = await start();
    const before = await readFile(lock(), "utf8");
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [SERVER_ENTRY, "--port", "0", "--events-port", "0", "--data-dir", dataDir], { cwd: REPO_ROOT, timeout: 30_000 }, (_err, _stdout, stderr) =>
        resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the data directory ${dataDir} is in use by another Switchboard server (process ${first.pid} on ${hostname()}`);
    expect(await readFile(lock(), "utf8")).toBe(before);
    // The first server still serves.
    await createDevice(first.url, await demoGrant(first.url), "still served");
  });
});

async function readCopyState(file: string): Promise<string> {
  return (await readCopy(file)).state;
}
