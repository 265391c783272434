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

/**
 * The most start keys a list keeps a hint for (OrderedList's #hints); at the limit they are all
 * dropped and the next pages' keys start a new set. A walk through pages in order needs only the
 * last page's; several walks at once need one each.
 */
const HINT_LIMIT = 512;

/**
 * Values made from a block's entries (a list page's row texts joined once per block), kept per
 * block and per owner until the block changes: every insert into or removal from a block drops
 * its values, and a block split off another starts with none. Blocks are never changed otherwise
 * (an entry's document is never replaced in place: the store re-adds a changed document).
 */
const blockMemos = new WeakMap<readonly unknown[], Map<object, unknown>>();

/** The value `make` gives for `block`'s entries as they stand, made once per owner until the block changes. */
export function blockMemo<V>(block: readonly unknown[], owner: object, make: () => V): V {
  let memos = blockMemos.get(block);
  if (memos === undefined) {
    memos = new Map();
    blockMemos.set(block, memos);
  } else if (memos.has(owner)) return memos.get(owner) as V;
  const value = make();
  memos.set(owner, value);
  return value;
}

/** Where a walked entry sits: its block (an array of the list, read-only) and its index in it. */
export type EntryVisit<D> = (doc: D, key: string, block: readonly OrderedEntry<D>[] | undefined, i: number) => boolean;

/** Entries `from` to `to` (inclusive) of a list's block: rows of a page side by side. */
export interface PlacedRun<D> {
  block: readonly OrderedEntry<D>[];
  from: number;
  to: number;
}

/** A page's entries as runs of their blocks (OrderedList.placedPage). */
export interface PlacedPage<D> {
  runs: PlacedRun<D>[];
  /** Entries in the runs. */
  count: number;
  /** The page's first entry's key; undefined for an empty page. */
  firstKey: string | undefined;
  /** The key of the entry after the page; undefined when the page ends the list. */
  nextKey: string | undefined;
}

/** Whether (aKey, aSeq) sorts before (bKey, bSeq). */
function before(aKey: string, aSeq: number, bKey: string, bSeq: number): boolean {
  return aKey < bKey || (aKey === bKey && aSeq < bSeq);
}

export class OrderedList<D> {
  readonly #blocks: OrderedEntry<D>[][] = [];
  #size = 0;
  /**
   * Where an ascending walk from a page's next key started when the page was found (placedPage):
   * block * #stride + index, so the next page in order starts there without the seek's scattered
   * key reads. Checked at each use against the entries there (#startsAt), so a hint that inserts
   * or removals made stale is never followed: the walk seeks as before.
   */
  #hints: Map<string, number> | undefined;
  readonly #stride: number;

  /** `block`: half the most entries a block holds before it splits (tests use tiny ones). */
  constructor(readonly block = DEFAULT_BLOCK) {
    // An index within a block is at most 2 * block (a block splits past that).
    this.#stride = 2 * block + 1;
  }

  /** A list of entries already in order (key, then seq), cut into blocks without a search each. */
  static fromSorted<D>(entries: OrderedEntry<D>[], block = DEFAULT_BLOCK): OrderedList<D> {
    const list = new OrderedList<D>(block);
    for (let i = 0; i < entries.length; i += block) list.#blocks.push(entries.slice(i, i + block));
    list.#size = entries.length;
    return list;
  }

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
    blockMemos.delete(block);
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
    blockMemos.delete(block);
    block.splice(i, 1);
    if (block.length === 0) this.#blocks.splice(b, 1);
    this.#size--;
    return true;
  }

  /**
   * Calls `visit` with each entry in order (ascending from the first at or past `from`, or
   * descending from the last at or before it; all without `from`) until it answers false: a
   * page's walk without a generator's cost per entry.
   */
  visit(descending: boolean, from: string | undefined, visit: (entry: OrderedEntry<D>) => boolean): void {
    let { b, i } = this.#start(descending, from);
    if (descending) {
      for (; b >= 0; b--, i = (this.#blocks[b]?.length ?? 0) - 1) {
        const block = this.#blocks[b] ?? [];
        for (; i >= 0; i--) {
          const entry = block[i];
          if (entry !== undefined && !visit(entry)) return;
        }
      }
      return;
    }
    for (; b < this.#blocks.length; b++, i = 0) {
      const block = this.#blocks[b] ?? [];
      for (; i < block.length; i++) {
        const entry = block[i];
        if (entry !== undefined && !visit(entry)) return;
      }
    }
  }

  /** `visit` handing each entry's document and key (no entry object passed on, one call per entry). */
  visitDocs(descending: boolean, from: string | undefined, visit: (doc: D, key: string) => boolean): void {
    let { b, i } = this.#start(descending, from);
    const blocks = this.#blocks;
    if (descending) {
      for (; b >= 0; b--, i = (blocks[b]?.length ?? 0) - 1) {
        const block = blocks[b] ?? [];
        for (; i >= 0; i--) {
          const entry = block[i];
          if (entry !== undefined && !visit(entry.doc, entry.key)) return;
        }
      }
      return;
    }
    for (; b < blocks.length; b++, i = 0) {
      const block = blocks[b] ?? [];
      for (; i < block.length; i++) {
        const entry = block[i];
        if (entry !== undefined && !visit(entry.doc, entry.key)) return;
      }
    }
  }

  /**
   * `visitDocs` handing also each entry's block and index in it (a page's rows that lie side by
   * side in a block are read from the block's joined texts, see blockMemo). Ascending only.
   */
  visitPlaced(from: string | undefined, visit: EntryVisit<D>): void {
    let { b, i } = this.#start(false, from);
    const blocks = this.#blocks;
    for (; b < blocks.length; b++, i = 0) {
      const block = blocks[b] ?? [];
      for (; i < block.length; i++) {
        const entry = block[i];
        if (entry !== undefined && !visit(entry.doc, entry.key, block, i)) return;
      }
    }
  }

  /**
   * The entries an ascending page of `size` takes from the first at or past `from`, as runs of
   * their blocks, without reading the entries inside them: a page of rows already joined per
   * block (RowTexts.run) then reads two entries, its first and the one after it (their keys are
   * its paging keys), instead of every row's. In a large collection the rows' entries lie far
   * apart in memory, one cache miss each.
   */
  placedPage(from: string | undefined, size: number): PlacedPage<D> {
    let { b, i } = this.#start(false, from);
    const blocks = this.#blocks;
    const runs: PlacedRun<D>[] = [];
    let left = size;
    let count = 0;
    for (; left > 0 && b < blocks.length; b++, i = 0) {
      const block = blocks[b] ?? [];
      if (i >= block.length) continue;
      const take = Math.min(left, block.length - i);
      runs.push({ block, from: i, to: i + take - 1 });
      left -= take;
      count += take;
      i += take;
      if (i < block.length) break;
    }
    // The entry after the page: where the walk stopped, or the first of a later block.
    for (; b < blocks.length && i >= (blocks[b]?.length ?? 0); b++) i = 0;
    const [first] = runs;
    const nextKey = blocks[b]?.[i]?.key;
    if (nextKey !== undefined) this.#hint(nextKey, b, i);
    return { runs, count, firstKey: first?.block[first.from]?.key, nextKey };
  }

  /** Keeps (b, i) as where an ascending walk from `key` may start (checked when used). */
  #hint(key: string, b: number, i: number): void {
    let hints = this.#hints;
    if (hints === undefined) hints = this.#hints = new Map();
    else if (hints.size >= HINT_LIMIT && !hints.has(key)) hints.clear();
    hints.set(key, b * this.#stride + i);
  }

  /**
   * Whether entry `i` of block `b` is the first not before (from, -1): it is not, and the entry
   * before it in the list (if any) is. The list being in order, that is the seek's own answer.
   */
  #startsAt(b: number, i: number, from: string): boolean {
    const blocks = this.#blocks;
    const block = blocks[b];
    const at = block?.[i];
    if (block === undefined || at === undefined || before(at.key, at.seq, from, -1)) return false;
    if (i > 0) {
      const prev = block[i - 1];
      return prev !== undefined && before(prev.key, prev.seq, from, -1);
    }
    if (b === 0) return true;
    const prevBlock = blocks[b - 1];
    const prev = prevBlock?.[prevBlock.length - 1];
    return prev !== undefined && before(prev.key, prev.seq, from, -1);
  }

  /** The entries `visit` would see, as a generator (merged walks pull from several at once). */
  *walk(descending: boolean, from?: string): Generator<OrderedEntry<D>> {
    let { b, i } = this.#start(descending, from);
    const step = descending ? -1 : 1;
    for (; b >= 0 && b < this.#blocks.length; b += step, i = descending ? (this.#blocks[b]?.length ?? 0) - 1 : 0) {
      const block = this.#blocks[b] ?? [];
      for (; i >= 0 && i < block.length; i += step) {
        const entry = block[i];
        if (entry !== undefined) yield entry;
      }
    }
  }

  ascending(from?: string): Generator<OrderedEntry<D>> {
    return this.walk(false, from);
  }

  descending(from?: string): Generator<OrderedEntry<D>> {
    return this.walk(true, from);
  }

  /** Where a walk starts: block `b`, entry `i` (which may be one past either end of the block). */
  #start(descending: boolean, from: string | undefined): { b: number; i: number } {
    if (from === undefined) {
      const b = descending ? this.#blocks.length - 1 : 0;
      return { b, i: descending ? (this.#blocks[b]?.length ?? 0) - 1 : 0 };
    }
    // Ascending: the first entry with key >= from, i.e. not before (from, -1), below every seq;
    // where a page in order left a hint for its next key, that place if it still is the first.
    if (!descending && this.#hints !== undefined) {
      const at = this.#hints.get(from);
      if (at !== undefined) {
        const b = Math.floor(at / this.#stride);
        const i = at - b * this.#stride;
        if (this.#startsAt(b, i, from)) return { b, i };
      }
    }
    // Descending: the last with key <= from, the one just before (from, +infinity).
    const seq = descending ? Number.POSITIVE_INFINITY : -1;
    const b = this.#blockFor(from, seq);
    const i = lowerBound(this.#blocks[b] ?? [], from, seq);
    return { b, i: descending ? i - 1 : i };
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
