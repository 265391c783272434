// The desktop app's demo password (issue 14, item 8): started as the app starts it (with
// --demo-password-file), the server seeds the demo users with a random per-install password in a
// 0600 file, never the documented one, and moves an install seeded earlier off the documented one.
// Serve mode without the flag keeps the documented password.
import { mkdtemp, readFile, rm, stat, writeFile, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { demoPasswordFile, serverArguments } from "../../main/server-process.js";
import { parseArgs } from "../../server/config.js";
import { DEMO_LOGINS, DEMO_PASSWORD } from "../../server/demo.js";
import { startServer, type RunningServer } from "../../server/index.js";
import { credentials, localServerConfig } from "../helpers/api.js";
import { serve } from "../helpers/serve.js";

let dir: string;
const running: RunningServer[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-demo-pw-"));
});
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** The server as the desktop app starts it: the flags main/server-process.ts passes, on `dir`. */
async function startAsDesktop(): Promise<RunningServer> {
  const args = serverArguments({ port: 0, dataDir: dir, isPackaged: false, resourcesPath: "", appPath: "" });
  const flags = parseArgs(args, localServerConfig(dir));
  const server = await startServer({ ...flags, assetsDir: localServerConfig(dir).assetsDir, port: 0 });
  running.push(server);
  return server;
}

async function startServeMode(): Promise<RunningServer> {
  const server = await startServer(localServerConfig(dir));
  running.push(server);
  return server;
}

async function stop(server: RunningServer): Promise<void> {
  running.splice(running.indexOf(server), 1);
  await server.close();
}

async function login(server: RunningServer, username: string, password: string): Promise<number> {
  const res = await fetch(`${server.url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials(username, password), account_name: "demo" } }),
  });
  return res.status;
}

describe("the desktop app's demo users", () => {
  it("get a random password kept in a file only the user can read, never the documented one, the same on every start", async () => {
    const first = await startAsDesktop();
    const file = demoPasswordFile(dir);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const password = (await readFile(file, "utf8")).trim();
    expect(password).not.toBe(DEMO_PASSWORD);
    expect(password.length).toBeGreaterThanOrEqual(16);
    for (const { username } of DEMO_LOGINS) {
      expect(await login(first, username, DEMO_PASSWORD), username).toBe(401);
      expect(await login(first, username, password), username).toBe(201);
    }
    await stop(first);
    const again = await startAsDesktop();
    expect((await readFile(file, "utf8")).trim()).toBe(password);
    expect(await login(again, "admin", password)).toBe(201);
  });

  it("move an install seeded with the documented password to its own, keeping a password a user chose since", async () => {
    const before = await startServeMode();
    expect(await login(before, "admin", DEMO_PASSWORD)).toBe(201);
    const accountId = (await before.store.global("accounts")).all()[0]?.id ?? "";
    const users = await before.store.account(accountId, "users");
    const agent2 = users.all().find((u) => u.data.username === "agent2");
    if (!agent2) throw new Error("no agent2 in the demo account");
    await users.update(agent2.id, { ...agent2.data, pvt_md5_auth: credentials("agent2", "chosen-by-blair") });
    await stop(before);

    const after = await startAsDesktop();
    const password = (await readFile(demoPasswordFile(dir), "utf8")).trim();
    expect(await login(after, "admin", DEMO_PASSWORD)).toBe(401);
    expect(await login(after, "agent1", DEMO_PASSWORD)).toBe(401);
    expect(await login(after, "admin", password)).toBe(201);
    expect(await login(after, "agent2", "chosen-by-blair")).toBe(201);
  });

  it("tighten a password file left readable by others, and refuse to start on one that holds no password", async () => {
    const file = demoPasswordFile(dir);
    await writeFile(file, "a-password-set-by-hand\n", { mode: 0o644 });
    await chmod(file, 0o644);
    const server = await startAsDesktop();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await login(server, "admin", "a-password-set-by-hand")).toBe(201);
    await stop(server);

    await writeFile(file, "\n");
    await expect(startAsDesktop()).rejects.toThrow(/does not hold a demo password/);
  });
});

describe("serve mode", () => {
  it("keeps the documented password without the flag, and with it names the file instead of printing a password", async () => {
    const plain = await startServeMode();
    expect(await login(plain, "agent1", DEMO_PASSWORD)).toBe(201);
    await stop(plain);

    const file = join(dir, "elsewhere", "demo-password");
    const served = await serve({ args: ["--demo-password-file", file] });
    try {
      const password = (await readFile(file, "utf8")).trim();
      expect(served.output()).toContain(`password in ${file}`);
      expect(served.output()).not.toContain(password);
      expect(served.output()).not.toContain(`password "${DEMO_PASSWORD}"`);
    } finally {
      await served.stop();
    }
  });
});
