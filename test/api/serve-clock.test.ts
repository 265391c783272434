// Serve mode's --clock controllable (server/clock-serve.ts): a test moves the server's time over
// the IPC channel it spawned the server with, and every layer reads that time (here the sign-in
// tokens' lifetime); without an IPC channel, or with another value, the option is refused.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGrant, REPO_ROOT, SERVER_ENTRY, serve, type Served } from "../helpers/serve.js";

/** The default token lifetime (server/index.ts): an hour without use. */
const TOKEN_TTL_MS = 3600 * 1000;

let served: Served;

beforeAll(async () => {
  served = await serve({ clock: true, timeoutMs: 30_000 });
});

afterAll(async () => {
  await served.stop();
});

function run(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SERVER_ENTRY, ...args], { cwd: REPO_ROOT, timeout: 30_000 }, (err, _stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === "number" ? err.code : -1, stderr });
    });
  });
}

async function accountGet(token: string, accountId: string): Promise<number> {
  const res = await fetch(`${served.url}/v2/accounts/${accountId}`, { headers: { "X-Auth-Token": token } });
  await res.arrayBuffer();
  return res.status;
}

describe("serve mode on a clock the test moves", () => {
  it("moves forward on advance and jump, and every layer reads the moved time: a token dies an hour on", async () => {
    const grant = await demoGrant(served.url);
    expect(await accountGet(grant.token, grant.accountId)).toBe(200);
    const before = await served.clock.now();
    const afterAdvance = await served.clock.advance(60_000);
    expect(afterAdvance - before).toBeGreaterThanOrEqual(60_000);
    // Used a minute on: the window slides, the token lives.
    expect(await accountGet(grant.token, grant.accountId)).toBe(200);
    const afterJump = await served.clock.jump(TOKEN_TTL_MS + 1_000);
    expect(afterJump - afterAdvance).toBeGreaterThanOrEqual(TOKEN_TTL_MS + 1_000);
    expect(await accountGet(grant.token, grant.accountId)).toBe(401);
  });

  it("refuses a move that is not a finite number of milliseconds >= 0, and does not move", async () => {
    const grant = await demoGrant(served.url);
    await expect(served.clock.advance(-1)).rejects.toThrow(/needs ms, a finite number of milliseconds >= 0/);
    await expect(served.clock.jump(Number.POSITIVE_INFINITY)).rejects.toThrow(/needs ms/);
    await expect(served.clock.advance(-TOKEN_TTL_MS * 2)).rejects.toThrow(/needs ms/);
    // Had any of them moved the clock an hour or more, the token would be dead.
    expect(await accountGet(grant.token, grant.accountId)).toBe(200);
  });

  it("is refused without an IPC channel from the process that started it, and for another value", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "sb-serve-clock-"));
    try {
      const noChannel = await run(["--port", "0", "--events-port", "0", "--data-dir", dataDir, "--clock", "controllable"]);
      expect(noChannel.code).toBe(2);
      expect(noChannel.stderr).toContain("--clock controllable needs an IPC channel");
      const sundial = await run(["--port", "0", "--events-port", "0", "--data-dir", dataDir, "--clock=sundial"]);
      expect(sundial.code).toBe(2);
      expect(sundial.stderr).toContain('--clock must be "system" or "controllable"');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("a server started without the option cannot be moved", async () => {
    const plain = await serve({ timeoutMs: 30_000 });
    try {
      await expect(plain.clock.advance(1_000)).rejects.toThrow(/was not given `clock`/);
    } finally {
      await plain.stop();
    }
  });
});
