// The root guard on a real server: Host must name this server (421 otherwise) and a browser
// Origin must be this server's own or one allowed with --allow-origin (403 otherwise).
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startServer, type RunningServer } from "../../server/index.js";
import { localServerConfig } from "../helpers/api.js";

let server: RunningServer;
let dataDir: string;

function get(path: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: server.port, path, headers, setHost: !("Host" in headers) }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

function upgrade(headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/`, { headers });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => {
      resolve(101);
      ws.close();
    });
    ws.on("error", () => undefined);
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sb-guard-"));
  server = await startServer(localServerConfig(dataDir, { demo: false, allowOrigins: ["http://console.example:9000"] }))
});
afterAll(async () => {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("root guard", () => {
  it("answers its own names", async () => {
    for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`]) {
      const res = await get("/", { Host: host });
      expect(res.status).toBe(200);
    }
  });

  it("refuses a forged Host with 421 in the error envelope", async () => {
    for (const host of ["evil.example", `evil.example:${server.port}`, "127.0.0.1:1", ""]) {
      const res = await get("/", { Host: host, "X-Request-ID": "guard-test-1" });
      expect(res.status).toBe(421);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      expect(body).toMatchObject({ status: "error", error: "421", message: "misdirected_request", request_id: "guard-test-1" });
      expect(res.headers["x-request-id"]).toBe("guard-test-1");
    }
  });

  it("refuses a foreign Origin with 403 and accepts its own and allowed ones", async () => {
    const host = `127.0.0.1:${server.port}`;
    const foreign = await get("/", { Host: host, Origin: "http://evil.example" });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ status: "error", error: "403", message: "forbidden" });
    expect((await get("/", { Host: host, Origin: `http://127.0.0.1:${server.port + 1}` })).status).toBe(403);
    expect((await get("/", { Host: host, Origin: "null" })).status).toBe(403);
    expect((await get("/", { Host: host, Origin: `http://localhost:${server.port}` })).status).toBe(200);
    expect((await get("/", { Host: host, Origin: "http://console.example:9000" })).status).toBe(200);
  });

  it("lets a console from an allowed origin read answers (CORS), preflight included", async () => {
    const host = `127.0.0.1:${server.port}`;
    const res = await get("/v2/nothing-here", { Host: host, Origin: "http://console.example:9000" });
    expect(res.headers["access-control-allow-origin"]).toBe("http://console.example:9000");
    expect(String(res.headers["access-control-expose-headers"])).toContain("X-Request-ID");
    const preflight = await new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: server.port,
          path: "/v2/user_auth",
          method: "OPTIONS",
          headers: { Origin: "http://console.example:9000", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type,x-auth-token" },
        },
        (r) => {
          r.resume();
          resolve({ status: r.statusCode ?? 0, headers: r.headers });
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-methods"]).toContain("PUT");
    expect(preflight.headers["access-control-allow-headers"]).toBe("content-type,x-auth-token");
    const own = await get("/", { Host: host, Origin: `http://127.0.0.1:${server.port}` });
    expect(own.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("guards WebSocket upgrades the same way", async () => {
    expect(await upgrade({ Host: "evil.example" })).toBe(421);
    expect(await upgrade({ Origin: "http://evil.example" })).toBe(403);
  });

  it("answers an unknown path with 404 not_found in the envelope", async () => {
    const res = await get("/v2/nothing-here", { Host: `127.0.0.1:${server.port}` });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ status: "error", error: "404", message: "not_found" });
  });
});
