// Helpers for the texting tests: a demo user's texting credentials (through the platform API, as
// the console gets them), calls to /texting/api with Bearer auth, and a relay receiver.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestApi } from "../helpers/api.js";

export interface TextingUser {
  accountId: string;
  userId: string;
  /** The platform token of the user. */
  token: string;
  accessToken: string;
  /** `Bearer <account_uid>:<access_token>`. */
  bearer: string;
  number: string;
}

export interface TextingSettings {
  account_uid: string;
  access_token: string;
  numbers: string[];
  relay_url: string | null;
}

export interface TextingResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export async function textingUser(api: TestApi, username: string): Promise<TextingUser> {
  const { token, accountId, ownerId } = await api.login(username);
  const res = await api.call<TextingSettings>("GET", `/v2/accounts/${accountId}/users/${ownerId}/texting`, { token });
  if (res.status !== 200) throw new Error(`texting settings of ${username}: ${res.status} ${res.text}`);
  const s = res.body.data;
  return { accountId, userId: ownerId, token, accessToken: s.access_token, bearer: `Bearer ${s.account_uid}:${s.access_token}`, number: s.numbers[0] ?? "" };
}

/** One request to the texting API; a `body` object is sent as JSON, a string or Buffer as is. */
export async function texting<T = Record<string, unknown>>(
  api: TestApi,
  method: string,
  path: string,
  options: { bearer?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<TextingResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.bearer) headers.Authorization = options.bearer;
  let body: string | Buffer | undefined;
  if (typeof options.body === "string" || Buffer.isBuffer(options.body)) body = options.body;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = "application/json";
  const res = await fetch(new URL(`/texting/api${path}`, api.url), { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: (text === "" ? {} : JSON.parse(text)) as T, headers: res.headers };
}

export interface RelayRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/**
 * A relay receiver: records every request; answers 500 while `failures` is above zero and to
 * every payload whose MessageBody is in `refused`, else 200.
 */
export class RelayReceiver {
  readonly requests: RelayRequest[] = [];
  readonly refused = new Set<string>();
  failures = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<RelayReceiver> {
    const server = createServer();
    const receiver = new RelayReceiver(server);
    server.on("request", (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        receiver.requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body });
        const fail = receiver.failures > 0 || receiver.refused.has(messageBody(body));
        if (receiver.failures > 0) receiver.failures--;
        res.statusCode = fail ? 500 : 200;
        res.end(fail ? "not now" : "ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async waitFor(count: number, timeoutMs = 10_000): Promise<RelayRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      if (Date.now() > deadline) throw new Error(`relay receiver: ${this.requests.length} of ${count} requests after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.requests;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function messageBody(json: string): string {
  try {
    const parsed: unknown = JSON.parse(json);
    return typeof parsed === "object" && parsed !== null && "MessageBody" in parsed ? String(parsed.MessageBody) : "";
  } catch {
    return "";
  }
}

/** A 1x1 PNG. */
export const TINY_PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cfc0f01f0005000201a5f8a1b80000000049454e44ae426082",
  "hex",
);
