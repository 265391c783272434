// The connections SIP arrives on ("flows", RFC 5626): one per WebSocket, each with an id, so
// whatever is sent to a device goes back over the socket it registered on.
import { EventEmitter } from "node:events";

export interface Flow {
  readonly id: string;
  /** The Via transport token for requests this server sends on the flow. */
  readonly transport: "WS" | "WSS";
  /** Host (and port) this server is known by on the flow, for the Via and Contact it sends. */
  readonly localHost: string;
  isOpen(): boolean;
  /** False when the flow is closed and nothing was sent. */
  send(text: string): boolean;
}

interface FlowEvents {
  /** The flow's socket closed: dialogs and requests on it can no longer go anywhere. */
  closed: [flowId: string];
}

export class FlowTable extends EventEmitter<FlowEvents> {
  readonly #flows = new Map<string, Flow>();

  add(flow: Flow): void {
    this.#flows.set(flow.id, flow);
  }

  remove(id: string): void {
    if (this.#flows.delete(id)) this.emit("closed", id);
  }

  get(id: string): Flow | undefined {
    return this.#flows.get(id);
  }

  get size(): number {
    return this.#flows.size;
  }
}

/** The Via this server puts on a request it sends over the flow. */
export function viaOf(flow: Flow, branch: string): string {
  return `SIP/2.0/${flow.transport} ${flow.localHost};branch=${branch}`;
}

/** The Contact of this server on a flow: where the device sends requests back to it. */
export function serverContact(flow: Flow): string {
  return `<sip:switchboard@${flow.localHost};transport=${flow.transport.toLowerCase()}>`;
}
