// A collection's JSON file as a lowdb adapter that keeps the last good copy. Each rewrite goes
// to a temp file (owner-only, synced), the current file becomes `<file>.bak` (a hard link, so
// the file itself is never missing), and the temp file is renamed over it. A damaged file (cut
// short, emptied, overwritten with garbage) is then never the only copy.
import { copyFile, link, open, readFile, rename, rm, stat } from "node:fs/promises";
import type { Adapter } from "lowdb";
import { FILE_MODE } from "./permissions.js";

export interface FileShape {
  docs: unknown[];
  /** The first journal generation not yet folded into `docs`. */
  journal_gen?: number;
  /** The first journal generation the `.bak` copy needs: older ones may be deleted. */
  kept_gen?: number;
}

/** What reading one copy found. */
export type ReadResult = { state: "ok"; shape: FileShape } | { state: "missing" } | { state: "damaged"; reason: string };

export class CollectionFile implements Adapter<FileShape> {
  readonly file: string;
  readonly backup: string;
  readonly #temp: string;

  constructor(file: string) {
    this.file = file;
    this.backup = `${file}.bak`;
    this.#temp = `${file}.tmp`;
  }

  /** Reads the file; a damaged one throws (the collection decides how to recover). */
  async read(): Promise<FileShape | null> {
    const result = await readCopy(this.file);
    if (result.state === "damaged") throw new Error(`${this.file}: ${result.reason}`);
    return result.state === "ok" ? result.shape : null;
  }

  write(data: FileShape): Promise<void> {
    // Serialised now, so the caller may drop `data` as soon as this returns.
    return this.#replace(JSON.stringify(data));
  }

  async #replace(text: string): Promise<void> {
    const temp = await open(this.#temp, "w", FILE_MODE);
    try {
      await temp.writeFile(text);
      // On disk before the rename: a power cut must not leave a renamed but empty file.
      await temp.sync();
    } finally {
      await temp.close();
    }
    await keepCopy(this.file, this.backup);
    await rename(this.#temp, this.file);
  }
}

/** Reads and checks one copy of a collection file. */
export async function readCopy(path: string): Promise<ReadResult> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { state: "missing" };
    throw err;
  }
  if (text.trim() === "") return { state: "damaged", reason: "the file is empty" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { state: "damaged", reason: `not JSON (${(err as Error).message})` };
  }
  if (typeof parsed !== "object" || parsed === null || !Array.isArray((parsed as FileShape).docs)) {
    return { state: "damaged", reason: "not a collection file (no docs list)" };
  }
  const shape = parsed as FileShape;
  if (!shape.docs.every(isStoredDoc)) return { state: "damaged", reason: "a document without an id" };
  return { state: "ok", shape };
}

function isStoredDoc(doc: unknown): boolean {
  return typeof doc === "object" && doc !== null && typeof (doc as { id?: unknown }).id === "string";
}

/**
 * Makes `backup` the current `file`. Without a file (the first write, or one set aside as
 * damaged) the backup stays as it is: it is still the last good copy.
 */
async function keepCopy(file: string, backup: string): Promise<void> {
  try {
    await stat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  await rm(backup, { force: true });
  try {
    await link(file, backup);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    // A file system without hard links: a copy does as well, a little slower.
    if (code === "EPERM" || code === "ENOTSUP" || code === "EXDEV") await copyFile(file, backup);
    else throw err;
  }
}
