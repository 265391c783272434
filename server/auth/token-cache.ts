// What a token resolved to, kept so a token seen before costs a Map lookup instead of a pattern
// check, a sha256 and the store reads behind them. Keyed by the token itself: it stays in this
// process's memory, like the request that brought it, and is never written anywhere. Bounded:
// past `capacity` entries the least recently used one goes (it is resolved again when next used).
export interface Resolved<V> {
  /** The stored id of the token (its sha256), by which the token service names a token that ended. */
  tokenId: string;
  value: V;
}

export class TokenCache<V> {
  /** Token to entry, least recently used first (a Map keeps insertion order). */
  readonly #entries = new Map<string, Resolved<V>>();
  /** Token id to token, so an ended token (heard by its id) can be dropped. */
  readonly #tokenOf = new Map<string, string>();
  /**
   * The most recently used token, when known: using it again moves nothing (a Map's delete and
   * set cost some 15 times its lookup, and most requests bring the token of the one before).
   */
  #newest: string | undefined;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`token cache: capacity must be a whole number from 1, not ${capacity}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The entry for this token, made the most recently used; undefined when not held. */
  get(token: string): Resolved<V> | undefined {
    const entry = this.#entries.get(token);
    if (entry === undefined) return undefined;
    if (token !== this.#newest) {
      this.#entries.delete(token);
      this.#entries.set(token, entry);
      this.#newest = token;
    }
    return entry;
  }

  set(token: string, entry: Resolved<V>): void {
    this.drop(token);
    this.#entries.set(token, entry);
    this.#tokenOf.set(entry.tokenId, token);
    this.#newest = token;
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.capacity) break;
      this.drop(oldest);
    }
  }

  drop(token: string): void {
    const entry = this.#entries.get(token);
    if (entry === undefined) return;
    this.#entries.delete(token);
    this.#tokenOf.delete(entry.tokenId);
    if (token === this.#newest) this.#newest = undefined;
  }

  dropId(tokenId: string): void {
    const token = this.#tokenOf.get(tokenId);
    if (token !== undefined) this.drop(token);
  }
}
