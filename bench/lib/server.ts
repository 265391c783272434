// The server an in-process benchmark measures: serve mode's startServer on a free port with a
// fresh data directory (the demo account unless told otherwise), and a login to it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerConfig } from "../../server/config.js";
import { startServer, type RunningServer } from "../../server/index.js";
import { credentials, DEMO_PASSWORD, localServerConfig } from "../../test/helpers/api.js";

export interface BenchServer {
  server: RunningServer;
  dataDir: string;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

export async function startBenchServer(name: string, config: Partial<ServerConfig> = {}): Promise<BenchServer> {
  const dataDir = await mkdtemp(join(tmpdir(), `sb-bench-${name}-`));
  const server = await startServer(localServerConfig(dataDir, config));
  return {
    server,
    dataDir,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface BenchLogin {
  token: string;
  accountId: string;
  ownerId: string;
}

/** A token for `username` of the demo account (or `account`), by md5 credentials. */
export async function benchLogin(url: string, username = "admin", password = DEMO_PASSWORD, account = "demo"): Promise<BenchLogin> {
  const res = await fetch(`${url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials(username, password), account_name: account } }),
  });
  const body = (await res.json()) as { auth_token?: string; data?: { account_id?: string; owner_id?: string } };
  if (res.status !== 201 || !body.auth_token) throw new Error(`login as ${username} failed: ${res.status}`);
  return { token: body.auth_token, accountId: body.data?.account_id ?? "", ownerId: body.data?.owner_id ?? "" };
}
