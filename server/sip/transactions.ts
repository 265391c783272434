// Requests this server sent (NOTIFY, INVITE, CANCEL, BYE) waiting for their final response:
// matched by top Via branch + CSeq (RFC 3261 §17.1.3), timed out on the clock.
import type { TimeReader } from "../clock.js";
import type { SipResponse } from "./message.js";

export interface ClientTransactionSpec {
  branch: string;
  method: string;
  cseq: number;
  flowId: string;
  /**
   * Called once with the final status and the response; without a response, 408 when none came
   * in time and 503 when the flow closed first (a transport error, §8.1.3.1).
   */
  onFinal?(status: number, response?: SipResponse): void;
  /** Each provisional (1xx) response. */
  onProvisional?(response: SipResponse): void;
  /** An INVITE's 2xx after its first (a retransmission, or another fork downstream): each wants an ACK. */
  onLater2xx?(response: SipResponse): void;
}

interface Pending extends ClientTransactionSpec {
  expiresAt: number;
  /** An INVITE that had its 2xx, kept until Timer M for the 2xx that may follow (RFC 6026 §7.2). */
  accepted: boolean;
}

/** Timer F (and B): 64 × T1 (500 ms). Over a reliable transport nothing is retransmitted meanwhile. */
const TIMER_F_MS = 32_000;
/** Timer M, RFC 6026: how long an INVITE's 2xx retransmissions are still recognised. */
const TIMER_M_MS = 32_000;

export interface ClientTransactionsOptions {
  clock: TimeReader;
  timeoutMs?: number;
  /** A callback that throws (an engine's listener behind it) is reported here; the others still run. */
  onError?(err: unknown): void;
}

export class ClientTransactions {
  readonly #clock: TimeReader;
  readonly #timeoutMs: number;
  readonly #onError: (err: unknown) => void;
  readonly #pending = new Map<string, Pending>();

  constructor(options: ClientTransactionsOptions) {
    this.#clock = options.clock;
    this.#timeoutMs = options.timeoutMs ?? TIMER_F_MS;
    this.#onError = options.onError ?? (() => undefined);
  }

  start(spec: ClientTransactionSpec): void {
    this.#pending.set(key(spec.branch, spec.method, spec.cseq), { ...spec, expiresAt: this.#clock.now() + this.#timeoutMs, accepted: false });
  }

  /** Forgets a transaction without calling it back (its owner gave up on it). */
  stop(branch: string, method: string, cseq: number): void {
    this.#pending.delete(key(branch, method, cseq));
  }

  /** True when the response answers a request of ours sent on this flow. */
  receive(response: SipResponse, flowId: string): boolean {
    const k = key(response.branch, response.method, response.cseq);
    const pending = this.#pending.get(k);
    if (!pending || pending.flowId !== flowId) return false;
    if (pending.accepted) {
      if (response.status >= 200 && response.status < 300) pending.onLater2xx?.(response);
      return true;
    }
    if (response.status < 200) {
      // Timer B stops in Proceeding (§17.1.1.2): a ringing INVITE waits as long as its owner does.
      if (pending.method === "INVITE") pending.expiresAt = Infinity;
      pending.onProvisional?.(response);
      return true;
    }
    if (pending.method === "INVITE" && response.status < 300) {
      pending.accepted = true;
      pending.expiresAt = this.#clock.now() + TIMER_M_MS;
    } else {
      this.#pending.delete(k);
    }
    pending.onFinal?.(response.status, response);
    return true;
  }

  /** Gives up on requests unanswered for Timer F; forgets accepted INVITEs after Timer M. */
  prune(): void {
    const now = this.#clock.now();
    for (const [k, pending] of this.#pending) {
      if (pending.expiresAt > now) continue;
      this.#pending.delete(k);
      if (!pending.accepted) this.#guard(() => pending.onFinal?.(408));
    }
  }

  /** The flow closed: its requests will never be answered. */
  dropFlow(flowId: string): void {
    for (const [k, pending] of this.#pending) {
      if (pending.flowId !== flowId) continue;
      this.#pending.delete(k);
      if (!pending.accepted) this.#guard(() => pending.onFinal?.(503));
    }
  }

  #guard(callback: () => void): void {
    try {
      callback();
    } catch (err) {
      this.#onError(err);
    }
  }

  get size(): number {
    return this.#pending.size;
  }
}

function key(branch: string, method: string, cseq: number): string {
  return `${branch}\n${method}\n${cseq}`;
}
