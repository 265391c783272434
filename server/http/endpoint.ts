// One REST endpoint, crossbar style: a path, its allowed verbs (each with a handler), who may
// call it, and the plumbing every endpoint shares: verb and accept tunnelling, token
// authentication, account isolation, admin-only verbs, 405 with Allow, the success envelope or
// CSV, ETag. Also records each endpoint for the OpenAPI document.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../clock.js";
import { ApiError } from "./errors.js";
import { successEnvelope, type Paging } from "./envelope.js";
import { parseRequest, wantsCsv, type ParsedRequest, type Verb } from "./request.js";
import { toCsv } from "./csv.js";
import type { JsonSchema } from "./validation.js";

export interface AuthContext {
  token: string;
  accountId: string;
  /** The user behind the token; null for an API-key token. */
  ownerId: string | null;
  isAdmin: boolean;
  method: "user_auth" | "api_auth";
}

export interface Authenticator {
  /** The context of a live token, or null (missing, wrong or expired). */
  authenticate(token: string): Promise<AuthContext | null>;
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
  paging?: Paging;
  headers?: Record<string, string>;
  /** The token to put in the envelope when the request carried none (a login). */
  authToken?: string;
}

/** A handler either returns what to send, or `"sent"` when it answered itself (binary). */
export type Handler = (ctx: Ctx) => Promise<Outcome | "sent">;

export interface VerbSpec {
  handler: Handler;
  summary: string;
  /** Only admins (and API-key tokens) may use this verb. */
  admin?: boolean;
  /** JSON schema of the envelope's `data`, for the OpenAPI document. */
  body?: JsonSchema;
  /** The success statuses when not the verb's usual one (201 for PUT, 200 otherwise), for the OpenAPI document. */
  answers?: readonly number[];
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

export function registerEndpoint(app: FastifyInstance, deps: EndpointDeps, spec: EndpointSpec): void {
  deps.catalogue.push(spec);
  const allow = Object.keys(spec.verbs).join(", ");
  app.route({
    method: [...METHODS],
    url: spec.path,
    handler: async (request, reply) => {
      if (request.method === "OPTIONS") return reply.header("Allow", allow).status(200).send();
      const req = parseRequest(request);
      const verbSpec = spec.verbs[req.verb];
      if (!verbSpec) {
        reply.header("Allow", allow);
        throw new ApiError("invalid_method", { method: req.verb, allowed: Object.keys(spec.verbs) });
      }
      const params = (request.params ?? {}) as Record<string, string>;
      const token = spec.access === "public" ? null : tokenOf(request, req);
      let auth: AuthContext | null = null;
      if (spec.access !== "public") {
        if (!token) throw new ApiError("invalid_credentials", { token: { required: { message: "an auth token is needed" } } });
        auth = await deps.auth.authenticate(token);
        if (!auth) throw new ApiError("invalid_credentials", { token: { invalid: { message: "the auth token is unknown or expired" } } });
        if (spec.access === "account" && params.account_id !== auth.accountId) {
          throw new ApiError("forbidden", { account_id: { forbidden: { message: "the token does not reach this account" } } });
        }
        if (verbSpec.admin && !auth.isAdmin) {
          throw new ApiError("forbidden", { user: { admin: { message: "this needs an account admin" } } });
        }
      }
      const now = new Date(deps.clock.now());
      const outcome = await verbSpec.handler({ request, reply, req, params, auth, now });
      if (outcome === "sent") return reply;
      if (outcome.headers) for (const [k, v] of Object.entries(outcome.headers)) reply.header(k, v);
      if (outcome.revision && /^\d+-[0-9a-f]{32}$/.test(outcome.revision)) reply.header("ETag", `"${outcome.revision}"`);
      reply.status(outcome.status ?? 200);
      if (wantsCsv(req.accept)) {
        return reply
          .type("text/csv; charset=utf-8")
          .header("Content-Disposition", 'attachment; filename="result.csv"')
          .send(toCsv(outcome.data));
      }
      return reply.type("application/json; charset=utf-8").send(
        successEnvelope({
          data: outcome.data,
          revision: outcome.revision,
          requestId: request.id,
          authToken: token ?? outcome.authToken ?? null,
          now,
          paging: outcome.paging,
        }),
      );
    },
  });
}

/** Token sources in order: X-Auth-Token, auth_token (query or envelope), Authorization: Bearer. */
function tokenOf(request: FastifyRequest, req: ParsedRequest): string | null {
  const header = request.headers["x-auth-token"];
  if (typeof header === "string" && header !== "") return header;
  if (req.bodyToken) return req.bodyToken;
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
