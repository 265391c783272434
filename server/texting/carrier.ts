// The simulated carrier of the local server: an outbound message is accepted (queued -> sent)
// and then delivered to the handset, or fails for a number a trainer marked unreachable. Each
// step is a timer on the injected clock, so tests and the simulator can run time fast.
import type { Clock } from "../clock.js";
import type { Store } from "../store/index.js";
import { BackgroundWork } from "./background.js";
import type { MessageStatus } from "./message-status.js";

/** One document per account holding the numbers the carrier cannot reach. */
export const CARRIER_COLLECTION = "texting_carrier";

export interface CarrierDelays {
  /** From queued to sent: the carrier taking the message. */
  acceptMs: number;
  /** From sent to delivered (or failed): the handset's acknowledgement. */
  deliverMs: number;
}

export const DEFAULT_CARRIER_DELAYS: CarrierDelays = { acceptMs: 250, deliverMs: 750 };

export type StatusReport = (accountId: string, messageId: string, status: MessageStatus, error?: string) => Promise<void>;

export class SimulatedCarrier {
  readonly #pending = new Set<() => void>();
  readonly #background: BackgroundWork;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly report: StatusReport,
    private readonly delays: CarrierDelays = DEFAULT_CARRIER_DELAYS,
    logger?: { warn(obj: object, msg: string): void },
  ) {
    this.#background = new BackgroundWork("texting carrier", logger);
  }

  /** Takes a queued message; `from` says where a message resumed after a restart stands. */
  submit(accountId: string, messageId: string, to: string, from: "queued" | "sent" = "queued"): void {
    if (from === "queued") {
      this.#after(this.delays.acceptMs, async () => {
        await this.report(accountId, messageId, "sent");
        this.submit(accountId, messageId, to, "sent");
      });
      return;
    }
    this.#after(this.delays.deliverMs, async () => {
      const unreachable = (await this.unreachable(accountId)).includes(to);
      await (unreachable ? this.report(accountId, messageId, "failed", `${to} is unreachable`) : this.report(accountId, messageId, "delivered"));
    });
  }

  async unreachable(accountId: string): Promise<string[]> {
    const doc = (await this.store.account(accountId, CARRIER_COLLECTION)).all()[0];
    const numbers = doc?.data.unreachable;
    return Array.isArray(numbers) ? numbers.filter((n): n is string => typeof n === "string") : [];
  }

  /** Sets exactly which numbers cannot be reached. */
  async setUnreachable(accountId: string, numbers: readonly string[]): Promise<string[]> {
    const collection = await this.store.account(accountId, CARRIER_COLLECTION);
    const unique = [...new Set(numbers)];
    const doc = collection.all()[0];
    if (doc) await collection.update(doc.id, { ...doc.data, unreachable: unique });
    else await collection.create({ unreachable: unique });
    return unique;
  }

  /** Drops the steps not yet due (a restart resumes them from the messages) and waits for those running. */
  async stop(): Promise<void> {
    for (const cancel of this.#pending) cancel();
    this.#pending.clear();
    await this.#background.settled();
  }

  #after(ms: number, step: () => Promise<void>): void {
    const cancel = this.clock.after(ms, () => {
      this.#pending.delete(cancel);
      this.#background.track(step());
    });
    this.#pending.add(cancel);
  }
}
