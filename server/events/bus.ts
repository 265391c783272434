// The one event bus: every state change is published here once, stamped with a sequence number
// and a time; the event websocket, the webhooks and the event log all listen to it.
import type { TimeReader } from "../clock.js";

export interface BusEvent {
  /** Monotonic across restarts (the event log remembers the last one). */
  seq: number;
  /** Unix milliseconds. */
  at: number;
  account_id: string;
  /** Dotted key bindings match on, e.g. `call.CHANNEL_CREATE.<call_id>`, `object.doc_created.device`. */
  routing_key: string;
  /** The event's name, e.g. `CHANNEL_CREATE`, `doc_created`, `join`. */
  name: string;
  data: Record<string, unknown>;
}

export type NewEvent = Omit<BusEvent, "seq" | "at">;
export type Listener = (event: BusEvent) => void;

export class EventBus {
  readonly #listeners = new Set<Listener>();
  #seq: number;

  constructor(
    private readonly clock: TimeReader,
    lastSeq = 0,
  ) {
    this.#seq = lastSeq;
  }

  get lastSeq(): number {
    return this.#seq;
  }

  publish(event: NewEvent): BusEvent {
    const stamped: BusEvent = { ...event, seq: ++this.#seq, at: this.clock.now() };
    for (const listener of this.#listeners) {
      // One listener's failure must not keep the event from the others.
      try {
        listener(stamped);
      } catch {
        // Listeners own their errors; the bus only delivers.
      }
    }
    return stamped;
  }

  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/**
 * Does a binding match a routing key? Segments separated by dots; `*` matches one segment, `#`
 * the rest (zero or more); `qubicle.` is the hosted product's old spelling of `callq.`.
 */
export function bindingMatches(binding: string, routingKey: string): boolean {
  const b = normaliseBinding(binding).split(".");
  const k = routingKey.split(".");
  for (let i = 0; i < b.length; i++) {
    const part = b[i];
    if (part === "#") return true;
    if (i >= k.length) return false;
    if (part !== "*" && part !== k[i]) return false;
  }
  return b.length === k.length;
}

/**
 * A call-queue family named alone (`qubicle.recipient`, as Qubicle's websocket guide subscribes):
 * blackhole reads it as every event of that family in the account, so it is read as `<family>.*`.
 */
const FAMILY_ALONE = /^callq\.(queue|recipient|session)$/;

export function normaliseBinding(binding: string): string {
  const named = binding.startsWith("qubicle.") ? `callq.${binding.slice("qubicle.".length)}` : binding;
  return FAMILY_ALONE.test(named) ? `${named}.*` : named;
}
