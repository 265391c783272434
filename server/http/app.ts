// Builds the Fastify app without listening: request ids, the root guard, the error envelope and
// the static renderer. Resource routes are registered on top of it by server/index.ts.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import Fastify, { LogController, type FastifyInstance, type FastifyBaseLogger } from "fastify";
import fastifyStatic from "@fastify/static";
import fastifyWebsocket from "@fastify/websocket";
import type { Clock } from "../clock.js";
import secureJson from "secure-json-parse";
import { ApiError, errorEnvelope } from "./errors.js";
import { registerGuard } from "./guard.js";
import { registerSecurityHeaders } from "./csp.js";

export interface AppOptions {
  logger: FastifyBaseLogger;
  clock: Clock;
  hosts: string[];
  allowOrigins: string[];
  port: () => number;
  rendererDir: string | null;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MAX_JSON_DEPTH = 128;

/** Iterative, so the check itself cannot overflow. */
export function depthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

export function buildApp(options: AppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      // randomUUID draws from a buffered pool: a fresh 32-hex id without a syscall per request.
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID().replace(/-/g, "");
    },
    bodyLimit: 8 * 1024 * 1024,
    // A client that stopped reading a download must not hold shutdown hostage.
    forceCloseConnections: true,
    // The spec writes collection paths with a trailing slash (PUT /callq_queues/).
    routerOptions: { ignoreTrailingSlash: true },
  });

  app.addHook("onSend", async (request, reply) => {
    reply.header("X-Request-ID", request.id);
  });
  registerSecurityHeaders(app);

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, "request failed");
    return reply.status(apiError.status).send(errorEnvelope(apiError, request.id, new Date(options.clock.now())));
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new ApiError("not_found", { path: request.url.split("?")[0] ?? "" });
    return reply.status(err.status).send(errorEnvelope(err, request.id, new Date(options.clock.now())));
  });

  // JSON bodies: an empty body is an empty envelope; bad JSON is a 400 naming `json`; keys that
  // would poison prototypes are dropped.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser(/^application\/(.+\+)?json/, { parseAs: "string" }, (_request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") return done(null, {});
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: "remove", constructorAction: "remove" });
    } catch {
      return done(new ApiError("validation_error", { json: { invalid: { message: "the body is not valid JSON" } } }), undefined);
    }
    // Deeper bodies serve no resource and would blow the stack of recursive code further on.
    if (depthExceeds(parsed, MAX_JSON_DEPTH)) {
      return done(new ApiError("validation_error", { json: { maxDepth: { message: `the body nests deeper than ${MAX_JSON_DEPTH} levels` } } }), undefined);
    }
    done(null, parsed);
  });

  // Binary uploads (media, recordings) arrive as a raw stream for the resource to store.
  app.addContentTypeParser(/^(audio\/|application\/octet-stream)/, (_request, payload, done) => done(null, payload));

  // Once for the whole app: /sip and /events declare their routes in plugins registered after it.
  app.register(fastifyWebsocket, { options: { maxPayload: 1024 * 1024 } });

  registerGuard(app, { hosts: options.hosts, allowOrigins: options.allowOrigins, port: options.port });

  if (options.rendererDir && existsSync(options.rendererDir)) {
    app.register(fastifyStatic, { root: options.rendererDir, prefix: "/", wildcard: false });
  } else {
    app.get("/", async (_request, reply) =>
      reply.type("text/plain").send("Switchboard server is running; the console is not built (run npm run build).\n"),
    );
  }
  return app;
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const status = typeof error === "object" && error !== null && "statusCode" in error ? Number(error.statusCode) : 500;
  if (status === 413) return new ApiError("payload_too_large");
  if (status === 415) return new ApiError("validation_error", { content_type: { type: { message: "unsupported content type" } } });
  if (status === 400) return new ApiError("validation_error", { json: { invalid: { message: "the body is not valid JSON" } } });
  return new ApiError("unspecified_fault");
}
