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

/** Page through rows already sorted ascending by key (a collection's cached index). */
export function paginateSorted<T>(ascending: Keyed<T>[], defaultDescending: boolean, query: Record<string, string>): Page<T> {
  let descending = defaultDescending;
  // basics.md: `ascending=true` or `descending=false` asks for ascending order; asked both ways,
  // descending wins, as in crossbar_view's direction.
  if (query.ascending === "true" || query.descending === "false") descending = false;
  if (query.descending === "true" || query.ascending === "false") descending = true;
  const keyed = descending ? [...ascending].reverse() : ascending;

  if (query.paginate === "false") return { rows: keyed.map((k) => k.row) };

  let size = DEFAULT_PAGE_SIZE;
  if (query.page_size !== undefined) {
    size = Number(query.page_size);
    if (!/^\d+$/.test(query.page_size) || size < 1) throw new ApiError("faulty_request", { page_size: query.page_size });
  }
  let from = 0;
  const start = query.start_key;
  if (start !== undefined) {
    // The first row at or past the key, so a page still starts right if its first row was deleted.
    from = keyed.findIndex((k) => (descending ? k.key <= start : k.key >= start));
    if (from < 0) from = keyed.length;
  }
  const slice = keyed.slice(from, from + size);
  const next = keyed[from + size];
  const paging: Paging = { page_size: slice.length };
  if (slice[0]) paging.start_key = slice[0].key;
  if (next) paging.next_start_key = next.key;
  return { rows: slice.map((k) => k.row), paging };
}
