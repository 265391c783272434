// What the console's web contents may do: where they may navigate, which links leave for the
// system browser, which permissions they are granted, and the security headers their pages
// carry. Pure, so tests need no Electron.
import { cspFor } from "../server/http/csp.js";

/** True when `url` has exactly the app's origin (scheme, host and port). */
export function isAppOrigin(url: string, appOrigin: string): boolean {
  const origin = httpUrl(url)?.origin;
  return origin !== undefined && origin === httpUrl(appOrigin)?.origin;
}

/**
 * A link the console may hand to the system browser: http(s) only and never the app itself
 * (the app in a browser tab would register a second softphone for the same agent).
 */
export function externalLink(url: string, appOrigin: string): string | null {
  const parsed = httpUrl(url);
  return parsed === null || isAppOrigin(parsed.href, appOrigin) ? null : parsed.href;
}

export interface PermissionQuery {
  permission: string;
  /** The origin (or URL) of the frame asking. */
  origin: string;
  /** For `media`: the kinds of device asked for; empty when Electron did not say. */
  mediaTypes: readonly string[];
}

/**
 * Grants the microphone and desktop notifications (call offers raise one while the console is
 * in the background) to the app origin; everything else, and every other origin, is refused.
 * A `media` ask that includes video, or names no device kind, is refused: the console is
 * audio-only and a camera light coming on would alarm the agent.
 */
export function permissionGranted(query: PermissionQuery, appOrigin: string): boolean {
  if (!isAppOrigin(query.origin, appOrigin)) return false;
  switch (query.permission) {
    case "media":
      return query.mediaTypes.length > 0 && query.mediaTypes.every((kind) => kind === "audio");
    case "notifications":
      return true;
    default:
      return false;
  }
}

/** Only http(s) URLs have an origin worth comparing: file:, data:, javascript: and about: are opaque. */
function httpUrl(url: string): URL | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed : null;
}

export type ResponseHeaders = Record<string, string[]>;

const SECURITY_HEADERS = ["content-security-policy", "x-frame-options", "x-content-type-options"];

/**
 * The app origin's answers with the server's own security headers, whatever the server sent:
 * the session enforces them even if a server without them (an older build, a stand-in on the
 * port) answers. Other origins (a hosted service in remote mode) are left as they are.
 */
export function withSecurityHeaders(url: string, headers: ResponseHeaders, appOrigin: string): ResponseHeaders {
  if (!isAppOrigin(url, appOrigin)) return headers;
  const out: ResponseHeaders = {};
  for (const [name, values] of Object.entries(headers)) if (!SECURITY_HEADERS.includes(name.toLowerCase())) out[name] = values;
  const policy = cspFor(new URL(url).pathname);
  if (policy !== null) out["Content-Security-Policy"] = [policy];
  out["X-Frame-Options"] = ["DENY"];
  out["X-Content-Type-Options"] = ["nosniff"];
  return out;
}
