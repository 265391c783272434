// The document store: global collections (accounts, tokens) and one file per account
// collection under the data directory. It is the only code that touches these files.
import { join } from "node:path";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { type Clock, type RandomSource, systemClock, systemRandom } from "../clock.js";
import { Collection, type ChangeKind, type DocData, type StoredDoc } from "./collection.js";
import { ID_PATTERN } from "./ids.js";

export interface StoreChange {
  kind: ChangeKind;
  /** Null for global collections (accounts, tokens). */
  accountId: string | null;
  collection: string;
  doc: StoredDoc;
}

export type ChangeListener = (change: StoreChange) => void;

export interface StoreOptions {
  dir: string;
  clock?: Clock;
  random?: RandomSource;
}

const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,63}$/;

export class Store {
  readonly dir: string;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly #open = new Map<string, Promise<Collection>>();
  readonly #listeners = new Set<ChangeListener>();

  private constructor(options: StoreOptions) {
    this.dir = options.dir;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? systemRandom;
  }

  static async open(options: StoreOptions): Promise<Store> {
    await mkdir(options.dir, { recursive: true });
    await takeLock(options.dir);
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
    checkName(name);
    return this.#collection<T>(join(this.dir, `${name}.json`), null, name);
  }

  /** One of an account's collections, such as `devices`. */
  account<T extends DocData = DocData>(accountId: string, name: string): Promise<Collection<T>> {
    if (!ID_PATTERN.test(accountId)) throw new Error(`store: bad account id ${JSON.stringify(accountId)}`);
    checkName(name);
    return this.#collection<T>(join(this.dir, "accounts", accountId, `${name}.json`), accountId, name);
  }

  /** Resolves once every change made so far, in every open collection, is on disk. */
  async flush(): Promise<void> {
    const collections = await Promise.all(this.#open.values());
    await Promise.all(collections.map((c) => c.flush()));
  }

  #collection<T extends DocData>(file: string, accountId: string | null, collection: string): Promise<Collection<T>> {
    let opening = this.#open.get(file);
    if (!opening) {
      const onChange = (kind: ChangeKind, doc: StoredDoc): void => {
        for (const listener of this.#listeners) listener({ kind, accountId, collection, doc });
      };
      opening = Collection.open<DocData>(file, { clock: this.clock, random: this.random, onChange });
      this.#open.set(file, opening);
      opening.catch(() => this.#open.delete(file));
    }
    return opening as Promise<Collection<T>>;
  }
}

const LOCK_FILE = "switchboard.lock";

/**
 * One process owns a data directory: two servers writing the same files would undo each other.
 * A lock left by a process that died is taken over; this process may open the store again.
 */
async function takeLock(dir: string): Promise<void> {
  const file = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = Number((await readFile(file, "utf8").catch(() => "")).trim());
    if (holder === process.pid) return;
    if (Number.isInteger(holder) && holder > 0 && processIsAlive(holder)) {
      throw new Error(`store: the data directory ${dir} is in use by process ${holder}`);
    }
    await rm(file, { force: true });
  }
  throw new Error(`store: cannot lock the data directory ${dir}`);
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function checkName(name: string): void {
  if (!COLLECTION_NAME.test(name)) throw new Error(`store: bad collection name ${JSON.stringify(name)}`);
}
