// Webhook failures on cue (training faults, issue 18): while an account's window is open, its
// deliveries are answered as failed without a request, as if every target were down. The
// dispatcher asks before each attempt; a training run opens and closes the window on its own
// clock (so a pause holds it open).
/** The reason a failed attempt's log carries while the window is open. */
export const FAULT_REASON = "training fault: webhook target failing";

export class WebhookFaults {
  /** Accounts whose window is open. */
  readonly #failing = new Set<string>();

  open(accountId: string): void {
    this.#failing.add(accountId);
  }

  close(accountId: string): void {
    this.#failing.delete(accountId);
  }

  failing(accountId: string): boolean {
    return this.#failing.has(accountId);
  }
}
