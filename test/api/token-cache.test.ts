// A token's caller is resolved once and then kept (server/auth/token-cache.ts): through the API,
// a token already used stops working at once when it is revoked, when it expires (the clock
// jumped), when its user is disabled, deleted or has a new password, and an admin demoted is
// refused admin work at once; another user's token goes on working.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, TestClock, type TestApi } from "../helpers/api.js";

const TTL_S = 300;
const clock = new TestClock();
let api: TestApi;
let admin: string;
let accountId: string;
let users: string;
let counter = 0;

beforeAll(async () => {
  api = await startApi({ clock, tokenTtlS: TTL_S });
  ({ token: admin, accountId } = await api.login("admin"));
  users = `/v2/accounts/${accountId}/users`;
});
afterAll(async () => {
  await api.close();
});

/** A new user of the demo account, logged in, its token used once so its caller is resolved. */
async function session(data: Record<string, unknown> = {}): Promise<{ id: string; token: string; password: string }> {
  counter++;
  const password = `pw-cache-${counter}`;
  const made = await api.call<{ id: string }>("PUT", users, {
    token: admin,
    data: { username: `cached${counter}`, first_name: "Cache", last_name: `User${counter}`, password, ...data },
  });
  expect(made.status, made.text).toBe(201);
  const { token } = await api.login(`cached${counter}`, password);
  expect(await status(token)).toBe(200);
  return { id: made.body.data.id, token, password };
}

/** What a guarded read of the account answers this token. */
async function status(token: string): Promise<number> {
  return (await api.call("GET", `/v2/accounts/${accountId}/devices`, { token })).status;
}

describe("a token already resolved", () => {
  it("is refused at once once revoked (DELETE token_auth), and only that token", async () => {
    const a = await session();
    const b = await session();
    expect((await api.call("DELETE", "/v2/token_auth", { token: a.token })).status).toBe(200);
    expect(await status(a.token)).toBe(401);
    expect(await status(b.token)).toBe(200);
  });

  it("is refused once idle past its expiry by the clock, and slides while used", async () => {
    const a = await session();
    const b = await session();
    clock.advance((TTL_S - 5) * 1000);
    expect(await status(b.token)).toBe(200);
    expect(await status(admin)).toBe(200);
    clock.advance(10 * 1000);
    expect(await status(a.token)).toBe(401);
    expect(await status(b.token)).toBe(200);
  });

  it("is refused at once when its user is disabled, deleted, or given a new password", async () => {
    const disabled = await session();
    const deleted = await session();
    const rotated = await session();
    const bystander = await session();
    expect((await api.call("PATCH", `${users}/${disabled.id}`, { token: admin, data: { enabled: false } })).status).toBe(200);
    expect(await status(disabled.token)).toBe(401);
    expect((await api.call("DELETE", `${users}/${deleted.id}`, { token: admin })).status).toBe(200);
    expect(await status(deleted.token)).toBe(401);
    // The same password again is no change: the session stands.
    expect((await api.call("PATCH", `${users}/${rotated.id}`, { token: admin, data: { password: rotated.password } })).status).toBe(200);
    expect(await status(rotated.token)).toBe(200);
    expect((await api.call("PATCH", `${users}/${rotated.id}`, { token: admin, data: { password: "a-new-one" } })).status).toBe(200);
    expect(await status(rotated.token)).toBe(401);
    expect(await status(bystander.token)).toBe(200);
    expect(await status(admin)).toBe(200);
  });

  it("follows a change of privilege at once: promoted it may do admin work, demoted it may not", async () => {
    const a = await session();
    const apiKey = `/v2/accounts/${accountId}/api_key`;
    expect((await api.call("GET", apiKey, { token: a.token })).status).toBe(403);
    expect((await api.call("PATCH", `${users}/${a.id}`, { token: admin, data: { priv_level: "admin" } })).status).toBe(200);
    expect((await api.call("GET", apiKey, { token: a.token })).status).toBe(200);
    expect((await api.call("PATCH", `${users}/${a.id}`, { token: admin, data: { priv_level: "user" } })).status).toBe(200);
    expect((await api.call("GET", apiKey, { token: a.token })).status).toBe(403);
    expect(await status(a.token)).toBe(200);
  });

  it("of the API key is refused at once when the key is replaced; user tokens are unaffected", async () => {
    const key = await api.call<{ api_key: string }>("GET", `/v2/accounts/${accountId}/api_key`, { token: admin });
    const login = await api.call("PUT", "/v2/api_auth", { data: { api_key: key.body.data.api_key } });
    expect(login.status).toBe(201);
    const keyToken = login.body.auth_token ?? "";
    expect(await status(keyToken)).toBe(200);
    const user = await session();
    expect((await api.call("PUT", `/v2/accounts/${accountId}/api_key`, { token: admin })).status).toBe(200);
    expect(await status(keyToken)).toBe(401);
    expect(await status(user.token)).toBe(200);
  });
});
