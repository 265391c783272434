// The four addresses a console talks to: the REST API, SIP over WebSocket, the event websocket and
// the texting API. On the local server they all follow from one origin; remote mode may set each.

export interface ServerEndpoints {
  /** Base of /v2, without a trailing slash: http(s)://host[:port][/prefix]. */
  api: string;
  /** ws(s)://host[:port]/sip */
  sip: string;
  /** ws(s)://host[:port]/events */
  events: string;
  /** {texting_url}: /api/send etc. hang below it. */
  texting: string;
}

/** The addresses a server at `api` offers itself, as the local server lays them out. */
export function endpointsOf(api: string): ServerEndpoints {
  const url = new URL(api);
  const ws = url.protocol === "https:" ? "wss:" : "ws:";
  return {
    api,
    sip: `${ws}//${url.host}/sip`,
    events: `${ws}//${url.host}/events`,
    texting: `${url.origin}/texting`,
  };
}

/** An http(s) URL, its query, fragment and trailing slash dropped; null when the text is not one. */
export function normalizeServerUrl(text: string): string | null {
  return normalizeUrl(text, ["http:", "https:"]);
}

/** A ws(s) URL, its query, fragment and trailing slash dropped; null when the text is not one. */
export function normalizeSocketUrl(text: string): string | null {
  return normalizeUrl(text, ["ws:", "wss:"]);
}

function normalizeUrl(text: string, protocols: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (!protocols.includes(url.protocol)) return null;
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}
