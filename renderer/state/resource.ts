// One machinery for the admin pages' lists: where a list's state lives in the store, reading it
// (only the newest answer lands), one change at a time per row with the server's refusal put in
// words (and the change shown at once put back), and the documents behind the rows: read, create
// or replace, delete. A slice builds each of its lists from these and keeps only what is its own.
import type { AccountConnection } from "../api/account.js";
import { apiErrorText } from "../api/error-text.js";
import { readOrder } from "./read-order.js";

/** What every list of the admin pages shows besides its rows. */
export interface ListState {
  loading: boolean;
  /** Why the last read or change failed, in words; null when it did not. */
  error: string | null;
  /** A one-line outcome ("Blocklist deleted."), announced politely. */
  notice: string | null;
  /** Keys of the rows being changed now. */
  pending: string[];
}

export interface ResourceState<Row> extends ListState {
  rows: Row[];
}

export function emptyList(): ListState {
  return { loading: false, error: null, notice: null, pending: [] };
}

export function emptyResource<Row>(): ResourceState<Row> {
  return { ...emptyList(), rows: [] };
}

/** Where one list's state lives, and the calls it makes. */
export interface ResourceHome<S> {
  get(): S;
  /** Merges `changes` into the state (the store's updates are synchronous, so get-then-patch is safe). */
  patch(changes: Partial<S>): void;
  /** The signed-in session's account calls; null when signed out. */
  connection(): AccountConnection | null;
}

/** The home of the list kept under `key` of a store's state. */
export function homeIn<T, K extends keyof T>(
  set: (update: (state: T) => Partial<T>) => void,
  get: () => T,
  key: K,
  connection: () => AccountConnection | null,
): ResourceHome<T[K]> {
  return {
    get: () => get()[key],
    patch(changes) {
      set((state) => {
        const next: Partial<T> = {};
        next[key] = { ...state[key], ...changes };
        return next;
      });
    },
    connection,
  };
}

export interface ListSpec<S extends ListState> {
  /** The list's name in the words of a failed read: "blocklists" gives "The blocklists could not be read: …". */
  many: string;
  /** Reads the list (and what is shown with it) as the state to merge in. */
  list(connection: AccountConnection, state: S): Promise<Partial<S>>;
  /** The state a failed read leaves besides `loading: false`; `{ error: words }` when absent. */
  listFailed?(error: unknown, words: string): Partial<S>;
}

export interface Change {
  /** The row's key, pending while the server is asked; a second change of it meanwhile is refused. */
  key?: string;
  /** What failed, before the reason: "Sync was not sent". */
  failure: string;
  /** Shows the change at once, before the server answers. */
  show?(): void;
  /** Asks the server, and records its answer. */
  work(connection: AccountConnection): Promise<void>;
  /** Puts back what `show` showed, when the server refused. */
  undo?(): void;
}

export interface ResourceList<S extends ListState> {
  home: ResourceHome<S>;
  /** Reads the list; resolves true when this answer landed. Signed out, nothing happens. */
  load(): Promise<boolean>;
  /** Runs one change on the server; resolves whether the server took it (false when signed out). */
  change(change: Change): Promise<boolean>;
}

export function resourceList<S extends ListState>(home: ResourceHome<S>, spec: ListSpec<S>): ResourceList<S> {
  // Only the newest read's answer lands (state/read-order): a slow earlier read (another hook's
  // attempts, the list before a save) must not overwrite a newer one.
  const order = readOrder();
  // The fields every list has, changed without knowing the rest of its state.
  const own: ResourceHome<ListState> = home;

  async function load(): Promise<boolean> {
    const connection = home.connection();
    if (connection === null) return false;
    const mine = order.ask();
    own.patch({ loading: true, error: null });
    try {
      const read = await spec.list(connection, home.get());
      // Not when a change was shown since it was asked: its rows are older than the change (a
      // box ticked would be unticked again); the change reads the list again when it is done.
      if (!order.latest(mine) || !order.land(mine)) return false;
      home.patch(read);
      own.patch({ loading: false });
      return true;
    } catch (error) {
      if (!order.latest(mine) || !order.land(mine)) return false;
      const words = `The ${spec.many} could not be read: ${apiErrorText(error)}`;
      if (spec.listFailed === undefined) own.patch({ loading: false, error: words });
      else {
        home.patch(spec.listFailed(error, words));
        own.patch({ loading: false });
      }
      return false;
    }
  }

  return {
    home,
    load,

    async change({ key, failure, show, work, undo }) {
      if (key !== undefined && home.get().pending.includes(key)) return false;
      const connection = home.connection();
      if (connection === null) return false;
      // A new change's outcome replaces the last one's words.
      const pending = own.get().pending;
      own.patch({ error: null, notice: null, pending: key === undefined ? pending : [...pending, key] });
      // The change lands now (state/read-order): a read asked before it does not land after it.
      const at = order.changed();
      show?.();
      const settle = (changes: Partial<ListState>) => own.patch({ ...changes, pending: own.get().pending.filter((p) => p !== key) });
      // A read on its way was asked before this change landed, or one asked since may have reached
      // the server before it: its rows may not have it (a deleted row back, a new one gone, a box
      // unticked again; on a slow link they were). Read again: only the newer answer lands.
      const readAgain = () => {
        if (own.get().loading || order.askedSince(at)) void load();
      };
      try {
        await work(connection);
        readAgain();
        settle({});
        return true;
      } catch (error) {
        undo?.();
        readAgain();
        settle({ error: `${failure}: ${apiErrorText(error)}` });
        return false;
      }
    },
  };
}

export interface DocumentSpec<Doc> {
  /** The document's name in messages: "blocklist" gives "Blocklist “Spam” saved.". */
  one: string;
  read(connection: AccountConnection, id: string): Promise<Doc>;
  /** The document as it is sent (tidied), or why it cannot be sent, checked before any request. */
  prepare?(doc: Doc): Doc | string;
  /** Creates (no id) or replaces the document; answers it as saved. */
  save(connection: AccountConnection, doc: Doc): Promise<Doc>;
  remove(connection: AccountConnection, id: string): Promise<void>;
  /** What else a deleted document takes with it, besides its row. */
  removed?(id: string): void;
}

export interface Documents<Doc> {
  /** The document, or why it could not be read. */
  read(id: string): Promise<Doc | string>;
  /** Creates or replaces, then reads the list again; resolves null when saved, else the reason in words. */
  save(doc: Doc): Promise<string | null>;
  /** Resolves true once the server deleted it; its row leaves the list. */
  remove(id: string): Promise<boolean>;
}

const SIGNED_OUT = "You are signed out.";

/** The documents behind a list's rows; the list is read again after each save. */
export function resourceDocuments<Row extends { id: string }, Doc extends { name: string }>(
  list: ResourceList<ResourceState<Row>>,
  spec: DocumentSpec<Doc>,
): Documents<Doc> {
  const { home } = list;
  const title = spec.one.charAt(0).toUpperCase() + spec.one.slice(1);

  return {
    async read(id) {
      const connection = home.connection();
      if (connection === null) return SIGNED_OUT;
      try {
        return await spec.read(connection, id);
      } catch (error) {
        return `The ${spec.one} could not be read: ${apiErrorText(error)}`;
      }
    },

    async save(doc) {
      const prepared = spec.prepare === undefined ? doc : spec.prepare(doc);
      if (typeof prepared === "string") return prepared;
      const connection = home.connection();
      if (connection === null) return SIGNED_OUT;
      try {
        const saved = await spec.save(connection, prepared);
        home.patch({ notice: `${title} “${saved.name}” saved.` });
      } catch (error) {
        return `The ${spec.one} was not saved: ${apiErrorText(error)}`;
      }
      await list.load();
      return null;
    },

    remove(id) {
      return list.change({
        key: id,
        failure: `The ${spec.one} was not deleted`,
        work: async (connection) => {
          await spec.remove(connection, id);
          home.patch({ rows: home.get().rows.filter((row) => row.id !== id), notice: `${title} deleted.` });
          spec.removed?.(id);
        },
      });
    },
  };
}
