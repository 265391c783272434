// /v2/openapi.json as tools read it: it validates with a standard OpenAPI 3.0 validator, and it
// describes every HTTP route the server really serves (texting and the websockets included).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import SwaggerParser from "@apidevtools/swagger-parser";
import type { OpenAPI } from "openapi-types";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let doc: { openapi: string; paths: Record<string, Record<string, unknown>> };
beforeAll(async () => {
  api = await startApi();
  doc = (await (await fetch(`${api.url}/v2/openapi.json`)).json()) as typeof doc;
});
afterAll(async () => {
  await api.close();
});

/**
 * Routes that are not API: Swagger UI's own page and assets under /docs (a human page, its JSON
 * is this same document) and the static files of the built console.
 */
const NOT_API = [/^\/docs(\/|$)/, /^\/assets\//];

/** Fastify's URL in OpenAPI words: `:name` is `{name}`, a trailing wildcard is `{path}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_]+)/g, "{$1}").replace(/\/\*$/, "/{path}");
}

describe("OpenAPI document", () => {
  it("validates with @apidevtools/swagger-parser as OpenAPI 3.0 (schema and semantic checks)", async () => {
    expect(doc.openapi).toBe("3.0.3");
    // The validator dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as unknown as OpenAPI.Document)).resolves.toBeTruthy();
  });

  it("describes every route the server registered, with each of its methods", () => {
    const missing: string[] = [];
    let checked = 0;
    for (const route of api.server.routes) {
      if (NOT_API.some((re) => re.test(route.url)) || route.method === "HEAD" || route.method === "OPTIONS") continue;
      checked++;
      const item = doc.paths[openApiPath(route.url)];
      if (!item?.[route.method.toLowerCase()]) {
        // A catalogue endpoint answers every method itself (405 for those it lacks): one documented verb is enough.
        if (item && ["get", "put", "post", "patch", "delete"].some((m) => m in item)) continue;
        missing.push(`${route.method} ${route.url}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  it("has the texting API, the websocket upgrades and the documents themselves", () => {
    for (const path of ["/texting/api/send", "/texting/api/contacts", "/texting/api/contacts/{id}/messages", "/texting/media/{account_id}/{id}", "/events", "/sip", "/v2/openapi.json", "/v2/asyncapi.json"]) {
      expect(doc.paths[path], path).toBeDefined();
    }
  });
});
