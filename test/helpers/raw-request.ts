// One HTTP request as written, on a connection of its own: the Host header, path and body untouched
// by a client library, for the tests of the server's request path (test/http/).
import { request } from "node:http";

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * Sends `method path` to 127.0.0.1:`port` with exactly `headers` (Node adds Host unless they name
 * one) and `body`. A declared Content-Length longer than the body leaves the request open after it:
 * the server must answer without waiting for the rest.
 */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, setHost: !("Host" in headers), agent: false }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    const declared = headers["Content-Length"];
    if (declared === undefined || Number(declared) <= Buffer.byteLength(body ?? "")) req.end();
  });
}
