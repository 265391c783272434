// What a served server no longer loads or builds before it listens: the phone-number library
// (server/phone-numbers.ts, on first use) and the OpenAPI document (at its first request); and the
// request schemas, compiled at first use. Each is asked for the moment the built server says it is
// serving, and answers as it always did, errors included.
import { afterEach, describe, expect, it } from "vitest";
import { demoGrant, serve, type Served } from "../helpers/serve.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
});

async function call(method: string, path: string, token: string, data: unknown): Promise<{ status: number; body: { message?: string; data: Record<string, unknown> } }> {
  const res = await fetch(`${served?.url ?? ""}${path}`, {
    method,
    headers: { "Content-Type": "application/json", "X-Auth-Token": token },
    body: JSON.stringify({ data }),
  });
  return { status: res.status, body: (await res.json()) as { message?: string; data: Record<string, unknown> } };
}

describe("first use right after start (serve mode)", () => {
  it("validates the first writes, refusing a bad body by field and rule", async () => {
    served = await serve();
    const { token, accountId } = await demoGrant(served.url);
    const refused = await call("PUT", `/v2/accounts/${accountId}/devices`, token, { name: "", enabled: "yes" });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe("validation error");
    expect(refused.body.data).toMatchObject({ name: { minLength: { value: "" } }, enabled: { type: { value: "yes" } } });
    const made = await call("PUT", `/v2/accounts/${accountId}/devices`, token, { name: "desk" });
    expect(made.status).toBe(201);
  });

  it("reads phone numbers in a blocklist, and names the one it cannot read", async () => {
    served = await serve();
    const { token, accountId } = await demoGrant(served.url);
    const base = `/v2/accounts/${accountId}/blacklists`;
    const refused = await call("PUT", base, token, { name: "bad", numbers: { "+1 415 555 267": {}, "+14155552671": {} } });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.data)).toEqual(["numbers.+1 415 555 267"]);
    const made = await call("PUT", base, token, { name: "spam", numbers: { "(415) 555-2671": {} } });
    expect(made.status).toBe(201);
    expect(Object.keys(made.body.data.numbers as Record<string, unknown>)).toEqual(["+14155552671"]);
  });

  it("serves the OpenAPI document as its first request", async () => {
    served = await serve();
    const res = await fetch(`${served.url}/v2/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.0.3");
    expect(Object.keys(doc.paths)).toContain("/v2/accounts/{account_id}/blacklists");
  });
});
