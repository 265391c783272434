// A real server (startServer, in this process) on a data directory of the test's own, which a
// test can stop and start again on the same data: each test gets a fresh directory, and whatever
// server is running at its end is closed and the directory removed.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startServer, type RunningServer } from "../../server/index.js";
import type { ServerConfig } from "../../server/config.js";
import { localServerConfig } from "./api.js";

export interface RestartableServer {
  /** The running server's base URL (throws when none is running). */
  readonly url: string;
  /** The current test's data directory. */
  readonly dataDir: string;
  /** Starts a server on the test's data directory (closing the one running, if any). */
  start(overrides?: Partial<ServerConfig>): Promise<RunningServer>;
  /** Closes the running server, if any; the data stays for the next start. */
  stop(): Promise<void>;
}

/** Registers the test file's beforeEach and afterEach; `prefix` names the temporary directories. */
export function restartableServer(prefix: string): RestartableServer {
  let dataDir = "";
  let server: RunningServer | undefined;
  const stop = async (): Promise<void> => {
    const running = server;
    server = undefined;
    await running?.close();
  };
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  return {
    get url(): string {
      if (server === undefined) throw new Error("no server is running");
      return server.url;
    },
    get dataDir(): string {
      return dataDir;
    },
    async start(overrides = {}) {
      await stop();
      server = await startServer(localServerConfig(dataDir, overrides));
      return server;
    },
    stop,
  };
}
