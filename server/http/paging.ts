// Pagination of list responses: `page_size` (default 50), `start_key` / `next_start_key`
// (opaque to clients: the sort key of a page's first row), `paginate=false`, and the
// `ascending` / `descending` switches.
import { ApiError } from "./errors.js";
import type { Paging } from "./envelope.js";

export const DEFAULT_PAGE_SIZE = 50;

export interface SortSpec<T> {
  /** A string that orders rows; ties are broken by the caller making keys unique. */
  key(row: T): string;
  descending?: boolean;
}

export interface Page<T> {
  rows: T[];
  paging?: Paging;
}

export interface Keyed<T> {
  row: T;
  key: string;
}

export function paginate<T>(rows: T[], sort: SortSpec<T>, query: Record<string, string>): Page<T> {
  const keyed = rows.map((row) => ({ row, key: sort.key(row) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return paginateSorted(keyed, sort.descending ?? false, query);
}

/** What a list's query asks of its page, checked: the order, the size and where it starts. */
export interface PagePlan {
  descending: boolean;
  /** Rows on the page; absent with `paginate=false`, which answers every row and no paging keys. */
  size?: number;
  /** The key to start at (ascending: the first row at or past it; descending: at or before it). */
  startKey?: string;
}

export function pagePlan(defaultDescending: boolean, query: Record<string, string>): PagePlan {
  let descending = defaultDescending;
  // basics.md: `ascending=true` or `descending=false` asks for ascending order; asked both ways,
  // descending wins, as in crossbar_view's direction.
  if (query.ascending === "true" || query.descending === "false") descending = false;
  if (query.descending === "true" || query.ascending === "false") descending = true;
  if (query.paginate === "false") return { descending };

  let size = DEFAULT_PAGE_SIZE;
  if (query.page_size !== undefined) {
    size = Number(query.page_size);
    if (!/^\d+$/.test(query.page_size) || size < 1) throw new ApiError("faulty_request", { page_size: query.page_size });
  }
  return query.start_key === undefined ? { descending, size } : { descending, size, startKey: query.start_key };
}

/**
 * The page of `plan` from rows already in the page's order and already at its start key: reads
 * no further than the row after the page (its key is `next_start_key`).
 */
export function pageFrom<T>(rows: Iterable<Keyed<T>>, plan: PagePlan): Page<T> {
  const page = new PageBuilder<T>(plan);
  for (const row of rows) if (!page.offer(row.row, row.key)) break;
  return page.page();
}

/** A page filled one row at a time, in the page's order from its start key. */
export class PageBuilder<T> {
  readonly #rows: T[] = [];
  #firstKey: string | undefined;
  #nextKey: string | undefined;

  constructor(readonly plan: PagePlan) {}

  /** Takes a row; false once the page is full (this row, if any, only gave `next_start_key`). */
  offer(row: T, key: string): boolean {
    if (this.plan.size !== undefined && this.#rows.length === this.plan.size) {
      this.#nextKey = key;
      return false;
    }
    if (this.#rows.length === 0) this.#firstKey = key;
    this.#rows.push(row);
    return true;
  }

  page(): Page<T> {
    if (this.plan.size === undefined) return { rows: this.#rows };
    const paging: Paging = { page_size: this.#rows.length };
    if (this.#firstKey !== undefined) paging.start_key = this.#firstKey;
    if (this.#nextKey !== undefined) paging.next_start_key = this.#nextKey;
    return { rows: this.#rows, paging };
  }
}

/** Page through rows already sorted ascending by key (rows that are not a collection's). */
export function paginateSorted<T>(ascending: Keyed<T>[], defaultDescending: boolean, query: Record<string, string>): Page<T> {
  const plan = pagePlan(defaultDescending, query);
  const keyed = plan.descending ? [...ascending].reverse() : ascending;
  let from = 0;
  const start = plan.size === undefined ? undefined : plan.startKey;
  if (start !== undefined) {
    // The first row at or past the key, so a page still starts right if its first row was deleted.
    from = keyed.findIndex((k) => (plan.descending ? k.key <= start : k.key >= start));
    if (from < 0) from = keyed.length;
  }
  return pageFrom(from === 0 ? keyed : keyed.slice(from), plan);
}
