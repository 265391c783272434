// One collection of documents, held in memory, kept in one lowdb JSON file plus a journal.
// A change is acknowledged once its journal line is on disk; the JSON file is rewritten whole
// and atomically (temp file + rename, the previous file kept as `.bak`) after as many changes as
// the file held documents (SNAPSHOT_EVERY at least) or after a quiet second, so a burst of writes
// costs one rewrite, not one each, and a write's share of the rewrites does not grow with the
// collection: the journal to replay on open stays no longer than the file.
import { createReadStream, createWriteStream } from "node:fs";
import { readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { Low } from "lowdb";
import { type Cancel, type Clock, type RandomSource, toGregorianSeconds } from "../clock.js";
import { newId, newModbId, nextRevision } from "./ids.js";
import { StoreConflictError, StoreNotFoundError, StoreUniqueError } from "./errors.js";
import { UniqueIndex, type UniqueIndexSpec } from "./unique-index.js";
import { ListOrder, type EqualityIndexSpec, type SortKey, type WalkOptions } from "./list-order.js";
import type { EntryVisit, PlacedPage } from "./ordered-list.js";
import { Journal } from "./journal.js";
import { CollectionFile, readCopy, type FileShape } from "./collection-file.js";
import { FILE_MODE, makeDir } from "./permissions.js";

export type DocData = Record<string, unknown>;

export interface AttachmentMeta {
  content_type: string;
  length: number;
}

/** A stored document: its data plus the metadata every document carries. */
export interface StoredDoc<T extends DocData = DocData> {
  id: string;
  /** Revision `N-<32hex>`, new on every write. */
  rev: string;
  /** Gregorian seconds. */
  created: number;
  /** Gregorian seconds. */
  modified: number;
  attachments?: Record<string, AttachmentMeta>;
  data: T;
}

type JournalLine = { put: StoredDoc } | { del: string };

const SNAPSHOT_EVERY = 1_000;
const SNAPSHOT_AFTER_IDLE_MS = 1_000;

export interface CreateOptions {
  /** Use this id instead of a new one (it must not exist yet). */
  id?: string;
  /** Make a MODB-style `YYYYMM-<32hex>` id. */
  modb?: boolean;
  /**
   * An attachment stored before the document exists, so nobody sees the document without it
   * (a recording listed before its audio could not be played).
   */
  attachment?: { name: string; content: Readable | Buffer; contentType: string };
  /**
   * Acknowledge only once the change is synced to the disk, not only written: for a log whose
   * rows are promised to outlive a power cut (the webhook attempts).
   */
  durable?: boolean;
}

export interface WriteOptions {
  /** Expected current revision; a different one fails with StoreConflictError. */
  rev?: string;
}

export type ChangeKind = "created" | "edited" | "deleted";

export interface CollectionDeps {
  clock: Clock;
  random: RandomSource;
  /** Told of every change once it is acknowledged (on disk). */
  onChange?(kind: ChangeKind, doc: StoredDoc): void;
  /** Told when opening had to recover a damaged file, and what was lost. */
  onWarning?(message: string, details: Record<string, unknown>): void;
}

/** What a collection starts from before its journal is replayed. */
interface Base {
  docs: StoredDoc[];
  /** The first journal generation to replay. */
  from: number;
  /** The first journal generation to keep. */
  keepFrom: number;
  /** Set when the file was damaged: what was done about it, for the warning. */
  damage?: Record<string, unknown> & { message: string; complete: boolean };
}

const ATTACHMENT_NAME = /^[A-Za-z0-9._-]{1,128}$/;

export class Collection<T extends DocData = DocData> {
  readonly #db: Low<FileShape>;
  readonly #docs = new Map<string, StoredDoc<T>>();
  readonly #attachmentsDir: string;
  readonly #deps: CollectionDeps;
  readonly #journal: Journal;
  #changesSinceSnapshot = 0;
  /** How many documents the last rewrite of the file held (or opening found). */
  #snapshotSize = 0;
  #snapshotting: Promise<void> | null = null;
  #snapshotAgain = false;
  #cancelIdleSnapshot: Cancel | null = null;
  /**
   * Durable creates whose journal line is not synced yet: in memory (a snapshot must hold them,
   * and ids stay taken) but not shown, since nobody may see a row that a power cut could undo.
   */
  readonly #unsynced = new Set<string>();
  /** The journal generation the collection file on disk starts from (its `.bak` needs it). */
  #fileGen = 0;
  /** Unique indexes by field, kept in step with #docs by #put and #remove. */
  readonly #indexes = new Map<string, UniqueIndex>();
  /**
   * Each document's place in #docs' insertion order (a Map keeps a key's place when its value is
   * replaced): list orders break ties of their sort key by it, as a stable sort of all() would.
   */
  readonly #seq = new Map<string, number>();
  #nextSeq = 0;
  /** List orders by sort key, kept in step with #docs by #put and #remove. */
  readonly #orders = new Map<SortKey<T>, ListOrder<T>>();
  /** Equality indexes by field, given to every list order. */
  readonly #equality = new Map<string, EqualityIndexSpec>();
  /** Bumped by every change of what reads see: see `version`. */
  #version = 0;
  #epoch: string | undefined;

  private constructor(readonly file: string, deps: CollectionDeps) {
    this.#deps = deps;
    this.#db = new Low<FileShape>(new CollectionFile(file), { docs: [] });
    this.#attachmentsDir = file.replace(/\.json$/, ".attachments");
    this.#journal = new Journal(file);
  }

  static async open<T extends DocData>(file: string, deps: CollectionDeps): Promise<Collection<T>> {
    await makeDir(dirname(file));
    const c = new Collection<T>(file, deps);
    let base: Base;
    try {
      base = await c.#base();
    } catch (err) {
      throw new Error(`store: cannot read ${file}: ${(err as Error).message}`, { cause: err });
    }
    for (const doc of base.docs) c.#put(doc as StoredDoc<T>);
    c.#fileGen = base.from;
    c.#snapshotSize = base.docs.length;
    const replayed = await c.#journal.open(base.from, base.keepFrom);
    let unreadable = replayed.unreadable;
    for (const line of replayed.lines) {
      if (isPut(line)) c.#put(line.put as StoredDoc<T>);
      else if (isDel(line)) c.#remove(line.del);
      else unreadable++;
    }
    if (unreadable > 0) {
      deps.onWarning?.(`collection ${nameOf(file)}: ${unreadable} journal lines were unreadable and skipped: the changes they held are lost`, {
        file,
        unreadable,
        generations: replayed.generations,
      });
    }
    if (base.damage) {
      const { message, ...details } = base.damage;
      deps.onWarning?.(message, { ...details, file, journal_changes: replayed.lines.length, documents_now: c.#docs.size });
    }
    if (replayed.lines.length > 0 || base.damage) {
      // A recovered collection is written out at once: the damaged file is no longer there.
      c.#changesSinceSnapshot = Math.max(1, replayed.lines.length);
      await c.#snapshot();
    }
    return c;
  }

  /**
   * The documents the collection file holds, and where the journal takes over. A damaged file
   * is set aside (never deleted) and the last good copy used instead; without one, the whole
   * documents before the damage are kept. The journal then replays over either: its lines are
   * whole documents in order, so replaying lines the copy already holds changes nothing.
   */
  async #base(): Promise<Base> {
    const primary = await readCopy(this.file);
    if (primary.state === "ok") {
      const from = primary.shape.journal_gen ?? 0;
      return { docs: primary.shape.docs as StoredDoc[], from, keepFrom: primary.shape.kept_gen ?? from };
    }
    const backupFile = `${this.file}.bak`;
    const backup = await readCopy(backupFile);
    if (primary.state === "missing" && backup.state === "missing") return { docs: [], from: 0, keepFrom: 0 };
    const name = nameOf(this.file);
    let setAside: string | undefined;
    let salvaged: StoredDoc[] = [];
    const problem = primary.state === "damaged" ? primary.reason : "the file is missing";
    if (primary.state === "damaged") {
      salvaged = salvageDocs(await readTextOrEmpty(this.file));
      setAside = `${this.file}.damaged-${new Date(this.#deps.clock.now()).toISOString().replace(/[:.]/g, "-")}`;
      await rename(this.file, setAside);
    }
    if (backup.state === "ok") {
      const from = backup.shape.journal_gen ?? 0;
      const copiedAt = (await stat(backupFile)).mtime.toISOString();
      return {
        docs: backup.shape.docs as StoredDoc[],
        from,
        keepFrom: backup.shape.kept_gen ?? from,
        damage: {
          message: `collection ${name}: ${problem}; recovered from its last good copy (${copiedAt}) and its journal, nothing lost`,
          complete: true,
          problem,
          copy: backupFile,
          copy_written: copiedAt,
          copy_documents: backup.shape.docs.length,
          ...(setAside ? { set_aside: setAside } : {}),
        },
      };
    }
    return {
      docs: salvaged,
      from: 0,
      keepFrom: 0,
      damage: {
        message:
          `collection ${name}: ${problem}, and no good copy; kept ${salvaged.length} whole documents from before the damage ` +
          "and the journal's changes: documents written before the journal's oldest change and after the damage point are lost",
        complete: false,
        problem,
        salvaged_documents: salvaged.length,
        ...(setAside ? { set_aside: setAside } : {}),
      },
    };
  }

  /**
   * A number that changes whenever what a read may see changes: a document put or removed
   * (writes, undos, replay) or a durable create becoming visible or going. Equal versions of one
   * collection object answer every read alike (a list page kept for a version stays right).
   */
  get version(): number {
    return this.#version;
  }

  /**
   * 32 hex digits drawn from the random source at the first ask, another for every collection
   * object (each opening, each start): with `version`, what reads see is named by a pair that
   * never comes back after a restart or a reopening (list pages' revisions, server/http/resource.ts).
   */
  get epoch(): string {
    this.#epoch ??= this.#deps.random.bytes(16).toString("hex");
    return this.#epoch;
  }

  /** How many documents, counting durable creates not yet synced (so a cap counts them too). */
  get size(): number {
    return this.#docs.size;
  }

  get(id: string): StoredDoc<T> | undefined {
    // No durable create pending (nearly always): one lookup, not two (a GET by id makes four gets:
    // its document, and the token's, account's and user's).
    const unsynced = this.#unsynced;
    return unsynced.size !== 0 && unsynced.has(id) ? undefined : this.#docs.get(id);
  }

  /** Every document, in insertion order. Callers must not mutate what they get. */
  all(): StoredDoc<T>[] {
    const docs = Array.from(this.#docs.values());
    return this.#unsynced.size === 0 ? docs : docs.filter((doc) => !this.#unsynced.has(doc.id));
  }

  has(id: string): boolean {
    return this.#docs.has(id) && !this.#unsynced.has(id);
  }

  /**
   * The collection's unique index on `spec.field`, built from the documents now held (the file
   * and its replayed journal) on first use; later calls with the same field return it. From then
   * on every create and update refuses, with StoreUniqueError, a key another document holds: the
   * test and the change happen in one synchronous step, so concurrent writes cannot both pass.
   */
  uniqueIndex(spec: UniqueIndexSpec): UniqueIndex {
    const known = this.#indexes.get(spec.field);
    if (known) return known;
    const index = new UniqueIndex(spec);
    for (const doc of this.#docs.values()) index.add(doc.id, doc.data);
    this.#indexes.set(spec.field, index);
    return index;
  }

  /**
   * Every document with its sort key, ascending (ties in insertion order), read from the list
   * order of `key`: no sort.
   */
  sortedBy(key: SortKey<T>): { row: StoredDoc<T>; key: string }[] {
    return Array.from(this.walk(key, { descending: false }), (e) => ({ row: e.doc, key: e.key }));
  }

  /**
   * The collection's equality index on `spec.field`, in every list order from now on (built from
   * the documents held when an order is first walked). Later calls with the same field keep the
   * first spec.
   */
  equalityIndex(spec: EqualityIndexSpec): void {
    if (this.#equality.has(spec.field)) return;
    this.#equality.set(spec.field, spec);
    for (const order of this.#orders.values()) order.index(spec);
  }

  /** Whether walks may name `field` in `equal`. */
  hasEqualityIndex(field: string): boolean {
    return this.#equality.has(field);
  }

  /** How many entries a walk of `key` on `equal` visits at most: the cheaper index to walk. */
  equalCount(key: SortKey<T>, equal: NonNullable<WalkOptions["equal"]>): number {
    return this.#order(key).count(equal);
  }

  /**
   * The documents in the order of `key` (ascending, ties in insertion order; descending is its
   * exact reverse) from `options.from`, optionally only those an equality index files under
   * some key. The order is built on first use and kept up to date on every change after, so a
   * caller that stops early pays for what it read, not for the collection. Read synchronously:
   * the walk sees the collection as it was when it started only until the next change.
   */
  *walk(key: SortKey<T>, options: WalkOptions): Generator<{ doc: StoredDoc<T>; key: string }> {
    for (const entry of this.#order(key).walk(options)) {
      if (this.#unsynced.size > 0 && this.#unsynced.has(entry.doc.id)) continue;
      yield entry;
    }
  }

  /**
   * Calls `visit` with what `walk` gives, in order, until it answers false: the same documents
   * without a generator's cost per row (a list page's path).
   */
  visit(key: SortKey<T>, options: WalkOptions, visit: (doc: StoredDoc<T>, key: string) => boolean): void {
    const unsynced = this.#unsynced;
    // No durable create pending (nearly always): the list hands its documents straight to `visit`.
    if (unsynced.size === 0) this.#order(key).visitDocs(options, visit);
    else this.#order(key).visit(options, (entry) => (unsynced.size > 0 && unsynced.has(entry.doc.id)) || visit(entry.doc, entry.key));
  }

  /**
   * `visit` handing also each document's block of the order and its index there (see
   * blockMemo): a page whose rows lie side by side in a block can read the block's joined texts.
   * No block (undefined) while a durable create is pending (its document is skipped), for a
   * descending walk and for a walk that merges several keys' lists.
   */
  visitPlaced(key: SortKey<T>, options: WalkOptions, visit: EntryVisit<StoredDoc<T>>): void {
    const unsynced = this.#unsynced;
    if (unsynced.size === 0) this.#order(key).visitPlaced(options, visit);
    else this.#order(key).visit(options, (entry) => (unsynced.size > 0 && unsynced.has(entry.doc.id)) || visit(entry.doc, entry.key, undefined, 0));
  }

  /**
   * An ascending page of `size` in the order of `key` as runs of its list's blocks, without
   * reading the rows' entries (ListOrder.placedPage); undefined when the walk must visit each
   * entry: a descending or merged walk, or a durable create pending (its document is skipped).
   */
  placedPage(key: SortKey<T>, options: WalkOptions, size: number): PlacedPage<StoredDoc<T>> | undefined {
    if (this.#unsynced.size > 0) return undefined;
    return this.#order(key).placedPage(options, size);
  }

  #order(key: SortKey<T>): ListOrder<T> {
    let order = this.#orders.get(key);
    if (order === undefined) {
      // #docs iterates in insertion order, which is ascending seq.
      order = new ListOrder(key, Array.from(this.#docs.values(), (doc): [StoredDoc<T>, number] => [doc, this.#seq.get(doc.id) ?? 0]));
      for (const spec of this.#equality.values()) order.index(spec);
      this.#orders.set(key, order);
    }
    return order;
  }

  async create(data: T, options: CreateOptions = {}): Promise<StoredDoc<T>> {
    const now = toGregorianSeconds(this.#deps.clock.now());
    const id =
      options.id ?? (options.modb ? newModbId(this.#deps.random, this.#deps.clock.now()) : newId(this.#deps.random));
    if (this.#docs.has(id)) throw new StoreConflictError(id, "a document with this id exists");
    const attachments = options.attachment ? await this.#writeAttachment(id, options.attachment) : undefined;
    if (this.#docs.has(id)) throw new StoreConflictError(id, "a document with this id exists");
    const doc: StoredDoc<T> = { id, rev: nextRevision(this.#deps.random), created: now, modified: now, data: clone(data), ...(attachments ? { attachments } : {}) };
    try {
      this.#checkUnique(id, doc.data);
    } catch (err) {
      if (attachments) await rm(join(this.#attachmentsDir, id), { recursive: true, force: true });
      throw err;
    }
    this.#put(doc);
    if (options.durable) {
      this.#unsynced.add(id);
      this.#version++;
    }
    try {
      await this.#persist(
        { put: doc },
        () => {
          if (this.#docs.get(id) === doc) this.#remove(id);
        },
        options.durable,
      );
    } catch (err) {
      if (attachments) await rm(join(this.#attachmentsDir, id), { recursive: true, force: true });
      throw err;
    } finally {
      if (this.#unsynced.delete(id)) this.#version++;
    }
    this.#deps.onChange?.("created", doc);
    return doc;
  }

  /** Replace a document's data. */
  async update(id: string, data: T, options: WriteOptions = {}): Promise<StoredDoc<T>> {
    const current = this.#current(id, options);
    const doc: StoredDoc<T> = {
      ...current,
      rev: nextRevision(this.#deps.random, current.rev),
      modified: toGregorianSeconds(this.#deps.clock.now()),
      data: clone(data),
    };
    this.#checkUnique(id, doc.data);
    this.#put(doc);
    await this.#persist({ put: doc }, () => {
      if (this.#docs.get(id) === doc) this.#put(current);
    });
    this.#deps.onChange?.("edited", doc);
    return doc;
  }

  async delete(id: string, options: WriteOptions = {}): Promise<StoredDoc<T>> {
    const current = this.#current(id, options);
    this.#remove(id);
    await this.#persist({ del: id }, () => {
      if (!this.#docs.has(id)) this.#put(current);
    });
    this.#deps.onChange?.("deleted", current);
    if (current.attachments) await rm(join(this.#attachmentsDir, id), { recursive: true, force: true });
    return current;
  }

  /**
   * Store an attachment as a file beside the collection (streamed, temp + rename), then record
   * its name, size and content type on the document.
   */
  async putAttachment(
    id: string,
    name: string,
    content: Readable | Buffer,
    contentType: string,
    options: WriteOptions = {},
  ): Promise<StoredDoc<T>> {
    if (!ATTACHMENT_NAME.test(name)) throw new Error(`store: bad attachment name ${JSON.stringify(name)}`);
    this.#current(id, options);
    const dir = join(this.#attachmentsDir, id);
    await makeDir(dir);
    const final = join(dir, name);
    const temp = join(dir, `.${name}.${newId(this.#deps.random)}.tmp`);
    try {
      await streamToFile(content, temp);
      const { size } = await stat(temp);
      // The document may have changed while the bytes streamed in; re-check before recording.
      const current = this.#current(id, options);
      await rename(temp, final);
      const doc: StoredDoc<T> = {
        ...current,
        rev: nextRevision(this.#deps.random, current.rev),
        modified: toGregorianSeconds(this.#deps.clock.now()),
        attachments: { ...current.attachments, [name]: { content_type: contentType, length: size } },
      };
      this.#put(doc);
      await this.#persist({ put: doc }, () => {
        if (this.#docs.get(id) === doc) this.#put(current);
      });
      this.#deps.onChange?.("edited", doc);
      return doc;
    } finally {
      await rm(temp, { force: true });
    }
  }

  /** Streams a new document's attachment into place (temp + rename) and describes it. */
  async #writeAttachment(id: string, attachment: NonNullable<CreateOptions["attachment"]>): Promise<Record<string, AttachmentMeta>> {
    const { name, content, contentType } = attachment;
    if (!ATTACHMENT_NAME.test(name)) throw new Error(`store: bad attachment name ${JSON.stringify(name)}`);
    const dir = join(this.#attachmentsDir, id);
    await makeDir(dir);
    const temp = join(dir, `.${name}.${newId(this.#deps.random)}.tmp`);
    try {
      await streamToFile(content, temp);
      const { size } = await stat(temp);
      await rename(temp, join(dir, name));
      return { [name]: { content_type: contentType, length: size } };
    } finally {
      await rm(temp, { force: true });
    }
  }

  /** A stream of an attachment's bytes, optionally a byte range (inclusive `end`). */
  readAttachment(id: string, name: string, range?: { start: number; end: number }): { meta: AttachmentMeta; stream: Readable } {
    const doc = this.#docs.get(id);
    const meta = doc?.attachments?.[name];
    if (!doc || !meta) throw new StoreNotFoundError(`${id}/${name}`);
    const stream = createReadStream(join(this.#attachmentsDir, id, name), range ?? {});
    return { meta, stream };
  }

  async deleteAttachment(id: string, name: string, options: WriteOptions = {}): Promise<StoredDoc<T>> {
    const current = this.#current(id, options);
    if (!current.attachments?.[name]) throw new StoreNotFoundError(`${id}/${name}`);
    const rest = { ...current.attachments };
    delete rest[name];
    const doc: StoredDoc<T> = {
      ...current,
      rev: nextRevision(this.#deps.random, current.rev),
      modified: toGregorianSeconds(this.#deps.clock.now()),
      attachments: rest,
    };
    this.#put(doc);
    await this.#persist({ put: doc }, () => {
      if (this.#docs.get(id) === doc) this.#put(current);
    });
    this.#deps.onChange?.("edited", doc);
    await rm(join(this.#attachmentsDir, id, name), { force: true });
    return doc;
  }

  /** Resolves once every change made so far is folded into the collection file. */
  async flush(): Promise<void> {
    this.#cancelIdleSnapshot?.();
    this.#cancelIdleSnapshot = null;
    if (this.#changesSinceSnapshot > 0 || this.#snapshotting) await this.#snapshot();
  }

  #current(id: string, options: WriteOptions): StoredDoc<T> {
    const current = this.#docs.get(id);
    if (!current) throw new StoreNotFoundError(id);
    if (options.rev !== undefined && options.rev !== current.rev) {
      throw new StoreConflictError(id, `revision ${options.rev} is stale (current ${current.rev})`);
    }
    return current;
  }

  #checkUnique(id: string, data: T): void {
    for (const index of this.#indexes.values()) {
      const clash = index.clash(id, data);
      if (clash) throw new StoreUniqueError(index.spec.field, index.spec.description, clash.key, clash.holder);
    }
  }

  /** Every in-memory change of a document goes through here or #remove, so the indexes follow. */
  #put(doc: StoredDoc<T>): void {
    this.#version++;
    const previous = this.#docs.get(doc.id);
    for (const index of this.#indexes.values()) {
      if (previous) index.remove(previous.id, previous.data);
      index.add(doc.id, doc.data);
    }
    let seq = this.#seq.get(doc.id);
    if (seq === undefined) {
      seq = this.#nextSeq++;
      this.#seq.set(doc.id, seq);
    }
    for (const order of this.#orders.values()) {
      if (previous) order.remove(previous, seq);
      order.add(doc, seq);
    }
    this.#docs.set(doc.id, doc);
  }

  #remove(id: string): void {
    const previous = this.#docs.get(id);
    if (!previous) return;
    this.#version++;
    for (const index of this.#indexes.values()) index.remove(id, previous.data);
    const seq = this.#seq.get(id) ?? 0;
    for (const order of this.#orders.values()) order.remove(previous, seq);
    this.#seq.delete(id);
    this.#docs.delete(id);
  }

  /** Journal the change just made in memory; undo it there if the journal write fails. */
  async #persist(line: JournalLine, undo: () => void, durable = false): Promise<void> {
    try {
      await this.#journal.append(JSON.stringify(line), durable);
    } catch (err) {
      undo();
      throw err;
    }
    this.#changesSinceSnapshot++;
    if (this.#changesSinceSnapshot >= Math.max(SNAPSHOT_EVERY, this.#snapshotSize)) {
      this.#snapshot().catch(() => undefined);
    } else {
      this.#cancelIdleSnapshot?.();
      this.#cancelIdleSnapshot = this.#deps.clock.after(SNAPSHOT_AFTER_IDLE_MS, () => {
        this.#cancelIdleSnapshot = null;
        this.#snapshot().catch(() => undefined);
      });
    }
  }

  /**
   * Rewrite the collection file from memory (temp + rename, the old file kept as `.bak`), then
   * drop the journal generations neither copy needs. A failed rewrite leaves the journal in
   * place for the next try.
   */
  #snapshot(): Promise<void> {
    if (this.#snapshotting) {
      this.#snapshotAgain = true;
      return this.#snapshotting;
    }
    const covered = this.#changesSinceSnapshot;
    this.#changesSinceSnapshot = 0;
    const { generation, done } = this.#journal.rotate();
    // The file now on disk becomes the `.bak`: the generations from its start stay for it.
    const kept = this.#fileGen;
    // CollectionFile serialises synchronously inside write(), so the snapshot can be dropped at once.
    this.#db.data = { docs: Array.from(this.#docs.values()), journal_gen: generation, kept_gen: kept };
    this.#snapshotSize = this.#db.data.docs.length;
    const write = this.#db.write();
    this.#db.data = { docs: [] };
    this.#snapshotting = (async () => {
      try {
        await Promise.all([write, done]);
        this.#fileGen = generation;
        await this.#journal.removeBefore(kept);
      } catch (err) {
        this.#changesSinceSnapshot += covered;
        throw err;
      } finally {
        this.#snapshotting = null;
      }
      if (this.#snapshotAgain) {
        this.#snapshotAgain = false;
        await this.#snapshot();
      }
    })();
    return this.#snapshotting;
  }
}

function clone<V>(value: V): V {
  return structuredClone(value);
}

/** The collection's name, from its file's. */
function nameOf(file: string): string {
  return basename(file).replace(/\.json$/, "");
}

function isPut(line: unknown): line is { put: StoredDoc } {
  const put = typeof line === "object" && line !== null ? (line as { put?: unknown }).put : undefined;
  return typeof put === "object" && put !== null && typeof (put as { id?: unknown }).id === "string";
}

function isDel(line: unknown): line is { del: string } {
  return typeof line === "object" && line !== null && typeof (line as { del?: unknown }).del === "string";
}

function readTextOrEmpty(file: string): Promise<string> {
  return readFile(file, "utf8").catch(() => "");
}

/**
 * The whole documents at the start of a damaged collection file (cut short by a full disk, say):
 * the elements of its `docs` list up to the first one that does not parse.
 */
export function salvageDocs(text: string): StoredDoc[] {
  const start = text.indexOf("[");
  if (start < 0) return [];
  const docs: StoredDoc[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let elementStart = -1;
  for (let i = start + 1; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") {
      if (depth === 0) elementStart = i;
      depth++;
    } else if (ch === "}" || ch === "]") {
      if (depth === 0) break;
      depth--;
      if (depth === 0) {
        let doc: unknown;
        try {
          doc = JSON.parse(text.slice(elementStart, i + 1));
        } catch {
          break;
        }
        if (typeof doc !== "object" || doc === null || typeof (doc as { id?: unknown }).id !== "string") break;
        docs.push(doc as StoredDoc);
      }
    }
  }
  return docs;
}

/**
 * Streams `content` into a new file at `path`, settling only once the file is closed: a write that
 * failed early (an upload refused by its first bytes) may still be opening the file, and an `rm`
 * of the temp name before the open completes would leave the file behind once it does.
 */
async function streamToFile(content: Readable | Buffer, path: string): Promise<void> {
  const out = createWriteStream(path, { mode: FILE_MODE });
  try {
    await pipeline(Buffer.isBuffer(content) ? Readable.from([content]) : content, out);
  } finally {
    if (!out.closed) await new Promise<void>((resolve) => out.once("close", () => resolve()));
  }
}
