// The OpenAPI document is built at its first request, not at start (server/http/openapi.ts): the
// same document whichever of its two addresses is asked first, and again on later requests.
import { afterEach, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function json(path: string): Promise<unknown> {
  const res = await fetch(`${api?.url ?? ""}${path}`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return res.json();
}

describe("the OpenAPI document on first use after start", () => {
  it("is served whole by /v2/openapi.json first, then the same by the docs page's /docs/json", async () => {
    api = await startApi();
    const first = (await json("/v2/openapi.json")) as { openapi: string; paths: Record<string, unknown> };
    expect(first.openapi).toBe("3.0.3");
    expect(Object.keys(first.paths)).toContain("/v2/accounts/{account_id}/devices/{id}");
    expect(await json("/docs/json")).toEqual(first);
    expect(await json("/v2/openapi.json")).toEqual(first);
  });

  it("is served whole by /docs/json first, then the same by /v2/openapi.json", async () => {
    api = await startApi();
    const first = (await json("/docs/json")) as { openapi: string; paths: Record<string, unknown> };
    expect(first.openapi).toBe("3.0.3");
    expect(Object.keys(first.paths)).toContain("/v2/user_auth");
    expect(await json("/v2/openapi.json")).toEqual(first);
    const yaml = await fetch(`${api.url}/docs/yaml`);
    expect(yaml.status).toBe(200);
    expect(await yaml.text()).toMatch(/^openapi: 3\.0\.3$/m);
  });
});
