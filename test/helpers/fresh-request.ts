// One HTTP request on a connection of its own (no keep-alive): for tests against a server that
// may close idle connections, or is still starting, where a pooled socket could be a stale one.
import { request as httpRequest } from "node:http";

export interface FreshAnswer {
  status: number;
  text: string;
}

/** Sends `body` as `{data: body}` JSON when given, with the extra `headers`. */
export function freshRequest(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<FreshAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify({ data: body });
    const req = httpRequest(new URL(path, base), { method, agent: false, headers: { "Content-Type": "application/json", ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}
