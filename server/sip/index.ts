// The SIP service: composes the registrar, digest nonces, the method table, call signalling and
// the WebSocket transport on the app, runs their housekeeping on the clock, and offers what the API needs.
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Clock, RandomSource } from "../clock.js";
import type { Store } from "../store/index.js";
import type { CallSignalling } from "./call-signalling.js";
import { SipCalls } from "./call-signalling-impl.js";
import { NonceBook } from "./digest.js";
import { Directory } from "./directory.js";
import { SipDispatcher, type SipLog } from "./dispatcher.js";
import { FlowTable } from "./flows.js";
import { sendCheckSync } from "./notify.js";
import { registerHandler } from "./register.js";
import { Registrar } from "./registrar.js";
import { ClientTransactions } from "./transactions.js";
import { registerWsTransport } from "./transport-ws.js";
import { registerWebsocket } from "../http/app.js";

export interface SipDeps {
  store: Store;
  clock: Clock;
  random: RandomSource;
  logger: FastifyBaseLogger;
}

export interface SipService {
  registrar: Registrar;
  /** The method table (INVITE, BYE ... belong to `calls`). */
  dispatcher: SipDispatcher;
  /** Calls in and out of registered devices: what the call engine drives. */
  calls: CallSignalling;
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
  const transactions = new ClientTransactions({ clock: deps.clock, onError: (err) => log.error({ err }, "sip: a request's outcome failed to be handled") });
  const flows = new FlowTable();
  const directory = new Directory(deps.store);
  const dispatcher = new SipDispatcher({ random: deps.random, transactions, log });
  dispatcher.handle("REGISTER", registerHandler({ directory, registrar, nonces, clock: deps.clock }));
  const calls = new SipCalls({ dispatcher, registrar, flows, transactions, directory, nonces, clock: deps.clock, random: deps.random, log });
  // Dialogs first, so a call on a closed socket ends as `bye` before its requests fail as 503.
  flows.on("closed", (flowId) => {
    calls.flowClosed(flowId);
    transactions.dropFlow(flowId);
  });
  // In a scope of its own with @fastify/websocket (registerWebsocket), whose route hook must be
  // in place before the route for a websocket route to be recognised.
  await app.register(async (scope) => {
    await registerWebsocket(scope);
    registerWsTransport(scope, {
      dispatcher,
      flows,
      registrar,
      random: deps.random,
      log,
      inUse: (flowId) => registrar.hasFlow(flowId) || calls.busy(flowId),
    });
  });

  const stopHousekeeping = deps.clock.every(HOUSEKEEPING_MS, () => {
    registrar.sweep();
    nonces.prune();
    transactions.prune();
    calls.sweep();
  });
  app.addHook("onClose", async () => stopHousekeeping());

  return {
    registrar,
    dispatcher,
    calls,
    flows,
    directory,
    registeredDevices: (accountId) => registrar.registeredDevices(accountId),
    checkSync: (accountId, deviceId) => sendCheckSync({ registrar, flows, transactions, random: deps.random }, accountId, deviceId),
  };
}

