// A real server for API tests: started in this process on port 0 with a fresh data directory
// and the demo account, plus small helpers to log in and call it over real HTTP.
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "../../server/clock.js";
import { ControllableClock } from "../../server/clock-control.js";
import { startServer, type RunningServer } from "../../server/index.js";
import type { ServerConfig } from "../../server/config.js";
import { credentials, DEMO_PASSWORD } from "./credentials.js";

export const ASSETS_DIR = join(import.meta.dirname, "../../assets");
export { credentials, DEMO_PASSWORD };

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the answer was JSON, else the text. */
  body: T;
  text: string;
}

export interface Envelope<T = unknown> {
  status: string;
  data: T;
  error?: string;
  message?: string;
  revision?: string;
  request_id?: string;
  auth_token?: string;
  page_size?: number;
  start_key?: string;
  next_start_key?: string;
}

export interface CallOptions {
  token?: string | null;
  /** Sent as the envelope's `data`. */
  data?: unknown;
  /** Sent as the whole body (overrides `data`). */
  body?: string | Buffer;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface TestApi {
  server: RunningServer;
  url: string;
  dataDir: string;
  call<T = unknown>(method: string, path: string, options?: CallOptions): Promise<ApiResponse<Envelope<T>>>;
  login(username?: string, password?: string): Promise<{ token: string; accountId: string; ownerId: string }>;
  close(): Promise<void>;
}

/**
 * An in-process server's configuration for tests and benchmarks: loopback on a free port, no
 * events port of its own, the shipped assets, the demo account, silent; `overrides` win.
 */
export function localServerConfig(dataDir: string, overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: "127.0.0.1",
    port: 0,
    portExplicit: true,
    // Never the real 5555 (a running console may hold it; parallel tests would race).
    eventsPort: 0,
    dataDir,
    assetsDir: ASSETS_DIR,
    rendererDir: null,
    demo: true,
    allowOrigins: [],
    logLevel: "silent",
    ...overrides,
  };
}

export async function startApi(options: { tokenTtlS?: number; clock?: Clock; demo?: boolean; config?: Partial<ServerConfig> } = {}): Promise<TestApi> {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-api-"));
  const server = await startServer(
    localServerConfig(dataDir, { demo: options.demo ?? true, tokenTtlS: options.tokenTtlS, clock: options.clock, ...options.config }),
  );

  async function call<T>(method: string, path: string, o: CallOptions = {}): Promise<ApiResponse<Envelope<T>>> {
    const url = new URL(path, server.url);
    for (const [k, v] of Object.entries(o.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers["X-Auth-Token"] = o.token;
    let body: string | Buffer | undefined = o.body;
    if (body === undefined && o.data !== undefined) body = JSON.stringify({ data: o.data });
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
      headers["Content-Type"] = "application/json";
    }
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get("content-type") ?? "").includes("json")) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as Envelope<T>, text };
  }

  async function login(username = "admin", password = DEMO_PASSWORD) {
    const res = await call<{ account_id: string; owner_id: string }>("PUT", "/v2/user_auth", {
      data: { credentials: credentials(username, password), account_name: "demo" },
    });
    if (res.status !== 201) throw new Error(`login of ${username} failed: ${res.status} ${res.text}`);
    return { token: res.body.auth_token ?? "", accountId: res.body.data.account_id, ownerId: res.body.data.owner_id };
  }

  return {
    server,
    url: server.url,
    dataDir,
    call,
    login,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A second account with one admin user, made through the store (there is no account-creation
 * endpoint in the hosted API for a plain account), to test isolation between accounts.
 */
export async function createAccount(api: TestApi, name: string, username = "boss", password = "secret"): Promise<{ accountId: string; token: string }> {
  const accounts = await api.server.store.global("accounts");
  const account = await accounts.create({ name, realm: `${name}.switchboard.local`, enabled: true, blacklists: [], language: "en-US" });
  const users = await api.server.store.account(account.id, "users");
  const text = `${username.toLowerCase()}:${password}`;
  await users.create({
    username,
    first_name: "Other",
    last_name: "Admin",
    priv_level: "admin",
    enabled: true,
    pvt_md5_auth: createHash("md5").update(text).digest("hex"),
    pvt_sha1_auth: createHash("sha1").update(text).digest("hex"),
  });
  const res = await api.call<{ account_id: string }>("PUT", "/v2/user_auth", {
    data: { credentials: credentials(username, password), account_name: name },
  });
  if (res.status !== 201) throw new Error(`login to ${name} failed: ${res.text}`);
  return { accountId: account.id, token: res.body.auth_token ?? "" };
}

/**
 * A clock tests can move forward (token expiry, created/modified filters, SIP and texting
 * timers): real time plus the jumps made, with the server's timers due in its time.
 */
export class TestClock extends ControllableClock {
  advance(ms: number): void {
    this.jump(ms);
  }

  /** How far ahead of real time it runs; setting it jumps there. */
  get offsetMs(): number {
    return this.now() - Date.now();
  }

  set offsetMs(ms: number) {
    // The clock follows its own real-time source, Date.now() another: read a moment apart, they
    // can disagree by a millisecond, which must not count as a jump back in time.
    const by = ms - this.offsetMs;
    this.jump(by < 0 && by > -2 ? 0 : by);
  }
}
