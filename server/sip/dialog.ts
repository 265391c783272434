// One SIP dialog (RFC 3261 §12): its id (Call-ID and both tags), the parties and the far end's
// target, both CSeq sequences and its state; it writes the requests this server sends inside it.
import type { TimeReader } from "../clock.js";
import { DialogStateMachine, type DialogState, type DialogStateChange } from "./dialog-state.js";
import { serverContact, viaOf, type Flow } from "./flows.js";
import { buildRequest } from "./message.js";

export interface DialogInit {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** This side's From/To value as sent, its tag included (`"Name" <sip:1002@realm>;tag=x`). */
  localParty: string;
  /** The far end's From/To value as it came, its tag included. */
  remoteParty: string;
  /** The far end's Contact URI: the Request-URI of every request sent inside the dialog. */
  remoteTarget: string;
  /** The CSeq of the last request this side sent (the INVITE's for a call this server placed). */
  localCseq: number;
  /** The CSeq of the last request the far end sent; null until it sends one. */
  remoteCseq: number | null;
  /** The flow the dialog lives on: its requests travel over the socket its INVITE came or went on. */
  flowId: string;
}

export interface InDialogRequest {
  method: string;
  branch: string;
  cseq: number;
  headers?: [string, string][];
  body?: string;
}

/** The key of a dialog as seen from this side. */
export function dialogId(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}\n${localTag}\n${remoteTag}`;
}

export class Dialog {
  readonly id: string;
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  readonly localParty: string;
  readonly remoteParty: string;
  readonly remoteTarget: string;
  readonly flowId: string;
  #localCseq: number;
  #remoteCseq: number | null;
  readonly #machine: DialogStateMachine;

  constructor(init: DialogInit, clock: TimeReader, onChange: (change: DialogStateChange) => void = () => undefined) {
    this.id = dialogId(init.callId, init.localTag, init.remoteTag);
    this.callId = init.callId;
    this.localTag = init.localTag;
    this.remoteTag = init.remoteTag;
    this.localParty = init.localParty;
    this.remoteParty = init.remoteParty;
    this.remoteTarget = init.remoteTarget;
    this.flowId = init.flowId;
    this.#localCseq = init.localCseq;
    this.#remoteCseq = init.remoteCseq;
    this.#machine = new DialogStateMachine(clock, onChange);
  }

  get state(): DialogState {
    return this.#machine.state;
  }

  /** The one way the dialog changes state; throws on a move the diagram does not have. */
  transition(to: DialogState, reason: string): DialogStateChange {
    return this.#machine.transition(to, reason);
  }

  /** Whether a request of the far end comes in order; an in-order one moves the remote CSeq on. */
  acceptRemoteCseq(cseq: number): boolean {
    // §12.2.2: lower than the last is out of order (500); ACK and CANCEL never come through here.
    if (this.#remoteCseq !== null && cseq < this.#remoteCseq) return false;
    this.#remoteCseq = cseq;
    return true;
  }

  /** The CSeq of the next request this side sends (§12.2.1.1: one more than the last). */
  nextCseq(): number {
    this.#localCseq += 1;
    return this.#localCseq;
  }

  /** A request inside the dialog (§12.2.1.1): to the remote target, the parties as From and To. */
  request(flow: Flow, spec: InDialogRequest): string {
    const headers: [string, string][] = [
      ["Via", viaOf(flow, spec.branch)],
      ["Max-Forwards", "70"],
      ["From", this.localParty],
      ["To", this.remoteParty],
      ["Call-ID", this.callId],
      ["CSeq", `${spec.cseq} ${spec.method}`],
    ];
    if (spec.method === "INVITE") headers.push(["Contact", serverContact(flow)]);
    return buildRequest({ method: spec.method, uri: this.remoteTarget, headers: [...headers, ...(spec.headers ?? [])], body: spec.body });
  }
}
