// The connections SIP arrives on ("flows", RFC 5626): one per WebSocket, each with an id, so
// whatever is sent to a device goes back over the socket it registered on.
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

export class FlowTable {
  readonly #flows = new Map<string, Flow>();

  add(flow: Flow): void {
    this.#flows.set(flow.id, flow);
  }

  remove(id: string): void {
    this.#flows.delete(id);
  }

  get(id: string): Flow | undefined {
    return this.#flows.get(id);
  }

  get size(): number {
    return this.#flows.size;
  }
}
