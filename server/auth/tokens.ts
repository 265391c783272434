// Auth tokens: opaque random strings, stored only as their sha256 in the global `auth_tokens`
// collection so the data files never hold a usable token. A token expires after `ttlS` seconds
// without use; each use slides the window (persisted at most every tenth of the window, so busy
// clients do not turn every request into a write). Tokens survive a server restart.
import { createHash } from "node:crypto";
import type { Clock, RandomSource } from "../clock.js";
import type { Collection, Store, StoredDoc } from "../store/index.js";

/** A token is this many random bytes, written as lowercase hex; anything else is never looked up. */
const TOKEN_BYTES = 32;
const TOKEN_PATTERN = new RegExp(`^[0-9a-f]{${TOKEN_BYTES * 2}}$`);

export type AuthMethod = "user_auth" | "api_auth";

export type TokenRecord = {
  account_id: string;
  owner_id: string | null;
  method: AuthMethod;
  /** Unix ms of the last use. */
  last_used: number;
  /**
   * A wallboard's key (local addition): it reads that one board and nothing else, and it ends at
   * `expires_at` (Unix ms) rather than after a spell unused, since a screen on a wall may sit dark
   * overnight and must still show the board in the morning.
   */
  wallboard_id?: string;
  expires_at?: number;
};

export type NewToken = Pick<TokenRecord, "account_id" | "owner_id" | "method" | "wallboard_id" | "expires_at">;

export interface VerifiedToken extends TokenRecord {
  token: string;
  /** Its stored id (tokenId), by which the token service names it when it ends. */
  id: string;
  /** Seconds left before the token expires if not used again. */
  expires_in: number;
  /** Gregorian seconds. */
  created: number;
}

/** Why a token stopped working; heard by whoever holds something the token opened (event sockets). */
export type TokenEnd = "revoked" | "expired";
export type TokenEndListener = (tokenId: string, why: TokenEnd) => void;

export class TokenService {
  readonly #lastUsed = new Map<string, number>();
  readonly #endListeners = new Set<TokenEndListener>();

  private constructor(
    private readonly tokens: Collection<TokenRecord>,
    private readonly clock: Clock,
    private readonly random: RandomSource,
    readonly ttlS: number,
  ) {}

  static async open(store: Store, options: { ttlS: number }): Promise<TokenService> {
    const tokens = await store.global<TokenRecord>("auth_tokens");
    const service = new TokenService(tokens, store.clock, store.random, options.ttlS);
    await service.purgeExpired();
    return service;
  }

  async issue(record: NewToken): Promise<string> {
    const token = this.random.bytes(TOKEN_BYTES).toString("hex");
    await this.tokens.create({ ...record, last_used: this.clock.now() }, { id: tokenId(token) });
    return token;
  }

  /** The token's record if it is live (and slides its window), else null. */
  async verify(token: string): Promise<VerifiedToken | null> {
    if (!TOKEN_PATTERN.test(token)) return null;
    const doc = await this.#use(tokenId(token));
    if (!doc) return null;
    const expiresIn = doc.data.expires_at === undefined ? this.ttlS : Math.max(0, Math.floor((doc.data.expires_at - this.clock.now()) / 1000));
    return { ...doc.data, token, id: doc.id, expires_in: expiresIn, created: doc.created };
  }

  /**
   * Uses a token already verified, by its id (tokenId), as verify() does: true while it is live
   * (its window slides), false once it is gone or has expired (then it is deleted and heard of).
   */
  async use(id: string): Promise<boolean> {
    return (await this.#use(id)) !== null;
  }

  /**
   * use() when it needs nothing written: true when the token is live and its use is noted (in
   * memory, as use() notes it between writes); false when use() must decide (the token is gone or
   * expired, or its window's write is due).
   */
  useWithoutWrite(id: string): boolean {
    const doc = this.tokens.get(id);
    if (!doc) return false;
    const now = this.clock.now();
    if (this.#expired(doc, now)) return false;
    if (doc.data.expires_at !== undefined) return true;
    if (now - doc.data.last_used > (this.ttlS * 1000) / 10) return false;
    this.#lastUsed.set(id, now);
    return true;
  }

  async #use(id: string): Promise<StoredDoc<TokenRecord> | null> {
    const doc = this.tokens.get(id);
    if (!doc) return null;
    const now = this.clock.now();
    if (this.#expired(doc, now)) {
      this.#lastUsed.delete(id);
      await this.tokens.delete(id).catch(() => undefined);
      this.#ended(id, "expired");
      return null;
    }
    if (doc.data.expires_at !== undefined) return doc;
    this.#lastUsed.set(id, now);
    if (now - doc.data.last_used > (this.ttlS * 1000) / 10) {
      await this.tokens.update(id, { ...doc.data, last_used: now }).catch(() => undefined);
    }
    return doc;
  }

  /** When the token expires unless it is used again (Unix ms), without using it; null when it is gone. */
  expiresAt(token: string): number | null {
    const id = tokenId(token);
    const doc = this.tokens.get(id);
    if (!doc) return null;
    return this.#expiry(doc);
  }

  /** When the token ends (Unix ms): its fixed end, else its last use plus the window. */
  #expiry(doc: StoredDoc<TokenRecord>): number {
    return doc.data.expires_at ?? (this.#lastUsed.get(doc.id) ?? doc.data.last_used) + this.ttlS * 1000;
  }

  #expired(doc: StoredDoc<TokenRecord>, now: number): boolean {
    return doc.data.expires_at !== undefined ? now >= doc.data.expires_at : now > this.#expiry(doc);
  }

  /** Hear of every token that ends, by its id (tokenId); answers the way to stop hearing. */
  onEnd(listener: TokenEndListener): () => void {
    this.#endListeners.add(listener);
    return () => this.#endListeners.delete(listener);
  }

  async revoke(token: string): Promise<void> {
    await this.revokeId(tokenId(token));
  }

  /** Revoke the token stored under `id` (tokenId): a wallboard's key when the wallboard goes. */
  async revokeId(id: string): Promise<void> {
    this.#lastUsed.delete(id);
    if (!this.tokens.has(id)) return;
    await this.tokens.delete(id);
    this.#ended(id, "revoked");
  }

  /**
   * Revoke every token of one user (password change, user deleted), or with null of the API key.
   * A wallboard's key is not the API key's: it ends with its wallboard.
   */
  async revokeOwner(accountId: string, ownerId: string | null): Promise<void> {
    for (const doc of this.tokens.all()) {
      if (doc.data.account_id === accountId && doc.data.owner_id === ownerId && doc.data.wallboard_id === undefined) {
        this.#lastUsed.delete(doc.id);
        await this.tokens.delete(doc.id);
        this.#ended(doc.id, "revoked");
      }
    }
  }

  async purgeExpired(): Promise<void> {
    const now = this.clock.now();
    for (const doc of this.tokens.all()) {
      if (this.#expired(doc, now)) {
        this.#lastUsed.delete(doc.id);
        await this.tokens.delete(doc.id);
        this.#ended(doc.id, "expired");
      }
    }
  }

  #ended(id: string, why: TokenEnd): void {
    for (const listener of this.#endListeners) listener(id, why);
  }
}

/** The stored id of a token: its sha256, so the data files never hold a usable token. */
export function tokenId(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
