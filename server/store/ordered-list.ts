// A list kept in order on every insert and removal, so a page is a seek and a short walk rather
// than a sort of the whole collection. Entries are ordered by their sort key, then by `seq` (the
// document's place in the collection's insertion order), which is exactly the order a stable sort
// of the collection by key gives. Held as a list of sorted blocks of at most 2 * BLOCK entries:
// an insert or removal moves at most that many entries plus one block reference per BLOCK
// documents, instead of shifting a whole collection-sized array. An emptied block is dropped;
// small ones are not merged (a walk skips a block in one step either way).

export interface OrderedEntry<D> {
  key: string;
  seq: number;
  doc: D;
}

const DEFAULT_BLOCK = 256;

/** Whether (aKey, aSeq) sorts before (bKey, bSeq). */
function before(aKey: string, aSeq: number, bKey: string, bSeq: number): boolean {
  return aKey < bKey || (aKey === bKey && aSeq < bSeq);
}

export class OrderedList<D> {
  readonly #blocks: OrderedEntry<D>[][] = [];
  #size = 0;

  /** `block`: half the most entries a block holds before it splits (tests use tiny ones). */
  constructor(readonly block = DEFAULT_BLOCK) {}

  get size(): number {
    return this.#size;
  }

  insert(entry: OrderedEntry<D>): void {
    this.#size++;
    if (this.#blocks.length === 0) {
      this.#blocks.push([entry]);
      return;
    }
    const b = this.#blockFor(entry.key, entry.seq);
    const block = this.#blocks[b] ?? [];
    block.splice(lowerBound(block, entry.key, entry.seq), 0, entry);
    if (block.length > 2 * this.block) this.#blocks.splice(b + 1, 0, block.splice(this.block));
  }

  /** Removes the entry at exactly (key, seq); false when there is none. */
  remove(key: string, seq: number): boolean {
    if (this.#blocks.length === 0) return false;
    const b = this.#blockFor(key, seq);
    const block = this.#blocks[b] ?? [];
    const i = lowerBound(block, key, seq);
    const at = block[i];
    if (at === undefined || at.key !== key || at.seq !== seq) return false;
    block.splice(i, 1);
    if (block.length === 0) this.#blocks.splice(b, 1);
    this.#size--;
    return true;
  }

  /** Entries in ascending order, from the first whose key is at or past `from` (all without it). */
  *ascending(from?: string): Generator<OrderedEntry<D>> {
    let b = 0;
    let i = 0;
    if (from !== undefined) {
      // The first entry with key >= from sorts after every (from, seq) with a lower seq: -1 is below all.
      b = this.#blockFor(from, -1);
      i = lowerBound(this.#blocks[b] ?? [], from, -1);
    }
    for (; b < this.#blocks.length; b++, i = 0) {
      const block = this.#blocks[b] ?? [];
      for (; i < block.length; i++) {
        const entry = block[i];
        if (entry !== undefined) yield entry;
      }
    }
  }

  /** Entries in descending order, from the last whose key is at or before `from` (all without it). */
  *descending(from?: string): Generator<OrderedEntry<D>> {
    let b = this.#blocks.length - 1;
    let i = (this.#blocks[b]?.length ?? 0) - 1;
    if (from !== undefined) {
      // The last entry with key <= from is the one just before the first (from, +infinity).
      b = this.#blockFor(from, Number.POSITIVE_INFINITY);
      i = lowerBound(this.#blocks[b] ?? [], from, Number.POSITIVE_INFINITY) - 1;
      if (i < 0) {
        b--;
        i = (this.#blocks[b]?.length ?? 0) - 1;
      }
    }
    for (; b >= 0; b--, i = (this.#blocks[b]?.length ?? 0) - 1) {
      const block = this.#blocks[b] ?? [];
      for (; i >= 0; i--) {
        const entry = block[i];
        if (entry !== undefined) yield entry;
      }
    }
  }

  /** The block an entry at (key, seq) belongs in: the first whose last entry is not before it. */
  #blockFor(key: string, seq: number): number {
    let lo = 0;
    let hi = this.#blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const block = this.#blocks[mid] ?? [];
      const last = block[block.length - 1];
      if (last !== undefined && before(last.key, last.seq, key, seq)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The index of the first entry of `block` not before (key, seq). */
function lowerBound<D>(block: OrderedEntry<D>[], key: string, seq: number): number {
  let lo = 0;
  let hi = block.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = block[mid];
    if (at !== undefined && before(at.key, at.seq, key, seq)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
