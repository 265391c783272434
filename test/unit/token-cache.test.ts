// Tokens resolved once: the bounded cache itself, and AuthService serving a resolved caller only
// while the token lives and the documents it was resolved from stand, on a real store and a
// manual clock.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuthService } from "../../server/auth/index.js";
import { TokenCache } from "../../server/auth/token-cache.js";
import { ManualClock } from "../../server/clock-control.js";
import type { Collection } from "../../server/store/index.js";
import { Store } from "../../server/store/index.js";

describe("TokenCache", () => {
  it("keeps at most its capacity, letting the least recently used go first", () => {
    const cache = new TokenCache<string>(3);
    for (const t of ["a", "b", "c"]) cache.set(t, { tokenId: `id-${t}`, value: t });
    // Using "a" makes "b" the least recently used.
    expect(cache.get("a")?.value).toBe("a");
    cache.set("d", { tokenId: "id-d", value: "d" });
    expect(cache.size).toBe(3);
    expect(cache.get("b")).toBeUndefined();
    expect(["a", "c", "d"].map((t) => cache.get(t)?.value)).toEqual(["a", "c", "d"]);
  });

  it("drops an entry by token or by token id, and setting a token again replaces its entry", () => {
    const cache = new TokenCache<string>(10);
    cache.set("a", { tokenId: "id-a", value: "first" });
    cache.set("a", { tokenId: "id-a", value: "second" });
    cache.set("b", { tokenId: "id-b", value: "b" });
    expect(cache.size).toBe(2);
    expect(cache.get("a")?.value).toBe("second");
    cache.dropId("id-a");
    expect(cache.get("a")).toBeUndefined();
    cache.drop("b");
    cache.dropId("id-unknown");
    expect(cache.size).toBe(0);
  });

  it("refuses a capacity that is not a whole number from 1", () => {
    expect(() => new TokenCache(0)).toThrow(/capacity/);
    expect(() => new TokenCache(1.5)).toThrow(/capacity/);
  });
});

describe("AuthService resolves each token once", () => {
  const TTL_S = 300;
  let dir: string;
  let clock: ManualClock;
  let store: Store;
  let auth: AuthService;
  let accounts: Collection;
  let users: Collection;
  let accountId: string;
  let adminId: string;
  let agentId: string;

  const openAuth = async (tokenCacheSize?: number): Promise<AuthService> =>
    AuthService.open(store, { tokenTtlS: TTL_S, ...(tokenCacheSize === undefined ? {} : { tokenCacheSize }) });
  const userToken = (ownerId: string): Promise<string> => auth.tokens.issue({ account_id: accountId, owner_id: ownerId, method: "user_auth" });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "sb-token-cache-"));
    clock = new ManualClock();
    store = await Store.open({ dir, clock });
    accounts = await store.global("accounts");
    accountId = (await accounts.create({ name: "cache", enabled: true })).id;
    users = await store.account(accountId, "users");
    adminId = (await users.create({ username: "boss", priv_level: "admin", enabled: true })).id;
    agentId = (await users.create({ username: "agent", priv_level: "user", enabled: true })).id;
    auth = await openAuth();
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers a token seen before with the caller already resolved", async () => {
    const token = await userToken(adminId);
    const first = await auth.authenticate(token);
    expect(first).toMatchObject({ accountId, ownerId: adminId, isAdmin: true, method: "user_auth" });
    expect(auth.resolvedTokens).toBe(1);
    expect(await auth.authenticate(token)).toBe(first);
    expect(await auth.authenticate("f".repeat(64))).toBeNull();
    expect(await auth.authenticate("not a token")).toBeNull();
    expect(auth.resolvedTokens).toBe(1);
  });

  it("slides the window on a cached use, and refuses the token once idle past it (the clock jumped)", async () => {
    const token = await userToken(agentId);
    expect(await auth.authenticate(token)).not.toBeNull();
    for (let i = 0; i < 3; i++) {
      await clock.advance((TTL_S - 1) * 1000);
      expect(await auth.authenticate(token), `use ${i}`).not.toBeNull();
    }
    const ended: string[] = [];
    auth.tokens.onEnd((_id, why) => ended.push(why));
    await clock.advance(TTL_S * 1000 + 1);
    expect(await auth.authenticate(token)).toBeNull();
    expect(ended).toEqual(["expired"]);
    expect(auth.resolvedTokens).toBe(0);
  });

  it("answers a held token without a promise only while authenticate() would, and leaves its due write to authenticate()", async () => {
    const token = await userToken(agentId);
    expect(auth.authenticateHeld(token)).toBeUndefined();
    const identity = await auth.authenticate(token);
    expect(auth.authenticateHeld(token)).toBe(identity);
    // Uses within a tenth of the window of the last write are noted in memory, as authenticate() notes them.
    for (let i = 0; i < 9; i++) {
      await clock.advance(TTL_S * 10);
      expect(auth.authenticateHeld(token), `use ${i}`).toBe(identity);
    }
    // Past it the write is due: only authenticate() does it, and then the token is held again.
    await clock.advance(TTL_S * 10 + 1);
    expect(auth.authenticateHeld(token)).toBeUndefined();
    expect(await auth.authenticate(token)).toBe(identity);
    expect(auth.authenticateHeld(token)).toBe(identity);
    await users.update(agentId, { username: "agent", priv_level: "user", enabled: false });
    expect(auth.authenticateHeld(token)).toBeUndefined();
    expect(await auth.authenticate(token)).toBeNull();
    const other = await userToken(adminId);
    expect(await auth.authenticate(other)).not.toBeNull();
    await clock.advance(TTL_S * 1000 + 1);
    expect(auth.authenticateHeld(other)).toBeUndefined();
    expect(await auth.authenticate(other)).toBeNull();
  });

  it("refuses a revoked token at once, before the revocation is even on disk", async () => {
    const token = await userToken(agentId);
    expect(await auth.authenticate(token)).not.toBeNull();
    const revoking = auth.tokens.revoke(token);
    expect(await auth.authenticate(token)).toBeNull();
    await revoking;
    expect(auth.resolvedTokens).toBe(0);
  });

  it("refuses every token of a user whose tokens are revoked, and no other's", async () => {
    const agent = [await userToken(agentId), await userToken(agentId)];
    const admin = await userToken(adminId);
    for (const t of [...agent, admin]) expect(await auth.authenticate(t)).not.toBeNull();
    await auth.tokens.revokeOwner(accountId, agentId);
    for (const t of agent) expect(await auth.authenticate(t)).toBeNull();
    expect(await auth.authenticate(admin)).toMatchObject({ ownerId: adminId });
    expect(auth.resolvedTokens).toBe(1);
  });

  it("follows the user's document: disabled or deleted refuses, demoted is no longer admin, at once", async () => {
    const admin = await userToken(adminId);
    const agent = await userToken(agentId);
    expect(await auth.authenticate(admin)).toMatchObject({ isAdmin: true });
    expect(await auth.authenticate(agent)).not.toBeNull();

    // Written to the store directly: no API revoked anything, the cached caller must not stand.
    const demoting = users.update(adminId, { ...users.get(adminId)?.data, priv_level: "user" });
    expect(await auth.authenticate(admin)).toMatchObject({ ownerId: adminId, isAdmin: false });
    await demoting;

    await users.update(agentId, { ...users.get(agentId)?.data, enabled: false });
    expect(await auth.authenticate(agent)).toBeNull();
    await users.update(agentId, { ...users.get(agentId)?.data, enabled: true });
    expect(await auth.authenticate(agent)).not.toBeNull();
    await users.delete(agentId);
    expect(await auth.authenticate(agent)).toBeNull();
    expect(await auth.authenticate(admin)).toMatchObject({ ownerId: adminId });
  });

  it("follows the account's document: disabled or deleted refuses its tokens, API key ones included", async () => {
    const user = await userToken(adminId);
    const key = await auth.tokens.issue({ account_id: accountId, owner_id: null, method: "api_auth" });
    const otherAccount = await accounts.create({ name: "other", enabled: true });
    const otherUser = await (await store.account(otherAccount.id, "users")).create({ username: "x", priv_level: "admin", enabled: true });
    const other = await auth.tokens.issue({ account_id: otherAccount.id, owner_id: otherUser.id, method: "user_auth" });
    for (const t of [user, key, other]) expect(await auth.authenticate(t)).not.toBeNull();

    await accounts.update(accountId, { ...accounts.get(accountId)?.data, enabled: false });
    expect(await auth.authenticate(user)).toBeNull();
    expect(await auth.authenticate(key)).toBeNull();
    expect(await auth.authenticate(other)).toMatchObject({ accountId: otherAccount.id });
    await accounts.update(accountId, { ...accounts.get(accountId)?.data, enabled: true });
    expect(await auth.authenticate(key)).toMatchObject({ accountId, ownerId: null, isAdmin: true, method: "api_auth" });
    await accounts.delete(accountId);
    expect(await auth.authenticate(key)).toBeNull();
    expect(await auth.authenticate(other)).not.toBeNull();
  });

  it("is bounded: past its size the least recently used caller is let go, and resolved again when next used", async () => {
    auth = await openAuth(2);
    const tokens = [await userToken(adminId), await userToken(agentId), await userToken(agentId)];
    const first = await auth.authenticate(tokens[0] ?? "");
    for (const t of tokens) expect(await auth.authenticate(t)).not.toBeNull();
    expect(auth.resolvedTokens).toBe(2);
    const again = await auth.authenticate(tokens[0] ?? "");
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    expect(auth.resolvedTokens).toBe(2);
  });

  it("starts empty after a restart, and the stored tokens still work", async () => {
    const token = await userToken(agentId);
    expect(await auth.authenticate(token)).not.toBeNull();
    await store.close();
    store = await Store.open({ dir, clock });
    auth = await openAuth();
    expect(auth.resolvedTokens).toBe(0);
    expect(await auth.authenticate(token)).toMatchObject({ accountId, ownerId: agentId });
  });
});
