// Work the texting layer starts outside a request (relay sends, carrier steps, store writes
// after an event): kept so a stop can wait for it, and its failure logged, never thrown.

export class BackgroundWork {
  readonly #running = new Set<Promise<unknown>>();

  constructor(
    private readonly what: string,
    private readonly logger?: { warn(obj: object, msg: string): void },
  ) {}

  track(work: Promise<unknown>): void {
    const tracked = work.catch((err: unknown) => this.logger?.warn({ err }, `${this.what}: background work failed`));
    this.#running.add(tracked);
    void tracked.finally(() => this.#running.delete(tracked));
  }

  /** Resolves once everything tracked so far, and all it started, has settled. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}
