// Fastify's log serializers (req, res, err), which Fastify adds to a logger instance it is given
// (lib/logger-pino.js, a file of Fastify's own with no types of its own). server/http/app.ts gives
// Fastify no logger and makes the app's logger with them itself (request-logger.ts, appLogger).
declare module "fastify/lib/logger-pino.js" {
  import type { ChildLoggerOptions } from "fastify/types/logger.js";

  export const serializers: NonNullable<ChildLoggerOptions["serializers"]>;
}

// The onSend hooks of the HEAD route Fastify adds beside a GET (lib/head-route.js): given none of
// the route's own, its one hook (the payload dropped, its length kept) as it is, not in a list.
// server/http/endpoint.ts answers an endpoint's HEAD with that hook.
declare module "fastify/lib/head-route.js" {
  import type { FastifyReply, FastifyRequest } from "fastify";

  export function parseHeadOnSendHandlers(
    onSend: null | undefined,
  ): (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, value?: unknown) => void) => void;
}
