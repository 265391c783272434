// Fastify's log serializers (req, res, err), which Fastify adds to a logger instance it is given
// (lib/logger-pino.js, a file of Fastify's own with no types of its own). server/http/app.ts gives
// Fastify no logger and makes the app's logger with them itself (request-logger.ts, appLogger).
declare module "fastify/lib/logger-pino.js" {
  import type { ChildLoggerOptions } from "fastify/types/logger.js";

  export const serializers: NonNullable<ChildLoggerOptions["serializers"]>;
}
