// Builds the Fastify app without listening: request ids, the root guard, the error envelope and
// the static renderer. Resource routes are registered on top of it by server/index.ts.
import { existsSync } from "node:fs";
import { STATUS_CODES } from "node:http";
import { Readable } from "node:stream";
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from "node:http";
import Fastify, { LogController, type FastifyInstance, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from "fastify";
import fastifyStatic from "@fastify/static";
import fastifyWebsocket from "@fastify/websocket";
import { systemRandom, type Clock, type RandomSource } from "../clock.js";
import secureJson from "secure-json-parse";
import { ApiError, errorEnvelope } from "./errors.js";
import { tokenOutsideBody, type Authenticator } from "./endpoint.js";
import { requestGuard } from "./guard.js";
import { rewriteAliasedUrl } from "./aliases.js";
import { ALSO_JSON_MEDIA_TYPE, JSON_MEDIA_TYPE } from "./request.js";
import { setSecurityHeaders } from "./csp.js";
import { appLogger } from "./request-logger.js";
import { isUpgrade, refuseUpgrade } from "./upgrade.js";
import { coalesceRouteAfters } from "./route-afters.js";

export interface AppOptions {
  logger: FastifyBaseLogger;
  clock: Clock;
  /** Where request ids come from; the system's by default. */
  random?: RandomSource;
  hosts: string[];
  allowOrigins: string[];
  port: () => number;
  rendererDir: string | null;
  /**
   * APIs served beside the platform's with their own failure shape (the texting API's
   * `{errors: [...]}`): a path under `prefix` that cannot be routed is answered in it.
   */
  ownFailureShapes?: { prefix: string; answer(status: number, message: string): unknown }[];
  /** Tokens, so that a path of no module answers a dead token 401 first, as crossbar does. */
  authenticate?: Authenticator["authenticate"];
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * JSON bodies: 1 MiB holds any configuration document with room to spare (a blacklist of 5,000
 * numbers is 90 KB); uploads are streams with their own bounds (media 20 MiB, texting images).
 */
export const JSON_BODY_BYTES = 1024 * 1024;
/** Deeper bodies serve no resource and would blow the stack of recursive code further on. */
export const MAX_JSON_DEPTH = 128;
/**
 * Values (object members and array items, at every level) in one body. Validation, merging and
 * storing cost grows with it: 300,000 keys stalled the server 18 s; 5,000 still fits the largest
 * real document (a blacklist of thousands of numbers).
 */
export const MAX_JSON_ENTRIES = 5_000;

/**
 * One pass over the text, before JSON.parse builds anything: which bound it breaks, if any.
 * Counts the entries of every non-empty container (its first one, then one per comma) and the
 * nesting; strings are skipped whole, escapes included.
 */
export function jsonShapeRefusal(text: string, maxDepth: number, maxEntries: number): "depth" | "entries" | null {
  let depth = 0;
  let entries = 0;
  let inString = false;
  let justOpened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    if (justOpened) {
      justOpened = false;
      if (c !== 0x5d && c !== 0x7d) entries++;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > maxDepth) return "depth";
      justOpened = true;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c) entries++;
    if (entries > maxEntries) return "entries";
  }
  return null;
}

export function buildApp(options: AppOptions): FastifyInstance {
  const random = options.random ?? systemRandom;
  const requestIds = new RequestIds(random);
  // Fastify is given no logger of its own: with one, it sets up two response listeners on every
  // request (and takes two clock readings) only to log the request's end, which is never logged
  // here (disableRequestLogging). The app's logger is made as Fastify makes it from a logger
  // instance (a child with its serializers) and set as `app.log`; each request's logger is a
  // lazy child of it, made only if the request logs (childLoggerFactory).
  const log = appLogger(options.logger);
  const app = Fastify({
    childLoggerFactory: (_noLogger, bindings, childOptions) => log.child(bindings, childOptions),
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : requestIds.next();
    },
    bodyLimit: JSON_BODY_BYTES,
    // A client that stopped reading a download must not hold shutdown hostage.
    forceCloseConnections: true,
    // The spec writes collection paths with a trailing slash (PUT /callq_queues/).
    routerOptions: { ignoreTrailingSlash: true },
    rewriteUrl: (req) => rewriteAliasedUrl(req.url ?? "/"),
    // A path that cannot be routed (bad percent-encoding, a 100+ character segment) gets the envelope.
    frameworkErrors: (error, request, frameworkReply) => {
      const reply = frameworkReply as FastifyReply;
      // Fastify answers these before any onRequest hook runs.
      setAnswerHeaders(request, reply);
      const own = options.ownFailureShapes?.find((api) => request.url.startsWith(api.prefix));
      if (own !== undefined) {
        return error.code === "FST_ERR_MAX_PARAM_LENGTH"
          ? reply.status(404).send(own.answer(404, "Not found"))
          : reply.status(400).send(own.answer(400, "The path is not valid percent-encoding"));
      }
      const apiError =
        error.code === "FST_ERR_MAX_PARAM_LENGTH"
          ? new ApiError("bad_identifier", { cause: "a path segment longer than 100 characters names nothing" })
          : new ApiError("validation_error", { url: { invalid: { message: "the path is not valid percent-encoding" } } });
      return reply.status(apiError.status).send(errorEnvelope(apiError, request.id, new Date(options.clock.now())));
    },
    // Bytes that are not HTTP never reach a route; they still get the error envelope.
    clientErrorHandler: (err, socket) => {
      if ((err as NodeJS.ErrnoException).code === "ECONNRESET" || socket.destroyed) return;
      if (socket.writable) socket.write(clientErrorAnswer(err, new Date(options.clock.now()), requestIds.next()));
      socket.destroy();
    },
  });

  app.log = log;
  // One Avvio `after` for each run of routes declared together, not one a route (route-afters.ts).
  coalesceRouteAfters(app);

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, "request failed");
    return reply.status(apiError.status).send(errorEnvelope(apiError, request.id, new Date(options.clock.now())));
  });

  // A module that is not loaded is 404 not_found whether or not a token came (crossbar finds the
  // module before it authorizes), but a token that is not live is 401 first: crossbar's early
  // authentication checks any token it is given before it looks for the module.
  // A request for no route gets its not-found answer (in its scope's words) without its body
  // being parsed (unreadBody): a hook of the not-found handlers only, so that the routes run no
  // preParsing hook of the app's. Scopes of their own (the texting API's, which sets its own
  // not-found handler) take it as a hook of the scope, for their routes' 404s, as before.
  app.addHook("onRegister", (scope) => {
    scope.addHook("preParsing", unreadBodyOf404);
  });
  // Fastify takes any lifecycle hook in these options (lib/four-oh-four.js reads opts[hook] for
  // each of its lifecycle hooks); its types name only preValidation and preHandler.
  const notFoundHooks: { preParsing: typeof unreadBodyOf404; preHandler?: never } = { preParsing: unreadBodyOf404 };
  app.setNotFoundHandler(notFoundHooks, async (request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const token = path.startsWith("/v2/") && request.method !== "OPTIONS" ? tokenOutsideBody(request) : null;
    const dead = token !== null && options.authenticate !== undefined && (await options.authenticate(token)) === null;
    const err = dead ? new ApiError("invalid_credentials") : new ApiError("not_found");
    return reply.status(err.status).send(errorEnvelope(err, request.id, new Date(options.clock.now())));
  });

  // JSON bodies: an empty body is an empty envelope; bad JSON is a 400 naming `json`; too deep or
  // too many entries is a 400 found before parsing; keys that would poison prototypes are dropped.
  // `application/jsonx` and other types no parser takes are 415.
  app.removeContentTypeParser("application/json");
  const parseJson = (text: string, done: (err: Error | null, body?: unknown) => void): void => {
    if (text.trim() === "") return done(null, {});
    const refusal = jsonShapeRefusal(text, MAX_JSON_DEPTH, MAX_JSON_ENTRIES);
    if (refusal === "depth") {
      return done(new ApiError("validation_error", { json: { maxDepth: { message: `the body nests deeper than ${MAX_JSON_DEPTH} levels`, target: MAX_JSON_DEPTH } } }), undefined);
    }
    if (refusal === "entries") {
      return done(
        new ApiError("validation_error", { json: { maxEntries: { message: `the body holds more than ${MAX_JSON_ENTRIES} values`, target: MAX_JSON_ENTRIES } } }),
        undefined,
      );
    }
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, undefined, { protoAction: "remove", constructorAction: "remove" });
    } catch {
      return done(new ApiError("validation_error", { json: { invalid: { message: "the body is not valid JSON" } } }), undefined);
    }
    done(null, parsed);
  };
  app.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: "string" }, (_request, body, done) => parseJson(String(body), done));
  // Kazoo's crossbar reads these as JSON too (curl sends a form type unless told otherwise); form
  // fields themselves are not an envelope.
  app.addContentTypeParser(ALSO_JSON_MEDIA_TYPE, { parseAs: "string" }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() !== "" && !/^\s*[{[]/.test(text)) {
      return done(new ApiError("unsupported_media_type", { content_type: { type: { message: "form fields are not read: send the JSON envelope" } } }), undefined);
    }
    parseJson(text, done);
  });

  // Binary uploads (media, recordings) arrive as a raw stream for the resource to store.
  app.addContentTypeParser(/^(?:audio\/[a-z0-9!#$&^_.+-]+|application\/octet-stream)\s*(?:;|$)/, (_request, payload, done) => done(null, payload));

  // @fastify/websocket lives only in the scopes of the WebSocket routes (registerWebsocket), so
  // its hooks run on their requests alone. An upgrade asked of any other route is refused here as
  // the plugin refused it when it was registered for the whole app: the handshake, then a close.
  // Registered where the plugin was, so the same routes as before take it (those declared by
  // plugins, not this function's own "/").
  app.register(refuseOtherUpgrades);

  // Everything every request pays before its route, in one synchronous hook: the headers every
  // answer carries (set now, so an error or a 404 made later carries them too), the JSON type of
  // an untyped body, and the root guard. An upgrade answered in HTTP (a refusal, a 404) has its
  // connection closed once the answer is out.
  const guard = requestGuard({ hosts: options.hosts, allowOrigins: options.allowOrigins, port: options.port });
  app.addHook("onRequest", (request, reply, done) => {
    setAnswerHeaders(request, reply);
    if (isUpgrade(request.raw)) closeAfterAnswer(request, reply);
    assumeJsonBody(request.raw.headers);
    guard(request, reply);
    done();
  });

  if (options.rendererDir && existsSync(options.rendererDir)) {
    // A GET and a HEAD route per file, listed once here; in the server's bundle the listing is
    // server/http/static-files.ts's walk, not the glob package's (not evaluated at a start).
    app.register(fastifyStatic, {
      root: options.rendererDir,
      prefix: "/",
      wildcard: false,
      // The build writes .br and .gz beside each file; a file without them is sent as it is.
      preCompressed: true,
      cacheControl: false,
      // Hashed names under assets/ never change: cached for a year. index.html is revalidated, so
      // a new build is picked up at the next load.
      setHeaders: (reply, path) => {
        reply.header("Cache-Control", /[\\/]assets[\\/]/.test(path) ? "public, max-age=31536000, immutable" : "no-cache");
      },
    });
  } else {
    app.get("/", async (_request, reply) =>
      reply.type("text/plain").send("Switchboard server is running; the console is not built (run npm run build).\n"),
    );
  }
  return app;
}

/** The HTTP servers whose upgrades one registration of @fastify/websocket already routes. */
const upgradesRouted = new WeakSet<HttpServer>();

/**
 * @fastify/websocket in an encapsulated scope that holds WebSocket routes only (/sip, /events):
 * its onRequest and onResponse hooks and handler wrapper run on that scope's requests, not on
 * every route's. The first registration routes the server's upgrades (each through the whole
 * app's router, any path); a later one (another scope) listens on a server of its own that never
 * listens, so that no upgrade is routed twice, and upgrades its own routes' sockets.
 */
export async function registerWebsocket(scope: FastifyInstance): Promise<void> {
  const first = !upgradesRouted.has(scope.server);
  upgradesRouted.add(scope.server);
  await scope.register(fastifyWebsocket, { options: { maxPayload: WEBSOCKET_MESSAGE_BYTES, ...(first ? {} : { server: createServer() }) } });
}

/**
 * A plugin of the whole app (skip-override, as fastify-plugin marks one): every route declared
 * after it that is not a WebSocket's refuses an upgrade (refuseUpgrade).
 */
const refuseOtherUpgrades = Object.assign(
  async (root: FastifyInstance): Promise<void> => {
    root.addHook("onRoute", (route) => {
      if (route.websocket === true || route.wsHandler !== undefined || route.config?.refusesUpgrades === true) return;
      const handler = route.handler;
      route.handler = function (this: FastifyInstance, request, reply) {
        if (isUpgrade(request.raw)) return refuseUpgrade(request, reply);
        return handler.call(this, request, reply);
      };
    });
  },
  { [Symbol.for("skip-override")]: true },
);

/** The largest WebSocket message a route takes. */
const WEBSOCKET_MESSAGE_BYTES = 1024 * 1024;

/**
 * The preParsing hook of a not-found answer: the parser is handed an empty stream that owns up to
 * the declared length, and Node discards the unread bytes once the answer is sent. In a scope's
 * hooks (onRegister) it lets its routes' own requests through.
 */
function unreadBodyOf404(request: FastifyRequest, _reply: FastifyReply, payload: Readable, done: (err: Error | null, body?: Readable) => void): void {
  if (!request.is404) return done(null, payload);
  const declared = Number(request.headers["content-length"]);
  done(null, Object.assign(Readable.from([]), { receivedEncodedLength: Number.isNaN(declared) ? 0 : declared }));
}

/** An upgrade's connection, answered in HTTP, is closed once the answer is sent. */
function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  const socket = request.raw.socket;
  reply.raw.once("finish", () => socket.destroy());
}

/** The whole HTTP answer to a request Node could not parse: 408, 431 or 400, with the envelope. */
export function clientErrorAnswer(err: Error, now: Date, id: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  const apiError =
    code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new ApiError("request_timeout")
      : code === "HPE_HEADER_OVERFLOW"
        ? new ApiError("header_fields_too_large")
        : new ApiError("validation_error", { http: { invalid: { message: "the request is not valid HTTP/1.1" } } });
  const body = JSON.stringify(errorEnvelope(apiError, id, now));
  return `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? "Error"}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** The headers on every answer of the app: the request's id and the browser-side hardening. */
function setAnswerHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("x-request-id", request.id); // lower case as Fastify keeps it (setSecurityHeaders)
  setSecurityHeaders(reply, request.url);
}

/** A body with no Content-Type at all is JSON, as Kazoo assumes (`requests.put(url, data=...)`). */
function assumeJsonBody(headers: IncomingHttpHeaders): void {
  if (headers["content-type"] !== undefined) return;
  const hasBody = headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
  if (hasBody) headers["content-type"] = "application/json";
}

/** Random bytes fetched for this many ids at a time: one call to the source per 256 requests. */
const IDS_PER_DRAW = 256;

/**
 * Fresh request ids, 32 hex digits (16 random bytes) each, as before, cut from one draw of the
 * random source at a time rather than a call per request.
 */
class RequestIds {
  #hex = "";
  #at = 0;

  constructor(private readonly random: RandomSource) {}

  next(): string {
    if (this.#at === this.#hex.length) {
      this.#hex = this.random.bytes(16 * IDS_PER_DRAW).toString("hex");
      this.#at = 0;
    }
    const id = this.#hex.slice(this.#at, this.#at + 32);
    this.#at += 32;
    return id;
  }
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const status = typeof error === "object" && error !== null && "statusCode" in error ? Number(error.statusCode) : 500;
  if (status === 413) {
    return new ApiError("payload_too_large", { content_length: { maximum: { message: `bodies other than uploads are limited to ${JSON_BODY_BYTES} bytes`, target: JSON_BODY_BYTES } } });
  }
  if (status === 415) return new ApiError("unsupported_media_type", { content_type: { type: { message: "send the body as application/json" } } });
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  if (code === "FST_ERR_CTP_INVALID_CONTENT_LENGTH") {
    return new ApiError("validation_error", { content_length: { invalid: { message: "the body's length is not the declared Content-Length" } } });
  }
  if (status === 400) return new ApiError("validation_error", { json: { invalid: { message: "the body is not valid JSON" } } });
  if (status > 400 && status < 500) return new ApiError("validation_error", { request: { invalid: { message: "the request could not be read" } } });
  return new ApiError("unspecified_fault");
}
