// A configuration resource over one account collection, the crossbar way: list, create (PUT,
// 201 + Location), read, update (POST: replace), PATCH (merge, then validate the whole), DELETE
// (answers the deleted document), with validation before every write, If-Match, filters and
// paging. Each api/ file describes its resource with a DocResourceSpec and hooks.
import { hash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Collection, StoredDoc } from "../store/index.js";
import type { OrderedEntry, PlacedRun } from "../store/index.js";
import { blockMemo, collectionIfOpen, StoreConflictError, StoreNotFoundError, StoreUniqueError } from "../store/index.js";
import { ApiError } from "./errors.js";
import { etagOf, ifMatch, registerEndpoint, type AuthContext, type Ctx, type EndpointDeps, type Handler, type Outcome, type VerbSpec } from "./endpoint.js";
import { contentRevision, JsonText, type Paging } from "./envelope.js";
import { equalityFilter, equalityFilters, queryTest, type EqualityFilter } from "./filters.js";
import { PageBuilder, pagePlan } from "./paging.js";
import { mergePatch } from "./patch.js";
import { isObject, type Verb } from "./request.js";
import { fieldError, validate, type JsonSchema } from "./validation.js";

export type Data = Record<string, unknown>;

export interface WriteCtx {
  accountId: string;
  auth: AuthContext;
  collection: Collection;
  /** The stored document being replaced or patched; absent on create. */
  existing?: StoredDoc;
  verb: "create" | "update" | "patch";
  /** The client's `data` as sent (before defaults), for flags such as `sync`. */
  input: Data;
}

export interface DocResourceSpec {
  /** The module name in the path: `/v2/accounts/{account_id}/<name>`. */
  name: string;
  collection: string;
  /** Schema of a document's data as stored (after `prepare`), pvt_ fields excluded. */
  schema: JsonSchema;
  verbs: { list?: boolean; create?: boolean; read?: boolean; update?: boolean; patch?: boolean; delete?: boolean };
  /** Writes (create, update, patch, delete) need an admin. */
  adminWrites?: boolean;
  /**
   * Refuses a caller before anything is read or written, for a permission beyond adminWrites
   * (training scenarios: admins and trainers only, reads included); throw an ApiError to refuse.
   */
  allow?(ctx: Ctx, auth: AuthContext): void | Promise<void>;
  /** Turn the client's data into the document to validate: defaults on create, aliases. */
  prepare?(data: Data, ctx: WriteCtx): Data | Promise<Data>;
  /** Checks a schema cannot express (uniqueness ...); throw an ApiError to refuse. */
  check?(data: Data, ctx: WriteCtx): void | Promise<void>;
  /** The private fields to store beside the validated data (hashes ...). */
  privateFields?(data: Data, ctx: WriteCtx): Data | Promise<Data>;
  /** Called after a successful write, outside the validation path (device sync ...). */
  afterWrite?(doc: StoredDoc, ctx: WriteCtx): void | Promise<void>;
  /**
   * Whose documents the caller may see and change (scheduled callbacks: an agent their own): the
   * predicate over a document's data; absent, every document of the account. Lists leave the
   * others out; a read, write or delete of one of them is refused with `hidden()` (404 by default).
   */
  visibleTo?(ctx: Ctx, auth: AuthContext): Promise<(data: Data) => boolean>;
  hidden?(id: string): ApiError;
  /** Refuse a delete by throwing (last admin ...); runs in the same turn as the delete itself. */
  beforeDelete?(doc: StoredDoc, ctx: DeleteCtx): void;
  afterDelete?(doc: StoredDoc, ctx: DeleteCtx): void | Promise<void>;
  /**
   * Answer a read differently (binary by Accept ...); undefined falls back to the document. At
   * once when it can, so that the read needs no promise.
   */
  readAs?(doc: StoredDoc, ctx: Ctx): Outcome | "sent" | undefined | Promise<Outcome | "sent" | undefined>;
  /**
   * List row shape; the full view by default. A function of the document alone: its text is made
   * once per stored document and served to every list that shows it.
   */
  row?(doc: StoredDoc): Data;
  /** Sort key of list rows (ascending by id by default). */
  sortKey?(doc: StoredDoc): string;
  sortDescending?: boolean;
  /**
   * Extra verbs on the collection path (id-less POST of blacklists, PATCH of webhooks); given the
   * resource's own operations so they share its validate-then-write path.
   */
  collectionVerbs?(ops: ResourceOps): Partial<Record<Verb, VerbSpec>>;
  summaries?: Partial<Record<"list" | "create" | "read" | "update" | "patch" | "delete", string>>;
}

export interface DeleteCtx {
  accountId: string;
  auth: AuthContext;
  collection: Collection;
}

export interface ResourceOps {
  /** The item POST (replace) of the document `id`, as if it were in the path. */
  update(ctx: Ctx, id: string): Promise<Outcome>;
}

export interface ResourceDeps extends EndpointDeps {
  collection(accountId: string, name: string): Promise<Collection>;
}

/** The document as the API shows it: its data without private fields, plus its id. */
export function view(doc: StoredDoc): Data {
  // One copy: an `id` in the data keeps its place and takes the document's id, as a spread would.
  const out = publicFields(doc.data);
  out.id = doc.id;
  return out;
}

/**
 * The JSON text of a row shape (a function of the document alone), made once per stored
 * document. The store never changes a document in place (every write stores a new one, and so
 * does opening, replay and recovery), so a text kept for the object is never stale.
 */
export class RowTexts {
  readonly #texts = new WeakMap<StoredDoc, string>();

  constructor(readonly row: (doc: StoredDoc) => Data) {}

  of(doc: StoredDoc): string {
    let text = this.#texts.get(doc);
    if (text === undefined) {
      text = JSON.stringify(this.row(doc));
      this.#texts.set(doc, text);
    }
    return text;
  }

  /**
   * The texts of the entries `from` to `to` (inclusive) of a list's block, joined by commas: a
   * slice of the block's texts joined once (at its second read, kept until the block changes, see
   * blockMemo), so a page's rows are read from one contiguous string rather than from 50
   * scattered ones.
   */
  run(block: readonly OrderedEntry<StoredDoc>[], from: number, to: number): string {
    const memo = blockMemo(block, this, (): BlockMemo => ({ read: false, joined: undefined }));
    let joined = memo.joined;
    if (joined === undefined) {
      // Joined at the block's second read since it last changed: a block written between each of
      // its reads is never joined only to be dropped (its first read costs what a page did before).
      if (!memo.read) {
        memo.read = true;
        let text = "";
        for (let i = from; i <= to; i++) {
          const entry = block[i];
          if (i > from) text += ",";
          text += entry === undefined ? "null" : this.of(entry.doc);
        }
        return text;
      }
      joined = memo.joined = this.#joined(block);
    }
    return joined.text.slice(joined.starts[from] ?? 0, (joined.starts[to + 1] ?? 0) - 1);
  }

  /** A block's row texts joined by commas, and where each starts (one past the end: length + 1). */
  #joined(block: readonly OrderedEntry<StoredDoc>[]): BlockTexts {
    const parts: string[] = new Array<string>(block.length);
    const starts = new Int32Array(block.length + 1);
    let at = 0;
    for (let i = 0; i < block.length; i++) {
      const entry = block[i];
      const text = entry === undefined ? "null" : this.of(entry.doc);
      parts[i] = text;
      starts[i] = at;
      at += text.length + 1;
    }
    starts[block.length] = at;
    // join makes one flat string: a page's slice of it is copied from contiguous memory.
    return { text: parts.join(","), starts };
  }
}

/** What RowTexts keeps per block: whether it was read since it changed, and its joined texts once read again. */
interface BlockMemo {
  read: boolean;
  joined: BlockTexts | undefined;
}

/** A block's joined row texts (RowTexts.run). */
interface BlockTexts {
  text: string;
  /** starts[k]: where entry k's text starts; starts[n] is the text's length + 1. */
  starts: Int32Array;
}

const viewTexts = new RowTexts(view);

/** The document's view as data serialized already (the text made once per stored document). */
export function viewText(doc: StoredDoc): JsonText {
  return new JsonText(viewTexts.of(doc), () => view(doc));
}

export function publicFields(data: Data): Data {
  const out: Data = {};
  for (const k of Object.keys(data)) if (!k.startsWith("pvt_")) out[k] = data[k];
  return out;
}

export function privateOf(data: Data): Data {
  const out: Data = {};
  for (const [k, v] of Object.entries(data)) if (k.startsWith("pvt_")) out[k] = v;
  return out;
}

/**
 * Fields the server owns: the document's metadata (kept apart from its data, see the store) and,
 * as Kazoo's public_fields has it, anything private (`pvt_`) or internal (`_`).
 */
const SERVER_FIELDS = new Set(["revision", "created", "modified", "attachments"]);

export function isServerField(key: string): boolean {
  return SERVER_FIELDS.has(key) || key.startsWith("pvt_") || key.startsWith("_");
}

/**
 * The envelope's data as an object (absent is empty), or a 400 naming `data`. Server-owned
 * fields a client sends, often echoed from a GET, are dropped as Kazoo drops them, never stored.
 */
export function dataObject(ctx: Ctx): Data {
  const data = ctx.req.data === undefined ? {} : ctx.req.data;
  if (!isObject(data)) throw new ApiError("validation_error", { data: { type: { message: "Value is not of type object", value: data } } });
  return clientFields(data);
}

/** The fields a client may set: server-owned ones left out. */
export function clientFields(data: Data): Data {
  const out: Data = {};
  for (const [k, v] of Object.entries(data)) if (!isServerField(k)) out[k] = v;
  return out;
}

export function notFound(id: string): ApiError {
  return new ApiError("bad_identifier", { cause: id });
}

export function registerDocResource(app: FastifyInstance, deps: ResourceDeps, spec: DocResourceSpec): void {
  const base = `/v2/accounts/:account_id/${spec.name}`;
  const tag = spec.name;
  const admin = spec.adminWrites ?? false;
  const sortKey = spec.sortKey ?? byId;
  // The collection at once when it is open (every request after its account's first).
  const collectionOf = (ctx: Ctx): Collection | Promise<Collection> => {
    const opening = deps.collection(ctx.params.account_id ?? "", spec.collection);
    return collectionIfOpen(opening) ?? opening;
  };
  const rowTexts = spec.row === undefined ? viewTexts : new RowTexts(spec.row);
  const listPages = new PageAnswers();
  const authOf = (ctx: Ctx): AuthContext => {
    if (!ctx.auth) throw new ApiError("invalid_credentials");
    return ctx.auth;
  };
  const allowed = (verbs: Partial<Record<Verb, VerbSpec>>): Partial<Record<Verb, VerbSpec>> => {
    const check = spec.allow;
    if (!check) return verbs;
    const out: Partial<Record<Verb, VerbSpec>> = {};
    for (const [verb, v] of Object.entries(verbs) as [Verb, VerbSpec][]) {
      out[verb] = {
        ...v,
        handler: async (ctx) => {
          await check(ctx, authOf(ctx));
          return v.handler(ctx);
        },
      };
    }
    return out;
  };

  const write = async (ctx: Ctx, verb: WriteCtx["verb"], existing?: StoredDoc): Promise<StoredDoc> => {
    const collection = await collectionOf(ctx);
    const input = dataObject(ctx);
    // The id names the document (in the path); it is never one of its fields.
    delete input.id;
    const wctx: WriteCtx = { accountId: ctx.params.account_id ?? "", auth: authOf(ctx), collection, existing, verb, input };
    // A document stored before server fields were dropped loses them at its next PATCH too.
    const start = verb === "patch" && existing ? mergePatch(clientFields(existing.data), input) : input;
    const prepared = spec.prepare ? await spec.prepare(structuredClone(start), wctx) : start;
    validate(spec.schema, prepared);
    await spec.check?.(prepared, wctx);
    const stored = {
      ...prepared,
      ...(existing ? privateOf(existing.data) : {}),
      ...(spec.privateFields ? await spec.privateFields(prepared, wctx) : {}),
    };
    let doc: StoredDoc;
    try {
      doc = existing ? await collection.update(existing.id, stored, { rev: ifMatch(ctx.request) }) : await collection.create(stored);
    } catch (err) {
      throw storeError(err);
    }
    await spec.afterWrite?.(doc, wctx);
    return doc;
  };

  const storedDoc = (collection: Collection, ctx: Ctx): StoredDoc => {
    const id = ctx.params.id ?? "";
    const doc = collection.get(id);
    if (!doc) throw notFound(id);
    return doc;
  };
  const existingDoc = async (ctx: Ctx): Promise<StoredDoc> => {
    const doc = storedDoc(await collectionOf(ctx), ctx);
    if (spec.visibleTo && !(await spec.visibleTo(ctx, authOf(ctx)))(doc.data)) throw spec.hidden?.(doc.id) ?? notFound(doc.id);
    return doc;
  };

  const ops: ResourceOps = {
    update: async (ctx, id) => docOutcome(await write({ ...ctx, params: { ...ctx.params, id } }, "update", await existingDoc({ ...ctx, params: { ...ctx.params, id } }))),
  };
  const listVerbs: Partial<Record<Verb, VerbSpec>> = { ...spec.collectionVerbs?.(ops) };
  if (spec.verbs.list) {
    listVerbs.GET = {
      summary: spec.summaries?.list ?? `List ${spec.name}`,
      handler: (ctx) => {
        const list = { sortKey, descending: spec.sortDescending, texts: rowTexts };
        const collection = collectionOf(ctx);
        const visibleTo = spec.visibleTo;
        if (!(collection instanceof Promise) && visibleTo === undefined) {
          return listPages.of(collection, ctx.req.query, (query, revision) => listPageText(collection, query, { ...list, revision }));
        }
        return (async () => {
          const opened = await collection;
          // A collection opened by this read (never written since the start): its page and
          // revision from the kept pages too, so that the first answer's ETag is the next ones'.
          if (visibleTo === undefined) return listPages.of(opened, ctx.req.query, (query, revision) => listPageText(opened, query, { ...list, revision }));
          const visible = await visibleTo(ctx, authOf(ctx));
          return listPageText(opened, ctx.req.query, { ...list, where: (doc: StoredDoc) => visible(doc.data) });
        })();
      },
    };
  }
  if (spec.verbs.create) {
    listVerbs.PUT = {
      summary: spec.summaries?.create ?? `Create one of ${spec.name}`,
      admin,
      body: spec.schema,
      handler: async (ctx) => {
        const doc = await write(ctx, "create");
        return created(ctx, doc, `/v2/accounts/${ctx.params.account_id ?? ""}/${spec.name}/${doc.id}`);
      },
    };
  }
  if (Object.keys(listVerbs).length) registerEndpoint(app, deps, { path: base, access: "account", tag, verbs: allowed(listVerbs) });

  const itemVerbs: Partial<Record<Verb, VerbSpec>> = {};
  if (spec.verbs.read) {
    itemVerbs.GET = {
      summary: spec.summaries?.read ?? `Read one of ${spec.name}`,
      handler: (ctx) => {
        const collection = collectionOf(ctx);
        const readAs = spec.readAs;
        if (collection instanceof Promise || spec.visibleTo !== undefined) {
          return (async () => {
            const doc = await existingDoc(ctx);
            return (await readAs?.(doc, ctx)) ?? docTextOutcome(doc);
          })();
        }
        const doc = storedDoc(collection, ctx);
        const read = readAs?.(doc, ctx);
        if (read instanceof Promise) return read.then((answer) => answer ?? docTextOutcome(doc));
        return read ?? docTextOutcome(doc);
      },
    };
  }
  if (spec.verbs.update) {
    itemVerbs.POST = {
      summary: spec.summaries?.update ?? `Replace one of ${spec.name}`,
      admin,
      body: spec.schema,
      handler: async (ctx) => docOutcome(await write(ctx, "update", await existingDoc(ctx))),
    };
  }
  if (spec.verbs.patch) {
    itemVerbs.PATCH = {
      summary: spec.summaries?.patch ?? `Change some fields of one of ${spec.name}`,
      admin,
      handler: async (ctx) => docOutcome(await write(ctx, "patch", await existingDoc(ctx))),
    };
  }
  if (spec.verbs.delete) {
    itemVerbs.DELETE = {
      summary: spec.summaries?.delete ?? `Delete one of ${spec.name}`,
      admin,
      handler: async (ctx) => {
        const doc = await existingDoc(ctx);
        const collection = await collectionOf(ctx);
        const dctx: DeleteCtx = { accountId: ctx.params.account_id ?? "", auth: authOf(ctx), collection };
        let deleted: StoredDoc;
        try {
          spec.beforeDelete?.(doc, dctx);
          deleted = await collection.delete(doc.id, { rev: ifMatch(ctx.request) });
        } catch (err) {
          throw storeError(err);
        }
        await spec.afterDelete?.(deleted, dctx);
        return docOutcome(deleted);
      },
    };
  }
  if (Object.keys(itemVerbs).length) registerEndpoint(app, deps, { path: `${base}/:id`, access: "account", tag, verbs: allowed(itemVerbs) });
}

/** Each stored document's read answer, made at its first read (the store replaces a document on every write). */
const docOutcomes = new WeakMap<StoredDoc, Outcome>();

/**
 * A read of one document: its view, serialized once per stored revision, in an answer made once
 * per stored document (shared by every read of it, so nothing may change it).
 */
function docTextOutcome(doc: StoredDoc): Outcome {
  let outcome = docOutcomes.get(doc);
  if (outcome === undefined) {
    outcome = { data: viewText(doc), revision: doc.rev, etag: etagOf(doc.rev) };
    docOutcomes.set(doc, outcome);
  }
  return outcome;
}

export function byId(doc: StoredDoc): string {
  return doc.id;
}

/**
 * One page of a collection as a list answer: the query's filters (and an optional `where`),
 * sorted by `sortKey`, paged, each document shown as `row`. The page walks the collection's list
 * order from its start key and stops at the row after the page; a `filter_KEY` on a field with an
 * equality index walks only the documents that index holds for the value. The answer is the one
 * a sort and filter of the whole collection gives (test/unit/list-pages.test.ts compares them).
 */
export function listOutcome(collection: Collection, ctx: Ctx, options: ListOptions): Outcome {
  return listPage(collection, ctx.req.query, options);
}

export interface ListOptions {
  sortKey?: (doc: StoredDoc) => string;
  descending?: boolean;
  row: (doc: StoredDoc) => Data;
  where?: (doc: StoredDoc) => boolean;
  /**
   * A field `where` asks to equal a value: an equality index on it (if the collection has one)
   * narrows the walk as `filter_<field>=<value>` would. `where` must match only documents that
   * filter matches; it is still applied to each.
   */
  equal?: { field: string; value: string };
}

/** listOutcome's answer to a query string. */
export function listPage(collection: Collection, query: Record<string, string>, options: ListOptions): Outcome {
  const { rows, paging } = pageOf(collection, query, options);
  return { data: rows.map(options.row), paging, revision: rowsRevision(rows) };
}

/**
 * listPage's answer with each row's text made once per stored document (`texts`, a row shape of
 * the document alone): the page's data is the rows' texts joined, byte for byte what serializing
 * the rows gives. Its revision is `revision` when given (a page's version revision, see
 * PageAnswers), else the md5 of the rows' revisions.
 */
export function listPageText(
  collection: Collection,
  query: Record<string, string>,
  options: Omit<ListOptions, "row"> & { texts: RowTexts; revision?: string },
): Outcome {
  const { rows: walked, paging, runs } = pageOf(collection, query, options, true);
  const texts = options.texts;
  // A placed page's rows are read from its runs only when asked (CSV, pretty print, a rows' revision).
  const rows = (): StoredDoc[] => walked ?? docsOfRuns(runs ?? []);
  let text = "[";
  if (runs !== undefined) {
    // The rows lie side by side in one or two blocks (nearly always): a slice of each block's texts.
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r];
      if (run === undefined) continue;
      if (r > 0) text += ",";
      text += texts.run(run.block, run.from, run.to);
    }
  } else {
    // One string grown row by row (no array of the texts, no join's second pass).
    const list = rows();
    for (let i = 0; i < list.length; i++) {
      const doc = list[i];
      if (doc === undefined) continue;
      if (i > 0) text += ",";
      text += texts.of(doc);
    }
  }
  text += "]";
  return { data: new JsonText(text, () => rows().map(texts.row)), paging, revision: options.revision ?? rowsRevision(rows()) };
}

/** The documents of a page's runs, in order. */
function docsOfRuns(runs: readonly Run[]): StoredDoc[] {
  const docs: StoredDoc[] = [];
  for (const run of runs) {
    for (let i = run.from; i <= run.to; i++) {
      const entry = run.block[i];
      if (entry !== undefined) docs.push(entry.doc);
    }
  }
  return docs;
}

/** A page's revision from its content: the md5 of its rows' revisions (crossbar's md5 of the answer, in effect). */
function rowsRevision(rows: readonly StoredDoc[]): string {
  return contentRevision(rows.map((d) => d.rev));
}

/** Pages kept per collection at most; the whole set goes when full (a new version empties it too). */
export const PAGES_KEPT = 32;
/** Characters of page text kept per collection at most (a `paginate=false` list can be the whole collection). */
export const PAGE_CHARS_KEPT = 1 << 20;

/**
 * A list's answers kept per collection and query while the collection's `version` stands: the
 * next request for the same page (same query string) is answered from them, with no walk or
 * join. Only for a list whose answer is a function of the collection and the query alone (no
 * caller-dependent `where`); the `Outcome` is shared, so nothing may change it. Bounded per
 * collection in pages and in characters; a page larger than the character bound is not kept.
 * A page is kept at its second ask: the first only notes its query (see `of`).
 *
 * Also each page's revision (and ETag), made without reading its rows: the md5 of the collection
 * object's epoch (Collection.epoch: random, another at every start and every reopening), its
 * version and the query. Equal for two answers only when they
 * are the same collection object at the same version asked the same query, which answer alike;
 * any write, delete or restart gives another (see docs/design-notes.md, "Session 16").
 */
export class PageAnswers {
  readonly #byCollection = new WeakMap<Collection, { version: number; chars: number; pages: Map<string, Outcome>; asked: Set<string> }>();

  of(collection: Collection, query: Record<string, string>, make: (query: Record<string, string>, revision: string) => Outcome): Outcome {
    let kept = this.#byCollection.get(collection);
    if (kept === undefined) {
      kept = { version: collection.version, chars: 0, pages: new Map(), asked: new Set() };
      this.#byCollection.set(collection, kept);
    } else if (kept.version !== collection.version) {
      kept.version = collection.version;
      kept.chars = 0;
      kept.pages = new Map();
      kept.asked = new Set();
    }
    const key = queryKey(query);
    const known = kept.pages.get(key);
    if (known !== undefined) return known;
    const outcome = make(query, hash("md5", `${collection.epoch}:${kept.version}:${key}`, "hex"));
    const chars = outcome.data instanceof JsonText ? outcome.data.text.length : PAGE_CHARS_KEPT + 1;
    if (chars > PAGE_CHARS_KEPT) return outcome;
    // Kept at its second ask while the collection stands (the first only notes the query, among
    // at most PAGES_KEPT noted): pages asked once each, more of them than are kept (a walk
    // through a long list), would otherwise each be kept only to be dropped 32 pages later, having
    // lived long enough to be promoted to V8's old space, whose collections then cost more than
    // the page itself (session 18: a fresh page's CPU 0.67x with this rule).
    if (!kept.asked.has(key)) {
      if (kept.asked.size >= PAGES_KEPT) kept.asked.clear();
      kept.asked.add(key);
      return outcome;
    }
    // Kept: its ETag made now, not at every answer of it.
    outcome.etag = etagOf(outcome.revision);
    if (kept.pages.size >= PAGES_KEPT || kept.chars + chars > PAGE_CHARS_KEPT) {
      kept.pages.clear();
      kept.chars = 0;
    }
    kept.pages.set(key, outcome);
    kept.chars += chars;
    return outcome;
  }
}

/** A query's keys and values as one string: equal strings only for equal queries (of the same key order). */
function queryKey(query: Record<string, string>): string {
  return JSON.stringify(query);
}

/** Entries `from` to `to` (inclusive) of a list's block: rows of a page side by side. */
type Run = PlacedRun<StoredDoc>;

/**
 * The documents of one page of a list and its paging keys; with `placed`, also the page's rows
 * as runs of their list's blocks when every row has a place in one (an ascending walk of one list
 * with no filter left to test: the rows are then side by side in the list). A paged one of those
 * is found without reading its rows' entries (Collection.placedPage), and then has no `rows`:
 * they are its runs' documents.
 */
function pageOf(
  collection: Collection,
  query: Record<string, string>,
  options: Omit<ListOptions, "row">,
  placed: true,
): { rows?: StoredDoc[]; paging: Outcome["paging"]; runs?: Run[] };
function pageOf(collection: Collection, query: Record<string, string>, options: Omit<ListOptions, "row">): { rows: StoredDoc[]; paging: Outcome["paging"] };
function pageOf(
  collection: Collection,
  query: Record<string, string>,
  options: Omit<ListOptions, "row">,
  placed = false,
): { rows?: StoredDoc[]; paging: Outcome["paging"]; runs?: Run[] } {
  const sortKey = options.sortKey ?? byId;
  const { equal } = cheapestIndex(collection, sortKey, [...equalityFilters(query), ...(options.equal ? [equalityFilter(options.equal.field, options.equal.value)] : [])]);
  // The filter the index answers is not tested again: its documents are exactly the walk's.
  // (The filters' refusals come before the paging's, as they did.)
  const test = queryTest(query, equal?.param);
  const plan = pagePlan(options.descending ?? false, query);
  const where = options.where;
  const builder = new PageBuilder<StoredDoc>(plan);
  const walk = {
    descending: plan.descending,
    ...(plan.size === undefined || plan.startKey === undefined ? {} : { from: plan.startKey }),
    ...(equal === undefined ? {} : { equal }),
  };
  if (test === undefined && where === undefined && placed && !plan.descending && plan.size !== undefined) {
    const found = collection.placedPage(sortKey, walk, plan.size);
    if (found !== undefined) {
      // PageBuilder's paging, in its key order: the rows' count, the first row's key, the next one's.
      const paging: Paging = { page_size: found.count };
      if (found.firstKey !== undefined) paging.start_key = found.firstKey;
      if (found.nextKey !== undefined) paging.next_start_key = found.nextKey;
      return { paging, runs: found.runs };
    }
  }
  if (test === undefined && where === undefined && placed && !plan.descending) {
    let runs: Run[] | undefined = [];
    let last: Run | undefined;
    collection.visitPlaced(sortKey, walk, (doc, key, block, i) => {
      if (!builder.offer(doc, key)) return false;
      if (runs === undefined) return true;
      if (block === undefined) runs = undefined;
      else if (last !== undefined && last.block === block && last.to === i - 1) last.to = i;
      else runs.push((last = { block, from: i, to: i }));
      return true;
    });
    const page = builder.page();
    return runs === undefined ? { rows: page.rows, paging: page.paging } : { rows: page.rows, paging: page.paging, runs };
  }
  if (test === undefined && where === undefined) collection.visit(sortKey, walk, (doc, key) => builder.offer(doc, key));
  else collection.visit(sortKey, walk, (doc, key) => (test !== undefined && !test(doc)) || (where !== undefined && !where(doc)) || builder.offer(doc, key));
  const page = builder.page();
  return { rows: page.rows, paging: page.paging };
}

/** Of the query's equality filters with an index, the one whose documents are fewest. */
function cheapestIndex(collection: Collection, sortKey: (doc: StoredDoc) => string, filters: EqualityFilter[]): { equal?: EqualityFilter } {
  let best: { equal: EqualityFilter; count: number } | undefined;
  for (const equal of filters) {
    if (!collection.hasEqualityIndex(equal.field)) continue;
    const count = collection.equalCount(sortKey, equal);
    if (best === undefined || count < best.count) best = { equal, count };
  }
  return best === undefined ? {} : { equal: best.equal };
}


export function docOutcome(doc: StoredDoc): Outcome {
  return { data: view(doc), revision: doc.rev };
}

export function created(_ctx: Ctx, doc: StoredDoc, location: string): Outcome {
  return { data: view(doc), revision: doc.rev, status: 201, headers: { Location: location } };
}

/** Store failures in the API's words: a stale revision is 409, a vanished document 404. */
export function storeError(err: unknown): unknown {
  if (err instanceof StoreConflictError) return new ApiError("datastore_conflict", { cause: err.docId, reason: err.message });
  if (err instanceof StoreNotFoundError) return notFound(err.docId);
  // A concurrent write took the value between the resource's check and its own write.
  if (err instanceof StoreUniqueError) return fieldError(err.field, "unique", err.description, err.key);
  return err;
}

export type { Handler };
