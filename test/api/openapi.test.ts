// The local API documents itself: an OpenAPI document built from the routes' own schemas, and a
// human page at /docs served from the local package.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  await api.close();
});

interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, { summary: string; requestBody?: { content: Record<string, { schema: { properties: { data: { required?: string[] } } } }> } }>>;
}

describe("OpenAPI", () => {
  it("serves /v2/openapi.json describing every registered endpoint with its verbs and schemas", async () => {
    const res = await fetch(`${api.url}/v2/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApiDoc;
    expect(doc.openapi).toMatch(/^3\./);
    const devices = doc.paths["/v2/accounts/{account_id}/devices"];
    expect(Object.keys(devices ?? {}).sort()).toEqual(["get", "put"]);
    expect(Object.keys(doc.paths["/v2/accounts/{account_id}/devices/{id}"] ?? {}).sort()).toEqual(["delete", "get", "patch", "post"]);
    const createBody = devices?.put?.requestBody?.content["application/json"]?.schema.properties.data;
    expect(createBody?.required).toEqual(["name"]);
    expect(doc.paths["/v2/user_auth"]?.put?.summary).toMatch(/md5/);
  });

  it("names the upload types of media audio, and no success for what is always refused", async () => {
    const doc = (await (await fetch(`${api.url}/v2/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> }>>;
    };
    const raw = doc.paths["/v2/accounts/{account_id}/media/{id}/raw"]?.post;
    expect(Object.keys(raw?.requestBody?.content ?? {})).toEqual(expect.arrayContaining(["audio/wav", "audio/mpeg", "application/octet-stream", "application/base64"]));
    const item = doc.paths["/v2/accounts/{account_id}/media/{id}"]?.post;
    expect(Object.keys(item?.requestBody?.content ?? {})).toEqual(expect.arrayContaining(["application/json", "audio/wav", "application/x-base64"]));
    const create = doc.paths["/v2/accounts"]?.put;
    expect(Object.keys(create?.responses ?? {})).toContain("403");
    expect(Object.keys(create?.responses ?? {})).not.toContain("201");
  });

  it("serves a human page at /docs without fetching anything from the network", async () => {
    const res = await fetch(`${api.url}/docs/`, { redirect: "follow" });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("swagger-ui");
    for (const src of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      expect(src[1]?.startsWith("http"), src[1]).toBe(false);
    }
    expect((await fetch(`${api.url}/docs/json`)).status).toBe(200);
  });
});
