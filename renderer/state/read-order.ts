// The order of a slice's reads and changes, for answers that come back out of order (a slow link
// holds each request and answer for its own time, so they reach the server and the page in any
// order). Every read takes a ticket as it is asked. Its answer lands for a key (the whole list,
// one row, one queue, the preferences) only when nothing newer of that key has landed: no read
// asked after it, and no change. A change (shown at once, taken by the server, heard in an event)
// takes a ticket as it lands, so a read asked before it is older for that key and does not put the
// key's older state back. One mechanism for the slices' lists, rows and single values.

/** The key of what a read answers as a whole (a list, a page). */
export const WHOLE = "";

export interface ReadOrder {
  /** A read is asked: its ticket. */
  ask(): number;
  /** Whether the answer of read `ticket` may land for `key`: nothing newer of it has. When it may, it now has. */
  land(ticket: number, key?: string): boolean;
  /** Whether the answer of read `ticket` would land for `key` (nothing newer of it has), without landing it. */
  current(ticket: number, key?: string): boolean;
  /** Whether `ticket` is the newest read asked (for slices where only the newest read's answer lands). */
  latest(ticket: number): boolean;
  /** A change of `key` lands now: answers of reads asked before it are older for `key`. Its ticket. */
  changed(key?: string): number;
  /** The row of `key` is gone (deleted here): a read asked before does not bring it back. Its ticket. */
  removed(key: string): number;
  /** Whether a read was asked after `ticket` (a change's: it may have reached the server first). */
  askedSince(ticket: number): boolean;
  /**
   * The rows of read `ticket`'s answer, each row changed since it was asked as the page shows it
   * (left out when removed here). Rows made since are not added: the slices read again after a create.
   */
  rows<Row>(ticket: number, answer: readonly Row[], shown: readonly Row[], keyOf: (row: Row) => string): Row[];
  /** A new session (or none): every ticket given so far is older than anything from now on. */
  reset(): void;
}

export function readOrder(): ReadOrder {
  let count = 0;
  let lastAsked = 0;
  /** Tickets at or below it were given before the last reset. */
  let floor = 0;
  /** Per key, the ticket of the newest read or change that landed. */
  const newest = new Map<string, number>();
  const gone = new Set<string>();

  const current = (ticket: number, key: string = WHOLE): boolean => ticket > floor && ticket >= (newest.get(key) ?? 0);
  const changed = (key: string = WHOLE): number => {
    count += 1;
    newest.set(key, count);
    return count;
  };

  return {
    ask() {
      count += 1;
      lastAsked = count;
      return count;
    },
    land(ticket, key = WHOLE) {
      if (!current(ticket, key)) return false;
      newest.set(key, ticket);
      return true;
    },
    current,
    latest: (ticket) => ticket > floor && ticket === lastAsked,
    changed,
    removed(key) {
      gone.add(key);
      return changed(key);
    },
    askedSince: (ticket) => lastAsked > ticket,
    rows(ticket, answer, shown, keyOf) {
      const byKey = new Map(shown.map((row) => [keyOf(row), row]));
      const out: (typeof answer)[number][] = [];
      for (const row of answer) {
        const key = keyOf(row);
        if (current(ticket, key)) out.push(row);
        else if (byKey.has(key)) out.push(byKey.get(key) ?? row);
        else if (!gone.has(key)) out.push(row);
      }
      return out;
    },
    reset() {
      floor = count;
      newest.clear();
      gone.clear();
    },
  };
}
