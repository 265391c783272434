// The event websocket in the hosted service's "blackhole" protocol: per connection, subscribe /
// unsubscribe / ping, bindings per account, catch-up with `since`, and bounded fan-out from the bus.
// Every connection is bounded too: sockets in all and per account and token, bindings per socket,
// a socket that binds nothing is closed after the idle window, one that stops answering pings is
// cut, and one whose token ends (revoked, expired, its user or account disabled or deleted) is
// told why and closed.
import { readFileSync } from "node:fs";
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { RawData, WebSocket } from "ws";
import { monotonic, systemClock, type Cancel, type Clock } from "../clock.js";
import type { TokenEnd, TokenService } from "../auth/tokens.js";
import { tokenId } from "../auth/tokens.js";
import { registerWebsocket } from "../http/app.js";
import { ApiError } from "../http/errors.js";
import { isObject } from "../http/request.js";
import type { Store, StoreChange } from "../store/index.js";
import type { BusEvent, EventBus } from "./bus.js";
import { BindingIndex, type Subscription } from "./binding-index.js";
import type { EventLog } from "./event-log.js";
import { startEventsPort } from "./events-port.js";

const EVENTS_PATH = "/events";

/** Who a token speaks for, and how long it lives; the AuthService is one. */
export interface TokenCheck {
  authenticate(token: string): Promise<{ accountId: string; ownerId: string | null; wallboardId?: string } | null>;
  readonly tokens: Pick<TokenService, "expiresAt" | "onEnd">;
}

/** What a server may change (ServerConfig.eventSockets, the --events-* flags); the rest is fixed below. */
export interface EventSocketLimits {
  /** A socket holding no binding this long is closed; a subscribed one is pinged this often. */
  idleMs: number;
  /**
   * Sockets open at once on both listeners. At most a quarter of them may be waiting for their
   * first binding: past that the one waiting longest gives way to the newcomer.
   */
  maxSockets: number;
  /** Sockets bound to one account at once. */
  maxPerAccount: number;
  /** Sockets bound with one token at once. */
  maxPerToken: number;
  /** Bindings one socket holds, and so one message may ask for. */
  maxBindings: number;
}

/**
 * Half the process's descriptors at most go to event sockets (512 of the usual 1,024), so files,
 * logins and SIP keep theirs; 100 consoles per account is more than a desktop server's account
 * has agents.
 */
export const EVENT_SOCKET_LIMITS: EventSocketLimits = {
  idleMs: 30_000,
  maxSockets: halfTheDescriptors(512),
  maxPerAccount: 100,
  maxPerToken: 16,
  maxBindings: 1_000,
};

/** Half the soft descriptor limit where the system says it (Linux), never above `most`. */
function halfTheDescriptors(most: number): number {
  let limits = "";
  try {
    limits = readFileSync("/proc/self/limits", "utf8");
  } catch {
    return most;
  }
  const soft = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1]);
  return Number.isSafeInteger(soft) && soft > 0 ? Math.max(1, Math.min(most, Math.floor(soft / 2))) : most;
}

const LIMITS = {
  /** Bytes waiting to be sent to one connection beyond which it is too slow and is dropped. */
  maxBufferedBytes: 1024 * 1024,
  /** Bytes of live events held for one connection while its catch-up is sent, beyond which it is dropped. */
  maxHeldBytes: 16 * 1024 * 1024,
  /**
   * Bytes of one request beyond which it is refused unread: 1,000 bindings of up to 125 characters
   * fit (a call id binding is about 56); parsing more would only be work for a refusal.
   */
  maxMessageBytes: 128 * 1024,
  /**
   * Bytes one connection may send a second (each message counting at least messageCost); past
   * that its socket is not read until its excess is paid off, so a flood of large or many requests
   * waits in its own buffers instead of taking the server's time. 128 KiB is two of the largest
   * requests, or twenty 1,000-binding subscribes of call ids, a second; a console sends a ping
   * every 25 s.
   */
  readBytesPerSecond: 128 * 1024,
  messageCost: 1024,
  /** Requests waiting on one connection; more are answered with an error. */
  maxQueuedRequests: 64,
  /** How long a closed connection's peer may take to read what is left before it is cut. */
  closeGraceMs: 5_000,
};

export interface EventSocketsDeps {
  bus: EventBus;
  log: Pick<EventLog, "since">;
  auth: TokenCheck;
  /** Users and accounts disabled or deleted end the sockets they opened. */
  store: Pick<Store, "onChange">;
  clock: Clock;
  logger: FastifyBaseLogger;
  limits?: Partial<EventSocketLimits>;
}

/** Close codes (4000-4999: private use). The token behind the socket ended. */
const AUTH_ENDED_CODE = 4001;
/** Nothing was bound within the idle window. */
const IDLE_CODE = 4002;
/** The client fell too far behind. */
const TOO_SLOW_CODE = 4008;
const GOING_AWAY = 1001;
/** RFC 6455's "try again later": the server holds as many sockets as it takes. */
const TRY_AGAIN_LATER = 1013;
/** Events read from the log per step of a catch-up. */
const CATCH_UP_PAGE = 500;

/**
 * The families a binding may start with: what the bus publishes, and `qubicle`, the hosted
 * product's old spelling of `callq`. An unknown family is refused, as the hosted service does.
 */
const FAMILIES = new Set(["call", "object", "callq", "qubicle", "notification", "texting", "directory", "training"]);
const SEGMENT = /^(?:[A-Za-z0-9_-]+|\*|#)$/;
const MAX_BINDING_LENGTH = 256;

function isValidBinding(binding: string): boolean {
  if (binding.length === 0 || binding.length > MAX_BINDING_LENGTH) return false;
  const segments = binding.split(".");
  return FAMILIES.has(segments[0] ?? "") && segments.every((s) => SEGMENT.test(s));
}

interface Frame {
  seq: number;
  bytes: Buffer;
}

/** The token a connection's bindings of one account were granted with. */
interface Grant {
  token: string;
  tokenId: string;
  accountId: string;
  ownerId: string | null;
  /** When the token expires unless it was used since (clock ms), as last looked at. */
  expiresAt: number;
  timer: Cancel | null;
}

interface Hub {
  readonly bus: EventBus;
  readonly log: Pick<EventLog, "since">;
  readonly auth: TokenCheck;
  readonly clock: Clock;
  readonly logger: FastifyBaseLogger;
  readonly limits: EventSocketLimits;
  index(connection: Connection, accountId: string): void;
  unindex(connection: Connection, accountId: string): void;
  /** Whether one more socket may be bound to this account (null: one it already counts) with this token; the refusal otherwise. */
  refusal(accountId: string | null, tokenId: string): string | null;
  grant(connection: Connection, grant: Grant): void;
  ungrant(connection: Connection, grant: Grant): void;
  idle(connection: Connection, idle: boolean): void;
  drop(connection: Connection): void;
}

type RequestId = string | number | undefined;
type Message = Record<string, unknown>;

/** Why a socket's authority ended, as the client is told it. */
const ENDINGS = {
  revoked: "the token was revoked",
  expired: "the token expired",
  user_disabled: "the user was disabled",
  user_deleted: "the user was deleted",
  account_disabled: "the account was disabled",
  account_deleted: "the account was deleted",
} as const;
type Ending = keyof typeof ENDINGS;

/** Every connection of both listeners, indexed by the accounts they bind to, fed by the bus. */
export class EventSockets {
  readonly #connections = new Set<Connection>();
  readonly #byAccount = new Map<string, Set<Connection>>();
  readonly #grantsByAccount = new Map<string, Map<Connection, Grant>>();
  readonly #grantsByToken = new Map<string, Set<Connection>>();
  /** Connections holding no binding, the one waiting longest first. */
  readonly #idle = new Set<Connection>();
  readonly #hub: Hub;
  readonly #stop: (() => void)[];
  readonly #stopSweep: Cancel;

  constructor(deps: EventSocketsDeps) {
    const connections = this.#connections;
    const byAccount = this.#byAccount;
    const grantsByAccount = this.#grantsByAccount;
    const grantsByToken = this.#grantsByToken;
    const idle = this.#idle;
    const limits = { ...EVENT_SOCKET_LIMITS, ...deps.limits };
    this.#hub = {
      bus: deps.bus,
      log: deps.log,
      auth: deps.auth,
      clock: deps.clock,
      logger: deps.logger,
      limits,
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
      refusal(accountId, id) {
        const ofAccount = accountId === null ? 0 : (grantsByAccount.get(accountId)?.size ?? 0);
        if (ofAccount >= limits.maxPerAccount) return `too many event sockets for this account: ${ofAccount} open, at most ${limits.maxPerAccount}`;
        const ofToken = grantsByToken.get(id)?.size ?? 0;
        if (ofToken >= limits.maxPerToken) return `too many event sockets for this token: ${ofToken} open, at most ${limits.maxPerToken}`;
        return null;
      },
      grant(connection, grant) {
        let ofAccount = grantsByAccount.get(grant.accountId);
        if (!ofAccount) grantsByAccount.set(grant.accountId, (ofAccount = new Map()));
        ofAccount.set(connection, grant);
        let ofToken = grantsByToken.get(grant.tokenId);
        if (!ofToken) grantsByToken.set(grant.tokenId, (ofToken = new Set()));
        ofToken.add(connection);
      },
      ungrant(connection, grant) {
        const ofAccount = grantsByAccount.get(grant.accountId);
        if (ofAccount?.get(connection) === grant) ofAccount.delete(connection);
        if (ofAccount?.size === 0) grantsByAccount.delete(grant.accountId);
        const ofToken = grantsByToken.get(grant.tokenId);
        ofToken?.delete(connection);
        if (ofToken?.size === 0) grantsByToken.delete(grant.tokenId);
      },
      idle(connection, isIdle) {
        if (isIdle) idle.add(connection);
        else idle.delete(connection);
      },
      drop(connection) {
        connections.delete(connection);
        idle.delete(connection);
        for (const accountId of connection.accounts()) this.unindex(connection, accountId);
        for (const grant of connection.grants()) this.ungrant(connection, grant);
      },
    };
    this.#stop = [
      deps.bus.subscribe((event) => this.#fanOut(event)),
      deps.auth.tokens.onEnd((id, why) => this.#tokenEnded(id, why)),
      deps.store.onChange((change) => this.#storeChanged(change)),
    ];
    this.#stopSweep = deps.clock.every(limits.idleMs, () => this.#sweepAll());
  }

  /**
   * Makes room for one more socket, or says why there is none: asked before the upgrade, and again
   * after it. A socket that has bound nothing is worth the least: when they take a quarter of the
   * sockets, or the sockets are all taken, the one waiting longest is closed for the newcomer. So
   * a flood of sockets that never subscribe turns over among itself, a client that subscribes
   * at once still gets in, and only subscribed sockets (which need a token) fill the server.
   */
  admit(): string | null {
    const { maxSockets } = this.#hub.limits;
    const maxIdle = Math.ceil(maxSockets / 4);
    if (this.#idle.size >= maxIdle || this.#connections.size >= maxSockets) {
      const oldest = this.#idle.values().next();
      if (!oldest.done) oldest.value.makeRoom();
    }
    if (this.#connections.size >= maxSockets) return `too many event sockets: ${this.#connections.size} open, at most ${maxSockets}`;
    return null;
  }

  attach(socket: WebSocket): void {
    // Upgrades admitted together may overshoot: the latest ones are turned away here.
    const refusal = this.admit();
    if (refusal !== null) {
      refuse(this.#hub.clock, socket, refusal);
      return;
    }
    this.#connections.add(new Connection(socket, this.#hub));
  }

  /** A plugin declaring the websocket route on the given paths. */
  routes(paths: readonly string[]): FastifyPluginAsync {
    return async (scope) => {
      // Refused before the upgrade: an HTTP answer closes the connection at once.
      const preValidation = async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => {
        const refusal = this.admit();
        if (refusal === null) return;
        // The connection is destroyed after this answer: its descriptor goes back at once.
        reply.header("retry-after", "1").header("connection", "close");
        throw new ApiError("too_many_requests", { message: refusal, retry_after_s: 1 });
      };
      for (const path of paths) scope.get(path, { websocket: true, preValidation }, (socket) => this.attach(socket));
    };
  }

  close(): void {
    for (const stop of this.#stop) stop();
    this.#stopSweep();
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

  #tokenEnded(id: string, why: TokenEnd): void {
    for (const connection of [...(this.#grantsByToken.get(id) ?? [])]) connection.authorityEnded(why);
  }

  #storeChanged(change: StoreChange): void {
    if (change.accountId === null && change.collection === "accounts") {
      const ending = change.kind === "deleted" ? "account_deleted" : change.doc.data.enabled === false ? "account_disabled" : null;
      if (ending === null) return;
      for (const connection of [...(this.#grantsByAccount.get(change.doc.id)?.keys() ?? [])]) connection.authorityEnded(ending);
    } else if (change.accountId !== null && change.collection === "users") {
      const ending = change.kind === "deleted" ? "user_deleted" : change.doc.data.enabled === false ? "user_disabled" : null;
      if (ending === null) return;
      for (const [connection, grant] of [...(this.#grantsByAccount.get(change.accountId) ?? [])]) {
        if (grant.ownerId === change.doc.id) connection.authorityEnded(ending);
      }
    }
  }

  /** Once per idle window: idle sockets closed, silent ones cut, the others pinged, tokens looked at. */
  #sweepAll(): void {
    const now = this.#hub.clock.now();
    for (const connection of [...this.#connections]) connection.sweep(now);
  }
}

/** Turns a socket away: one error message in the protocol's shape, then the close, and a short grace. */
function refuse(clock: Clock, socket: WebSocket, error: string): void {
  socket.send(JSON.stringify({ action: "error", data: { errors: [error] } }));
  socket.close(TRY_AGAIN_LATER, "too many sockets");
  const cancel = clock.after(1_000, () => socket.terminate());
  socket.once("close", cancel);
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

/** One websocket: its grants, its subscriptions, its requests handled one at a time, its send buffer. */
class Connection {
  readonly #subscriptions = new BindingIndex();
  /** Per account, the token its bindings were granted with. */
  readonly #grants = new Map<string, Grant>();
  /** The token the latest subscribe authenticated with: later messages may leave it out. */
  #token: string | null = null;
  #requests: Promise<void> = Promise.resolve();
  #queued = 0;
  /** Live events kept back while a catch-up is sent, so they follow it in order. */
  #held: { frames: (Frame | undefined)[]; next: number; bytes: number } | null = null;
  /** The highest sequence sent. */
  #lastSeq = 0;
  #open = true;
  /** The clock's time when the connection last came to hold no binding. */
  #idleSince: number;
  /** A ping went out and neither a pong nor a message came back since. */
  #awaitingPong = false;
  /**
   * The read budget's current second: when it began (monotonic real time, as a peer's bandwidth
   * is real whatever the server's clock does) and the bytes charged to it.
   */
  #budget = { since: 0, used: 0, paused: false };

  constructor(
    private readonly socket: WebSocket,
    private readonly hub: Hub,
  ) {
    this.#idleSince = hub.clock.now();
    hub.idle(this, true);
    socket.on("message", (data) => this.#receive(data));
    socket.on("pong", () => {
      this.#awaitingPong = false;
    });
    socket.on("close", () => {
      this.#open = false;
      this.#held = null;
      this.#endGrants();
      hub.drop(this);
    });
  }

  accounts(): IterableIterator<string> {
    return this.#subscriptions.accounts();
  }

  grants(): IterableIterator<Grant> {
    return this.#grants.values();
  }

  /** The first binding that delivers this event, if any. */
  match(event: BusEvent): string | undefined {
    // Past its last known expiry the token is looked at again before anything more is sent.
    const grant = this.#grants.get(event.account_id);
    if (grant && this.hub.clock.now() >= grant.expiresAt) this.#checkExpiry(grant);
    if (!this.#open) return undefined;
    return earliest(this.#subscriptions.matching(event).filter((s) => s.from < event.seq))?.binding;
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
    this.#end(GOING_AWAY, "server shutting down");
  }

  /** The token behind the socket ended: the client is told why and the socket closes; no event follows. */
  authorityEnded(ending: Ending): void {
    if (!this.#open) return;
    this.#reply({ action: "error", data: { errors: [`subscription ended: ${ENDINGS[ending]}`], reason: ending } });
    this.#end(AUTH_ENDED_CODE, ENDINGS[ending]);
  }

  /** Gives way to a newcomer: the server is full and this socket has bound nothing. */
  makeRoom(): void {
    this.#reply({ action: "error", data: { errors: ["no subscription yet, and the server needed the room: disconnected"] } });
    this.#end(IDLE_CODE, "idle");
  }

  /** The idle-window round: close when idle too long, cut when the last ping went unanswered, else ping. */
  sweep(now: number): void {
    if (!this.#open) return;
    if (this.#subscriptions.size === 0) {
      if (now - this.#idleSince < this.hub.limits.idleMs) return;
      this.#reply({ action: "error", data: { errors: [`no subscription within ${this.hub.limits.idleMs / 1000} s: disconnected`] } });
      this.#end(IDLE_CODE, "idle");
      return;
    }
    // A ping still queued behind unsent events proves nothing yet; the too-slow limit sees to those.
    if (this.#awaitingPong && this.socket.bufferedAmount > 0) return;
    if (this.#awaitingPong) {
      this.hub.logger.info("events: client did not answer a ping, disconnected");
      this.#open = false;
      this.#endGrants();
      this.hub.drop(this);
      this.socket.terminate();
      return;
    }
    for (const grant of this.#grants.values()) this.#checkExpiry(grant);
    if (!this.#open) return;
    this.#awaitingPong = true;
    this.socket.ping();
  }

  /** Closed by us: out of every index at once, so nothing more is sent, and cut if the peer never answers. */
  #end(code: number, reason: string): void {
    if (!this.#open) return;
    this.#open = false;
    this.#held = null;
    this.#endGrants();
    this.hub.drop(this);
    this.socket.close(code, reason);
    this.#cutAfter(LIMITS.closeGraceMs);
  }

  #endGrants(): void {
    for (const grant of this.#grants.values()) grant.timer?.();
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
    this.hub.logger.info({ buffered: this.socket.bufferedAmount }, "events: client too slow, disconnected");
    // Past the limit on purpose: this one short notice is all the client is still owed.
    this.socket.send(JSON.stringify({ action: "error", data: { errors: ["too slow: disconnected"] } }));
    this.#end(TOO_SLOW_CODE, "too slow");
  }

  /** A peer that never reads never answers the close either; its buffers are freed after a grace. */
  #cutAfter(ms: number): void {
    const cancel = this.hub.clock.after(ms, () => this.socket.terminate());
    this.socket.once("close", cancel);
  }

  #receive(data: RawData): void {
    if (!this.#open) return;
    this.#awaitingPong = false;
    const bytes = byteLengthOf(data);
    this.#charge(bytes);
    if (bytes > LIMITS.maxMessageBytes) {
      this.#reply(failure(undefined, [`message too large: ${bytes} bytes, at most ${LIMITS.maxMessageBytes}`]));
      return;
    }
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

  /** Counts a message against the read budget; over it, the socket is not read until the excess is paid off. */
  #charge(bytes: number): void {
    const budget = this.#budget;
    const now = monotonic.now();
    if (!budget.paused && now - budget.since >= 1_000) {
      budget.since = now;
      budget.used = 0;
    }
    budget.used += Math.max(bytes, LIMITS.messageCost);
    if (budget.paused || budget.used <= LIMITS.readBytesPerSecond) return;
    budget.paused = true;
    this.socket.pause();
    const waitMs = (budget.used / LIMITS.readBytesPerSecond) * 1_000 - (now - budget.since);
    systemClock.after(waitMs, () => {
      budget.paused = false;
      budget.since = monotonic.now();
      budget.used = 0;
      if (this.#open) this.socket.resume();
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
    const grant = await this.#authorize(message, requestId);
    if (grant === null) return;
    const { accountId } = grant;
    const bindings = bindingsOf(message, true, this.hub.limits.maxBindings);
    if ("errors" in bindings) return this.#reply(failure(requestId, bindings.errors));
    const since = sinceOf(field(message, "since"));
    if (since === null) return this.#reply(failure(requestId, ["since must be a whole number"]));
    const added = bindings.list.filter((b) => !this.#subscriptions.get(accountId, b)).length;
    const holding = this.#subscriptions.size + added;
    if (holding > this.hub.limits.maxBindings) {
      return this.#reply(failure(requestId, [`too many bindings: this connection would hold ${holding}, at most ${this.hub.limits.maxBindings}`]));
    }
    const current = this.#grants.get(accountId);
    if (current?.token !== grant.token) {
      // A socket already bound to the account that changes its token counts once against the account.
      const refusal = this.hub.refusal(current ? null : accountId, grant.tokenId);
      if (refusal !== null) {
        this.#reply(failure(requestId, [refusal]));
        // Holding nothing, the socket is of no use: its descriptor goes back at once.
        if (this.#subscriptions.size === 0) this.#end(TRY_AGAIN_LATER, "too many sockets");
        return;
      }
      this.#setGrant(grant);
      if (!this.#open) return;
    }

    // From here to the first await nothing else runs: the new bindings and the catch-up's upper
    // bound are taken at the same instant, so no event falls between catch-up and live delivery.
    const upTo = this.hub.bus.lastSeq;
    const from = since === undefined ? upTo : Math.min(since, upTo);
    /** What the subscriptions this message touched delivered before it: their old `from`, or none. */
    const before = new Map<Subscription, number | undefined>();
    for (const binding of bindings.list) {
      const existing = this.#subscriptions.get(accountId, binding);
      if (!existing) before.set(this.#subscriptions.add(accountId, binding, from), undefined);
      else if (from < existing.from) {
        before.set(existing, existing.from);
        existing.from = from;
      }
    }
    this.hub.index(this, accountId);
    this.hub.idle(this, false);
    const subscribed = this.#subscriptions.bindingsOf(accountId);
    if (since === undefined || from >= upTo) return this.#reply(success(requestId, { subscribed }));

    this.#held = { frames: [], next: 0, bytes: 0 };
    try {
      await this.#catchUp({ accountId, from, upTo, before, requestId, subscribed });
    } finally {
      await this.#release();
    }
  }

  /** Sends the logged events in (from, upTo] that the new bindings deliver and the old ones did not. */
  async #catchUp(c: {
    accountId: string;
    from: number;
    upTo: number;
    before: Map<Subscription, number | undefined>;
    requestId: RequestId;
    subscribed: string[];
  }): Promise<void> {
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
        const matching = this.#subscriptions.matching(event);
        const deliveredBefore = matching.some((s) => {
          const old = c.before.has(s) ? c.before.get(s) : s.from;
          return old !== undefined && old < event.seq;
        });
        if (deliveredBefore) continue;
        const key = earliest(matching.filter((s) => s.from < event.seq))?.binding;
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
    const bindings = bindingsOf(message, false, this.hub.limits.maxBindings);
    if ("errors" in bindings) return this.#reply(failure(requestId, bindings.errors));
    // Without bindings every subscription goes (of the account, when one is named), as the hosted service does.
    const everything = bindings.list.length === 0;
    const wanted = new Set(bindings.list);
    const unsubscribed: string[] = [];
    const touched = new Set<string>();
    for (const s of [...this.#subscriptions.all()]) {
      if ((accountId === undefined || s.accountId === accountId) && (everything || wanted.has(s.binding))) {
        this.#subscriptions.remove(s);
        unsubscribed.push(s.binding);
        touched.add(s.accountId);
      }
    }
    for (const account of touched) {
      if (this.#subscriptions.holds(account)) continue;
      this.hub.unindex(this, account);
      this.#dropGrant(account);
    }
    if (this.#subscriptions.size === 0 && touched.size > 0) {
      this.#idleSince = this.hub.clock.now();
      this.hub.idle(this, true);
    }
    const subscribed = accountId === undefined ? [...this.#subscriptions.all()].map((s) => s.binding) : this.#subscriptions.bindingsOf(accountId);
    this.#reply(success(requestId, { unsubscribed, subscribed }));
  }

  /** The grant the request may bind with, or null once an error has been answered. */
  async #authorize(message: Message, requestId: RequestId): Promise<Grant | null> {
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
    if (!this.#open) return null;
    if (!identity) {
      this.#reply(failure(requestId, ["failed to authenticate token"]));
      return null;
    }
    if (identity.wallboardId !== undefined) {
      this.#reply(failure(requestId, ["a wallboard key reads its wallboard over HTTP and binds no events"]));
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
    return { token, tokenId: tokenId(token), accountId: identity.accountId, ownerId: identity.ownerId, expiresAt: 0, timer: null };
  }

  /** The account's bindings are held on this token from now on, until it ends. */
  #setGrant(grant: Grant): void {
    this.#dropGrant(grant.accountId);
    this.#grants.set(grant.accountId, grant);
    this.hub.grant(this, grant);
    this.#checkExpiry(grant);
  }

  #dropGrant(accountId: string): void {
    const grant = this.#grants.get(accountId);
    if (!grant) return;
    grant.timer?.();
    this.#grants.delete(accountId);
    this.hub.ungrant(this, grant);
  }

  /** Ends the socket if the token has expired, else looks again when it would (use slides it). */
  #checkExpiry(grant: Grant): void {
    grant.timer?.();
    grant.timer = null;
    const expiresAt = this.hub.auth.tokens.expiresAt(grant.token);
    if (expiresAt === null) return this.authorityEnded("revoked");
    grant.expiresAt = expiresAt;
    const left = expiresAt - this.hub.clock.now();
    if (left <= 0) return this.authorityEnded("expired");
    grant.timer = this.hub.clock.after(left + 1, () => this.#checkExpiry(grant));
  }

  #reply(reply: Message): void {
    this.#write(JSON.stringify(reply));
  }
}

/** The subscription made first, of those given. */
function earliest(subscriptions: readonly Subscription[]): Subscription | undefined {
  let first: Subscription | undefined;
  for (const s of subscriptions) if (!first || s.order < first.order) first = s;
  return first;
}

/** A field of `data`, or of the message itself as the old clients send it. */
function field(message: Message, name: string): unknown {
  const data = isObject(message.data) ? message.data : {};
  return data[name] ?? message[name];
}

/** `binding` wins over `bindings` when both are sent, as on the hosted service. More than `max` are refused unread. */
function bindingsOf(message: Message, required: boolean, max: number): { list: string[] } | { errors: string[] } {
  const one = field(message, "binding");
  const many = field(message, "bindings");
  let list: unknown[];
  if (one !== undefined) list = [one];
  else if (Array.isArray(many)) list = many;
  else if (many !== undefined) return { errors: ["bindings must be a list of bindings"] };
  else list = [];
  if (required && list.length === 0) return { errors: ["binding or bindings is required"] };
  if (list.length > max) return { errors: [`too many bindings: ${list.length} in one message, at most ${max}`] };
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

function byteLengthOf(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, b) => sum + b.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
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
}

export interface EventSocketService {
  /** The classic port actually listened on; null when it could not be had. */
  port: number | null;
  close(): Promise<void>;
}

/** `/events` on the main app, and the same protocol on the classic port. */
export async function startEventSockets(app: FastifyInstance, options: EventSocketsOptions): Promise<EventSocketService> {
  const sockets = new EventSockets(options);
  // A scope of its own with @fastify/websocket (registerWebsocket), so the route is upgraded.
  await app.register(async (scope) => {
    await registerWebsocket(scope);
    await scope.register(sockets.routes([EVENTS_PATH]));
  });
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
