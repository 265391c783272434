// An event-websocket client for tests: sends blackhole requests, waits for their replies by
// request_id, and keeps every message it is sent, in arrival order.
import WebSocket from "ws";

export interface EventMessage {
  action: "event";
  subscribed_key: string;
  name: string;
  routing_key: string;
  account_id: string;
  seq: number;
  data: Record<string, unknown>;
}

export interface ReplyMessage {
  action: "reply";
  request_id?: string | number;
  status: "success" | "error";
  response?: string;
  data: { subscribed?: string[]; unsubscribed?: string[]; errors?: string[]; complete?: boolean; response?: string };
}

export interface ErrorMessage {
  action: "error";
  data: { errors: string[] };
}

export type Incoming = EventMessage | ReplyMessage | ErrorMessage;

/** The server answered the upgrade with an HTTP status instead of switching protocols. */
export class UpgradeRefused extends Error {
  constructor(readonly status: number) {
    super(`upgrade refused: ${status}`);
  }
}

interface Waiter {
  test(message: Incoming): boolean;
  resolve(message: Incoming): void;
}

export class EventsClient {
  readonly received: Incoming[] = [];
  /** Resolves with the close code and reason once the socket is closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  #waiters: Waiter[] = [];
  #nextId = 1;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const message = JSON.parse(data.toString()) as Incoming;
      this.received.push(message);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.test(message)) return true;
        w.resolve(message);
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<EventsClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers });
      socket.once("open", () => resolve(new EventsClient(socket)));
      socket.once("unexpected-response", (_req, res) => {
        reject(new UpgradeRefused(res.statusCode ?? 0));
        socket.terminate();
      });
      socket.once("error", reject);
    });
  }

  /** 101 when the upgrade is accepted (the socket is closed again), else the refusal's status. */
  static async upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
    try {
      await (await EventsClient.connect(url, headers)).close();
      return 101;
    } catch (err) {
      if (err instanceof UpgradeRefused) return err.status;
      throw err;
    }
  }

  get events(): EventMessage[] {
    return this.received.filter((m): m is EventMessage => m.action === "event");
  }

  sendRaw(text: string): void {
    this.socket.send(text);
  }

  /** Sends a request with a fresh request_id (unless it has one) and waits for its reply. */
  async request(message: Record<string, unknown>, timeoutMs = 5_000): Promise<ReplyMessage> {
    const requestId = message.request_id ?? `r${this.#nextId++}`;
    const reply = this.next((m) => m.action === "reply" && m.request_id === requestId, timeoutMs);
    this.socket.send(JSON.stringify({ ...message, request_id: requestId }));
    return (await reply) as ReplyMessage;
  }

  subscribe(accountId: string, binding: string | string[], extra: Record<string, unknown> = {}): Promise<ReplyMessage> {
    const bindings = Array.isArray(binding) ? { bindings: binding } : { binding };
    return this.request({ action: "subscribe", ...extra, data: { account_id: accountId, ...bindings } });
  }

  /**
   * A round trip: the server sends in order, so once the pong is here every event published
   * before the ping was sent is here too.
   */
  ping(timeoutMs = 5_000): Promise<ReplyMessage> {
    return this.request({ action: "ping" }, timeoutMs);
  }

  /** The first message, already received or still to come, that passes the test. */
  next(test: (message: Incoming) => boolean, timeoutMs = 5_000): Promise<Incoming> {
    const found = this.received.find(test);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no such message within ${timeoutMs} ms (${this.received.length} received)`)), timeoutMs);
      this.#waiters.push({
        test,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  /** Waits until at least `count` events have arrived, and answers them all. */
  async waitForEvents(count: number, timeoutMs = 5_000): Promise<EventMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (Date.now() > deadline) throw new Error(`only ${this.events.length} of ${count} events within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return this.events;
  }

  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    await this.closed;
  }
}
