// What becomes of each SIP message arriving on a flow: a request goes to the handler for its
// method (the call engine adds INVITE and the rest here), a response to the client transaction
// that sent its request, and anything else gets the proper error or is dropped.
import type { RandomSource } from "../clock.js";
import type { Flow } from "./flows.js";
import { buildResponse, canAnswer, parseSip, randomHex, rawRequest, type RawMessage, type SipRequest } from "./message.js";
import type { ClientTransactions } from "./transactions.js";

export interface SipReply {
  status: number;
  /** A reason phrase other than the standard one. */
  reason?: string;
  headers?: [string, string][];
  body?: string;
}

/** Answers a request, or null when nothing can or should be sent (the flow closed meanwhile). */
export type RequestHandler = (request: SipRequest, flow: Flow) => Promise<SipReply | null>;

export interface SipLog {
  debug(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DispatcherOptions {
  random: RandomSource;
  transactions: ClientTransactions;
  log: SipLog;
}

/** Bigger messages are answered 513 (when possible) without being parsed. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/** Enough of an oversized message to find the headers a 513 copies. */
const HEAD_SCAN_CHARS = 16 * 1024;
/** RFC 5626 §4.4.1 keep-alive over a stream: a double CRLF "ping" gets a single CRLF "pong". */
const PING = "\r\n\r\n";

export class SipDispatcher {
  readonly #handlers = new Map<string, RequestHandler>();
  readonly #random: RandomSource;
  readonly #transactions: ClientTransactions;
  readonly #log: SipLog;

  constructor(options: DispatcherOptions) {
    this.#random = options.random;
    this.#transactions = options.transactions;
    this.#log = options.log;
    this.handle("OPTIONS", async () => ({ status: 200, headers: [["Allow", this.allow()]] }));
  }

  /** The seam for new methods: a later handler for the same method replaces the earlier one. */
  handle(method: string, handler: RequestHandler): void {
    this.#handlers.set(method.toUpperCase(), handler);
  }

  /** The Allow header: the methods with a handler. */
  allow(): string {
    return [...this.#handlers.keys()].join(", ");
  }

  /** Handles one message; never throws, whatever the text. */
  async receive(text: string, flow: Flow): Promise<void> {
    if (text === PING) {
      flow.send("\r\n");
      return;
    }
    if (Buffer.byteLength(text, "utf8") > MAX_MESSAGE_BYTES) {
      const raw = rawRequest(text.slice(0, HEAD_SCAN_CHARS));
      if (raw && canAnswer(raw)) this.#answer(raw, flow, { status: 513 });
      this.#log.debug({ flow: flow.id, bytes: Buffer.byteLength(text, "utf8") }, "sip: message too large");
      return;
    }
    const parsed = parseSip(text);
    if (parsed.kind === "invalid") {
      if (parsed.request && canAnswer(parsed.request)) this.#answer(parsed.request, flow, { status: 400, reason: parsed.reason });
      this.#log.debug({ flow: flow.id, reason: parsed.reason }, "sip: malformed message");
      return;
    }
    if (parsed.kind === "response") {
      if (!this.#transactions.receive(parsed, flow.id)) {
        this.#log.debug({ flow: flow.id, status: parsed.status, method: parsed.method }, "sip: stray response dropped");
      }
      return;
    }
    // With no INVITE server transactions yet, an ACK acknowledges nothing here.
    if (parsed.method === "ACK") return;
    const handler = this.#handlers.get(parsed.method);
    let reply: SipReply | null;
    try {
      reply = handler ? await handler(parsed, flow) : { status: 501, headers: [["Allow", this.allow()]] };
    } catch (err) {
      this.#log.error({ err, flow: flow.id, method: parsed.method }, "sip: request handler failed");
      reply = { status: 500 };
    }
    if (reply) this.#answer(parsed.raw, flow, reply);
  }

  #answer(request: RawMessage, flow: Flow, reply: SipReply): void {
    flow.send(
      buildResponse(request, reply.status, {
        reason: reply.reason,
        toTag: randomHex(this.#random),
        headers: reply.headers,
        body: reply.body,
      }),
    );
  }
}
