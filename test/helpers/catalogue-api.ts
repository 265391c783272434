// A test API with the admin signed in and its catalogue read, for the files that walk every path
// /v2/openapi.json documents (test/http/rest-head, rest-other-methods): started in a beforeAll,
// closed in an afterAll, and a path's parameters filled the one way those files fill them.
import { afterAll, beforeAll } from "vitest";
import { startApi, type TestApi } from "./api.js";
import { rawRequest, type RawAnswer } from "./raw-request.js";

/** The catalogue's paths, each with its methods' operations. */
export type CataloguePaths = Record<string, Record<string, unknown>>;

export interface CatalogueApi {
  readonly api: TestApi;
  /** The demo admin's token. */
  readonly token: string;
  readonly accountId: string;
  /** /v2/openapi.json's paths. */
  readonly paths: CataloguePaths;
  /** A documented path with its parameters filled: the account's own id, any other a well-formed unknown id. */
  fill: (path: string) => string;
  /** The catalogue's paths of the API (not the texting API's, the websockets' or the documents'). */
  apiPaths: () => string[];
  /** One request as written, over a fresh connection (test/helpers/raw-request.ts). */
  send: (method: string, path: string, headers?: Record<string, string>, body?: string) => Promise<RawAnswer>;
}

/** The id put in every parameter but the account's: well formed, of no document. */
export const UNKNOWN_ID = "0123456789abcdef0123456789abcdef";
/** Another account's id, well formed: a path of it is refused to the admin's token. */
export const OTHER_ACCOUNT_ID = "fedcba9876543210fedcba9876543210";

/**
 * Registers the file's beforeAll (the API started, the admin signed in, the catalogue read) and
 * afterAll (the API closed). Its fields are read inside the tests, once the beforeAll has run.
 */
export function catalogueApi(): CatalogueApi {
  let ready: { api: TestApi; token: string; accountId: string; paths: CataloguePaths } | undefined;
  let started: TestApi | undefined;
  const get = () => {
    if (ready === undefined) throw new Error("the catalogue's API is read before its beforeAll started it");
    return ready;
  };
  beforeAll(async () => {
    const api = await startApi();
    started = api;
    const { token, accountId } = await api.login();
    const paths = ((await (await fetch(`${api.url}/v2/openapi.json`)).json()) as { paths: CataloguePaths }).paths;
    ready = { api, token, accountId, paths };
  });
  afterAll(async () => {
    await started?.close();
  });
  return {
    get api() {
      return get().api;
    },
    get token() {
      return get().token;
    },
    get accountId() {
      return get().accountId;
    },
    get paths() {
      return get().paths;
    },
    fill: (path) => path.replace("{account_id}", get().accountId).replace(/\{[a-z_]+\}/g, UNKNOWN_ID),
    apiPaths: () => Object.keys(get().paths).filter((p) => p.startsWith("/v2/") && !p.endsWith(".json")),
    send: (method, path, headers = {}, body) => rawRequest(get().api.server.port, method, path, headers, body),
  };
}
