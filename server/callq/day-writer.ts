// Hands the recipients' changed days to the day ledger behind the engine's counts: a recipient
// counted again while a write is under way is written once more, with their latest figures.
import type { CallqLogger, RecipientDayLedger } from "./ports.js";
import type { Recipient } from "./recipient.js";
import type { RecipientDay } from "./recipient-day.js";

export class DayWriter {
  readonly #dirty = new Set<Recipient>();
  #flushing: Promise<void> | undefined;

  constructor(
    private readonly ledger: RecipientDayLedger,
    private readonly logger: CallqLogger,
  ) {}

  save(r: Recipient): void {
    this.#dirty.add(r);
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
  }

  /** Resolves once every day changed so far has been written (or its failure logged). */
  async flushed(): Promise<void> {
    await this.#flushing;
  }

  async #flush(): Promise<void> {
    // One turn later: the counts of one step (a call's end and its state) go out together.
    await Promise.resolve();
    while (this.#dirty.size > 0) {
      const batch = [...this.#dirty];
      this.#dirty.clear();
      await Promise.all(batch.flatMap((r) => r.days.takeChanged().map((day) => this.#write(r, day))));
    }
  }

  async #write(r: Recipient, day: RecipientDay): Promise<void> {
    try {
      await this.ledger.save(r.accountId, day);
    } catch (err) {
      this.logger.warn({ err, recipient_id: r.id, day: day.day }, "callq: saving a recipient's day failed");
    }
  }
}
