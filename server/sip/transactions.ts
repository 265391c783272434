// Requests this server sent (NOTIFY now; INVITE and BYE with the call engine) waiting for their
// final response: matched by top Via branch + CSeq (RFC 3261 §17.1.3), timed out on the clock.
import type { Clock } from "../clock.js";
import type { SipResponse } from "./message.js";

export interface ClientTransactionSpec {
  branch: string;
  method: string;
  cseq: number;
  flowId: string;
  /** Called once with the final status, or 408 when none came in time. */
  onFinal?(status: number): void;
}

interface Pending extends ClientTransactionSpec {
  expiresAt: number;
}

/** Timer F: 64 × T1 (500 ms). Over a reliable transport nothing is retransmitted meanwhile. */
const TIMER_F_MS = 32_000;

export class ClientTransactions {
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #pending = new Map<string, Pending>();

  constructor(options: { clock: Clock; timeoutMs?: number }) {
    this.#clock = options.clock;
    this.#timeoutMs = options.timeoutMs ?? TIMER_F_MS;
  }

  start(spec: ClientTransactionSpec): void {
    this.#pending.set(key(spec.branch, spec.method, spec.cseq), { ...spec, expiresAt: this.#clock.now() + this.#timeoutMs });
  }

  /** True when the response answers a request of ours sent on this flow; it is consumed. */
  receive(response: SipResponse, flowId: string): boolean {
    const k = key(response.branch, response.method, response.cseq);
    const pending = this.#pending.get(k);
    if (!pending || pending.flowId !== flowId) return false;
    if (response.status >= 200) {
      this.#pending.delete(k);
      pending.onFinal?.(response.status);
    }
    return true;
  }

  /** Gives up on requests unanswered for Timer F. */
  prune(): void {
    const now = this.#clock.now();
    for (const [k, pending] of this.#pending) {
      if (pending.expiresAt > now) continue;
      this.#pending.delete(k);
      pending.onFinal?.(408);
    }
  }

  get size(): number {
    return this.#pending.size;
  }
}

function key(branch: string, method: string, cseq: number): string {
  return `${branch}\n${method}\n${cseq}`;
}
