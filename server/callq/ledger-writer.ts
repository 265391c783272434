// Writes recipient states to the ledger behind the engine's steps: a recipient changed several
// times while a write is under way is written once more, with its latest state.
import type { CallqLogger, RecipientLedger } from "./ports.js";
import type { Recipient } from "./recipient.js";

export class LedgerWriter {
  readonly #dirty = new Set<Recipient>();
  #flushing: Promise<void> | undefined;

  constructor(
    private readonly ledger: RecipientLedger,
    private readonly logger: CallqLogger,
  ) {}

  save(r: Recipient): void {
    this.#dirty.add(r);
    this.#flushing ??= this.#flush().finally(() => (this.#flushing = undefined));
  }

  /** Resolves once every state saved so far has been written (or its failure logged). */
  async flushed(): Promise<void> {
    await this.#flushing;
  }

  async #flush(): Promise<void> {
    while (this.#dirty.size > 0) {
      const batch = [...this.#dirty];
      this.#dirty.clear();
      await Promise.all(batch.map((r) => this.#write(r)));
    }
  }

  async #write(r: Recipient): Promise<void> {
    try {
      await this.ledger.save(r.accountId, r.id, r.saved());
    } catch (err) {
      this.logger.warn({ err, recipient_id: r.id }, "callq: saving a recipient's state failed");
    }
  }
}
