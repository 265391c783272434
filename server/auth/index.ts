// Authentication: who a token speaks for (account, user, admin or not), and the two logins of
// the hosted API (user credentials hash, account API key), with the failed-login throttle.
import type { Clock } from "../clock.js";
import type { Collection, DocData, Store, StoredDoc } from "../store/index.js";
import { LoginThrottle, phoneDigits } from "./throttle.js";
import { TokenService, type VerifiedToken } from "./tokens.js";

export interface Identity {
  token: string;
  accountId: string;
  ownerId: string | null;
  isAdmin: boolean;
  method: "user_auth" | "api_auth";
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

  private constructor(
    private readonly store: Store,
    readonly tokens: TokenService,
    private readonly accounts: Collection,
    clock: Clock,
  ) {
    this.throttle = new LoginThrottle(clock);
  }

  static async open(store: Store, options: { tokenTtlS: number }): Promise<AuthService> {
    const tokens = await TokenService.open(store, { ttlS: options.tokenTtlS });
    return new AuthService(store, tokens, await store.global("accounts"), store.clock);
  }

  async authenticate(token: string): Promise<Identity | null> {
    const verified = await this.tokens.verify(token);
    if (!verified) return null;
    return this.#identity(verified);
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

  async #identity(t: VerifiedToken): Promise<Identity | null> {
    const account = this.accounts.get(t.account_id);
    if (!account || account.data.enabled === false) return null;
    if (t.method === "api_auth" || t.owner_id === null) {
      return { token: t.token, accountId: t.account_id, ownerId: null, isAdmin: true, method: "api_auth" };
    }
    const user = (await this.store.account(t.account_id, "users")).get(t.owner_id);
    if (!user || user.data.enabled === false) return null;
    return { token: t.token, accountId: t.account_id, ownerId: user.id, isAdmin: user.data.priv_level === "admin", method: "user_auth" };
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
