// Hands the queues' changed intervals to the interval ledger behind the engine's counts: a queue
// counted again while a write is under way is written once more, with its latest figures.
import type { CallqLogger, IntervalLedger } from "./ports.js";
import type { Queue } from "./queue.js";

export class IntervalWriter {
  readonly #dirty = new Set<Queue>();
  #flushing: Promise<void> | undefined;

  constructor(
    private readonly ledger: IntervalLedger,
    private readonly logger: CallqLogger,
  ) {}

  save(queue: Queue): void {
    this.#dirty.add(queue);
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
  }

  /** Resolves once every interval changed so far has been written (or its failure logged). */
  async flushed(): Promise<void> {
    await this.#flushing;
  }

  async #flush(): Promise<void> {
    // One turn later: the counts of one step (an answer and its interval) go out together.
    await Promise.resolve();
    while (this.#dirty.size > 0) {
      const batch = [...this.#dirty];
      this.#dirty.clear();
      await Promise.all(batch.flatMap((queue) => queue.stats.takeChanged().map((interval) => this.#write(queue, interval))));
    }
  }

  async #write(queue: Queue, interval: Parameters<IntervalLedger["save"]>[1]): Promise<void> {
    try {
      await this.ledger.save(queue.accountId, interval);
    } catch (err) {
      this.logger.warn({ err, queue_id: queue.id, interval_start: interval.start }, "callq: saving a queue's interval failed");
    }
  }
}
