// A call a device places to this server, the UAS side of its INVITE: the responses the engine asks
// for (180, 200 then the ACK, an error), the caller's CANCEL, and the dialog the call lives in.
import { EventEmitter } from "node:events";
import type { Clock } from "../clock.js";
import { CallDialog, failureStatus, SignallingError, type CallDialogDeps, type ReinviteResponder } from "./call-dialog.js";
import type { CallParty, DeviceRef, InboundCall, InboundCallEvents, InfoDtmf, ReferRequest } from "./call-signalling.js";
import { Dialog } from "./dialog.js";
import type { ServerTransaction } from "./dispatcher.js";
import { serverContact, type Flow } from "./flows.js";
import type { AdmittedInvite } from "./invite-admission.js";
import type { NameAddr, SipRequest } from "./message.js";
import { sessionTimerHeaders } from "./session-timer.js";

export interface InboundInviteInit {
  request: SipRequest;
  flow: Flow;
  transaction: ServerTransaction;
  admitted: AdmittedInvite;
}

export interface InboundInviteDeps extends CallDialogDeps {
  clock: Clock;
  /** Called once, when the INVITE has its final response. */
  settled(): void;
}

export class InboundInvite extends EventEmitter<InboundCallEvents> implements InboundCall {
  readonly callId: string;
  readonly device: DeviceRef;
  readonly from: CallParty;
  readonly to: CallParty;
  readonly dialled: string;
  readonly offer: string;
  readonly headers: ReadonlyMap<string, string[]>;
  readonly #transaction: ServerTransaction;
  readonly #call: CallDialog;
  readonly #flow: Flow;
  readonly #cseq: number;
  readonly #deps: InboundInviteDeps;
  /** The session timer the caller asked for, echoed in the 200 (RFC 4028). */
  readonly #timer: [string, string][];
  #rang = false;
  #settled = false;

  constructor(init: InboundInviteInit, deps: InboundInviteDeps) {
    super();
    const message = init.request.message;
    this.callId = message.callId;
    this.device = { accountId: init.admitted.account.id, deviceId: init.admitted.device.id };
    this.from = partyOf(message.from);
    this.to = partyOf(message.to);
    this.dialled = init.request.uri.user ?? "";
    this.offer = init.admitted.offer;
    this.headers = headerMap(init.request);
    this.#transaction = init.transaction;
    this.#flow = init.flow;
    this.#cseq = message.cseq;
    this.#deps = deps;
    this.#timer = sessionTimerHeaders(init.request);
    const dialog = new Dialog(
      {
        callId: message.callId,
        localTag: init.transaction.toTag,
        remoteTag: message.fromTag,
        localParty: `${message.getHeader("to") ?? ""};tag=${init.transaction.toTag}`,
        remoteParty: message.getHeader("from") ?? "",
        remoteTarget: init.admitted.remoteTarget,
        localCseq: 0,
        remoteCseq: message.cseq,
        flowId: init.flow.id,
      },
      deps.clock,
      (change) => deps.dialogChanged(message.callId, change),
    );
    this.#call = new CallDialog(
      dialog,
      {
        gone: (_why, early) => {
          if (!early) {
            this.emit("bye");
            return;
          }
          // A BYE in the early dialog (§15) or a closed socket: the caller gave up like a CANCEL.
          this.#transaction.respond({ status: 487 });
          this.#settle();
          this.emit("cancel");
        },
        reinvite: (offer: string, respond: ReinviteResponder) => this.emit("reinvite", offer, respond),
        dtmf: (dtmf: InfoDtmf) => {
          this.emit("dtmf", dtmf);
        },
        refer: (refer: ReferRequest) => this.emit("refer", refer),
      },
      deps,
      false,
    );
  }

  /** The To tag of every response, the 200 to a CANCEL included (§9.2). */
  get localTag(): string {
    return this.#transaction.toTag;
  }

  ringing(): void {
    if (this.#rang || this.#transaction.answered) return;
    this.#rang = true;
    this.#transaction.respond({ status: 180, headers: [["Contact", serverContact(this.#flow)]] });
  }

  answer(sdp: string): Promise<void> {
    if (this.#transaction.answered || this.#call.state !== "early") {
      return Promise.reject(new SignallingError(`the call cannot be answered: it is ${this.#call.state === "early" ? "answered" : this.#call.state}`));
    }
    this.#call.confirm("answered");
    const acked = this.#call.awaitAck(this.#cseq, true);
    this.#transaction.respond({
      status: 200,
      headers: [
        ["Contact", serverContact(this.#flow)],
        ["Allow", this.#deps.allow()],
        ...this.#timer,
        ["Content-Type", "application/sdp"],
      ],
      body: sdp,
    });
    this.#settle();
    return acked;
  }

  reject(code: number, reason?: string, retryAfterS?: number): void {
    const status = failureStatus(code);
    if (this.#transaction.answered) return;
    const headers: [string, string][] = retryAfterS === undefined ? [] : [["Retry-After", String(Math.max(0, Math.round(retryAfterS)))]];
    this.#transaction.respond({ status, reason, headers });
    this.#call.end(`rejected ${status}`);
    this.#settle();
  }

  hangup(): Promise<void> {
    // Before an answer there is no BYE to send (§15): the INVITE gets its final response instead.
    if (this.#call.state === "early") {
      this.reject(480);
      return Promise.resolve();
    }
    return this.#call.hangup();
  }

  reinvite(offer: string): Promise<string> {
    return this.#call.reinvite(offer);
  }

  /** The caller's CANCEL (already answered 200): 487 unless a final response went first (§9.2). */
  cancelled(): void {
    if (this.#transaction.answered) return;
    this.#transaction.respond({ status: 487 });
    this.#call.end("cancel");
    this.#settle();
    this.emit("cancel");
  }

  /** The same INVITE again (same branch): the last response again (§17.2.1). */
  retransmitted(): void {
    this.#transaction.resend();
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#deps.settled();
  }
}

function partyOf(nameAddr: NameAddr): CallParty {
  const display = nameAddr.displayName;
  return { user: nameAddr.uri.user ?? "", ...(display ? { display } : {}) };
}

function headerMap(request: SipRequest): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { name, value } of request.raw.headers) out.set(name, [...(out.get(name) ?? []), value]);
  return out;
}
