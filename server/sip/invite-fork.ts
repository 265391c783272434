// One fork of a call this server places: the INVITE to one registered contact of the device, over
// the flow it registered on, as a client transaction with its CANCEL and its ACKs (RFC 3261 §17.1).
import type { Clock, RandomSource } from "../clock.js";
import type { Deadlines } from "./deadlines.js";
import { Dialog } from "./dialog.js";
import type { DialogStateChange } from "./dialog-state.js";
import { serverContact, viaOf, type Flow } from "./flows.js";
import { ackForFailure, cancelFor, inviteText, type OutgoingInvite } from "./invite-request.js";
import { contactUri, newBranch, sdpBody, type SipResponse } from "./message.js";
import type { Binding } from "./registrar.js";
import type { ClientTransactions } from "./transactions.js";

/**
 * ```
 *   calling ──1xx──> proceeding ──2xx──> accepted
 *     │  └──────────────2xx─────────────────^
 *     └────────┴── 3xx-6xx, no answer to the INVITE or after its CANCEL, flow closed ──> failed
 * ```
 * `accepted` and `failed` are final. A CANCEL asked for in `calling` waits for the first 1xx (§9.1).
 * Early dialogs made by a 1xx with a To tag are not kept: nothing is ever sent in them.
 */
export type ForkState = "calling" | "proceeding" | "accepted" | "failed";

const ALLOWED: Record<ForkState, readonly ForkState[]> = {
  calling: ["proceeding", "accepted", "failed"],
  proceeding: ["accepted", "failed"],
  accepted: [],
  failed: [],
};

export class IllegalForkTransition extends Error {
  override name = "IllegalForkTransition";
}

/** The call-wide parts of every fork's INVITE. */
export interface ForkRequest {
  callId: string;
  fromTag: string;
  /** From, its tag included. */
  from: string;
  to: string;
  cseq: number;
  /** Headers after the dialog-forming ones (Allow, Content-Type, the engine's extras). */
  headers: [string, string][];
  body: string;
}

export interface ForkOwner {
  /** A provisional response other than 100 (180 Ringing, 183 Session Progress). */
  ringing(fork: InviteFork): void;
  /**
   * The fork's 2xx, its ACK already sent: true when the call takes the dialog (confirmed);
   * otherwise the fork ends it at once with a BYE.
   */
  accepted(fork: InviteFork, dialog: Dialog, answer: string | null): boolean;
  failed(fork: InviteFork, status: number, reason: string): void;
}

export interface ForkDeps {
  transactions: ClientTransactions;
  deadlines: Deadlines;
  random: RandomSource;
  clock: Clock;
  dialogChanged(callId: string, change: DialogStateChange): void;
}

/** §9.1: a CANCEL not answered by the INVITE's final response within 64 × T1 ends the fork. */
const CANCEL_TIMEOUT_MS = 32_000;

export class InviteFork {
  readonly binding: Binding;
  readonly flow: Flow;
  readonly #request: ForkRequest;
  readonly #invite: OutgoingInvite;
  readonly #branch: string;
  readonly #owner: ForkOwner;
  readonly #deps: ForkDeps;
  #state: ForkState = "calling";
  /** A CANCEL asked for before the first 1xx, with its Reason if any; null when none is waiting. */
  #cancelWaiting: { reason: string | undefined } | null = null;
  #cancelSent = false;
  /** The accepted dialog's far-end tag and the ACK sent for it, sent again for each retransmitted 2xx. */
  #accepted: { remoteTag: string; ack: string } | null = null;

  constructor(binding: Binding, flow: Flow, request: ForkRequest, owner: ForkOwner, deps: ForkDeps) {
    this.binding = binding;
    this.flow = flow;
    this.#request = request;
    this.#owner = owner;
    this.#deps = deps;
    this.#branch = newBranch(deps.random);
    this.#invite = {
      // §8.1.1.1 and pitfall 1: the registered contact, which sip.js recognises as its own.
      uri: binding.contact,
      via: viaOf(flow, this.#branch),
      from: request.from,
      to: request.to,
      callId: request.callId,
      cseq: request.cseq,
    };
  }

  get state(): ForkState {
    return this.#state;
  }

  get finished(): boolean {
    return this.#state === "accepted" || this.#state === "failed";
  }

  /** Sends the INVITE; false when the flow would not take it. */
  start(): boolean {
    const invite = this.#invite;
    this.#deps.transactions.start({
      branch: this.#branch,
      method: "INVITE",
      cseq: invite.cseq,
      flowId: this.flow.id,
      onProvisional: (response) => this.#provisional(response),
      onFinal: (status, response) => this.#final(status, response),
      onLater2xx: (response) => this.#later2xx(response),
    });
    const sent = this.flow.send(inviteText(invite, [["Contact", serverContact(this.flow)], ...this.#request.headers], this.#request.body));
    if (!sent) {
      this.#deps.transactions.stop(this.#branch, "INVITE", invite.cseq);
      this.#move("failed");
    }
    return sent;
  }

  /** CANCELs the INVITE if it is still pending (idempotent); `reason` goes in a Reason header. */
  cancel(reason?: string): void {
    if (this.finished || this.#cancelSent) return;
    if (this.#state === "calling") {
      this.#cancelWaiting = { reason };
      return;
    }
    this.#sendCancel(reason);
  }

  #sendCancel(reason: string | undefined): void {
    this.#cancelSent = true;
    this.#cancelWaiting = null;
    this.#deps.transactions.start({ branch: this.#branch, method: "CANCEL", cseq: this.#invite.cseq, flowId: this.flow.id });
    this.flow.send(cancelFor(this.#invite, reason));
    this.#deps.deadlines.after(CANCEL_TIMEOUT_MS, () => {
      if (this.finished) return;
      this.#deps.transactions.stop(this.#branch, "INVITE", this.#invite.cseq);
      this.#move("failed");
      this.#owner.failed(this, 408, "Request Timeout");
    });
  }

  #provisional(response: SipResponse): void {
    if (this.#state === "calling") this.#move("proceeding");
    if (this.#cancelWaiting) {
      this.#sendCancel(this.#cancelWaiting.reason);
      return;
    }
    if (response.status > 100) this.#owner.ringing(this);
  }

  #final(status: number, response: SipResponse | undefined): void {
    if (this.finished) return;
    if (response && status < 300) {
      this.#move("accepted");
      const dialog = this.#dialogOf(response);
      const ack = this.#ack(dialog);
      this.#accepted = { remoteTag: dialog.remoteTag, ack };
      if (!this.#owner.accepted(this, dialog, sdpBody(response.message))) this.#bye(dialog);
      return;
    }
    if (response) this.flow.send(ackForFailure(this.#invite, response));
    this.#move("failed");
    if (response) this.#owner.failed(this, status, response.message.reasonPhrase ?? "");
    // A flow that closed under the INVITE (503 from the transaction layer): the device went away.
    else if (status === 503) this.#owner.failed(this, 480, "Temporarily Unavailable");
    else this.#owner.failed(this, 408, "Request Timeout");
  }

  #later2xx(response: SipResponse): void {
    if (this.#accepted && response.message.toTag === this.#accepted.remoteTag) {
      this.flow.send(this.#accepted.ack);
      return;
    }
    // A 2xx from another UA behind the same contact: a dialog of its own, not wanted.
    const dialog = this.#dialogOf(response);
    this.#ack(dialog);
    this.#bye(dialog);
  }

  /** The dialog a 2xx makes (§12.1.2): its To tag and Contact, our From. */
  #dialogOf(response: SipResponse): Dialog {
    const message = response.message;
    const dialog = new Dialog(
      {
        callId: this.#request.callId,
        localTag: this.#request.fromTag,
        remoteTag: message.toTag ?? "",
        localParty: this.#request.from,
        remoteParty: message.getHeader("to") ?? this.#request.to,
        remoteTarget: contactUri(message) ?? this.binding.contact,
        localCseq: this.#request.cseq,
        remoteCseq: null,
        flowId: this.flow.id,
      },
      this.#deps.clock,
      (change) => this.#deps.dialogChanged(this.#request.callId, change),
    );
    dialog.transition("confirmed", `${response.status} to INVITE`);
    return dialog;
  }

  /** The ACK of a 2xx (§13.2.2.4): a request of the dialog with the INVITE's CSeq and a new branch. */
  #ack(dialog: Dialog): string {
    const ack = dialog.request(this.flow, { method: "ACK", branch: newBranch(this.#deps.random), cseq: this.#request.cseq });
    this.flow.send(ack);
    return ack;
  }

  /** Ends an answered dialog nobody wants (late 2xx after another fork or a CANCEL won the race). */
  #bye(dialog: Dialog): void {
    dialog.transition("terminated", "not wanted");
    const branch = newBranch(this.#deps.random);
    const cseq = dialog.nextCseq();
    this.#deps.transactions.start({ branch, method: "BYE", cseq, flowId: this.flow.id });
    this.flow.send(dialog.request(this.flow, { method: "BYE", branch, cseq }));
  }

  #move(to: ForkState): void {
    if (!ALLOWED[this.#state].includes(to)) throw new IllegalForkTransition(`fork cannot go from ${this.#state} to ${to}`);
    this.#state = to;
  }
}
