// An OrderedList (server/store/ordered-list.ts) and a plain array of the same entries, changed
// together: the array is the reference the list's property tests hold its pages against
// (test/unit/rest-page-hint, test/unit/rest-placed-page).
import { expect } from "vitest";
import { OrderedList, type OrderedEntry } from "../../server/store/ordered-list.js";

export interface Doc {
  n: number;
}

/** (key, seq) order, the list's. */
export function compareEntries(a: OrderedEntry<Doc>, b: OrderedEntry<Doc>): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : a.seq - b.seq;
}

export class OrderedListModel {
  readonly list: OrderedList<Doc>;
  /** The entries in the list, in the order they were inserted. */
  readonly live: OrderedEntry<Doc>[] = [];
  #seq = 0;

  constructor(blockSize: number) {
    this.list = new OrderedList<Doc>(blockSize);
  }

  /** A new entry under `key`, with the next seq, in both. */
  insert(key: string): void {
    const entry = { key, seq: this.#seq++, doc: { n: this.#seq } };
    this.list.insert(entry);
    this.live.push(entry);
  }

  /** Removes the live entry at `at` (modulo their count) from both; none while there are none. */
  remove(at: number): void {
    if (this.live.length === 0) return;
    const [gone] = this.live.splice(at % this.live.length, 1);
    if (gone !== undefined) expect(this.list.remove(gone.key, gone.seq)).toBe(true);
  }

  /** The live entries in the list's order. */
  sorted(): OrderedEntry<Doc>[] {
    return [...this.live].sort(compareEntries);
  }
}
