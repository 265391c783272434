// SIP over WebSocket (RFC 7118) at /sip: the upgrade with subprotocol `sip`, one SIP message per
// WebSocket message, each connection a flow whose messages are handled in order within its
// budget (budget.ts); junk is dropped, a persistent flooder disconnected.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RawData, WebSocket } from "ws";
import { monotonic, type RandomSource } from "../clock.js";
import { ApiError } from "../http/errors.js";
import { DEFAULT_BUDGET, MessageBudget, type BudgetOptions } from "./budget.js";
import type { SipDispatcher, SipLog } from "./dispatcher.js";
import type { Flow, FlowTable } from "./flows.js";
import { randomHex } from "./message.js";
import type { Registrar } from "./registrar.js";

const SIP_PATH = "/sip";
const SIP_SUBPROTOCOL = "sip";

export interface WsTransportOptions {
  dispatcher: SipDispatcher;
  flows: FlowTable;
  registrar: Registrar;
  random: RandomSource;
  log: SipLog;
  /** Each connection's message budget; DEFAULT_BUDGET on the process's monotonic clock unless told. */
  budget?: BudgetOptions;
  /** Most SIP connections open at once (MAX_SIP_SOCKETS unless told). */
  maxSockets?: number;
  /** True when a device is registered or a call is up over the flow: it is never closed to make room. */
  inUse?(flowId: string): boolean;
}

/** Messages waiting on one connection beyond this are dropped, so a flood cannot pile up. */
const MAX_QUEUED = 64;
/** The Via host when the upgrade carried no Host (the guard refuses those, but be sure). */
const FALLBACK_HOST = "switchboard.invalid";
/**
 * SIP connections open at once: every agent's console and phones with room to spare, well under
 * the process's descriptors. All local clients share 127.0.0.1, so a cap per address would be
 * this one.
 */
export const MAX_SIP_SOCKETS = 256;
/** RFC 6455 §7.4.1: the endpoint ends the connection because a message broke its policy. */
const CLOSE_POLICY_VIOLATION = 1008;
/** IANA's WebSocket close code "Try Again Later". */
const CLOSE_TRY_AGAIN_LATER = 1013;
/**
 * For this long after a socket was closed for flooding, new sockets start with a few tokens
 * instead of a full burst: a flooder reconnecting gets little, a phone still its REGISTER and
 * INVITE through, and the bucket fills at the usual rate.
 */
const WARY_MS = 10_000;
const WARY_INITIAL_TOKENS = 5;
/** A connection this young may still be about to REGISTER: it is not closed to make room. */
const EVICTION_GRACE_MS = 5000;

interface OpenSocket {
  socket: WebSocket;
  openedAt: number;
  /** When its last message arrived (its opening, before any). */
  heardAt: number;
}

export function registerWsTransport(app: FastifyInstance, options: WsTransportOptions): void {
  const budget = options.budget ?? { ...DEFAULT_BUDGET, now: monotonic.now };
  const maxSockets = options.maxSockets ?? MAX_SIP_SOCKETS;
  const inUse = options.inUse ?? (() => true);
  const open = new Map<string, OpenSocket>();
  let floodClosedAt = Number.NEGATIVE_INFINITY;

  /**
   * At the cap, the connection that registered nothing, carries no call, is past its grace and
   * was heard from least recently is closed for the new one, so idle sockets held by someone
   * without credentials cannot lock the agents' phones out.
   */
  const makeRoom = (): boolean => {
    const now = monotonic.now();
    let idlest: [string, OpenSocket] | null = null;
    for (const entry of open) {
      const [flowId, held] = entry;
      if (now - held.openedAt < EVICTION_GRACE_MS || inUse(flowId)) continue;
      if (!idlest || held.heardAt < idlest[1].heardAt) idlest = entry;
    }
    if (!idlest) return false;
    const [flowId, held] = idlest;
    options.log.warn({ flow: flowId }, "sip: connection closed to make room, nothing was registered over it");
    held.socket.close(CLOSE_TRY_AGAIN_LATER, "Too many SIP connections; nothing was registered over this one");
    // Its slot is needed now, not after the closing handshake.
    open.delete(flowId);
    options.flows.remove(flowId);
    options.registrar.dropFlow(flowId);
    return true;
  };

  const admit = async (request: FastifyRequest): Promise<void> => {
    if (!request.ws) return;
    requireSubprotocol(request);
    if (options.flows.size >= maxSockets && !makeRoom()) {
      options.log.warn({ open: options.flows.size }, "sip: connection refused, too many open");
      throw new ApiError("too_many_requests", { message: `at most ${maxSockets} SIP connections may be open at once` });
    }
  };

  app.get(SIP_PATH, { websocket: true, onRequest: admit }, (socket, request) => {
    const flow = wsFlow(randomHex(options.random), socket, request.headers.host ?? FALLBACK_HOST);
    options.flows.add(flow);
    const opened = monotonic.now();
    const held: OpenSocket = { socket, openedAt: opened, heardAt: opened };
    open.set(flow.id, held);
    const wary = opened - floodClosedAt < WARY_MS;
    const allowance = new MessageBudget(wary ? { ...budget, initial: Math.min(WARY_INITIAL_TOKENS, budget.burst) } : budget);
    let queue: Promise<void> = Promise.resolve();
    let queued = 0;

    socket.on("message", (data, isBinary) => {
      held.heardAt = monotonic.now();
      const admission = allowance.admit();
      if (admission === "close") {
        floodClosedAt = monotonic.now();
        options.log.warn({ flow: flow.id }, "sip: connection closed, it kept sending over its budget");
        socket.close(CLOSE_POLICY_VIOLATION, "SIP message rate exceeded");
        return;
      }
      if (admission === "drop") {
        options.log.debug({ flow: flow.id }, "sip: over budget, message dropped");
        return;
      }
      const text = decode(data);
      if (text === null) {
        allowance.malformed();
        options.log.debug({ flow: flow.id, binary: isBinary }, "sip: frame is not UTF-8 text, dropped");
        return;
      }
      if (queued >= MAX_QUEUED) {
        options.log.debug({ flow: flow.id }, "sip: too many messages waiting, dropped");
        return;
      }
      queued++;
      // One at a time per flow: a REGISTER and the un-REGISTER after it must not cross.
      queue = queue
        .then(async () => {
          if ((await options.dispatcher.receive(text, flow)) === "malformed") allowance.malformed();
        })
        .catch((err: unknown) => options.log.error({ err, flow: flow.id }, "sip: message handling failed"))
        .finally(() => {
          queued--;
        });
    });

    socket.on("close", () => {
      open.delete(flow.id);
      options.flows.remove(flow.id);
      options.registrar.dropFlow(flow.id);
    });
  });
}

/** RFC 7118 §4.1: the handshake must agree on `sip`; a client that did not offer it is refused. */
function requireSubprotocol(request: FastifyRequest): void {
  const offered = String(request.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((p) => p.trim().toLowerCase());
  if (!offered.includes(SIP_SUBPROTOCOL)) {
    throw new ApiError("validation_error", { "sec-websocket-protocol": { required: { message: "the WebSocket subprotocol sip is needed" } } });
  }
  // The app-wide WebSocket server picks the first protocol offered; this route speaks only sip,
  // so the offer it sees is narrowed to that.
  request.raw.headers["sec-websocket-protocol"] = SIP_SUBPROTOCOL;
}

function wsFlow(id: string, socket: WebSocket, host: string): Flow {
  const isOpen = () => socket.readyState === socket.OPEN;
  return {
    id,
    // The server listens on plain HTTP; a TLS front end would make this WSS.
    transport: "WS",
    localHost: host,
    isOpen,
    send(text) {
      if (!isOpen()) return false;
      try {
        socket.send(text);
        return true;
      } catch {
        return false;
      }
    },
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** RFC 7118 allows SIP in text or binary frames; either way it must be UTF-8. */
function decode(data: RawData): string | null {
  const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}
