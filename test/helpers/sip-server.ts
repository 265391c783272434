// A SIP-only server for call signalling tests: a store with one account, the real SIP layer on a
// Fastify app on a random port, devices made straight in the store. No call engine is attached,
// so each test drives `calls` itself, as server/calls/ will.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { systemRandom } from "../../server/clock.js";
import { buildApp } from "../../server/http/app.js";
import { registerSip, type SipService } from "../../server/sip/index.js";
import { Store } from "../../server/store/index.js";
import { TestClock } from "./api.js";
import { hex, type TestDevice } from "./sip-client.js";

export const CALLS_REALM = "calls.switchboard.test";

export interface SipTestServer {
  url: string;
  sip: SipService;
  clock: TestClock;
  accountId: string;
  /** A new device of the account with fresh SIP credentials (unregistered). */
  device(fields?: Record<string, unknown>): Promise<TestDevice>;
  close(): Promise<void>;
}

export async function startSipServer(): Promise<SipTestServer> {
  const clock = new TestClock();
  const dataDir = await mkdtemp(join(tmpdir(), "sb-sip-"));
  const store = await Store.open({ dir: dataDir, clock, random: systemRandom });
  const account = await (await store.global("accounts")).create({ name: "calls", realm: CALLS_REALM, enabled: true });
  const logger = pino({ level: "silent" });
  let port = 0;
  const app = buildApp({ logger, clock, hosts: [], allowOrigins: [], port: () => port, rendererDir: null });
  const sip = await registerSip(app, { store, clock, random: systemRandom, logger });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    sip,
    clock,
    accountId: account.id,
    async device(fields = {}) {
      const username = `sip_${hex(4)}`;
      const password = hex(8);
      const doc = await (await store.account(account.id, "devices")).create({ name: username, enabled: true, ...fields, sip: { username, password } });
      return { id: doc.id, username, password };
    },
    async close() {
      await app.close();
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
