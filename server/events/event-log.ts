// The append-only event log: every bus event as one JSON line, in size-capped files that rotate
// (oldest dropped), so a client that reconnects can catch up with `since=<seq>` and a trainer can
// replay a session. The newest events are also kept in memory for fast catch-up.
import { appendFile, mkdir, readFile, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { BusEvent } from "./bus.js";

export interface EventLogOptions {
  dir: string;
  /** Bytes per file before rotating. */
  fileBytes?: number;
  /** Files kept; older ones are deleted. */
  files?: number;
  /** Events kept in memory. */
  memory?: number;
}

const FILE = /^events-(\d+)\.jsonl$/;
const MAX_PENDING = 100_000;

export class EventLog {
  readonly #dir: string;
  readonly #fileBytes: number;
  readonly #files: number;
  readonly #memory: number;
  readonly #recent: BusEvent[] = [];
  #current = 0;
  #currentBytes = 0;
  #pending: string[] = [];
  #writing: Promise<void> | null = null;
  /** Lines appended and lines on disk: a flush waits for its own lines, not for a quiet moment. */
  #appended = 0;
  #written = 0;
  #flushes: { upTo: number; resolve: () => void }[] = [];

  private constructor(options: EventLogOptions) {
    this.#dir = options.dir;
    this.#fileBytes = options.fileBytes ?? 8 * 1024 * 1024;
    this.#files = options.files ?? 8;
    this.#memory = options.memory ?? 10_000;
  }

  /** Opens the log and tells the last sequence number written before. */
  static async open(options: EventLogOptions): Promise<{ log: EventLog; lastSeq: number }> {
    const log = new EventLog(options);
    await mkdir(options.dir, { recursive: true });
    const numbers = await log.#numbers();
    log.#current = numbers.at(-1) ?? 1;
    let lastSeq = 0;
    // The newest file's complete lines give the last sequence; a torn last line is skipped.
    for (const n of [...numbers].reverse()) {
      const lines = (await readFile(log.#path(n), "utf8")).split("\n").filter(Boolean);
      for (let i = lines.length - 1; i >= 0 && lastSeq === 0; i--) {
        try {
          lastSeq = (JSON.parse(lines[i] ?? "") as BusEvent).seq;
        } catch {
          // torn line from a crash
        }
      }
      if (lastSeq) break;
    }
    log.#currentBytes = await stat(log.#path(log.#current)).then(
      (s) => s.size,
      () => 0,
    );
    return { log, lastSeq };
  }

  append(event: BusEvent): void {
    this.#recent.push(event);
    if (this.#recent.length > this.#memory) this.#recent.splice(0, this.#recent.length - this.#memory);
    this.#pending.push(`${JSON.stringify(event)}\n`);
    this.#appended++;
    this.#writing ??= this.#drain();
  }

  /** Resolves once everything appended so far is on disk. */
  async flush(): Promise<void> {
    // Waiting for the writer to go idle would never end while events keep coming.
    if (this.#written >= this.#appended || !this.#writing) return;
    const upTo = this.#appended;
    await new Promise<void>((resolve) => this.#flushes.push({ upTo, resolve }));
  }

  /**
   * Events of one account with seq > since, oldest first, at most `limit`; `complete` is false when
   * older events than the log still holds were asked for.
   */
  async since(accountId: string, since: number, limit: number): Promise<{ events: BusEvent[]; complete: boolean }> {
    const oldestInMemory = this.#recent[0]?.seq ?? Number.POSITIVE_INFINITY;
    let pool: BusEvent[];
    if (since + 1 >= oldestInMemory) {
      pool = this.#recent;
    } else {
      await this.flush();
      pool = await this.#readAll();
    }
    const complete = pool.length === 0 || (pool[0]?.seq ?? 0) <= since + 1;
    const events: BusEvent[] = [];
    for (const e of pool) {
      if (e.seq > since && e.account_id === accountId) {
        events.push(e);
        if (events.length >= limit) break;
      }
    }
    return { events, complete };
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const lines = this.#pending;
        this.#pending = [];
        // Fill the current file up to its cap, rotate, go on: one write per file touched.
        let batch = "";
        let batchBytes = 0;
        for (const line of lines) {
          const bytes = Buffer.byteLength(line);
          if (this.#currentBytes + batchBytes > 0 && this.#currentBytes + batchBytes + bytes > this.#fileBytes) {
            if (batch) await appendFile(this.#path(this.#current), batch);
            await this.#rotate();
            batch = "";
            batchBytes = 0;
          }
          batch += line;
          batchBytes += bytes;
        }
        try {
          if (batch) await appendFile(this.#path(this.#current), batch);
        } catch {
          // A full or failing disk: keep the lines (bounded) for the next append to retry.
          this.#pending = lines.slice(-MAX_PENDING + this.#pending.length).concat(this.#pending);
          return;
        }
        this.#currentBytes += batchBytes;
        this.#written += lines.length;
        this.#settleFlushes(false);
      }
    } finally {
      this.#writing = null;
      this.#settleFlushes(true);
    }
  }

  #settleFlushes(all: boolean): void {
    const due = this.#flushes.filter((f) => all || f.upTo <= this.#written);
    if (due.length === 0) return;
    this.#flushes = this.#flushes.filter((f) => !due.includes(f));
    for (const f of due) f.resolve();
  }

  async #rotate(): Promise<void> {
    this.#current++;
    this.#currentBytes = 0;
    const numbers = await this.#numbers();
    for (const n of numbers.slice(0, Math.max(0, numbers.length - (this.#files - 1)))) await rm(this.#path(n), { force: true });
  }

  async #readAll(): Promise<BusEvent[]> {
    const out: BusEvent[] = [];
    for (const n of await this.#numbers()) {
      const text = await readFile(this.#path(n), "utf8").catch(() => "");
      for (const line of text.split("\n")) {
        if (!line) continue;
        try {
          out.push(JSON.parse(line) as BusEvent);
        } catch {
          // torn line from a crash
        }
      }
    }
    return out;
  }

  async #numbers(): Promise<number[]> {
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    return names
      .map((n) => FILE.exec(n)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  #path(n: number): string {
    return join(this.#dir, `events-${n}.jsonl`);
  }
}
