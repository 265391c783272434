// What the console's web contents may do: where they may navigate, which links leave for the
// system browser, and which permissions they are granted. Pure, so tests need no Electron.

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
