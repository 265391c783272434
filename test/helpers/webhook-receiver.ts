// A webhook receiver for tests: a real HTTP server on a free port that answers 200 and keeps
// every request's form-encoded (or query-string) payload, by path.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export class HookReceiver {
  readonly received: { path: string; body: Record<string, string> }[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<HookReceiver> {
    const server = createServer();
    const receiver = new HookReceiver(server);
    server.on("request", (req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk.toString()));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://receiver");
        const fields = text === "" ? url.searchParams : new URLSearchParams(text);
        receiver.received.push({ path: url.pathname, body: Object.fromEntries(fields) });
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The payloads sent to `path`, oldest first. */
  at(path: string): Record<string, string>[] {
    return this.received.filter((r) => r.path === path).map((r) => r.body);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
