// What becomes of each SIP message arriving on a flow: a request goes to the handler for its
// method with the server transaction it may answer through, a response to the client transaction
// that sent its request, and anything else gets the proper error or is dropped.
import type { RandomSource } from "../clock.js";
import type { Flow } from "./flows.js";
import { buildResponse, canAnswer, parseSip, randomHex, rawRequest, type RawMessage, type SipRequest } from "./message.js";
import type { ClientTransactions } from "./transactions.js";

export interface SipReply {
  status: number;
  /** A reason phrase other than the standard one. */
  reason?: string;
  /** The To tag, when it must be one given before (a CANCEL's 200 carries its INVITE's, §9.2). */
  toTag?: string;
  headers?: [string, string][];
  body?: string;
}

/**
 * The responses to one request (RFC 3261 §17.2): any number of provisional ones, then one final.
 * An INVITE is answered over time through it; nothing is ever sent for an ACK.
 */
export interface ServerTransaction {
  /** The To tag of its responses (a dialog's local tag when the request makes one). */
  readonly toTag: string;
  /** True once a final response was sent. */
  readonly answered: boolean;
  /** Sends a response; false when it was not sent (a final one went before, or the flow closed). */
  respond(reply: SipReply): boolean;
  /** Sends the last response again, for a retransmitted request. */
  resend(): void;
}

/**
 * Answers a request: with the reply to send as its final response, or null when the handler
 * answers through the transaction itself (now or later) or nothing should be sent.
 */
export type RequestHandler = (request: SipRequest, flow: Flow, transaction: ServerTransaction) => Promise<SipReply | null>;

export interface SipLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How a message turned out: `malformed` when it was not SIP this server could read. */
export type Received = "read" | "malformed";

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
  async receive(text: string, flow: Flow): Promise<Received> {
    if (text === PING) {
      flow.send("\r\n");
      return "read";
    }
    if (Buffer.byteLength(text, "utf8") > MAX_MESSAGE_BYTES) {
      const raw = rawRequest(text.slice(0, HEAD_SCAN_CHARS));
      if (raw && canAnswer(raw)) this.#answer(raw, flow, { status: 513 });
      this.#log.debug({ flow: flow.id, bytes: Buffer.byteLength(text, "utf8") }, "sip: message too large");
      return "malformed";
    }
    const parsed = parseSip(text);
    if (parsed.kind === "invalid") {
      if (parsed.request && canAnswer(parsed.request)) this.#answer(parsed.request, flow, { status: 400, reason: parsed.reason });
      this.#log.debug({ flow: flow.id, reason: parsed.reason }, "sip: malformed message");
      return "malformed";
    }
    if (parsed.kind === "response") {
      try {
        if (!this.#transactions.receive(parsed, flow.id)) {
          this.#log.debug({ flow: flow.id, status: parsed.status, method: parsed.method }, "sip: stray response dropped");
        }
      } catch (err) {
        this.#log.error({ err, flow: flow.id, status: parsed.status, method: parsed.method }, "sip: response handling failed");
      }
      return "read";
    }
    const handler = this.#handlers.get(parsed.method);
    // Nothing answers an ACK: one that acknowledges nothing here is dropped.
    if (parsed.method === "ACK" && !handler) return "read";
    const transaction = this.#transaction(parsed.raw, flow, parsed.method !== "ACK");
    let reply: SipReply | null;
    try {
      reply = handler ? await handler(parsed, flow, transaction) : { status: 501, headers: [["Allow", this.allow()]] };
    } catch (err) {
      this.#log.error({ err, flow: flow.id, method: parsed.method }, "sip: request handler failed");
      reply = { status: 500 };
    }
    if (reply && !transaction.answered) transaction.respond(reply);
    return "read";
  }

  #transaction(request: RawMessage, flow: Flow, answerable: boolean): ServerTransaction {
    const toTag = randomHex(this.#random);
    let answered = !answerable;
    let last: string | null = null;
    return {
      toTag,
      get answered() {
        return answered;
      },
      respond(reply) {
        if (answered) return false;
        // §8.2.6.2: a 100 Trying need not carry a tag, and carries none here.
        last = buildResponse(request, reply.status, {
          reason: reply.reason,
          toTag: reply.status === 100 ? null : (reply.toTag ?? toTag),
          headers: reply.headers,
          body: reply.body,
        });
        if (reply.status >= 200) answered = true;
        return flow.send(last);
      },
      resend() {
        if (last !== null) flow.send(last);
      },
    };
  }

  #answer(request: RawMessage, flow: Flow, reply: SipReply): void {
    this.#transaction(request, flow, true).respond(reply);
  }
}
