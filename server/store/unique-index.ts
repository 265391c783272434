// A unique index over one collection: each key (a normalised field value) names the one document
// holding it, so a write's uniqueness check is a map lookup, never a scan of the collection.
import type { DocData } from "./collection.js";

export interface UniqueIndexSpec {
  /** The field the keys come from, as the API names it (`sip.username`): also the index's name. */
  field: string;
  /** What a clash means, in the API's words ("SIP username already in use"). */
  description: string;
  /** The document's keys for this field, normalised (lower-cased where case does not count). */
  keys(data: DocData): readonly string[];
}

export interface Clash {
  key: string;
  /** The id of the document already holding the key. */
  holder: string;
}

export class UniqueIndex {
  readonly #holders = new Map<string, string>();
  /**
   * Documents sharing a key with its holder: only data written before the index existed can do
   * so. Kept so that deleting the holder hands the key on instead of leaving it unguarded.
   */
  readonly #sharers = new Map<string, Set<string>>();

  constructor(readonly spec: UniqueIndexSpec) {}

  /** The id holding `key` (already normalised), if any. */
  holder(key: string): string | undefined {
    return this.#holders.get(key);
  }

  /** The first of `data`'s keys another document holds; `id` is the document being written. */
  clash(id: string | undefined, data: DocData): Clash | undefined {
    for (const key of this.spec.keys(data)) {
      const holder = this.#holders.get(key);
      if (holder !== undefined && holder !== id) return { key, holder };
    }
    return undefined;
  }

  add(id: string, data: DocData): void {
    for (const key of this.spec.keys(data)) {
      const holder = this.#holders.get(key);
      if (holder === undefined) this.#holders.set(key, id);
      else if (holder !== id) {
        const sharers = this.#sharers.get(key) ?? new Set<string>();
        sharers.add(id);
        this.#sharers.set(key, sharers);
      }
    }
  }

  remove(id: string, data: DocData): void {
    for (const key of this.spec.keys(data)) {
      const sharers = this.#sharers.get(key);
      if (this.#holders.get(key) !== id) {
        sharers?.delete(id);
        if (sharers?.size === 0) this.#sharers.delete(key);
        continue;
      }
      const next = sharers?.values().next();
      if (sharers && next && !next.done) {
        this.#holders.set(key, next.value);
        sharers.delete(next.value);
        if (sharers.size === 0) this.#sharers.delete(key);
      } else {
        this.#holders.delete(key);
      }
    }
  }
}

/** Draws before giving up: only a random source that repeats itself can use them all. */
export const FREE_VALUE_DRAWS = 16;

/**
 * A generated value no document holds: the first of up to FREE_VALUE_DRAWS calls of `draw` that
 * `taken` says is free. `what` names the values for the error when every draw was taken.
 */
export function drawFree(draw: () => string, taken: (value: string) => boolean, what: string): string {
  for (let n = 0; n < FREE_VALUE_DRAWS; n++) {
    const value = draw();
    if (!taken(value)) return value;
  }
  throw new Error(`${FREE_VALUE_DRAWS} generated ${what} in a row were taken: the random source repeats itself`);
}
