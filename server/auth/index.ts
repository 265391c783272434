// Authentication: who a token speaks for (account, user, admin or not), and the two logins of
// the hosted API (user credentials hash, account API key), with the failed-login throttle.
import type { Clock } from "../clock.js";
import type { Collection, DocData, Store, StoredDoc } from "../store/index.js";
import { LoginThrottle, phoneDigits } from "./throttle.js";
import { TokenCache } from "./token-cache.js";
import { TokenService, tokenId, type VerifiedToken } from "./tokens.js";

/** Tokens whose caller is kept resolved: far more than the sessions one server holds at once. */
export const DEFAULT_TOKEN_CACHE_SIZE = 10_000;

/** Read-only: one resolved caller is shared by every request that brings the same token. */
export interface Identity {
  readonly token: string;
  readonly accountId: string;
  readonly ownerId: string | null;
  readonly isAdmin: boolean;
  readonly method: "user_auth" | "api_auth";
  /** Set for a wallboard's key: it may read that board and nothing else (http/endpoint.ts refuses the rest). */
  readonly wallboardId?: string;
}

/**
 * A caller as resolved, with the very documents it was read from: it is served again only while
 * the store still holds those same objects (a write replaces a document, never changes it), so a
 * disabled, deleted or demoted user, or a disabled or deleted account, counts at once.
 */
interface ResolvedCaller {
  identity: Identity;
  account: StoredDoc;
  /** The user and the collection holding it; null for an API-key token. */
  user: { doc: StoredDoc; users: Collection } | null;
}

export interface UserLogin {
  credentials: string;
  /** "md5" (default) or "sha" (sha1). */
  method?: string;
  account_name?: string;
  account_realm?: string;
  phone_number?: string;
}

export interface LoginResult {
  token: string;
  account: StoredDoc;
  user: StoredDoc | null;
}

export class AuthService {
  readonly throttle: LoginThrottle;
  readonly #resolved: TokenCache<ResolvedCaller>;

  private constructor(
    private readonly store: Store,
    readonly tokens: TokenService,
    private readonly accounts: Collection,
    clock: Clock,
    cacheSize: number,
  ) {
    this.throttle = new LoginThrottle(clock);
    this.#resolved = new TokenCache(cacheSize);
    // A revoked or expired token leaves at once; its document is gone, so it could not be served anyway.
    tokens.onEnd((id) => this.#resolved.dropId(id));
  }

  static async open(store: Store, options: { tokenTtlS: number; tokenCacheSize?: number }): Promise<AuthService> {
    const tokens = await TokenService.open(store, { ttlS: options.tokenTtlS });
    return new AuthService(store, tokens, await store.global("accounts"), store.clock, options.tokenCacheSize ?? DEFAULT_TOKEN_CACHE_SIZE);
  }

  /** How many tokens have their caller kept resolved. */
  get resolvedTokens(): number {
    return this.#resolved.size;
  }

  /** Who the token speaks for, or null: resolved once, then served while its documents stand. */
  async authenticate(token: string): Promise<Identity | null> {
    const hit = this.#resolved.get(token);
    if (hit !== undefined && this.#stands(hit.value) && (await this.tokens.use(hit.tokenId))) return hit.value.identity;
    const verified = await this.tokens.verify(token);
    const caller = verified === null ? null : await this.#resolve(verified);
    if (verified === null || caller === null) {
      this.#resolved.drop(token);
      return null;
    }
    this.#resolved.set(token, { tokenId: verified.id, value: caller });
    return caller.identity;
  }

  /**
   * authenticate() without a promise, for a token resolved before whose documents stand and whose
   * use writes nothing: its identity. Undefined when only authenticate() can tell.
   */
  authenticateHeld(token: string): Identity | undefined {
    const hit = this.#resolved.get(token);
    if (hit === undefined || !this.#stands(hit.value) || !this.tokens.useWithoutWrite(hit.tokenId)) return undefined;
    return hit.value.identity;
  }

  async describe(token: string): Promise<VerifiedToken | null> {
    return this.tokens.verify(token);
  }

  /** Checks the credentials against the users of `account`, the one findAccount() resolved. */
  async userLogin(login: UserLogin, account: StoredDoc | undefined): Promise<LoginResult | null> {
    if (!account) return null;
    const field = login.method === "sha" ? "pvt_sha1_auth" : "pvt_md5_auth";
    const wanted = login.credentials.toLowerCase();
    const users = await this.store.account(account.id, "users");
    const user = users.all().find((u) => u.data[field] === wanted && u.data.enabled !== false);
    if (!user) return null;
    const token = await this.tokens.issue({ account_id: account.id, owner_id: user.id, method: "user_auth" });
    return { token, account, user };
  }

  async apiLogin(apiKey: string): Promise<LoginResult | null> {
    const account = this.accounts.all().find((a) => a.data.pvt_api_key === apiKey && a.data.enabled !== false);
    if (!account) return null;
    const token = await this.tokens.issue({ account_id: account.id, owner_id: null, method: "api_auth" });
    return { token, account, user: null };
  }

  /** A key that reads one wallboard until `expiresAt` (Unix ms); answers it and its stored id. */
  async issueWallboardKey(accountId: string, wallboardId: string, expiresAt: number): Promise<{ key: string; id: string }> {
    const key = await this.tokens.issue({ account_id: accountId, owner_id: null, method: "api_auth", wallboard_id: wallboardId, expires_at: expiresAt });
    return { key, id: tokenId(key) };
  }

  #stands(caller: ResolvedCaller): boolean {
    if (this.accounts.get(caller.identity.accountId) !== caller.account) return false;
    return caller.user === null || caller.user.users.get(caller.user.doc.id) === caller.user.doc;
  }

  async #resolve(t: VerifiedToken): Promise<ResolvedCaller | null> {
    const account = this.accounts.get(t.account_id);
    if (!account || account.data.enabled === false) return null;
    if (t.wallboard_id !== undefined) {
      return { identity: { token: t.token, accountId: t.account_id, ownerId: null, isAdmin: false, method: "api_auth", wallboardId: t.wallboard_id }, account, user: null };
    }
    if (t.method === "api_auth" || t.owner_id === null) {
      return { identity: { token: t.token, accountId: t.account_id, ownerId: null, isAdmin: true, method: "api_auth" }, account, user: null };
    }
    const users = await this.store.account(t.account_id, "users");
    const user = users.get(t.owner_id);
    if (!user || user.data.enabled === false) return null;
    return {
      identity: { token: t.token, accountId: t.account_id, ownerId: user.id, isAdmin: user.data.priv_level === "admin", method: "user_auth" },
      account,
      user: { doc: user, users },
    };
  }

  /** The enabled account a user login names, by name, realm or one of its numbers. */
  async findAccount(login: Omit<UserLogin, "credentials" | "method">): Promise<StoredDoc<DocData> | undefined> {
    const all = this.accounts.all().filter((a) => a.data.enabled !== false);
    if (login.account_name) {
      const name = login.account_name.toLowerCase();
      return all.find((a) => String(a.data.name).toLowerCase() === name);
    }
    if (login.account_realm) {
      const realm = login.account_realm.toLowerCase();
      return all.find((a) => String(a.data.realm).toLowerCase() === realm);
    }
    if (login.phone_number) {
      const digits = phoneDigits(login.phone_number);
      for (const account of all) {
        const callflows = await this.store.account(account.id, "callflows");
        if (callflows.all().some((c) => Array.isArray(c.data.numbers) && c.data.numbers.includes(digits))) return account;
      }
    }
    return undefined;
  }
}

export { TokenService } from "./tokens.js";
export { credentialHashes } from "./credentials.js";
