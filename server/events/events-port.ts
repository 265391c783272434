// The event websocket's classic port (5555): a second small listener on the same host, behind the
// same Host/Origin guard, serving the routes it is given. A taken port is a warning, not a failure.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyPluginAsync } from "fastify";
import fastifyWebsocket from "@fastify/websocket";
import type { Clock } from "../clock.js";
import { ApiError, errorEnvelope } from "../http/errors.js";
import { registerGuard } from "../http/guard.js";

export interface EventsPortOptions {
  host: string;
  /** 0 for a random free port. */
  port: number;
  /** Host names the guard accepts besides loopback. */
  hosts: string[];
  allowOrigins: string[];
  /** The main listener's port: the console it serves names that port in its Origin. */
  consolePort: () => number;
  logger: FastifyBaseLogger;
  clock: Clock;
  routes: FastifyPluginAsync;
}

export interface EventsPort {
  port: number;
  close(): Promise<void>;
}

/** Listens, or answers null (with a warning) when the port cannot be had. */
export async function startEventsPort(options: EventsPortOptions): Promise<EventsPort | null> {
  let listening = options.port;
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    // A subscriber that stopped reading must not hold shutdown hostage.
    forceCloseConnections: true,
  });
  app.setErrorHandler((error, request, reply) => {
    const apiError = error instanceof ApiError ? error : new ApiError("unspecified_fault");
    if (apiError.status >= 500) request.log.error({ err: error }, "events port: request failed");
    return reply.status(apiError.status).send(errorEnvelope(apiError, request.id, new Date(options.clock.now())));
  });
  app.register(fastifyWebsocket, { options: { maxPayload: 1024 * 1024 } });

  const allowed = new Set(options.allowOrigins.map(normaliseOrigin));
  // The console's pages name the main port in Origin. Judged as if they named this one, they
  // pass the guard below exactly when they would pass the main listener's.
  app.addHook("onRequest", async (request) => {
    const origin = request.headers.origin;
    if (origin === undefined || allowed.has(normaliseOrigin(origin))) return;
    const moved = withPort(origin, options.consolePort(), listening);
    if (moved !== undefined) request.headers.origin = moved;
  });
  registerGuard(app, { hosts: options.hosts, allowOrigins: options.allowOrigins, port: () => listening });
  app.register(options.routes);

  try {
    await app.listen({ host: options.host, port: options.port });
  } catch (err) {
    options.logger.warn({ err, port: options.port }, `event websocket port ${options.port} is unavailable; events are served on /events only`);
    await app.close();
    return null;
  }
  const address = app.server.address();
  listening = typeof address === "object" && address ? address.port : options.port;
  return { port: listening, close: () => app.close() };
}

function normaliseOrigin(origin: string): string {
  return origin.replace(/\/+$/, "").toLowerCase();
}

/** The origin with `from` as its port changed to `to`; undefined when it names another port. */
function withPort(origin: string, from: number, to: number): string | undefined {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  if (port !== from || from === to) return undefined;
  url.port = String(to);
  return url.origin;
}
