// The event websocket in the hosted service's "blackhole" protocol: per connection, subscribe /
// unsubscribe / ping, bindings per account, catch-up with `since`, and bounded fan-out from the bus.
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync } from "fastify";
import type { RawData, WebSocket } from "ws";
import type { Clock } from "../clock.js";
import { isObject } from "../http/request.js";
import { bindingMatches, type BusEvent, type EventBus } from "./bus.js";
import type { EventLog } from "./event-log.js";
import { startEventsPort } from "./events-port.js";

const EVENTS_PATH = "/events";

/** Who a token speaks for; the AuthService is one. */
export interface TokenCheck {
  authenticate(token: string): Promise<{ accountId: string } | null>;
}

const LIMITS = {
  /** Bytes waiting to be sent to one connection beyond which it is too slow and is dropped. */
  maxBufferedBytes: 1024 * 1024,
  /** Bytes of live events held for one connection while its catch-up is sent, beyond which it is dropped. */
  maxHeldBytes: 16 * 1024 * 1024,
  /** Requests waiting on one connection; more are answered with an error. */
  maxQueuedRequests: 64,
  /** How long a closed connection's peer may take to read what is left before it is cut. */
  closeGraceMs: 5_000,
};

export interface EventSocketsDeps {
  bus: EventBus;
  log: Pick<EventLog, "since">;
  auth: TokenCheck;
  logger: FastifyBaseLogger;
}

/** Close code for a client that fell too far behind (4000-4999: private use). */
const TOO_SLOW_CODE = 4008;
const GOING_AWAY = 1001;
/** Events read from the log per step of a catch-up. */
const CATCH_UP_PAGE = 500;

/**
 * The families a binding may start with: what the bus publishes, and `qubicle`, the hosted
 * product's old spelling of `callq`. An unknown family is refused, as the hosted service does.
 */
const FAMILIES = new Set(["call", "object", "callq", "qubicle", "notification", "texting"]);
const SEGMENT = /^(?:[A-Za-z0-9_-]+|\*|#)$/;
const MAX_BINDING_LENGTH = 256;

function isValidBinding(binding: string): boolean {
  if (binding.length === 0 || binding.length > MAX_BINDING_LENGTH) return false;
  const segments = binding.split(".");
  return FAMILIES.has(segments[0] ?? "") && segments.every((s) => SEGMENT.test(s));
}

interface Subscription {
  accountId: string;
  binding: string;
  /** Events of a higher sequence are this subscription's to deliver. */
  from: number;
}

interface Frame {
  seq: number;
  bytes: Buffer;
}

interface Hub {
  readonly bus: EventBus;
  readonly log: Pick<EventLog, "since">;
  readonly auth: TokenCheck;
  readonly logger: FastifyBaseLogger;
  index(connection: Connection, accountId: string): void;
  unindex(connection: Connection, accountId: string): void;
  drop(connection: Connection): void;
}

type RequestId = string | number | undefined;
type Message = Record<string, unknown>;

/** Every connection of both listeners, indexed by the accounts they bind to, fed by the bus. */
export class EventSockets {
  readonly #connections = new Set<Connection>();
  readonly #byAccount = new Map<string, Set<Connection>>();
  readonly #hub: Hub;
  readonly #unsubscribe: () => void;

  constructor(deps: EventSocketsDeps) {
    const connections = this.#connections;
    const byAccount = this.#byAccount;
    this.#hub = {
      bus: deps.bus,
      log: deps.log,
      auth: deps.auth,
      logger: deps.logger,
      index(connection, accountId) {
        let set = byAccount.get(accountId);
        if (!set) byAccount.set(accountId, (set = new Set()));
        set.add(connection);
      },
      unindex(connection, accountId) {
        const set = byAccount.get(accountId);
        set?.delete(connection);
        if (set?.size === 0) byAccount.delete(accountId);
      },
      drop(connection) {
        connections.delete(connection);
        for (const accountId of connection.accounts()) this.unindex(connection, accountId);
      },
    };
    this.#unsubscribe = deps.bus.subscribe((event) => this.#fanOut(event));
  }

  attach(socket: WebSocket): void {
    this.#connections.add(new Connection(socket, this.#hub));
  }

  /** A plugin declaring the websocket route on the given paths. */
  routes(paths: readonly string[]): FastifyPluginAsync {
    return async (scope) => {
      for (const path of paths) scope.get(path, { websocket: true }, (socket) => this.attach(socket));
    };
  }

  close(): void {
    this.#unsubscribe();
    for (const connection of [...this.#connections]) connection.shutdown();
  }

  #fanOut(event: BusEvent): void {
    const connections = this.#byAccount.get(event.account_id);
    if (!connections) return;
    // Most subscribers of an account share a binding: encode once per subscribed_key.
    const frames = new Map<string, Buffer>();
    for (const connection of connections) {
      const key = connection.match(event);
      if (key === undefined) continue;
      let bytes = frames.get(key);
      if (!bytes) {
        bytes = encodeEvent(event, key);
        frames.set(key, bytes);
      }
      connection.deliver({ seq: event.seq, bytes });
    }
  }
}

/** The event message; `seq` and `account_id` sit beside the hosted service's keys so a client can resume. */
function encodeEvent(event: BusEvent, subscribedKey: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      action: "event",
      subscribed_key: subscribedKey,
      name: event.name,
      routing_key: event.routing_key,
      account_id: event.account_id,
      seq: event.seq,
      data: event.data,
    }),
  );
}

/** One websocket: its token, its subscriptions, its requests handled one at a time, its send buffer. */
class Connection {
  #subscriptions: Subscription[] = [];
  #token: string | null = null;
  #requests: Promise<void> = Promise.resolve();
  #queued = 0;
  /** Live events kept back while a catch-up is sent, so they follow it in order. */
  #held: { frames: (Frame | undefined)[]; next: number; bytes: number } | null = null;
  /** The highest sequence sent. */
  #lastSeq = 0;
  #open = true;

  constructor(
    private readonly socket: WebSocket,
    private readonly hub: Hub,
  ) {
    socket.on("message", (data) => this.#receive(data));
    socket.on("close", () => {
      this.#open = false;
      this.#held = null;
      hub.drop(this);
    });
  }

  accounts(): Set<string> {
    return new Set(this.#subscriptions.map((s) => s.accountId));
  }

  /** The first binding that delivers this event, if any. */
  match(event: BusEvent): string | undefined {
    return firstCovering(this.#subscriptions, event)?.binding;
  }

  deliver(frame: Frame): void {
    if (!this.#open) return;
    const held = this.#held;
    if (held) {
      held.bytes += frame.bytes.length;
      if (held.bytes > LIMITS.maxHeldBytes) this.#tooSlow();
      else held.frames.push(frame);
      return;
    }
    if (this.#write(frame.bytes)) this.#lastSeq = frame.seq;
  }

  shutdown(): void {
    if (!this.#open) return;
    this.#open = false;
    this.hub.drop(this);
    this.socket.close(GOING_AWAY, "server shutting down");
    this.#cutAfter(LIMITS.closeGraceMs);
  }

  /** Bounded: a client whose unsent bytes pass the limit is told once and disconnected. */
  #write(bytes: Buffer | string): boolean {
    if (!this.#open) return false;
    if (this.socket.bufferedAmount > LIMITS.maxBufferedBytes) {
      this.#tooSlow();
      return false;
    }
    this.socket.send(bytes, { binary: false });
    return true;
  }

  /** For catch-up: waits while the client reads, instead of dropping a client that is only behind. */
  #writePaced(frame: Frame): Promise<void> {
    return new Promise((resolve) => {
      if (!this.#open) return resolve();
      this.#lastSeq = frame.seq;
      const done = (): void => {
        this.socket.off("close", done);
        resolve();
      };
      this.socket.once("close", done);
      // ws calls back once the frame is handed to the kernel, or with an error once closed.
      this.socket.send(frame.bytes, { binary: false }, done);
      if (this.socket.bufferedAmount <= LIMITS.maxBufferedBytes / 2) done();
    });
  }

  #tooSlow(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#held = null;
    this.hub.drop(this);
    this.hub.logger.info({ buffered: this.socket.bufferedAmount }, "events: client too slow, disconnected");
    // Past the limit on purpose: this one short notice is all the client is still owed.
    this.socket.send(JSON.stringify({ action: "error", data: { errors: ["too slow: disconnected"] } }));
    this.socket.close(TOO_SLOW_CODE, "too slow");
    this.#cutAfter(LIMITS.closeGraceMs);
  }

  /** A peer that never reads never answers the close either; its buffers are freed after a grace. */
  #cutAfter(ms: number): void {
    const timer = setTimeout(() => this.socket.terminate(), ms);
    timer.unref();
    this.socket.once("close", () => clearTimeout(timer));
  }

  #receive(data: RawData): void {
    if (!this.#open) return;
    if (this.#queued >= LIMITS.maxQueuedRequests) {
      this.#reply(failure(undefined, ["too many requests waiting"]));
      return;
    }
    this.#queued++;
    // One request at a time: a catch-up must finish before the next subscribe or unsubscribe changes what it covers.
    this.#requests = this.#requests
      .then(() => this.#handle(textOf(data)))
      .catch((err: unknown) => this.hub.logger.error({ err }, "events: request failed"))
      .finally(() => {
        this.#queued--;
      });
  }

  async #handle(text: string): Promise<void> {
    if (!this.#open) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return this.#reply(failure(undefined, ["invalid JSON"]));
    }
    if (!isObject(message)) return this.#reply(failure(undefined, ["a message must be a JSON object"]));
    const requestId = requestIdOf(message.request_id);
    switch (message.action) {
      case "subscribe":
        return this.#subscribe(message, requestId);
      case "unsubscribe":
        return this.#unsubscribe(message, requestId);
      case "ping":
        // The spec's `response` at the top, and in `data` where the hosted service's clients read it.
        return this.#reply({ action: "reply", request_id: requestId, status: "success", response: "pong", data: { response: "pong" } });
      case undefined:
        return this.#reply(failure(requestId, ["action is required"]));
      default:
        return this.#reply(failure(requestId, [`unknown action '${String(message.action)}'`]));
    }
  }

  async #subscribe(message: Message, requestId: RequestId): Promise<void> {
    const accountId = await this.#authorize(message, requestId);
    if (accountId === null) return;
    const bindings = bindingsOf(message, true);
    if ("errors" in bindings) return this.#reply(failure(requestId, bindings.errors));
    const since = sinceOf(field(message, "since"));
    if (since === null) return this.#reply(failure(requestId, ["since must be a whole number"]));

    // From here to the first await nothing else runs: the new bindings and the catch-up's upper
    // bound are taken at the same instant, so no event falls between catch-up and live delivery.
    const before = this.#subscriptions;
    const upTo = this.hub.bus.lastSeq;
    const from = since === undefined ? upTo : Math.min(since, upTo);
    const after = [...before];
    for (const binding of bindings.list) {
      const i = after.findIndex((s) => s.accountId === accountId && s.binding === binding);
      const existing = after[i];
      if (!existing) after.push({ accountId, binding, from });
      else if (from < existing.from) after[i] = { ...existing, from };
    }
    this.#subscriptions = after;
    this.hub.index(this, accountId);
    const subscribed = this.#bindingsFor(accountId);
    if (since === undefined || from >= upTo) return this.#reply(success(requestId, { subscribed }));

    this.#held = { frames: [], next: 0, bytes: 0 };
    try {
      await this.#catchUp({ accountId, from, upTo, before, requestId, subscribed });
    } finally {
      await this.#release();
    }
  }

  /** Sends the logged events in (from, upTo] that the new bindings deliver and the old ones did not. */
  async #catchUp(c: { accountId: string; from: number; upTo: number; before: Subscription[]; requestId: RequestId; subscribed: string[] }): Promise<void> {
    let page: Awaited<ReturnType<EventLog["since"]>>;
    try {
      page = await this.hub.log.since(c.accountId, c.from, CATCH_UP_PAGE);
    } catch (err) {
      this.hub.logger.error({ err }, "events: the event log could not be read for a catch-up");
      return this.#reply(failure(c.requestId, ["the event log could not be read; subscribed without catch-up"]));
    }
    // `complete: false`: the log no longer reaches back to `since`, so some events are lost to this client.
    this.#reply(success(c.requestId, { subscribed: c.subscribed, complete: page.complete }));
    let cursor = c.from;
    while (this.#open) {
      for (const event of page.events) {
        if (event.seq > c.upTo) return;
        cursor = event.seq;
        if (firstCovering(c.before, event)) continue;
        const key = this.match(event);
        if (key !== undefined) await this.#writePaced({ seq: event.seq, bytes: encodeEvent(event, key) });
        if (!this.#open) return;
      }
      if (page.events.length < CATCH_UP_PAGE || cursor >= c.upTo) return;
      page = await this.hub.log.since(c.accountId, cursor, CATCH_UP_PAGE);
    }
  }

  /** Sends the live events held during a catch-up, then goes back to sending them as they come. */
  async #release(): Promise<void> {
    const held = this.#held;
    while (held && this.#open && held.next < held.frames.length) {
      const frame = held.frames[held.next];
      held.frames[held.next++] = undefined;
      if (!frame) continue;
      held.bytes -= frame.bytes.length;
      if (frame.seq > this.#lastSeq) await this.#writePaced(frame);
    }
    if (this.#held === held) this.#held = null;
  }

  #unsubscribe(message: Message, requestId: RequestId): void {
    const accountId = field(message, "account_id");
    if (accountId !== undefined && typeof accountId !== "string") return this.#reply(failure(requestId, ["account_id must be a string"]));
    const bindings = bindingsOf(message, false);
    if ("errors" in bindings) return this.#reply(failure(requestId, bindings.errors));
    // Without bindings every subscription goes (of the account, when one is named), as the hosted service does.
    const everything = bindings.list.length === 0;
    const unsubscribed: string[] = [];
    const touched = new Set<string>();
    this.#subscriptions = this.#subscriptions.filter((s) => {
      const hit = (accountId === undefined || s.accountId === accountId) && (everything || bindings.list.includes(s.binding));
      if (hit) {
        unsubscribed.push(s.binding);
        touched.add(s.accountId);
      }
      return !hit;
    });
    const remaining = this.accounts();
    for (const account of touched) if (!remaining.has(account)) this.hub.unindex(this, account);
    const subscribed = accountId === undefined ? this.#subscriptions.map((s) => s.binding) : this.#bindingsFor(accountId);
    this.#reply(success(requestId, { unsubscribed, subscribed }));
  }

  /** The account the request may bind to, or null once an error has been answered. */
  async #authorize(message: Message, requestId: RequestId): Promise<string | null> {
    const given = message.auth_token;
    if (given !== undefined && (typeof given !== "string" || given === "")) {
      this.#reply(failure(requestId, ["invalid token"]));
      return null;
    }
    // The token travels on the first message; later ones may leave it out.
    const token = given ?? this.#token;
    if (token === null) {
      this.#reply(failure(requestId, ["missing authentication token"]));
      return null;
    }
    const identity = await this.hub.auth.authenticate(token);
    if (!identity) {
      this.#reply(failure(requestId, ["failed to authenticate token"]));
      return null;
    }
    this.#token = token;
    const accountId = field(message, "account_id");
    if (accountId === undefined) {
      this.#reply(failure(requestId, ["account_id is required"]));
      return null;
    }
    if (accountId !== identity.accountId) {
      this.#reply(failure(requestId, ["unauthorized account id"]));
      return null;
    }
    return identity.accountId;
  }

  #bindingsFor(accountId: string): string[] {
    return this.#subscriptions.filter((s) => s.accountId === accountId).map((s) => s.binding);
  }

  #reply(reply: Message): void {
    this.#write(JSON.stringify(reply));
  }
}

function firstCovering(subscriptions: readonly Subscription[], event: BusEvent): Subscription | undefined {
  return subscriptions.find((s) => s.accountId === event.account_id && s.from < event.seq && bindingMatches(s.binding, event.routing_key));
}

/** A field of `data`, or of the message itself as the old clients send it. */
function field(message: Message, name: string): unknown {
  const data = isObject(message.data) ? message.data : {};
  return data[name] ?? message[name];
}

/** `binding` wins over `bindings` when both are sent, as on the hosted service. */
function bindingsOf(message: Message, required: boolean): { list: string[] } | { errors: string[] } {
  const one = field(message, "binding");
  const many = field(message, "bindings");
  let list: unknown[];
  if (one !== undefined) list = [one];
  else if (Array.isArray(many)) list = many;
  else if (many !== undefined) return { errors: ["bindings must be a list of bindings"] };
  else list = [];
  if (required && list.length === 0) return { errors: ["binding or bindings is required"] };
  const errors = list.filter((b) => typeof b !== "string" || !isValidBinding(b)).map((b) => `invalid binding '${String(b)}'`);
  return errors.length > 0 ? { errors } : { list: [...new Set(list.map(String))] };
}

/** undefined: not asked; null: not a whole number. */
function sinceOf(value: unknown): number | undefined | null {
  if (value === undefined) return undefined;
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function requestIdOf(value: unknown): RequestId {
  return typeof value === "string" || typeof value === "number" ? value : undefined;
}

function success(requestId: RequestId, data: Message): Message {
  return { action: "reply", request_id: requestId, status: "success", data };
}

function failure(requestId: RequestId, errors: string[]): Message {
  return { action: "reply", request_id: requestId, status: "error", data: { errors } };
}

function textOf(data: RawData): string {
  const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  return bytes.toString("utf8");
}

export interface EventSocketsOptions extends EventSocketsDeps {
  /** The address both listeners use. */
  host: string;
  /** The classic port (5555); 0 for a random one. */
  port: number;
  /** Host names the guard accepts besides loopback, as for the main listener. */
  hosts: string[];
  allowOrigins: string[];
  /** The main listener's port, known only once it listens. */
  consolePort: () => number;
  clock: Clock;
}

export interface EventSocketService {
  /** The classic port actually listened on; null when it could not be had. */
  port: number | null;
  close(): Promise<void>;
}

/** `/events` on the main app, and the same protocol on the classic port. */
export async function startEventSockets(app: FastifyInstance, options: EventSocketsOptions): Promise<EventSocketService> {
  const sockets = new EventSockets(options);
  // A plugin of its own, registered after @fastify/websocket (buildApp), so the route is upgraded.
  await app.register(sockets.routes([EVENTS_PATH]));
  const classic = await startEventsPort({
    host: options.host,
    port: options.port,
    hosts: options.hosts,
    allowOrigins: options.allowOrigins,
    consolePort: options.consolePort,
    logger: options.logger,
    clock: options.clock,
    routes: sockets.routes(["/", EVENTS_PATH]),
  });
  return {
    port: classic?.port ?? null,
    async close() {
      await classic?.close();
      sockets.close();
    },
  };
}
