// The event websocket client (the hosted service's "blackhole" protocol): subscribes the account's
// bindings with the token, hands each event on, and when the socket drops reconnects with back-off
// and resubscribes with `since` = the last sequence seen, so nothing published meanwhile is lost.
import { backoffDelay, type Clock } from "../clock.js";
import { isRecord } from "./client.js";

export interface PlatformEvent {
  name: string;
  routingKey: string;
  accountId: string;
  seq: number;
  data: Record<string, unknown>;
}

/** `connecting`: first attempt or a retry under way; `online`: subscribed; `offline`: waiting to retry. */
export type EventStreamStatus = "connecting" | "online" | "offline";

/** An open (or opening) socket as the client drives it; tests hand in a fake. */
export interface SocketLike {
  readonly isOpen: boolean;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface SocketHandlers {
  open(): void;
  message(data: unknown): void;
  close(code: number, reason: string): void;
}

export type OpenSocket = (url: string, handlers: SocketHandlers) => SocketLike;

/** The page's own WebSocket behind SocketLike. */
export const browserSocket: OpenSocket = (url, handlers) => {
  const socket = new WebSocket(url);
  socket.onopen = () => handlers.open();
  socket.onmessage = (event) => handlers.message(event.data);
  socket.onclose = (event) => handlers.close(event.code, event.reason);
  return {
    get isOpen() {
      return socket.readyState === WebSocket.OPEN;
    },
    send: (data) => socket.send(data),
    close: (code, reason) => socket.close(code, reason),
  };
};

export interface EventStreamOptions {
  url: string;
  token: string;
  accountId: string;
  bindings: readonly string[];
  /** Resume after this sequence (a stream the console had before), live only when null or absent. */
  since?: number | null;
  clock: Clock;
  random?: () => number;
  openSocket?: OpenSocket;
  onEvent(event: PlatformEvent): void;
  onStatus(status: EventStreamStatus, detail: { retryInMs?: number; error?: string }): void;
  /** The server refused the token: the session is over, retrying would not help. */
  onUnauthorized(): void;
}

/** A subscribed socket that stays silent this long is pinged; no answer within the same time and it is dropped. */
const PING_EVERY_MS = 25_000;

export class EventStream {
  readonly #options: EventStreamOptions;
  #socket: SocketLike | null = null;
  #lastSeq: number | null = null;
  #attempt = 0;
  #stopped = false;
  #cancelTimer: (() => void) | null = null;
  #awaitingPong = false;
  #requestId = 0;

  constructor(options: EventStreamOptions) {
    this.#options = options;
    this.#lastSeq = options.since ?? null;
  }

  /** The highest sequence handed on, the point a resubscription continues from. */
  get lastSeq(): number | null {
    return this.#lastSeq;
  }

  start(): void {
    this.#stopped = false;
    this.#connect();
  }

  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#cancelTimer = null;
    const socket = this.#socket;
    this.#socket = null;
    socket?.close(1000, "signed out");
  }

  /** Drops the connection at once and reconnects (a network change, a manual retry). */
  reconnectNow(): void {
    if (this.#stopped) return;
    this.#attempt = 0;
    this.#drop("reconnecting");
  }

  #connect(): void {
    const o = this.#options;
    o.onStatus("connecting", {});
    let socket: SocketLike | null = null;
    const handlers: SocketHandlers = {
      open: () => {
        const data: Record<string, unknown> = { account_id: o.accountId, bindings: o.bindings };
        if (this.#lastSeq !== null) data["since"] = this.#lastSeq;
        socket?.send(JSON.stringify({ action: "subscribe", request_id: `subscribe-${++this.#requestId}`, auth_token: o.token, data }));
      },
      message: (data) => {
        if (socket !== null && this.#socket === socket) this.#receive(data);
      },
      close: (code, reason) => {
        if (socket === null || this.#socket !== socket) return;
        this.#socket = null;
        this.#retry(reason || `closed (${code})`);
      },
    };
    try {
      socket = (o.openSocket ?? browserSocket)(o.url, handlers);
    } catch (error) {
      this.#retry(error instanceof Error ? error.message : "cannot open the event websocket");
      return;
    }
    this.#socket = socket;
  }

  #receive(raw: unknown): void {
    if (typeof raw !== "string") return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      return;
    }
    if (!isRecord(message)) return;
    this.#awaitingPong = false;
    if (message["action"] === "event") {
      const seq = message["seq"];
      const data = message["data"];
      if (typeof seq !== "number") return;
      // A catch-up may overlap what was already handed on: each sequence is delivered once.
      if (this.#lastSeq !== null && seq <= this.#lastSeq) return;
      this.#lastSeq = seq;
      this.#options.onEvent({
        name: stringOf(message["name"]),
        routingKey: stringOf(message["routing_key"]),
        accountId: stringOf(message["account_id"]),
        seq,
        data: isRecord(data) ? data : {},
      });
      return;
    }
    if (message["action"] !== "reply") return;
    const requestId = stringOf(message["request_id"]);
    if (!requestId.startsWith("subscribe-")) return;
    if (message["status"] === "success") {
      this.#attempt = 0;
      this.#options.onStatus("online", {});
      this.#schedulePing();
      return;
    }
    const errors = isRecord(message["data"]) && Array.isArray(message["data"]["errors"]) ? message["data"]["errors"].map(String) : [];
    if (errors.some((e) => /token/i.test(e))) {
      this.stop();
      this.#options.onUnauthorized();
      return;
    }
    this.#drop(errors.join("; ") || "subscription refused");
  }

  /** Keeps a quiet connection honest: a half-open socket would otherwise look online for minutes. */
  #schedulePing(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = this.#options.clock.after(PING_EVERY_MS, () => {
      const socket = this.#socket;
      if (socket === null || !socket.isOpen) return;
      if (this.#awaitingPong) {
        this.#drop("no answer to ping");
        return;
      }
      this.#awaitingPong = true;
      socket.send(JSON.stringify({ action: "ping", request_id: `ping-${++this.#requestId}` }));
      this.#schedulePing();
    });
  }

  #drop(reason: string): void {
    const socket = this.#socket;
    this.#socket = null;
    socket?.close(4000, reason);
    this.#retry(reason);
  }

  #retry(error: string): void {
    if (this.#stopped) return;
    this.#cancelTimer?.();
    this.#awaitingPong = false;
    const delay = backoffDelay(this.#attempt++, this.#options.random ?? Math.random);
    this.#options.onStatus("offline", { retryInMs: delay, error });
    this.#cancelTimer = this.#options.clock.after(delay, () => {
      this.#cancelTimer = null;
      if (!this.#stopped) this.#connect();
    });
  }
}

function stringOf(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
}
