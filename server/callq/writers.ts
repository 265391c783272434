// The engine's writes behind its steps: the recipients' states, the queues' 15-minute intervals and
// the recipients' days. Each goes through one coalescing writer: an item changed again while a write
// is under way is written once more with its latest figures, never twice at once; a failed write is
// logged with the item's ids and never stops the engine.
import type { CallqLogger, IntervalLedger, RecipientDayLedger, RecipientLedger } from "./ports.js";
import type { Queue } from "./queue.js";
import type { Recipient } from "./recipient.js";

export class CoalescingWriter<T> {
  readonly #dirty = new Set<T>();
  #flushing: Promise<void> | undefined;

  /**
   * `writes` starts the writes an item's changes need now (each already logging its own failure);
   * with `afterTurn`, writing waits one turn so that the changes of one step go out together.
   */
  constructor(
    private readonly writes: (item: T) => Promise<void>[],
    private readonly afterTurn: boolean,
  ) {}

  save(item: T): void {
    this.#dirty.add(item);
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
  }

  /** Resolves once every change saved so far has been written (or its failure logged). */
  async flushed(): Promise<void> {
    await this.#flushing;
  }

  async #flush(): Promise<void> {
    if (this.afterTurn) await Promise.resolve();
    while (this.#dirty.size > 0) {
      const batch = [...this.#dirty];
      this.#dirty.clear();
      await Promise.all(batch.flatMap((item) => this.writes(item)));
    }
  }
}

async function logged(write: Promise<void>, logger: CallqLogger, fields: Record<string, unknown>, message: string): Promise<void> {
  try {
    await write;
  } catch (err) {
    logger.warn({ err, ...fields }, message);
  }
}

/** Recipient states, written as soon as they change. */
export function recipientStateWriter(ledger: RecipientLedger, logger: CallqLogger): CoalescingWriter<Recipient> {
  return new CoalescingWriter((r) => [logged(ledger.save(r.accountId, r.id, r.saved()), logger, { recipient_id: r.id }, "callq: saving a recipient's state failed")], false);
}

/** A queue's changed intervals, one turn later (an answer and its interval's counts together). */
export function intervalWriter(ledger: IntervalLedger, logger: CallqLogger): CoalescingWriter<Queue> {
  return new CoalescingWriter(
    (queue) =>
      queue.stats
        .takeChanged()
        .map((interval) => logged(ledger.save(queue.accountId, interval), logger, { queue_id: queue.id, interval_start: interval.start }, "callq: saving a queue's interval failed")),
    true,
  );
}

/** A recipient's changed days, one turn later (a call's end and its state together). */
export function dayWriter(ledger: RecipientDayLedger, logger: CallqLogger): CoalescingWriter<Recipient> {
  return new CoalescingWriter(
    (r) => r.days.takeChanged().map((day) => logged(ledger.save(r.accountId, day), logger, { recipient_id: r.id, day: day.day }, "callq: saving a recipient's day failed")),
    true,
  );
}
