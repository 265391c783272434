// A collection's write-ahead journal: numbered files of JSON lines beside the collection file.
// A change is acknowledged once its line is appended (one write call per batch, in order); the
// collection file is rewritten later, and the generations that neither it nor its `.bak` copy
// needs are then removed. A durable line is also synced to the disk before it is acknowledged
// (it must outlive a power cut, not only a killed process); the sync covers its whole batch.
import { open, readFile, readdir, rm, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { FILE_MODE } from "./permissions.js";

interface LineItem {
  kind: "line";
  text: string;
  durable: boolean;
  resolve: () => void;
  reject: (err: Error) => void;
}

interface RotateItem {
  kind: "rotate";
  generation: number;
  resolve: () => void;
}

export interface Replayed {
  /** Parsed lines, oldest first. */
  lines: unknown[];
  /** Lines that could not be parsed: a torn last line from a crash, never acknowledged. */
  torn: number;
  /** Whole lines (newline-ended) that could not be parsed: damage, not a crash; skipped. */
  unreadable: number;
  /** The generations read, oldest first. */
  generations: number[];
}

export class Journal {
  readonly #dir: string;
  readonly #base: string;
  readonly #queue: (LineItem | RotateItem)[] = [];
  /** The newest generation handed out. */
  #generation = 0;
  /** The generation the pump is appending to; it catches up with #generation at each marker. */
  #writing = 0;
  #pumping = false;
  /**
   * The generation being appended to, kept open between batches (opening and closing the file
   * per append cost more than the write); closed at each rotation, so a snapshot leaves none open.
   */
  #handle: { generation: number; file: FileHandle } | undefined;

  constructor(collectionFile: string) {
    this.#dir = dirname(collectionFile);
    this.#base = basename(collectionFile).replace(/\.json$/, "");
  }

  get generation(): number {
    return this.#generation;
  }

  /**
   * Read every generation from `from` on, delete those before `keepFrom` (no copy of the
   * collection file needs them), and start appending to a new generation (never after a possibly
   * torn line).
   */
  async open(from: number, keepFrom = from): Promise<Replayed> {
    const generations = await this.#generations();
    const lines: unknown[] = [];
    const read: number[] = [];
    let torn = 0;
    let unreadable = 0;
    for (const g of generations) {
      if (g < Math.min(from, keepFrom)) {
        await rm(this.#path(g), { force: true });
        continue;
      }
      if (g < from) continue;
      read.push(g);
      const text = await readFile(this.#path(g), "utf8");
      const raws = text.split("\n");
      // A crash can only cut the last line short: appends after a restart go to a new generation.
      raws.forEach((raw, i) => {
        if (raw === "") return;
        try {
          lines.push(JSON.parse(raw));
        } catch {
          if (i === raws.length - 1) torn++;
          else unreadable++;
        }
      });
    }
    this.#generation = Math.max(from, ...generations) + 1;
    this.#writing = this.#generation;
    return { lines, torn, unreadable, generations: read };
  }

  /** Append one line; resolves once it is written (and synced to the disk when `durable`). */
  append(line: string, durable = false): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ kind: "line", text: `${line}\n`, durable, resolve, reject });
      void this.#pump();
    });
  }

  /**
   * Lines appended after this call go to a new generation, whose number is returned at once;
   * `done` resolves once every earlier line is written.
   */
  rotate(): { generation: number; done: Promise<void> } {
    const generation = this.#generation + 1;
    this.#generation = generation;
    const done = new Promise<void>((resolve) => {
      this.#queue.push({ kind: "rotate", generation, resolve });
    });
    void this.#pump();
    return { generation, done };
  }

  /** Delete the generations before `generation` (the collection file now covers them). */
  async removeBefore(generation: number): Promise<void> {
    for (const g of await this.#generations()) if (g < generation) await rm(this.#path(g), { force: true });
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0) {
        const head = this.#queue[0];
        if (head?.kind === "rotate") {
          // Lines queued before the marker went to the old generation; later ones go here.
          this.#queue.shift();
          await this.#closeHandle();
          this.#writing = head.generation;
          head.resolve();
          continue;
        }
        const batch: LineItem[] = [];
        while (this.#queue[0]?.kind === "line") batch.push(this.#queue.shift() as LineItem);
        try {
          const file = await this.#fileFor(this.#writing);
          await file.appendFile(batch.map((b) => b.text).join(""));
          if (batch.some((b) => b.durable)) await file.datasync();
          for (const b of batch) b.resolve();
        } catch (err) {
          // The next batch opens the file afresh.
          await this.#closeHandle();
          for (const b of batch) b.reject(err as Error);
        }
      }
    } finally {
      this.#pumping = false;
    }
  }

  async #fileFor(generation: number): Promise<FileHandle> {
    if (this.#handle?.generation === generation) return this.#handle.file;
    await this.#closeHandle();
    const file = await open(this.#path(generation), "a", FILE_MODE);
    this.#handle = { generation, file };
    return file;
  }

  async #closeHandle(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.file.close().catch(() => undefined);
  }

  async #generations(): Promise<number[]> {
    const prefix = `${this.#base}.`;
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.startsWith(prefix) && n.endsWith(".journal"))
      .map((n) => Number(n.slice(prefix.length, -".journal".length)))
      .filter((g) => Number.isInteger(g) && g >= 0)
      .sort((a, b) => a - b);
  }

  #path(generation: number): string {
    return join(this.#dir, `${this.#base}.${generation}.journal`);
  }
}
