// An old client calling version 1 of the API is told, as the hosted service tells it, to move to
// version 2: 410 gone with a message, whatever the method and path, token or not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;

beforeAll(async () => {
  api = await startApi();
});

afterAll(async () => {
  await api.close();
});

describe("API versions", () => {
  it("answers /v1 paths 410 gone, naming version 2, for every method", async () => {
    const { token, accountId } = await api.login("admin");
    for (const [method, path] of [
      ["GET", `/v1/accounts/${accountId}/users`],
      ["PATCH", `/v1/accounts/${accountId}/callflows/${"0".repeat(32)}`],
      ["PUT", "/v1/user_auth"],
      ["GET", "/v1"],
    ] as const) {
      const res = await api.call<unknown>(method, path, method === "GET" ? { token } : { token, data: {} });
      expect(res.status, `${method} ${path}`).toBe(410);
      expect(res.body).toMatchObject({ status: "error", error: "410", message: "gone" });
      expect(JSON.stringify(res.body.data)).toContain("version 2");
    }
  });

  it("still serves /v2 and answers unknown versions 404 not_found", async () => {
    const { token, accountId } = await api.login("admin");
    expect((await api.call("GET", `/v2/accounts/${accountId}/users`, { token })).status).toBe(200);
    const v3 = await api.call("GET", `/v3/accounts/${accountId}/users`, { token });
    expect(v3.status).toBe(404);
    expect(v3.body).toMatchObject({ message: "not_found" });
  });
});
