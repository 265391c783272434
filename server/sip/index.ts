// The SIP service: composes the registrar, digest nonces, the method table and the WebSocket
// transport on the app, runs their housekeeping on the clock, and offers what the API needs.
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Clock, RandomSource } from "../clock.js";
import type { Store } from "../store/index.js";
import { NonceBook } from "./digest.js";
import { Directory } from "./directory.js";
import { SipDispatcher, type SipLog } from "./dispatcher.js";
import { FlowTable } from "./flows.js";
import { sendCheckSync } from "./notify.js";
import { registerHandler } from "./register.js";
import { Registrar } from "./registrar.js";
import { ClientTransactions } from "./transactions.js";
import { registerWsTransport } from "./transport-ws.js";

export interface SipDeps {
  store: Store;
  clock: Clock;
  random: RandomSource;
  logger: FastifyBaseLogger;
}

export interface SipService {
  registrar: Registrar;
  /** The method table: the call engine registers INVITE, BYE ... here. */
  dispatcher: SipDispatcher;
  flows: FlowTable;
  directory: Directory;
  /** Ids of the account's registered devices. */
  registeredDevices(accountId: string): string[];
  /** NOTIFY check-sync to a device's bindings; answers how many were sent (0: not registered). */
  checkSync(accountId: string, deviceId: string): number;
}

/** Bindings, nonces and unanswered requests are checked this often against the clock. */
const HOUSEKEEPING_MS = 1000;

export async function registerSip(app: FastifyInstance, deps: SipDeps): Promise<SipService> {
  const log: SipLog = deps.logger;
  const registrar = new Registrar({
    clock: deps.clock,
    onListenerError: (err) => deps.logger.error({ err }, "sip: registration listener failed"),
  });
  const nonces = new NonceBook({ clock: deps.clock, random: deps.random });
  const transactions = new ClientTransactions({ clock: deps.clock });
  const flows = new FlowTable();
  const directory = new Directory(deps.store);
  const dispatcher = new SipDispatcher({ random: deps.random, transactions, log });
  dispatcher.handle("REGISTER", registerHandler({ directory, registrar, nonces, clock: deps.clock }));
  // In a plugin of its own, registered after @fastify/websocket (buildApp), whose route hook
  // must already be in place for a websocket route to be recognised.
  await app.register(async (scope) => registerWsTransport(scope, { dispatcher, flows, registrar, random: deps.random, log }));

  const housekeeping = setInterval(() => {
    registrar.sweep();
    nonces.prune();
    transactions.prune();
  }, HOUSEKEEPING_MS);
  housekeeping.unref();
  app.addHook("onClose", async () => clearInterval(housekeeping));

  return {
    registrar,
    dispatcher,
    flows,
    directory,
    registeredDevices: (accountId) => registrar.registeredDevices(accountId),
    checkSync: (accountId, deviceId) => sendCheckSync({ registrar, flows, transactions, random: deps.random }, accountId, deviceId),
  };
}
