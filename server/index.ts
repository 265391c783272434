// startServer(): composes the store, the demo data and the HTTP app, and listens.
// It never imports electron; Electron's main process and serve mode both call it.
import { createServer } from "node:net";
import { pino, type Logger } from "pino";
import { systemClock, systemRandom, type Clock, type RandomSource } from "./clock.js";
import { DEFAULT_EVENTS_PORT, DEFAULT_PORT, LOOPBACK, type ServerConfig } from "./config.js";
import { buildApp } from "./http/app.js";
import { Store } from "./store/index.js";
import { demoPassword, seedDemo } from "./demo.js";
import { AuthService } from "./auth/index.js";
import { registerApi } from "./api/index.js";
import { registerSip } from "./sip/index.js";
import type { EndpointSpec } from "./http/endpoint.js";
import { recordRoutes, registerOpenApi, type RouteSeen } from "./http/openapi.js";
import { startEvents, type Events } from "./events/index.js";
import { startEventSockets } from "./events/websocket.js";
import { startWebhookDispatcher } from "./events/webhook-dispatcher.js";
import { WebhookFaults } from "./events/webhook-faults.js";
import { publishRegistrations } from "./events/registrations.js";
import { MediaEngine } from "./media/index.js";
import { startCalls, type CallEngine } from "./calls/index.js";
import { SimCallers } from "./sim/callers.js";
import { SpeechSynthesiser } from "./sim/speech.js";
import { startTexting } from "./texting/index.js";
import { TEXTING_API_PREFIX, TEXTING_PATH_FAILURES } from "./texting/routes.js";
import { buildAsyncApi } from "./events/asyncapi.js";
import type { CallqEngine } from "./callq/index.js";
import { startCallqHost } from "./callq-host/index.js";
import { registerCallqModules } from "./callq-host/modules/index.js";
import { followDevicePresence } from "./callq-host/presence.js";

export interface RunningServer {
  url: string;
  port: number;
  host: string;
  store: Store;
  events: Events;
  /** The call engine: live channels and their commands. */
  calls: CallEngine;
  /** The call-queue engine: queues, recipients, sessions. */
  callq: CallqEngine;
  /** The simulator: simulated callers, phones and bot agents. */
  sim: SimCallers;
  /** The media engine: the server's legs, its frame clock and media workers. */
  media: MediaEngine;
  /** The event websocket's classic port (5555 unless configured); null when it could not be had. */
  eventsPort: number | null;
  /** The HTTP routes the app serves (method and Fastify URL), for the contract tests. */
  routes: readonly RouteSeen[];
  logger: Logger;
  close(): Promise<void>;
}

const DEFAULT_TOKEN_TTL_S = 3600;
const VERSION = "0.1.0";
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1"]);

export async function startServer(config: ServerConfig): Promise<RunningServer> {
  const clock = config.clock ?? systemClock;
  const random = config.random ?? systemRandom;
  const logger = config.logger ?? pino({ level: config.logLevel, base: { service: "switchboard" } });
  // The call engine: server-side media on one frame clock, SIP calls (or a test's stand-in) in
  // and out. Closed with the app, before the store, so every hung-up call still writes its CDR.
  const media = new MediaEngine({
    wallClock: config.mediaClock ?? clock,
    random,
    workers: config.mediaWorkers ?? 0,
    ...config.media,
    onWorkerFailure: (reason) => logger.error(`${reason}: its calls lost their audio and were hung up`),
  });
  // The first media worker loads werift (a few hundred ms) on another core while this thread opens
  // the store and registers the routes, so a call placed the moment the server listens finds it
  // ready; the others follow it one at a time. A start that fails stops them.
  media.warm();
  try {
    return await composeServer(config, { clock, random, logger, media });
  } catch (err) {
    await media.close();
    throw err;
  }
}

interface Parts {
  clock: Clock;
  random: RandomSource;
  logger: Logger;
  media: MediaEngine;
}

async function composeServer(config: ServerConfig, { clock, random, logger, media }: Parts): Promise<RunningServer> {
  const store = await Store.open({ dir: config.dataDir, clock, random, onWarning: (message, details) => logger.warn(details, message) });
  const events = await startEvents({ store, clock, dataDir: config.dataDir });
  const webhookFaults = new WebhookFaults();
  const webhooks = await startWebhookDispatcher({
    store,
    faults: webhookFaults,
    bus: events.bus,
    clock,
    logger,
    retryDelayMs: config.webhookRetryDelayMs,
    timeoutMs: config.webhookTimeoutMs,
  });
  if (config.demo) {
    const password = config.demoPasswordFile === undefined ? undefined : await demoPassword(config.demoPasswordFile, random);
    await seedDemo(store, { assetsDir: config.assetsDir, logger, password });
  }

  const auth = await AuthService.open(store, { tokenTtlS: config.tokenTtlS ?? DEFAULT_TOKEN_TTL_S });

  const port = await choosePort(config, logger);
  let listening = port;
  const hosts = LOOPBACK_HOSTS.has(config.host) || isWildcard(config.host) ? [] : [config.host];
  const app = buildApp({
    logger,
    clock,
    random,
    hosts,
    allowOrigins: config.allowOrigins,
    port: () => listening,
    rendererDir: config.rendererDir,
    ownFailureShapes: [TEXTING_PATH_FAILURES],
    authenticate: (token) => auth.authenticate(token),
  });
  const routes = recordRoutes(app);
  const catalogue: EndpointSpec[] = [];
  const sip = await registerSip(app, { store, clock, random, logger });
  publishRegistrations(sip.registrar, events.bus, () => clock.now() / 1000);
  // Simulated callers reach the engine as inbound calls beside SIP's; their speech is cached in the data directory.
  const sim = new SimCallers({
    store,
    media,
    clock,
    random,
    bus: events.bus,
    speech: new SpeechSynthesiser({ dataDir: config.dataDir, assetsDir: config.assetsDir }),
    onError: (err, what, callId) => logger.warn({ err, call_id: callId }, `sim: ${what} failed`),
  });
  const calls = startCalls({ store, bus: events.bus, media, signalling: sim.signalling(config.callSignalling ?? sip.calls), clock, logger });
  // Recordings a crash cut short are stored before anyone can ask for the list.
  await calls.recordings.ready;
  const callqHost = await startCallqHost({ store, bus: events.bus, scheduler: clock, logger, deviceGraceMs: config.deviceGraceMs });
  const callq = callqHost.engine;
  registerCallqModules(calls, callq);
  // Registrations tell the queue engine who can be rung: no device for the grace, no offer.
  const stopPresence = await followDevicePresence({ registrar: sip.registrar, store, engine: callq, logger });
  app.addHook("onClose", async () => {
    sim.close();
    stopPresence();
    await calls.close();
    await callqHost.close();
    await media.close();
  });
  // Texting: its API under /texting, the simulated carrier on the clock, the relay with the webhooks' retry rule.
  const texting = await startTexting(app, { store, bus: events.bus, clock, logger, relayRetryDelayMs: config.webhookRetryDelayMs, relayTimeoutMs: config.webhookTimeoutMs });
  app.addHook("onClose", () => texting.stop());
  registerApi(app, {
    clock,
    auth,
    catalogue,
    store,
    collection: (accountId, name) => store.account(accountId, name),
    global: (name) => store.global(name),
    sip,
    events,
    calls,
    sim,
    callq,
    texting,
    webhookFaults,
  });
  const eventSockets = await startEventSockets(app, {
    bus: events.bus,
    log: events.log,
    auth,
    store,
    limits: config.eventSockets,
    logger,
    clock,
    host: config.host,
    port: config.eventsPort ?? DEFAULT_EVENTS_PORT,
    hosts,
    allowOrigins: config.allowOrigins,
    consolePort: () => listening,
  });
  await registerOpenApi(app, catalogue, VERSION, { textingPrefix: TEXTING_API_PREFIX, asyncApi: buildAsyncApi(VERSION) });
  if (!LOOPBACK_HOSTS.has(config.host)) {
    logger.warn(
      { host: config.host },
      "listening beyond this machine: other hosts can reach the API; consoles from other origins still need --allow-origin",
    );
  }
  await app.listen({ host: config.host, port });
  const address = app.server.address();
  listening = typeof address === "object" && address ? address.port : port;
  const urlHost = isWildcard(config.host) ? LOOPBACK : config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${urlHost}:${listening}`;

  let closing: Promise<void> | null = null;
  return {
    url,
    port: listening,
    host: config.host,
    store,
    events,
    calls,
    callq,
    sim,
    media,
    eventsPort: eventSockets.port,
    routes,
    logger,
    close() {
      closing ??= (async () => {
        await app.close();
        await eventSockets.close();
        await webhooks.stop();
        await store.close();
        await events.close();
      })();
      return closing;
    },
  };
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::";
}

/** The configured port, or when the default 8000 is taken, the next free one (said in the log). */
async function choosePort(config: ServerConfig, logger: Logger): Promise<number> {
  if (config.port === 0 || config.portExplicit) return config.port;
  for (let candidate = config.port; candidate < config.port + 20; candidate++) {
    if (await portIsFree(config.host, candidate)) {
      if (candidate !== config.port) {
        logger.warn(`port ${config.port} is in use; using port ${candidate} instead`);
      }
      return candidate;
    }
  }
  logger.warn(`ports ${config.port}..${config.port + 19} are in use; using a random free port`);
  return 0;
}

function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

export { DEFAULT_PORT };
