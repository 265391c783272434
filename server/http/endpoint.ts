// One REST endpoint, crossbar style: a path, its allowed verbs (each with a handler), who may
// call it, and the plumbing every endpoint shares: verb and accept tunnelling, token
// authentication, account isolation, admin-only verbs, 405 with Allow, the success envelope or
// CSV, ETag. Also records each endpoint for the OpenAPI document.
import { Readable, Transform, type TransformCallback } from "node:stream";
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../clock.js";
import { REVISION_PATTERN } from "../store/index.js";
import { ApiError } from "./errors.js";
import { JsonText, plainData, successEnvelope, successEnvelopeText, type EnvelopeOptions, type Paging } from "./envelope.js";
import { isJsonType, parseBodyless, parseRequest, wantsCsv, type ParsedRequest, type Verb } from "./request.js";
import { parseHeadOnSendHandlers } from "fastify/lib/head-route.js";
import { isUpgrade, refuseUpgrade } from "./upgrade.js";
import { toCsv } from "./csv.js";
import { contentDisposition } from "./binary.js";
import type { JsonSchema } from "./validation.js";

/** Read-only: one resolved caller is shared by every request that brings the same token. */
export interface AuthContext {
  readonly token: string;
  readonly accountId: string;
  /** The user behind the token; null for an API-key token. */
  readonly ownerId: string | null;
  readonly isAdmin: boolean;
  readonly method: "user_auth" | "api_auth";
  /** A wallboard's key: only verbs marked `board` take it. */
  readonly wallboardId?: string;
}

export interface Authenticator {
  /** The context of a live token, or null (missing, wrong or expired). */
  authenticate(token: string): Promise<AuthContext | null>;
  /**
   * The context of a token resolved before, when that needs no store read or write (most requests
   * of a signed-in caller); undefined when only authenticate() can tell.
   */
  authenticateHeld(token: string): AuthContext | undefined;
}

/**
 * `public`: no token. `token`: any live token. `account`: a live token of the account named by
 * the `:account_id` path parameter (403 for any other).
 */
export type Access = "public" | "token" | "account";

export interface Ctx {
  request: FastifyRequest;
  reply: FastifyReply;
  req: ParsedRequest;
  params: Record<string, string>;
  /** Set unless the endpoint is public. */
  auth: AuthContext | null;
  now: Date;
}

export interface Outcome {
  data: unknown;
  status?: number;
  revision?: string;
  /**
   * The revision's ETag (`etagOf(revision)`), made once with an outcome that is kept and served
   * again (a document's, a kept list page's); answer() makes it from `revision` when absent.
   */
  etag?: string;
  paging?: Paging;
  headers?: Record<string, string>;
  /** The token to put in the envelope when the request carried none (a login). */
  authToken?: string;
}

/**
 * A handler either returns what to send, or `"sent"` when it answered itself (binary); at once
 * when it has the answer in hand (a document in memory), or as a promise.
 */
export type Handler = (ctx: Ctx) => Promise<Outcome | "sent"> | Outcome | "sent";

export interface VerbSpec {
  handler: Handler;
  summary: string;
  /** Only admins (and API-key tokens) may use this verb. */
  admin?: boolean;
  /**
   * A wallboard's key may use this verb (it reads a board). Every other verb of every endpoint
   * refuses such a key with 403, so a new endpoint is closed to it unless it says otherwise.
   */
  board?: boolean;
  /** JSON schema of the envelope's `data`, for the OpenAPI document. */
  body?: JsonSchema;
  /** The handler reads a body that is not JSON itself (an upload); other verbs answer it 415. */
  rawBody?: boolean;
  /** The media types such a raw body may have, for the OpenAPI document. */
  rawTypes?: readonly string[];
  /** The success statuses when not the verb's usual one (201 for PUT, 200 otherwise), for the OpenAPI document. */
  answers?: readonly number[];
  /** The handler answers a file of this type and schema instead of the envelope, for the OpenAPI document. */
  answersFile?: { type: string; schema: JsonSchema };
}

export interface EndpointSpec {
  path: string;
  access: Access;
  /** OpenAPI tag: the resource's name. */
  tag: string;
  verbs: Partial<Record<Verb, VerbSpec>>;
}

export interface EndpointDeps {
  clock: Clock;
  auth: Authenticator;
  catalogue: EndpointSpec[];
}

const METHODS = ["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"] as const;

/**
 * A body read before anyone is known: a public endpoint's (a login) or one whose token travels
 * inside it (`auth_token` in the envelope). Bigger bodies need the token in X-Auth-Token, the
 * query or Authorization, where it is checked before a byte of the body is read.
 */
export const UNAUTHENTICATED_BODY_BYTES = 64 * 1024;

/** Who a token outside the body named, found before the body was read. */
interface Early {
  token: string;
  auth: AuthContext;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by a route's onRequest when the token outside the body passed (null until then). */
    switchboardEarly: Early | null;
  }
  interface FastifyContextConfig {
    /**
     * The methods an endpoint's route answers besides its own (through registerOtherMethods),
     * listed with it in the server's routes (recordRoutes, server/http/openapi.ts).
     */
    alsoAnswers?: readonly string[];
    /** A route that is no path of its own (registerOtherMethods): left out of the server's routes. */
    unlisted?: boolean;
    /**
     * The route's handler refuses an upgrade itself (refuseUpgrade, server/http/upgrade.ts), after
     * its token check: the app does not wrap it (server/http/app.ts).
     */
    refusesUpgrades?: boolean;
  }
}

/**
 * Each request's early caller lives on the request itself, declared to Fastify so that every
 * request object has the field from its construction (a WeakMap entry per request cost more).
 */
function declareEarly(app: FastifyInstance): void {
  if (!app.hasRequestDecorator("switchboardEarly")) app.decorateRequest("switchboardEarly", null);
}

export function registerEndpoint(app: FastifyInstance, deps: EndpointDeps, spec: EndpointSpec): void {
  deps.catalogue.push(spec);
  declareEarly(app);
  registerOtherMethods(app, deps);
  const allow = allowOf(spec);
  // Only the endpoint's own verbs (and HEAD beside GET) are routes of their own: a method the
  // endpoint does not have (405, OPTIONS, a POST that tunnels a verb) is routed to it by the one
  // route of registerOtherMethods. Fewer routes: less to build at every start, smaller trees.
  const own = Object.keys(spec.verbs);
  let first = true;
  const route = (methods: string[]): void => {
    if (methods.length === 0) return;
    // The server's routes list every method of the endpoint with its first route (recordRoutes).
    const listed = first;
    first = false;
    const config = (refusesUpgrades?: boolean): FastifyContextConfig => ({
      ...(listed ? {} : { unlisted: true }),
      ...(refusesUpgrades === true ? { refusesUpgrades } : {}),
    });
    // GET (and Fastify's HEAD beside it) in a route of its own with no hooks of the route: Fastify
    // never reads a GET's body, so its token check runs in the handler (bodylessHandler), and
    // Fastify runs no hook runner for it. The methods that may carry a body keep the token check
    // in onRequest, before a byte of the body is read.
    // (A GET routed here for an overlapping endpoint's sake, which this one lacks, is the 405 of endpointHandler.)
    const bodyless = methods.filter((m) => m === "GET" && spec.verbs.GET !== undefined);
    const withBody = methods.filter((m) => !bodyless.includes(m));
    let also = listed ? METHODS.filter((m) => !own.includes(m)) : [];
    if (bodyless.length > 0) {
      // No HEAD route beside it (Fastify's would be one more route to build at every start, a
      // fifth of them): registerOtherMethods' route answers a HEAD with this handler, its body
      // dropped as Fastify's HEAD route dropped it. Listed with the GET, as that route was.
      app.route({
        method: bodyless,
        url: spec.path,
        exposeHeadRoute: false,
        config: { ...config(true), ...(listed ? { alsoAnswers: [...also, "HEAD"] } : {}) },
        handler: (request, reply) => bodylessHandler(deps, spec, allow, request, reply),
      });
      also = [];
    }
    if (withBody.length > 0) {
      app.route({
        method: withBody,
        url: spec.path,
        config: { ...config(), ...(also.length > 0 ? { alsoAnswers: also } : {}) },
        onRequest: (request, _reply, done) => endpointOnRequest(deps, spec, request, done),
        preParsing: (request, _reply, payload, done) => endpointPreParsing(request, payload, done),
        handler: (request, reply) => endpointHandler(deps, spec, allow, request, reply),
      });
    }
  };
  const mine: RoutedEndpoint = { spec, pattern: patternOf(spec), methods: new Set(own), route };
  route([...mine.methods]);
  // Where another endpoint's path overlaps this one's (devices/status and devices/:id), the router
  // would hand the more specific path's missing methods to the other endpoint's routes: the more
  // specific one takes those methods as routes of its own, to answer them itself as before.
  const routed = routedEndpoints.get(deps) ?? [];
  routedEndpoints.set(deps, routed);
  for (const other of routed) {
    if (!overlap(mine.pattern, other.pattern)) continue;
    const [winner, loser] = moreStatic(mine.pattern, other.pattern) ? [mine, other] : [other, mine];
    const missing = Object.keys(loser.spec.verbs).filter((m) => !winner.methods.has(m));
    for (const m of missing) winner.methods.add(m);
    winner.route(missing);
  }
  routed.push(mine);
}

interface RoutedEndpoint {
  spec: EndpointSpec;
  pattern: Pattern;
  /** The methods routed to it by routes of its own. */
  methods: Set<string>;
  route(methods: string[]): void;
}

const routedEndpoints = new WeakMap<EndpointDeps, RoutedEndpoint[]>();

/** Could one concrete path match both patterns? */
function overlap(a: Pattern, b: Pattern): boolean {
  if (a.segments.length !== b.segments.length) return false;
  return a.segments.every((s, i) => {
    const t = b.segments[i];
    return s === null || t === null || s === t;
  });
}

function allowOf(spec: EndpointSpec): string {
  return Object.keys(spec.verbs).join(", ");
}

/**
 * The token, when it is outside the body, is checked before the body is read: a stranger's body
 * is never parsed, whatever its size. Synchronous for a token already held (no promise, no extra
 * turn of the event loop).
 */
function endpointOnRequest(deps: EndpointDeps, spec: EndpointSpec, request: FastifyRequest, done: (err?: Error) => void): void {
  if (spec.access === "public" || request.method === "OPTIONS") return done();
  const token = tokenOutsideBody(request);
  if (token === null) {
    // Only a JSON envelope can carry the token inside.
    const type = request.headers["content-type"];
    if (type !== undefined && !isJsonType(type)) throw tokenRequired();
    return done();
  }
  const held = deps.auth.authenticateHeld(token);
  if (held !== undefined) {
    admitEarly(spec, request, token, reach(spec, request, held));
    return done();
  }
  authenticate(deps, spec, request, token).then(
    (auth) => {
      try {
        admitEarly(spec, request, token, auth);
      } catch (err) {
        return done(asError(err));
      }
      done();
    },
    (err: unknown) => done(asError(err)),
  );
}

function endpointPreParsing(request: FastifyRequest, payload: Readable, done: (err: Error | null, body?: Readable) => void): void {
  if (request.switchboardEarly !== null) return done(null, payload);
  done(null, limitBody(request, payload, UNAUTHENTICATED_BODY_BYTES));
}

/**
 * Synchronous up to the verb's handler, and after it when that answers without a promise (a
 * document already in memory): no promise turn between the request and its answer.
 */
function endpointHandler(
  deps: EndpointDeps,
  spec: EndpointSpec,
  allow: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> | FastifyReply | undefined {
  if (request.method === "OPTIONS") {
    reply.header("Allow", allow).status(200).send();
    return undefined;
  }
  const req = parseRequest(request);
  const verbSpec = spec.verbs[req.verb];
  if (!verbSpec) {
    reply.header("Allow", allow);
    throw new ApiError("invalid_method", { method: req.verb, allowed: Object.keys(spec.verbs) });
  }
  if (req.bodyKind === "raw" && !verbSpec.rawBody) {
    throw new ApiError("unsupported_media_type", { content_type: { type: { message: "send the body as application/json", value: request.headers["content-type"] ?? null } } });
  }
  if (spec.access === "public") return run(deps, verbSpec, request, reply, req, null, null);
  const early = request.switchboardEarly;
  const token = early?.token ?? req.bodyToken;
  if (!token) throw tokenRequired();
  if (early !== null) return run(deps, verbSpec, request, reply, req, token, early.auth);
  return authenticate(deps, spec, request, token).then((auth) => run(deps, verbSpec, request, reply, req, token, auth));
}

/**
 * A GET (or HEAD) of an endpoint that has GET: what its route's onRequest and preParsing hooks
 * and the handler did, in one call, the same checks in the same order. The token outside the body
 * (a held one with no promise), its account and the verb's refusals; without one, a body that
 * cannot carry a token is 401 and one declared over UNAUTHENTICATED_BODY_BYTES is 413 (never
 * read: Fastify reads no GET's body); then an upgrade is refused, and the verb runs.
 */
function bodylessHandler(
  deps: EndpointDeps,
  spec: EndpointSpec,
  allow: string,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> | FastifyReply | undefined {
  if (spec.access !== "public") {
    const token = tokenOutsideBody(request);
    if (token !== null) {
      const held = deps.auth.authenticateHeld(token);
      if (held === undefined) return authenticate(deps, spec, request, token).then((auth) => bodylessVerb(deps, spec, request, reply, token, auth));
      return bodylessVerb(deps, spec, request, reply, token, reach(spec, request, held));
    }
    const type = request.headers["content-type"];
    if (type !== undefined && !isJsonType(type)) throw tokenRequired();
  }
  if (Number(request.headers["content-length"]) > UNAUTHENTICATED_BODY_BYTES) throw bodyTooLarge(UNAUTHENTICATED_BODY_BYTES);
  if (isUpgrade(request.raw)) {
    refuseUpgrade(request, reply);
    return undefined;
  }
  // A public endpoint's GET, or one with no token outside the body (401, or the query's empty auth_token).
  return endpointHandler(deps, spec, allow, request, reply);
}

/** A bodyless verb of a caller admitted by bodylessHandler: the endpoint's GET (a HEAD is its GET). */
function bodylessVerb(
  deps: EndpointDeps,
  spec: EndpointSpec,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  auth: AuthContext,
): Promise<FastifyReply | undefined> | FastifyReply | undefined {
  const verbSpec = spec.verbs.GET;
  if (verbSpec === undefined) throw new ApiError("invalid_method", { method: "GET", allowed: Object.keys(spec.verbs) });
  // A GET's own refusals before an upgrade's, as admitEarly made them in onRequest (a HEAD's in run).
  if (request.method === "GET") verbRefusals(verbSpec, auth);
  if (isUpgrade(request.raw)) {
    refuseUpgrade(request, reply);
    return undefined;
  }
  return run(deps, verbSpec, request, reply, parseBodyless(request), token, auth);
}

/** The methods an endpoint may be asked with; those it has no verb for are routed by registerOtherMethods. */
const OTHER_METHODS = [...METHODS, "HEAD"];

/** Where the catalogue's paths live: every endpoint's path starts with it. */
const API_PATHS = "/v2/";

/** A path parameter longer than this names nothing (find-my-way's maxParamLength, Fastify's default). */
const MAX_PARAM_LENGTH = 100;

const otherMethodsRouted = new WeakSet<EndpointDeps>();

/** Fastify's own onSend hook of a HEAD route beside a GET: the payload dropped, its length kept. */
const headRouteOnSendHandler = parseHeadOnSendHandlers(undefined);

/**
 * One wildcard route under /v2/ for every method: what no endpoint route took. It finds the
 * endpoint of the path itself (built at its first use from the catalogue, the same precedence as
 * Fastify's router: a static segment before a parameter) and runs that endpoint's hooks and
 * handler, with the path's parameters, exactly as a route of that method on the endpoint did:
 * the token first, then the verb (405 with Allow, OPTIONS, a POST tunnelling a verb). A path of
 * no endpoint is Fastify's not-found answer, its body unread, as before.
 */
function registerOtherMethods(app: FastifyInstance, deps: EndpointDeps): void {
  if (otherMethodsRouted.has(deps)) return;
  otherMethodsRouted.add(deps);
  let matcher: EndpointMatcher | null = null;
  const matched = new WeakMap<FastifyRequest, EndpointSpec>();
  // A HEAD of an endpoint with GET: its GET's route had Fastify's HEAD route beside it (no hooks
  // of its own, the GET's handler, the body dropped by headRouteOnSendHandler); it is answered
  // here the same way (registerEndpoint adds no HEAD route).
  const headOfGet = new WeakSet<FastifyRequest>();
  app.route({
    method: OTHER_METHODS,
    url: `${API_PATHS}*`,
    exposeHeadRoute: false,
    // Upgrades are refused in the handler, as the app's wrapper did (after the hooks), except for
    // a HEAD of a GET, whose handler refuses them itself after its token check (bodylessHandler).
    config: { unlisted: true, refusesUpgrades: true },
    onRequest: (request, _reply, done) => {
      matcher ??= new EndpointMatcher(deps.catalogue);
      const found = matcher.match(request.url);
      if (found === undefined) return done();
      request.params = found.params;
      matched.set(request, found.spec);
      if (request.method === "HEAD" && found.spec.verbs.GET !== undefined) {
        headOfGet.add(request);
        return done();
      }
      endpointOnRequest(deps, found.spec, request, done);
    },
    preParsing: (request, _reply, payload, done) => {
      if (headOfGet.has(request)) return done(null, payload);
      if (matched.has(request)) return endpointPreParsing(request, payload, done);
      // As for any path of no route (server/http/app.ts): the body is left unread.
      const declared = Number(request.headers["content-length"]);
      done(null, Object.assign(Readable.from([]), { receivedEncodedLength: Number.isNaN(declared) ? 0 : declared }));
    },
    handler: (request, reply) => {
      const spec = matched.get(request);
      if (spec !== undefined && headOfGet.has(request)) return bodylessHandler(deps, spec, allowOf(spec), request, reply);
      if (isUpgrade(request.raw)) {
        refuseUpgrade(request, reply);
        return undefined;
      }
      if (spec === undefined) {
        reply.callNotFound();
        return undefined;
      }
      return endpointHandler(deps, spec, allowOf(spec), request, reply);
    },
    onSend: (request, reply, payload, done) => {
      if (headOfGet.has(request)) return headRouteOnSendHandler(request, reply, payload, done);
      done(null, payload);
    },
  });
}

interface Pattern {
  spec: EndpointSpec;
  /** Each segment: a static text, or null for a parameter named in `names`. */
  segments: (string | null)[];
  names: (string | undefined)[];
}

/** The catalogue's paths, matched as Fastify's router matches them (trailing slash ignored). */
class EndpointMatcher {
  readonly #patterns: Pattern[];

  constructor(catalogue: readonly EndpointSpec[]) {
    this.#patterns = catalogue.map(patternOf);
  }

  /** The endpoint of a request's URL and its parameters; undefined when no endpoint has that path. */
  match(url: string): { spec: EndpointSpec; params: Record<string, string> } | undefined {
    const end = url.search(/[?#]/);
    const parts = trimSlash(end < 0 ? url : url.slice(0, end)).split("/");
    let decoded: string[];
    try {
      decoded = parts.map((p) => decodeURIComponent(p));
    } catch {
      return undefined;
    }
    let best: Pattern | undefined;
    for (const pattern of this.#patterns) {
      if (pattern.segments.length !== decoded.length) continue;
      if (!pattern.segments.every((s, i) => s === null || s === decoded[i])) continue;
      if (best === undefined || moreStatic(pattern, best)) best = pattern;
    }
    if (best === undefined) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < best.names.length; i++) {
      const name = best.names[i];
      if (name === undefined) continue;
      const value = decoded[i] ?? "";
      if (value.length > MAX_PARAM_LENGTH || value === "") {
        if (value === "") return undefined;
        throw new ApiError("bad_identifier", { cause: "a path segment longer than 100 characters names nothing" });
      }
      params[name] = value;
    }
    return { spec: best.spec, params };
  }
}

function patternOf(spec: EndpointSpec): Pattern {
  const parts = trimSlash(spec.path).split("/");
  return {
    spec,
    segments: parts.map((p) => (p.startsWith(":") ? null : p)),
    names: parts.map((p) => (p.startsWith(":") ? p.slice(1) : undefined)),
  };
}

/** Does `a` take a static segment where `b` first has a parameter (the router's precedence)? */
function moreStatic(a: Pattern, b: Pattern): boolean {
  for (let i = 0; i < a.segments.length; i++) {
    const sa = a.segments[i] !== null;
    const sb = b.segments[i] !== null;
    if (sa !== sb) return sa;
  }
  return false;
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/**
 * The verb's own refusals of an authenticated caller, then its handler and the answer: sent here
 * when the handler answers at once, or once its promise settles. A handler that answered itself
 * (a stream, perhaps still flowing) gives back the reply, which Fastify waits on as it would on
 * an async handler returning it.
 */
function run(
  deps: EndpointDeps,
  verbSpec: VerbSpec,
  request: FastifyRequest,
  reply: FastifyReply,
  req: ParsedRequest,
  token: string | null,
  auth: AuthContext | null,
): Promise<FastifyReply | undefined> | FastifyReply | undefined {
  if (auth !== null) verbRefusals(verbSpec, auth);
  const params = (request.params ?? {}) as Record<string, string>;
  const now = new Date(deps.clock.now());
  const outcome = verbSpec.handler({ request, reply, req, params, auth, now });
  if (outcome instanceof Promise) return outcome.then((settled) => answer(request, reply, req, token, now, settled));
  return answer(request, reply, req, token, now, outcome);
}

/** A verb's refusals of an authenticated caller: admin-only verbs, and a wallboard's key on a verb not the board's. */
function verbRefusals(verbSpec: VerbSpec, auth: AuthContext): void {
  if (verbSpec.admin && !auth.isAdmin) throw notAdmin();
  if (auth.wallboardId !== undefined && !verbSpec.board) throw boardOnly();
}

/**
 * Sends what the handler returned: the success envelope, or CSV when asked (both end the reply
 * at once); the reply itself when the handler answered.
 */
function answer(request: FastifyRequest, reply: FastifyReply, req: ParsedRequest, token: string | null, now: Date, outcome: Outcome | "sent"): FastifyReply | undefined {
  if (outcome === "sent") return reply;
  if (outcome.headers) for (const [k, v] of Object.entries(outcome.headers)) reply.header(k, v);
  const etag = outcome.etag ?? etagOf(outcome.revision);
  if (etag !== undefined) {
    // The validator does not name the caller (a page's is shared by every caller of the account):
    // a browser's cache must not hand one caller's stored answer (its envelope carries the token)
    // to another's request, after a 304 or otherwise.
    // (Names in lower case, as Fastify keeps and sends them: see setSecurityHeaders.)
    const vary = reply.getHeader("vary");
    reply.header("etag", etag).header("vary", vary === undefined ? TOKEN_HEADERS : `${String(vary)}, ${TOKEN_HEADERS}`);
    // A read whose answer the client holds already: 304 and no body (cowboy_rest does the same
    // for crossbar's generate_etag). Only a plain GET or HEAD: a tunnelled one is a POST.
    const held = request.headers["if-none-match"];
    if (held !== undefined && (outcome.status ?? 200) === 200 && (request.method === "GET" || request.method === "HEAD") && noneMatchHits(held, etag)) {
      reply.status(304).send();
      return undefined;
    }
  }
  reply.status(outcome.status ?? 200);
  if (wantsCsv(req.accept)) {
    reply
      .type("text/csv; charset=utf-8")
      .header("Content-Disposition", contentDisposition(false, csvFileName(request, req)))
      .send(toCsv(plainData(outcome.data)));
    return undefined;
  }
  const data = outcome.data;
  const authToken = token ?? outcome.authToken ?? null;
  // Serialized here, as Fastify would (JSON.stringify), so the reply takes a string and skips its
  // serialization step; data serialized already is joined into the envelope as it is.
  reply.type("application/json; charset=utf-8");
  if (prettyPrint(request, req)) reply.send(`${JSON.stringify(successEnvelope(envelopeOf(plainData(data), outcome, request.id, authToken, now)), null, 2)}\n`);
  else if (data instanceof JsonText) reply.send(successEnvelopeText(envelopeOf(data, outcome, request.id, authToken, now)));
  else reply.send(JSON.stringify(successEnvelope(envelopeOf(data, outcome, request.id, authToken, now))));
  return undefined;
}

/** The request headers a token travels in besides the query (part of the URL already). */
const TOKEN_HEADERS = "X-Auth-Token, Authorization";

/** A list page's revision (server/http/resource.ts, PageAnswers; or the md5 of its rows' revisions): sent as its ETag too. */
const PAGE_REVISION = /^[0-9a-f]{32}$/;

/**
 * The ETag of an answer with this revision (quoted), or undefined when the revision is neither a
 * document's (`N-<32hex>`) nor a list page's (32 hex digits).
 */
export function etagOf(revision: string | undefined): string | undefined {
  return revision !== undefined && (REVISION_PATTERN.test(revision) || PAGE_REVISION.test(revision)) ? `"${revision}"` : undefined;
}

/**
 * Whether an If-None-Match value names `etag` (RFC 9110 13.1.2: `*`, or a list of entity tags
 * compared weakly, a `W/` prefix ignored).
 */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  for (const part of header.split(",")) {
    const tag = part.trim();
    if ((tag.startsWith("W/") ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/** The envelope's options for `data` (one object, as each answer made before: no spread copies). */
function envelopeOf<D>(data: D, outcome: Outcome, requestId: string, authToken: string | null, now: Date): EnvelopeOptions<D> {
  return { data, revision: outcome.revision, requestId, authToken, now, paging: outcome.paging };
}

/** The CSV's file name: `X-File-Name` or `file_name` as Kazoo takes them, a path never; else result.csv. */
function csvFileName(request: FastifyRequest, req: ParsedRequest): string {
  const header = request.headers["x-file-name"];
  const given = (typeof header === "string" ? header : undefined) ?? req.query.file_name ?? "";
  const name = (given.split(/[\\/]/).pop() ?? "").replace(/\p{Cc}/gu, "").trim().slice(0, 200);
  return name === "" || name === "." || name === ".." ? "result.csv" : name;
}

/** Kazoo's `X-Pretty-Print: true` header or `pretty_print=true` query. */
function prettyPrint(request: FastifyRequest, req: ParsedRequest): boolean {
  const header = request.headers["x-pretty-print"];
  return (typeof header === "string" && header.trim().toLowerCase() === "true") || req.query.pretty_print === "true";
}

/** A live token's context reaching the account in the path, or the refusal. */
async function authenticate(deps: EndpointDeps, spec: EndpointSpec, request: FastifyRequest, token: string): Promise<AuthContext> {
  const auth = await deps.auth.authenticate(token);
  if (!auth) throw new ApiError("invalid_credentials", { token: { invalid: { message: "the auth token is unknown or expired" } } });
  return reach(spec, request, auth);
}

/** A live token's context if it reaches the account in the path (and a wallboard key, this endpoint), or the refusal. */
function reach(spec: EndpointSpec, request: FastifyRequest, auth: AuthContext): AuthContext {
  const params = (request.params ?? {}) as Record<string, string>;
  if (spec.access === "account" && params.account_id !== auth.accountId) {
    throw new ApiError("forbidden", { account_id: { forbidden: { message: "the token does not reach this account" } } });
  }
  if (auth.wallboardId !== undefined && !Object.values(spec.verbs).some((v) => v?.board)) throw boardOnly();
  return auth;
}

/**
 * The verb's own refusals of a token found outside the body, before the body is read; a token
 * that passes is remembered for the handler.
 */
function admitEarly(spec: EndpointSpec, request: FastifyRequest, token: string, auth: AuthContext): void {
  // Only POST can tunnel another verb in its body; any other method is the verb itself.
  const verbSpec = request.method === "POST" ? undefined : verbSpecOf(spec, request.method);
  if (verbSpec?.admin && !auth.isAdmin) throw notAdmin();
  if (verbSpec !== undefined && auth.wallboardId !== undefined && !verbSpec.board) throw boardOnly();
  request.switchboardEarly = { token, auth };
}

/** The endpoint's spec of the verb a method names, if it names one and the endpoint has it. */
function verbSpecOf(spec: EndpointSpec, method: string): VerbSpec | undefined {
  switch (method) {
    case "GET":
    case "PUT":
    case "POST":
    case "PATCH":
    case "DELETE":
      return spec.verbs[method];
    default:
      return undefined;
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function tokenRequired(): ApiError {
  return new ApiError("invalid_credentials", { token: { required: { message: "an auth token is needed" } } });
}

function boardOnly(): ApiError {
  return new ApiError("forbidden", { token: { wallboard: { message: "a wallboard key reads its wallboard and nothing else" } } });
}

function notAdmin(): ApiError {
  return new ApiError("forbidden", { user: { admin: { message: "this needs an account admin" } } });
}

/** The refusal of a body read before any token is checked, over `max` bytes. */
function bodyTooLarge(max: number): ApiError {
  return new ApiError("payload_too_large", {
    content_length: { maximum: { message: `a body read before any token is checked (a sign-in, or a token inside the envelope) is limited to ${max} bytes; send the token in X-Auth-Token`, target: max } },
  });
}

/** The body as a stream that fails with 413 past `max` bytes, declared or counted. */
function limitBody(request: FastifyRequest, payload: Readable, max: number): Readable {
  const tooLarge = () => bodyTooLarge(max);
  if (Number(request.headers["content-length"]) > max) throw tooLarge();
  let received = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      received += chunk.length;
      callback(received > max ? tooLarge() : null, chunk);
    },
  });
  payload.on("error", (err) => counted.destroy(err));
  return payload.pipe(counted);
}

/**
 * The token outside the body: X-Auth-Token, then `auth_token` in the query, then Authorization:
 * Bearer. Null when only the envelope may carry one.
 */
export function tokenOutsideBody(request: FastifyRequest): string | null {
  const header = request.headers["x-auth-token"];
  if (typeof header === "string" && header !== "") return header;
  const query = request.query;
  const inQuery = typeof query === "object" && query !== null && "auth_token" in query ? query.auth_token : undefined;
  const fromQuery = Array.isArray(inQuery) ? inQuery[inQuery.length - 1] : inQuery;
  if (typeof fromQuery === "string" && fromQuery !== "") return fromQuery;
  const authz = request.headers.authorization;
  const m = typeof authz === "string" ? /^Bearer\s+(\S+)$/i.exec(authz) : null;
  return m?.[1] ?? null;
}

/** `If-Match` without quotes or weak marker, for optimistic concurrency. */
export function ifMatch(request: FastifyRequest): string | undefined {
  const h = request.headers["if-match"];
  if (typeof h !== "string" || h === "*" || h === "") return undefined;
  return h.replace(/^W\//, "").replace(/^"|"$/g, "");
}
