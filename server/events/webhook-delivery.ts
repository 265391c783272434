// One delivery: one payload on its way to one webhook, as an explicit state machine with its
// persisted record, and the single HTTP attempt it makes while `sending`.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Clock, TimeReader } from "../clock.js";
import type { HookRequest, Payload } from "./webhook-payload.js";

/**
 * ```
 *   pending ──send──> sending ──2xx──> succeeded
 *      │               │  ^  │
 *      │    failure,   │  │  └──failure, no tries left, or the hook just disabled──> failed
 *      │    tries left v  │ send, when due
 *      │          waiting-retry
 *      │               │
 *      └───────────────┴──hook deleted or disabled (checked before each send)──> cancelled
 * ```
 * `succeeded`, `failed` and `cancelled` are final: the record is deleted. A server stop is not a
 * transition: the attempt in flight is aborted unlogged and the record stays on disk as it was
 * before that attempt, so the next start resumes the delivery at the same try (at least once).
 */
export type DeliveryState = "pending" | "sending" | "waiting-retry" | "succeeded" | "failed" | "cancelled";

const ALLOWED: Record<DeliveryState, readonly DeliveryState[]> = {
  pending: ["sending", "cancelled"],
  sending: ["succeeded", "waiting-retry", "failed"],
  "waiting-retry": ["sending", "cancelled"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

/** What a delivery keeps on disk (collection `webhook_deliveries`) until it is done. */
export interface DeliveryRecord extends Record<string, unknown> {
  hook_id: string;
  hook_event: string;
  payload: Payload;
  /** The number of the next try, from 1. */
  try: number;
  /** When the next try is due, Unix milliseconds from the injected clock. */
  due: number;
  /** The bus sequence of the event, so deliveries resumed after a restart keep their order. */
  seq: number;
}

export interface DeliveryChange {
  from: DeliveryState;
  to: DeliveryState;
  /** Unix milliseconds from the injected clock. */
  at: number;
  reason?: string;
}

export class IllegalDeliveryTransition extends Error {
  override name = "IllegalDeliveryTransition";
}

export class Delivery {
  #state: DeliveryState = "pending";
  #record: DeliveryRecord;

  constructor(
    readonly id: string,
    readonly accountId: string,
    record: DeliveryRecord,
    private readonly clock: TimeReader,
    /** Told of every transition once it is made; the dispatcher keeps the disk in step with it. */
    private readonly onChange: (delivery: Delivery, change: DeliveryChange) => void,
  ) {
    this.#record = { ...record };
  }

  get state(): DeliveryState {
    return this.#state;
  }

  get record(): Readonly<DeliveryRecord> {
    return this.#record;
  }

  get hookId(): string {
    return this.#record.hook_id;
  }

  get try(): number {
    return this.#record.try;
  }

  send(): void {
    this.#move("sending");
  }

  succeed(): void {
    this.#move("succeeded");
  }

  /** A failed try with tries left: the next one is due after `delayMs`. */
  retryAfter(delayMs: number, reason: string): void {
    this.#move("waiting-retry", reason, (at) => {
      this.#record = { ...this.#record, try: this.#record.try + 1, due: at + delayMs };
    });
  }

  fail(reason: string): void {
    this.#move("failed", reason);
  }

  cancel(reason: string): void {
    this.#move("cancelled", reason);
  }

  /**
   * The one place a delivery changes state: checked against the diagram, stamped, the record
   * brought in line (`update`), then reported.
   */
  #move(to: DeliveryState, reason?: string, update?: (at: number) => void): void {
    if (!ALLOWED[this.#state].includes(to)) throw new IllegalDeliveryTransition(`delivery ${this.id} cannot go from ${this.#state} to ${to}`);
    const change: DeliveryChange = { from: this.#state, to, at: this.clock.now(), ...(reason === undefined ? {} : { reason }) };
    this.#state = to;
    update?.(change.at);
    this.onChange(this, change);
  }
}

export const BAD_RESPONSE = "bad response code";
/** The hosted service's words for a request that got no HTTP answer (refused, reset, timed out). */
export const CLIENT_ERROR = "kazoo http client error";

export type AttemptResult =
  | { result: "success"; responseCode: number }
  | { result: "failure"; reason: string; responseCode?: number; clientError?: string }
  /** The server is stopping: the attempt was aborted and counts for nothing. */
  | { result: "stopped" };

/**
 * One HTTP attempt (node:http with keep-alive: twice the rate of fetch here). Success is a 2xx
 * only; redirects are not followed, so a 3xx fails. The whole exchange, answer included, must
 * end within `timeoutMs`.
 */
export function attempt(clock: Clock, request: HookRequest, timeoutMs: number, stop: AbortSignal): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch (err) {
      resolve({ result: "failure", reason: CLIENT_ERROR, clientError: describe(err) });
      return;
    }
    const https = url.protocol === "https:";
    const req = (https ? httpsRequest : httpRequest)(url, { method: request.method, headers: request.headers, agent: https ? httpsAgent : httpAgent });
    // Resolving twice changes nothing, so a late event after a timeout or a stop is harmless.
    const finish = (result: AttemptResult): void => {
      cancelTimeout();
      stop.removeEventListener("abort", onStop);
      resolve(result);
    };
    /** Gives up on an exchange still open (a receiver that hangs, a server that stops). */
    const abandon = (result: AttemptResult): void => {
      finish(result);
      req.destroy();
    };
    const onStop = (): void => abandon({ result: "stopped" });
    const cancelTimeout = clock.after(timeoutMs, () => abandon({ result: "failure", reason: CLIENT_ERROR, clientError: `timeout after ${timeoutMs} ms` }));
    stop.addEventListener("abort", onStop, { once: true });
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      // Read the answer to its end so the connection goes back to the pool; its content is not used.
      res.resume();
      res.on("end", () =>
        finish(status >= 200 && status < 300 ? { result: "success", responseCode: status } : { result: "failure", reason: BAD_RESPONSE, responseCode: status }),
      );
      res.on("error", (err) => finish({ result: "failure", reason: CLIENT_ERROR, clientError: describe(err) }));
    });
    req.on("error", (err) => finish({ result: "failure", reason: CLIENT_ERROR, clientError: describe(err) }));
    if (stop.aborted) onStop();
    else req.end(request.body);
  });
}

const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/** A socket error's code (ECONNREFUSED ...) says more than its message. */
function describe(err: unknown): string {
  if (err instanceof Error) return (err as NodeJS.ErrnoException).code ?? err.message;
  return String(err);
}
