// The server an in-process benchmark measures: serve mode's startServer on a free port with a
// fresh data directory (the demo account unless told otherwise), and a login to it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerConfig } from "../../server/config.js";
import { startServer, type RunningServer } from "../../server/index.js";
import { localServerConfig } from "../../test/helpers/api.js";

export { benchLogin, type BenchLogin } from "./login.js";

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

