// The browser-side hardening every answer carries: a strict Content-Security-Policy for the
// console (and a stricter one for the /docs page), no framing, no MIME sniffing, no referrer.
// The Electron session sets the same console policy on what it loads (main/web-policy.ts), so
// the desktop app is covered even by a server that predates these headers.
import { createHash } from "node:crypto";
import type { FastifyReply } from "fastify";

type Policy = Record<string, readonly string[]>;

/**
 * Where the console may connect and stream from besides its own origin: any local server
 * (another Switchboard on this machine, as remote mode is tested) and any TLS origin (a hosted
 * service). Plain http to another machine is refused: tokens and SIP passwords would cross the
 * network in the clear, and an injected script could post them anywhere.
 */
const REMOTE_SERVERS = ["http://127.0.0.1:*", "ws://127.0.0.1:*", "http://localhost:*", "ws://localhost:*", "https:", "wss:"];

/** The console: its own scripts and styles only, no plug-ins, never inside a frame. */
export const CONSOLE_POLICY: Policy = {
  "default-src": ["'none'"],
  "script-src": ["'self'"],
  "style-src": ["'self'"],
  "img-src": ["'self'", "data:", "blob:"],
  "font-src": ["'self'"],
  // 'self' covers the page's own ws: and wss: in CSP 3 browsers; the explicit list adds remote mode.
  "connect-src": ["'self'", ...REMOTE_SERVERS],
  // Recordings play from the server the console is signed in to, or from a fetched blob.
  "media-src": ["'self'", "blob:", ...REMOTE_SERVERS],
  "manifest-src": ["'self'"],
  "worker-src": ["'self'"],
  "object-src": ["'none'"],
  "base-uri": ["'none'"],
  "form-action": ["'self'"],
  "frame-src": ["'none'"],
  "frame-ancestors": ["'none'"],
};

/** A CSP hash source for one inline script or style element's text. */
export function hashSource(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/**
 * The one inline style Swagger UI (5.34) renders: the colours of its small SVG logo. Allowed by
 * its hash rather than 'unsafe-inline'; a Swagger UI that renders another shows as a violation
 * in test/hostile/csp.test.ts.
 */
const SWAGGER_LOGO_STYLE = ".logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}";

/** Swagger UI: its bundled scripts and styles, the API of this server, no plug-ins, no frames. */
export const DOCS_POLICY: Policy = {
  "default-src": ["'none'"],
  "script-src": ["'self'"],
  "style-src": ["'self'", hashSource(SWAGGER_LOGO_STYLE)],
  "img-src": ["'self'", "data:"],
  "font-src": ["'self'", "data:"],
  "connect-src": ["'self'"],
  "object-src": ["'none'"],
  "base-uri": ["'none'"],
  "form-action": ["'self'"],
  "frame-src": ["'none'"],
  "frame-ancestors": ["'none'"],
};

export function policyText(policy: Policy): string {
  return Object.entries(policy)
    .map(([directive, sources]) => `${directive} ${sources.join(" ")}`)
    .join("; ");
}

export const CONSOLE_CSP = policyText(CONSOLE_POLICY);
export const DOCS_CSP = policyText(DOCS_POLICY);

/** The docs page and its assets live under this prefix (server/http/openapi.ts). */
export const DOCS_PREFIX = "/docs";

/** The API's own answers: JSON envelopes, CSV and media, never a page a browser runs. */
const API_PREFIX = "/v2/";

/** The policy of the answer to `url`; none for the API, whose answers nosniff keeps from being run as pages. */
export function cspFor(url: string): string | null {
  // A URL whose path starts with /v2/ starts with it as a whole (the query comes after the path).
  if (url.startsWith(API_PREFIX)) return null;
  const path = url.split("?")[0] ?? "";
  if (path.startsWith(API_PREFIX)) return null;
  return path === DOCS_PREFIX || path.startsWith(`${DOCS_PREFIX}/`) ? DOCS_CSP : CONSOLE_CSP;
}

/**
 * Puts the headers every answer carries on `reply`: the pages and their assets get the policy,
 * all get the rest. Set as the request arrives (server/http/app.ts), so an answer made anywhere
 * after that, an error's included, carries them without a hook of its own.
 */
export function setSecurityHeaders(reply: FastifyReply, url: string): void {
  // Names in lower case, as Fastify keeps and sends them: its header() lowercases each name it is
  // given, which for a name with capitals makes a new string to look up on every request.
  const policy = cspFor(url);
  if (policy !== null) reply.header("content-security-policy", policy);
  reply.header("x-frame-options", "DENY");
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "no-referrer");
}
