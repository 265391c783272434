// Calls on one signed-in account: the connection they need (server, token, account id), paths
// under /v2/accounts/{id}, one page of a paged list, and URLs a media element can fetch itself.
import { ApiClient, type HttpMethod, type SuccessEnvelope } from "./client.js";

export interface AccountConnection {
  /** API base URL without a trailing slash. */
  serverUrl: string;
  token: string;
  accountId: string;
}

export interface Page<T> {
  rows: T[];
  /** The key of the next page; null on the last page. */
  nextStartKey: string | null;
}

export interface PageQuery {
  pageSize: number;
  /** The key a page starts at; absent for the first page. */
  startKey?: string;
  /** Extra query parameters (filters). */
  params?: Record<string, string>;
}

type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export function accountPath(connection: AccountConnection, path: string): string {
  return `/v2/accounts/${encodeURIComponent(connection.accountId)}${path}`;
}

/** A request under the account: `path` starts with "/" (e.g. "/devices"). */
export async function accountRequest<T>(
  connection: AccountConnection,
  method: HttpMethod,
  path: string,
  body?: unknown,
  fetchImpl?: FetchLike,
): Promise<SuccessEnvelope<T>> {
  const client = new ApiClient({ baseUrl: connection.serverUrl, token: connection.token, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  return client.request<T>(method, accountPath(connection, path), body === undefined ? {} : { body });
}

/** One page of a paged list under the account. */
export async function accountPage<T>(connection: AccountConnection, path: string, query: PageQuery, fetchImpl?: FetchLike): Promise<Page<T>> {
  const params = new URLSearchParams(query.params);
  params.set("page_size", String(query.pageSize));
  if (query.startKey !== undefined) params.set("start_key", query.startKey);
  const envelope = await accountRequest<T[]>(connection, "GET", `${path}?${params.toString()}`, undefined, fetchImpl);
  return { rows: Array.isArray(envelope.data) ? envelope.data : [], nextStartKey: envelope.next_start_key ?? null };
}

/** Every row of a list (`paginate=false`), for small admin collections. */
export async function accountList<T>(connection: AccountConnection, path: string, fetchImpl?: FetchLike): Promise<T[]> {
  const separator = path.includes("?") ? "&" : "?";
  const envelope = await accountRequest<T[]>(connection, "GET", `${path}${separator}paginate=false`, undefined, fetchImpl);
  return Array.isArray(envelope.data) ? envelope.data : [];
}

/**
 * A URL the browser fetches by itself (an <audio> source, a download link), which cannot send
 * X-Auth-Token: the token goes in `auth_token`, as the hosted API accepts it.
 */
export function accountMediaUrl(connection: AccountConnection, path: string, params: Record<string, string>): string {
  const query = new URLSearchParams({ ...params, auth_token: connection.token });
  return `${connection.serverUrl}${accountPath(connection, path)}?${query.toString()}`;
}
