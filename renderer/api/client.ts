// The one place that knows the server's URLs and tokens: a typed fetch wrapper for the /v2
// envelope, the error it raises, and the authentication calls the console makes.
import { md5Hex } from "./md5.js";

export interface SuccessEnvelope<T> {
  status: "success";
  data: T;
  auth_token?: string;
  request_id?: string;
  revision?: string;
  timestamp?: string;
  page_size?: number;
  next_start_key?: string;
}

export interface ErrorEnvelope {
  status: "error";
  error: string;
  message: string;
  data: unknown;
  request_id?: string;
}

export type HttpMethod = "GET" | "PUT" | "POST" | "PATCH" | "DELETE";

/**
 * `network`: no HTTP answer at all (server down, wrong address, CORS refusal).
 * `http`: the server answered with an error status.
 * `malformed`: a 2xx answer that is not the envelope we expect.
 */
export type ApiFailureKind = "network" | "http" | "malformed";

export class ApiRequestError extends Error {
  override readonly name = "ApiRequestError";

  constructor(
    readonly kind: ApiFailureKind,
    /** HTTP status, 0 when there was no answer. */
    readonly status: number,
    /** The envelope's code word (`invalid_credentials`, `not_found` ...), or "" when absent. */
    readonly code: string,
    readonly data: unknown,
    readonly requestId: string | null,
    message: string,
  ) {
    super(message);
  }
}

type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ApiClientOptions {
  baseUrl: string;
  token?: string | null;
  fetch?: FetchLike;
}

let unauthorizedHandler: (() => void) | null = null;

/**
 * Who hears that a request carrying a token was answered 401 (the token expired or was revoked):
 * the store sets it once, so every client, whichever view made it, sends the agent to sign in.
 */
export function onUnauthorized(handler: (() => void) | null): void {
  unauthorizedHandler = handler;
}

export interface RequestOptions {
  /** Sent as `{data: body}`, the envelope every /v2 write expects. */
  body?: unknown;
  signal?: AbortSignal;
}

export class ApiClient {
  private readonly baseUrl: string;
  private readonly token: string | null;
  private readonly fetch: FetchLike;

  constructor(options: ApiClientOptions) {
    // Joined by concatenation, not new URL(path, base), so a hosted base with a path prefix survives.
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.token = options.token ?? null;
    // Unbound window.fetch throws "Illegal invocation" in Chromium, hence the arrow.
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async request<T>(method: HttpMethod, path: string, options: RequestOptions = {}): Promise<SuccessEnvelope<T>> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.token !== null) headers["X-Auth-Token"] = this.token;
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify({ data: options.body });
    }
    if (options.signal !== undefined) init.signal = options.signal;

    let response: Response;
    try {
      response = await this.fetch(this.baseUrl + path, init);
    } catch (cause) {
      if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
      throw new ApiRequestError("network", 0, "", null, null, `cannot reach ${this.baseUrl}`);
    }

    const body = await readJson(response);
    if (response.status === 401 && this.token !== null) unauthorizedHandler?.();
    if (!response.ok) {
      const envelope = isErrorEnvelope(body) ? body : null;
      throw new ApiRequestError(
        "http",
        response.status,
        envelope?.message ?? "",
        envelope?.data ?? null,
        envelope?.request_id ?? response.headers.get("X-Request-ID"),
        `${method} ${path} answered ${response.status}${envelope ? ` ${envelope.message}` : ""}`,
      );
    }
    if (!isRecord(body) || body["status"] !== "success" || !("data" in body)) {
      throw new ApiRequestError(
        "malformed",
        response.status,
        "",
        body,
        response.headers.get("X-Request-ID"),
        `${method} ${path} answered ${response.status} without a success envelope`,
      );
    }
    // The envelope's shape is checked above; its data's shape is each caller's contract with the API.
    return body as unknown as SuccessEnvelope<T>;
  }

  /** PUT /v2/user_auth: trades a username and password for a token. */
  async userAuth(credentials: Credentials): Promise<AuthGrant> {
    const envelope = await this.request<unknown>("PUT", "/v2/user_auth", {
      body: {
        credentials: credentialsHash(credentials.username, credentials.password),
        account_name: credentials.accountName,
      },
    });
    const data = envelope.data;
    const token = envelope.auth_token;
    if (
      typeof token !== "string" ||
      token === "" ||
      !isRecord(data) ||
      typeof data["account_id"] !== "string" ||
      typeof data["owner_id"] !== "string"
    ) {
      throw new ApiRequestError("malformed", 201, "", data, envelope.request_id ?? null, "user_auth answered without a token");
    }
    return {
      token,
      accountId: data["account_id"],
      ownerId: data["owner_id"],
      accountName: typeof data["account_name"] === "string" ? data["account_name"] : credentials.accountName,
    };
  }

  /** DELETE /v2/token_auth: revokes this client's token. */
  async revokeToken(): Promise<void> {
    await this.request<unknown>("DELETE", "/v2/token_auth");
  }
}

export interface Credentials {
  accountName: string;
  username: string;
  password: string;
}

export interface AuthGrant {
  token: string;
  accountId: string;
  ownerId: string;
  /** As the server spells it, which may differ in case from what was typed. */
  accountName: string;
}

/** What the session slice needs from the server, so tests can hand it a fake. */
export interface AuthApi {
  signIn(serverUrl: string, credentials: Credentials): Promise<AuthGrant>;
  signOut(serverUrl: string, token: string): Promise<void>;
}

export const httpAuthApi: AuthApi = {
  signIn: (serverUrl, credentials) => new ApiClient({ baseUrl: serverUrl }).userAuth(credentials),
  signOut: (serverUrl, token) => new ApiClient({ baseUrl: serverUrl, token }).revokeToken(),
};

/** The platform's credential hash: md5 of lowercase(username) + ":" + password. */
export function credentialsHash(username: string, password: string): string {
  return md5Hex(`${username.toLowerCase()}:${password}`);
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => "");
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  return isRecord(value) && value["status"] === "error" && typeof value["message"] === "string";
}
