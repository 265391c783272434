// One collection of documents in one lowdb JSON file, held in memory and written back whole,
// atomically (lowdb's steno: temp file + rename). Writes coalesce: while one is on disk, every
// change made meanwhile rides on the next single write, and each caller is acknowledged only
// once the file that holds its change has been renamed into place.
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { Readable } from "node:stream";
import { Low } from "lowdb";
import { DataFile } from "lowdb/node";
import { type Clock, type RandomSource, toGregorianSeconds } from "../clock.js";
import { newId, newModbId, nextRevision } from "./ids.js";
import { StoreConflictError, StoreNotFoundError } from "./errors.js";

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

interface FileShape {
  docs: StoredDoc[];
}

export interface CreateOptions {
  /** Use this id instead of a new one (it must not exist yet). */
  id?: string;
  /** Make a MODB-style `YYYYMM-<32hex>` id. */
  modb?: boolean;
}

export interface WriteOptions {
  /** Expected current revision; a different one fails with StoreConflictError. */
  rev?: string;
}

export interface CollectionDeps {
  clock: Clock;
  random: RandomSource;
}

const ATTACHMENT_NAME = /^[A-Za-z0-9._-]{1,128}$/;

export class Collection<T extends DocData = DocData> {
  readonly #db: Low<FileShape>;
  readonly #docs = new Map<string, StoredDoc<T>>();
  readonly #attachmentsDir: string;
  readonly #deps: CollectionDeps;
  #inFlight: Promise<void> | null = null;
  #queued: Promise<void> | null = null;

  private constructor(readonly file: string, deps: CollectionDeps) {
    this.#deps = deps;
    this.#db = new Low<FileShape>(
      new DataFile<FileShape>(file, { parse: JSON.parse, stringify: (d) => JSON.stringify(d) }),
      { docs: [] },
    );
    this.#attachmentsDir = file.replace(/\.json$/, ".attachments");
  }

  static async open<T extends DocData>(file: string, deps: CollectionDeps): Promise<Collection<T>> {
    await mkdir(dirname(file), { recursive: true });
    const c = new Collection<T>(file, deps);
    try {
      await c.#db.read();
    } catch (err) {
      throw new Error(`store: cannot read ${file}: ${(err as Error).message}`, { cause: err });
    }
    const docs = c.#db.data.docs;
    if (!Array.isArray(docs)) throw new Error(`store: ${file} is not a collection file`);
    for (const doc of docs) c.#docs.set(doc.id, doc as StoredDoc<T>);
    c.#db.data = { docs: [] };
    return c;
  }

  get size(): number {
    return this.#docs.size;
  }

  get(id: string): StoredDoc<T> | undefined {
    return this.#docs.get(id);
  }

  /** Every document, in insertion order. Callers must not mutate what they get. */
  all(): StoredDoc<T>[] {
    return Array.from(this.#docs.values());
  }

  has(id: string): boolean {
    return this.#docs.has(id);
  }

  async create(data: T, options: CreateOptions = {}): Promise<StoredDoc<T>> {
    const now = toGregorianSeconds(this.#deps.clock.now());
    const id =
      options.id ?? (options.modb ? newModbId(this.#deps.random, this.#deps.clock.now()) : newId(this.#deps.random));
    if (this.#docs.has(id)) throw new StoreConflictError(id, "a document with this id exists");
    const doc: StoredDoc<T> = { id, rev: nextRevision(this.#deps.random), created: now, modified: now, data: clone(data) };
    this.#docs.set(id, doc);
    await this.#persist(() => {
      if (this.#docs.get(id) === doc) this.#docs.delete(id);
    });
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
    this.#docs.set(id, doc);
    await this.#persist(() => {
      if (this.#docs.get(id) === doc) this.#docs.set(id, current);
    });
    return doc;
  }

  async delete(id: string, options: WriteOptions = {}): Promise<StoredDoc<T>> {
    const current = this.#current(id, options);
    this.#docs.delete(id);
    await this.#persist(() => {
      if (!this.#docs.has(id)) this.#docs.set(id, current);
    });
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
    await mkdir(dir, { recursive: true });
    const final = join(dir, name);
    const temp = join(dir, `.${name}.${newId(this.#deps.random)}.tmp`);
    try {
      if (Buffer.isBuffer(content)) {
        await pipeline(async function* () {
          yield content;
        }, createWriteStream(temp));
      } else {
        await pipeline(content, createWriteStream(temp));
      }
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
      this.#docs.set(id, doc);
      await this.#persist(() => {
        if (this.#docs.get(id) === doc) this.#docs.set(id, current);
      });
      return doc;
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
    this.#docs.set(id, doc);
    await this.#persist(() => {
      if (this.#docs.get(id) === doc) this.#docs.set(id, current);
    });
    await rm(join(this.#attachmentsDir, id, name), { force: true });
    return doc;
  }

  /** Resolves once every change made so far is on disk. */
  async flush(): Promise<void> {
    await (this.#queued ?? this.#inFlight ?? Promise.resolve());
  }

  #current(id: string, options: WriteOptions): StoredDoc<T> {
    const current = this.#docs.get(id);
    if (!current) throw new StoreNotFoundError(id);
    if (options.rev !== undefined && options.rev !== current.rev) {
      throw new StoreConflictError(id, `revision ${options.rev} is stale (current ${current.rev})`);
    }
    return current;
  }

  /** Wait for the write that carries the change just made; undo it in memory if that write fails. */
  async #persist(undo: () => void): Promise<void> {
    try {
      await this.#scheduleWrite();
    } catch (err) {
      undo();
      throw err;
    }
  }

  #scheduleWrite(): Promise<void> {
    if (this.#queued) return this.#queued;
    if (!this.#inFlight) return this.#startWrite();
    const after = this.#inFlight;
    this.#queued = after
      .catch(() => undefined)
      .then(() => {
        this.#queued = null;
        return this.#startWrite();
      });
    return this.#queued;
  }

  #startWrite(): Promise<void> {
    // lowdb serialises synchronously inside write(), so the snapshot can be dropped at once.
    this.#db.data = { docs: Array.from(this.#docs.values()) };
    const write = this.#db.write().finally(() => {
      if (this.#inFlight === write) this.#inFlight = null;
    });
    this.#db.data = { docs: [] };
    this.#inFlight = write;
    return write;
  }
}

function clone<V>(value: V): V {
  return structuredClone(value);
}
