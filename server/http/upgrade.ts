// An HTTP upgrade (a WebSocket handshake) asked of a route that is not a WebSocket's: refused as
// @fastify/websocket refuses one, by completing the handshake and closing the socket at once.
// Shared by the app's wrapper of every other route (app.ts) and the endpoints' GET routes
// (endpoint.ts), which refuse it themselves after their token check.
import type { IncomingMessage } from "node:http";
import { WebSocketServer } from "ws";
import type { FastifyReply, FastifyRequest } from "fastify";

/** Completes refused upgrades (and nothing else): no socket is kept. */
let refusedUpgrades: WebSocketServer | undefined;

/**
 * A request Node handed to the server's upgrade listener (its parser sets `upgrade`, which
 * @types/node does not declare).
 */
export function isUpgrade(raw: IncomingMessage): boolean {
  return (raw as IncomingMessage & { upgrade?: boolean }).upgrade === true;
}

/**
 * An upgrade asked of a route that is not a WebSocket's: switched, then closed at once (no close
 * code), as @fastify/websocket refuses such a path.
 */
export function refuseUpgrade(request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  refusedUpgrades ??= new WebSocketServer({ noServer: true });
  request.log.info({ path: request.url }, "closed incoming websocket connection for path with no websocket handler");
  refusedUpgrades.handleUpgrade(request.raw, request.raw.socket, Buffer.alloc(0), (socket) => socket.close());
}
