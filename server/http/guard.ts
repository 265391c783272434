// The root guard: a request (WebSocket upgrades included) must name this server in Host, or it
// is refused with 421 (DNS rebinding); a browser request from a foreign Origin gets 403.
// Knows nothing of telephony.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "./errors.js";

export interface GuardOptions {
  /** Host names (without port) this server answers to, besides the loopback names. */
  hosts: string[];
  /** Extra origins allowed to call this server (`--allow-origin`). */
  allowOrigins: string[];
  /** The port actually listened on, known only after listen(). */
  port: () => number;
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];
/** Host values whose verdict the guard keeps at once. */
const HOST_VERDICTS = 64;
const EXPOSED = "X-Request-ID, ETag, Location, Content-Range, Content-Disposition, Retry-After";
const ALLOWED_HEADERS = "X-Auth-Token, Content-Type, X-Request-ID, If-Match, If-None-Match, Range, Authorization, X-File-Name, X-Pretty-Print";

export function registerGuard(app: FastifyInstance, options: GuardOptions): void {
  const guard = requestGuard(options);
  app.addHook("onRequest", (request, reply, done) => {
    guard(request, reply);
    done();
  });
}

/**
 * The guard as a plain function, for a hook that does more (server/http/app.ts): throws the
 * refusal, or answers a CORS preflight itself (then `reply.sent`), or lets the request through.
 */
export function requestGuard(options: GuardOptions): (request: FastifyRequest, reply: FastifyReply) => void {
  const names = new Set([...LOOPBACK_NAMES, ...options.hosts.map(bracketIpv6)].map((h) => h.toLowerCase()));
  const extraOrigins = new Set(options.allowOrigins.map((o) => o.replace(/\/+$/, "").toLowerCase()));

  // Verdicts on the Host values seen, for the port in effect: a client sends the same Host with
  // every request. Bounded: a flood of different values only empties it now and then.
  const verdicts = new Map<string, boolean>();
  let verdictsPort = -1;

  return (request, reply) => {
    const port = options.port();
    if (port !== verdictsPort) {
      verdicts.clear();
      verdictsPort = port;
    }
    const given = request.headers.host ?? "";
    let ours = verdicts.get(given);
    if (ours === undefined) {
      ours = hostIsOurs(given.toLowerCase(), names, port);
      if (verdicts.size >= HOST_VERDICTS) verdicts.clear();
      verdicts.set(given, ours);
    }
    if (!ours) {
      throw new ApiError("misdirected_request", { host: request.headers.host ?? null });
    }
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (!originIsAllowed(origin.toLowerCase(), names, port, extraOrigins)) {
      throw new ApiError("forbidden", { origin });
    }
    // A console served from an allowed other origin (remote mode) needs CORS to read answers.
    if (extraOrigins.has(origin.toLowerCase())) {
      reply.header("Access-Control-Allow-Origin", origin).header("Vary", "Origin").header("Access-Control-Expose-Headers", EXPOSED);
      if (request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
        const asked = request.headers["access-control-request-headers"];
        reply
          .status(204)
          .header("Access-Control-Allow-Methods", "GET, PUT, POST, PATCH, DELETE")
          .header("Access-Control-Allow-Headers", typeof asked === "string" ? asked : ALLOWED_HEADERS)
          .header("Access-Control-Max-Age", "600")
          .send();
      }
    }
  };
}

function hostIsOurs(host: string, names: Set<string>, port: number): boolean {
  const m = /^(\[[0-9a-f:.]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  if (!m) return false;
  const name = m[1] ?? "";
  const hostPort = m[2] === undefined ? 80 : Number(m[2]);
  return names.has(name) && hostPort === port;
}

function originIsAllowed(origin: string, names: Set<string>, port: number, extra: Set<string>): boolean {
  if (extra.has(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  const originPort = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return names.has(url.hostname) && originPort === port;
}

function bracketIpv6(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
