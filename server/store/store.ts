// The document store: global collections (accounts, tokens) and one file per account
// collection under the data directory. It is the only code that touches these files.
import { join } from "node:path";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { type Clock, type RandomSource, systemClock, systemRandom } from "../clock.js";
import { Collection, type ChangeKind, type DocData, type StoredDoc } from "./collection.js";
import { ID_PATTERN } from "./ids.js";
import type { UniqueIndexSpec } from "./unique-index.js";
import type { EqualityIndexSpec } from "./list-order.js";
import { DataDirInUseError, describeLock, judgeLock, newLock, parseLock } from "./lock.js";
import { FILE_MODE, makeDir, tightenTree } from "./permissions.js";

export interface StoreChange {
  kind: ChangeKind;
  /** Null for global collections (accounts, tokens). */
  accountId: string | null;
  collection: string;
  doc: StoredDoc;
}

export type ChangeListener = (change: StoreChange) => void;

export type WarningListener = (message: string, details: Record<string, unknown>) => void;

export interface StoreOptions {
  dir: string;
  clock?: Clock;
  random?: RandomSource;
  /** Told what opening found and repaired: loose file modes, a stale lock, a damaged collection. */
  onWarning?: WarningListener;
}

const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,63}$/;

export class Store {
  readonly dir: string;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** Collections opened, by `name` (global) or `accountId/name`: found without building a path. */
  readonly #open = new Map<string, { name: string; opening: Promise<Collection> }>();
  /** An account's collections in #open, by account id and name (account()'s lookup); the same promises, set and dropped with them. */
  readonly #byAccount = new Map<string, Map<string, Promise<Collection>>>();
  /** Unique indexes by collection name, given to every collection of that name as it opens. */
  readonly #unique = new Map<string, UniqueIndexSpec[]>();
  /** Equality indexes of list filters by collection name, the same way. */
  readonly #equality = new Map<string, EqualityIndexSpec[]>();
  readonly #listeners = new Set<ChangeListener>();
  readonly #warn: WarningListener;

  private constructor(options: StoreOptions) {
    this.dir = options.dir;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? systemRandom;
    this.#warn = options.onWarning ?? (() => undefined);
  }

  static async open(options: StoreOptions): Promise<Store> {
    const warn = options.onWarning ?? (() => undefined);
    await makeDir(options.dir);
    await takeLock(options.dir, options.clock ?? systemClock, warn);
    const tightened = await tightenTree(options.dir);
    if (tightened.count > 0) {
      warn(`data directory ${options.dir}: ${tightened.count} files and folders could be read by other users; they are owner-only now`, {
        dir: options.dir,
        tightened: tightened.count,
        examples: tightened.examples,
      });
    }
    return new Store(options);
  }

  /** Flush everything, then let another process open this data directory. */
  async close(): Promise<void> {
    await this.flush();
    await rm(join(this.dir, LOCK_FILE), { force: true });
  }

  /** Hear of every acknowledged change in every collection. */
  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A collection shared by all accounts, such as `accounts`. */
  global<T extends DocData = DocData>(name: string): Promise<Collection<T>> {
    const opened = this.#open.get(name);
    if (opened) return opened.opening as Promise<Collection<T>>;
    checkName(name);
    return this.#collection<T>(name, join(this.dir, `${name}.json`), null, name);
  }

  /** One of an account's collections, such as `devices`. */
  account<T extends DocData = DocData>(accountId: string, name: string): Promise<Collection<T>> {
    // Asked on most requests: an open collection is found by the account and the name as given
    // (checked when opened), without joining them into a key to hash.
    const known = this.#byAccount.get(accountId)?.get(name);
    if (known !== undefined) return known as Promise<Collection<T>>;
    const key = `${accountId}/${name}`;
    const opened = this.#open.get(key);
    if (opened) return opened.opening as Promise<Collection<T>>;
    if (!ID_PATTERN.test(accountId)) throw new Error(`store: bad account id ${JSON.stringify(accountId)}`);
    checkName(name);
    return this.#collection<T>(key, join(this.dir, "accounts", accountId, `${name}.json`), accountId, name);
  }

  /**
   * Declare a unique index for every collection called `name` (each account's `devices`, say):
   * the ones already open get it now, the others as they open, so no write misses the check.
   */
  unique(name: string, spec: UniqueIndexSpec): void {
    checkName(name);
    const specs = this.#unique.get(name) ?? [];
    if (!specs.some((s) => s.field === spec.field)) specs.push(spec);
    this.#unique.set(name, specs);
    for (const open of this.#open.values()) {
      // A collection still opening gets the index from the list above when it is ready.
      if (open.name === name) void open.opening.then((c) => c.uniqueIndex(spec), () => undefined);
    }
  }

  /**
   * Declare an equality index for list filters on `spec.field` in every collection called `name`,
   * open or opened later (as `unique` does): a filtered list page then walks only the documents
   * holding the value asked for.
   */
  equalityIndex(name: string, spec: EqualityIndexSpec): void {
    checkName(name);
    const specs = this.#equality.get(name) ?? [];
    if (!specs.some((s) => s.field === spec.field)) specs.push(spec);
    this.#equality.set(name, specs);
    for (const open of this.#open.values()) {
      if (open.name === name) void open.opening.then((c) => c.equalityIndex(spec), () => undefined);
    }
  }

  /** Resolves once every change made so far, in every open collection, is on disk. */
  async flush(): Promise<void> {
    const collections = await Promise.all(Array.from(this.#open.values(), (o) => o.opening));
    await Promise.all(collections.map((c) => c.flush()));
  }

  #collection<T extends DocData>(key: string, file: string, accountId: string | null, collection: string): Promise<Collection<T>> {
    let opening = this.#open.get(key)?.opening;
    if (!opening) {
      const onChange = (kind: ChangeKind, doc: StoredDoc): void => {
        for (const listener of this.#listeners) listener({ kind, accountId, collection, doc });
      };
      opening = Collection.open<DocData>(file, { clock: this.clock, random: this.random, onChange, onWarning: this.#warn }).then((c) => {
        // Read at open's end, not its start: a declaration made while the file loaded counts too.
        for (const spec of this.#unique.get(collection) ?? []) c.uniqueIndex(spec);
        for (const spec of this.#equality.get(collection) ?? []) c.equalityIndex(spec);
        return c;
      });
      this.#open.set(key, { name: collection, opening });
      if (accountId !== null) {
        let names = this.#byAccount.get(accountId);
        if (names === undefined) this.#byAccount.set(accountId, (names = new Map()));
        names.set(collection, opening);
      }
      const opened = opening;
      opened.then(
        (c) => openCollections.set(opened, c),
        () => {
          this.#open.delete(key);
          if (accountId === null) return;
          const names = this.#byAccount.get(accountId);
          if (names?.get(collection) === opened) names.delete(collection);
          if (names?.size === 0) this.#byAccount.delete(accountId);
        },
      );
    }
    return opening as Promise<Collection<T>>;
  }
}

/** Each collection by the promise that opened it, once open (what `collectionIfOpen` reads). */
const openCollections = new WeakMap<Promise<Collection>, Collection>();

/**
 * The collection an opening promise of `global()` or `account()` gave, without waiting, once it
 * is open (every request after the first to an account's collection); undefined before, or for
 * a promise that is not one of theirs.
 */
export function collectionIfOpen(opening: Promise<Collection>): Collection | undefined {
  return openCollections.get(opening);
}

const LOCK_FILE = "switchboard.lock";

/**
 * One process owns a data directory: two servers writing the same files would undo each other.
 * A lock whose owner is gone (dead, or its pid now another program's) is taken over, said in the
 * log; this process may open the store again.
 *
 * The lock appears whole (written to a temp file, then hard-linked into place, which fails if one
 * exists), and a stale one is moved aside rather than deleted: if another server took the lock
 * between the look and the move, what was moved is its fresh lock, and it is put back.
 */
async function takeLock(dir: string, clock: Clock, warn: WarningListener): Promise<void> {
  const file = join(dir, LOCK_FILE);
  const mine = await newLock(clock.now());
  const temp = `${file}.${process.pid}.${clock.now()}.tmp`;
  await writeFile(temp, JSON.stringify(mine), { mode: FILE_MODE });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await placeLock(temp, file, JSON.stringify(mine));
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const text = await readFile(file, "utf8").catch(() => undefined);
      // Gone since the link failed: try again.
      if (text === undefined) continue;
      const holder = parseLock(text);
      const verdict = await judgeLock(holder, mine);
      if (verdict.kind === "mine") return;
      if (verdict.kind === "held") throw new DataDirInUseError(dir, file, verdict.reason);
      const aside = `${file}.${process.pid}.${clock.now()}.stale`;
      try {
        await rename(file, aside);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw err;
      }
      const moved = await readFile(aside, "utf8").catch(() => "");
      if (moved !== text) {
        await link(aside, file).catch(() => undefined);
      } else {
        warn(`data directory ${dir}: taking over a stale lock (${verdict.reason})`, { dir, lock: holder ? describeLock(holder) : text.slice(0, 200) });
      }
      await rm(aside, { force: true });
    }
  } finally {
    await rm(temp, { force: true });
  }
  throw new Error(`store: cannot lock the data directory ${dir}`);
}

/** Links the whole lock into place; a file system without hard links gets an exclusive create. */
async function placeLock(temp: string, file: string, text: string): Promise<void> {
  try {
    await link(temp, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw err;
    await writeFile(file, text, { flag: "wx", mode: FILE_MODE });
  }
}

function checkName(name: string): void {
  if (!COLLECTION_NAME.test(name)) throw new Error(`store: bad collection name ${JSON.stringify(name)}`);
}
