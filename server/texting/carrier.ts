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

/** Texts a training fault keeps from their handsets (text_undelivered). */
export interface DeliveryFault {
  /** The numbers texts go to; a `#` stands for any digit (a persona's number). */
  numbers: readonly string[];
  /** The failed message's error. */
  reason: string;
  /** How many texts fail before the fault ends by itself; without it, every text until released. */
  count?: number;
  /** The count is spent: the fault ended by itself. */
  onSpent?(): void;
}

export type StatusReport = (accountId: string, messageId: string, status: MessageStatus, error?: string) => Promise<void>;

export class SimulatedCarrier {
  readonly #pending = new Set<() => void>();
  readonly #background: BackgroundWork;
  /** Each account's delivery faults in force, with the texts each may still fail. */
  readonly #faults = new Map<string, Map<DeliveryFault, { left: number }>>();
  /** Messages a fault caught as they were sent: they fail at delivery with its reason. */
  readonly #doomed = new Map<string, string>();

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
      // A fault catches the texts sent while it is in force, whenever their delivery comes.
      const reason = this.#faultFor(accountId, to);
      if (reason !== undefined) this.#doomed.set(messageId, reason);
      this.#after(this.delays.acceptMs, async () => {
        await this.report(accountId, messageId, "sent");
        this.submit(accountId, messageId, to, "sent");
      });
      return;
    }
    this.#after(this.delays.deliverMs, async () => {
      const doomed = this.#doomed.get(messageId);
      if (doomed !== undefined) {
        this.#doomed.delete(messageId);
        await this.report(accountId, messageId, "failed", doomed);
        return;
      }
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

  /** Texts to the fault's numbers fail from now until the function returned is called (or the count is spent). */
  failDeliveries(accountId: string, fault: DeliveryFault): () => void {
    const faults = this.#faults.get(accountId) ?? new Map<DeliveryFault, { left: number }>();
    faults.set(fault, { left: fault.count ?? Infinity });
    this.#faults.set(accountId, faults);
    return () => {
      faults.delete(fault);
      if (faults.size === 0 && this.#faults.get(accountId) === faults) this.#faults.delete(accountId);
    };
  }

  /** The reason a fault fails a text to `to` sent now, counting it; undefined when none does. */
  #faultFor(accountId: string, to: string): string | undefined {
    const faults = this.#faults.get(accountId);
    if (!faults) return undefined;
    for (const [fault, state] of faults) {
      if (!fault.numbers.some((pattern) => matchesNumber(pattern, to))) continue;
      state.left -= 1;
      if (state.left <= 0) {
        faults.delete(fault);
        fault.onSpent?.();
      }
      return fault.reason;
    }
    return undefined;
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

/** Whether `number` is the pattern's number, each `#` of the pattern standing for any digit. */
export function matchesNumber(pattern: string, number: string): boolean {
  if (pattern.length !== number.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    const n = number[i];
    if (p === "#" ? n === undefined || n < "0" || n > "9" : p !== n) return false;
  }
  return true;
}
