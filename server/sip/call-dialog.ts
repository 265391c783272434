// What happens inside an INVITE dialog, whichever side placed the call: the far end's BYE,
// re-INVITE (and its ACK), INFO, UPDATE and REFER, the ACK this side waits for, and the BYE and
// re-INVITE it sends.
import type { RandomSource } from "../clock.js";
import type { InfoDtmf, ReferRequest } from "./call-signalling.js";
import type { Deadlines } from "./deadlines.js";
import type { Dialog } from "./dialog.js";
import type { DialogState, DialogStateChange } from "./dialog-state.js";
import type { DialogTable } from "./dialog-table.js";
import type { ServerTransaction, SipReply } from "./dispatcher.js";
import { DTMF_INFO_TYPES, parseDtmfInfo } from "./dtmf-info.js";
import { serverContact, viaOf, type Flow, type FlowTable } from "./flows.js";
import { ackForFailure } from "./invite-request.js";
import { mediaType, newBranch, sdpBody, type SipRequest } from "./message.js";
import { InDialogRefer, readRefer } from "./refer.js";
import type { ClientTransactions } from "./transactions.js";
import { sessionTimerHeaders, sessionTimerRefusal } from "./session-timer.js";

export interface ReinviteResponder {
  answer(sdp: string): void;
  reject(code: number): void;
}

/** What the call owning the dialog hears of it. */
export interface DialogOwner {
  /**
   * The far end ended the dialog (its BYE, already answered 200) or can no longer be reached (its
   * flow closed, 408/481 to a request); the dialog is terminated. `early`: no 2xx had been sent.
   */
  gone(why: "bye" | "unreachable", early: boolean): void;
  /** The far end's re-INVITE for the engine; false when nobody takes it (it is refused 488). */
  reinvite(offer: string, respond: ReinviteResponder): boolean;
  dtmf(dtmf: InfoDtmf): void;
  /** The far end's REFER for the engine; false when nobody takes it (it is refused 603). */
  refer(refer: ReferRequest): boolean;
}

export interface CallDialogDeps {
  flows: FlowTable;
  transactions: ClientTransactions;
  deadlines: Deadlines;
  random: RandomSource;
  table: DialogTable<CallDialog>;
  /** The methods this server takes, for Allow. */
  allow(): string;
  /** Hears every state change of every dialog (the service logs them). */
  dialogChanged(callId: string, change: DialogStateChange): void;
}

/** A request of this server that failed, with the SIP status that says why when there is one. */
export class SignallingError extends Error {
  override name = "SignallingError";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * The far end refused a request of this server with `status`; `retryAfterS` is its Retry-After
 * (seconds) when it gave one.
 */
export class RefusedByFarEnd extends SignallingError {
  constructor(
    message: string,
    status: number,
    readonly retryAfterS?: number,
  ) {
    super(message, status);
  }
}

/** How many times a re-INVITE the far end could not take yet (491, 500 with Retry-After) is sent again. */
const REINVITE_RETRIES = 2;
/** A Retry-After longer than this (seconds) is not waited for: the change is refused instead. */
const LONGEST_RETRY_AFTER_S = 10;

/** RFC 3261 §13.3.1.4: 64 × T1 without the ACK of a 2xx ends the session. */
export const ACK_TIMEOUT_MS = 32_000;

/** A final error status the engine may send: 300 to 699. */
export function failureStatus(code: number): number {
  if (!Number.isInteger(code) || code < 300 || code > 699) throw new RangeError(`a final error response is 300..699, not ${code}`);
  return code;
}

/**
 * The promise itself, marked handled: an engine that lets a failed answer or re-INVITE go
 * unawaited must not bring the whole server down with an unhandled rejection. Awaiting it
 * still throws.
 */
function handledToo<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

interface AckWait {
  cseq: number;
  /** The ACK of the call's first 2xx: without it the call ends; a re-INVITE's just lapses. */
  initial: boolean;
  done: Promise<void>;
  settle(err?: Error): void;
}

export class CallDialog {
  readonly dialog: Dialog;
  readonly #owner: DialogOwner;
  readonly #deps: CallDialogDeps;
  #ackWait: AckWait | null = null;
  /** The far end's re-INVITE waiting for the engine's answer. */
  #serving: ServerTransaction | null = null;
  /** This side's re-INVITE waiting for its final response. */
  #sending = false;

  /** Whether this side chose the dialog's Call-ID (sent the INVITE that made it): §14.1's waits differ. */
  readonly #ownsCallId: boolean;

  constructor(dialog: Dialog, owner: DialogOwner, deps: CallDialogDeps, ownsCallId: boolean) {
    this.dialog = dialog;
    this.#owner = owner;
    this.#deps = deps;
    this.#ownsCallId = ownsCallId;
    deps.table.add(this);
  }

  get id(): string {
    return this.dialog.id;
  }

  get flowId(): string {
    return this.dialog.flowId;
  }

  get state(): DialogState {
    return this.dialog.state;
  }

  confirm(reason: string): void {
    this.dialog.transition("confirmed", reason);
  }

  /** Ends the dialog without a BYE (a final error response, a CANCEL); false when it had ended. */
  end(reason: string): boolean {
    if (this.dialog.state === "terminated") return false;
    this.dialog.transition("terminated", reason);
    this.#deps.table.remove(this);
    this.#ackWait?.settle(new SignallingError(`the dialog ended before the ACK came (${reason})`));
    // §15.1.2: what is still pending in a dialog that ends is answered 487.
    this.#serving?.respond({ status: 487 });
    this.#serving = null;
    return true;
  }

  /**
   * Waits for the ACK of this side's 2xx to the INVITE with `cseq`. Without the first one the
   * session ends with a BYE (§13.3.1.4); the promise rejects then, or when the dialog ends first.
   */
  awaitAck(cseq: number, initial: boolean): Promise<void> {
    let settle: (err?: Error) => void = () => undefined;
    const done = new Promise<void>((resolve, reject) => {
      settle = (err) => (err ? reject(err) : resolve());
    });
    const cancelTimer = this.#deps.deadlines.after(ACK_TIMEOUT_MS, () => {
      wait.settle(new SignallingError("no ACK came for the 2xx", 408));
      if (initial) void this.#bye("ack timeout");
    });
    const wait: AckWait = {
      cseq,
      initial,
      done,
      settle: (err) => {
        cancelTimer();
        if (this.#ackWait === wait) this.#ackWait = null;
        settle(err);
      },
    };
    this.#ackWait = wait;
    return handledToo(done);
  }

  /** An ACK over `flowId`; one from another connection than the call's is ignored (it gets no answer). */
  receiveAck(request: SipRequest, flowId: string): void {
    if (flowId !== this.dialog.flowId) return;
    if (this.#ackWait?.cseq === request.message.cseq) this.#ackWait.settle();
  }

  /**
   * A request of the far end inside the dialog, arrived over `flowId`: the reply, or null when it
   * was (or will be) answered here.
   */
  receive(request: SipRequest, transaction: ServerTransaction, flowId: string): SipReply | null {
    // Only the device in the call, over the connection the call lives on, may speak in its dialog:
    // a BYE, re-INVITE, UPDATE, INFO or REFER from any other connection (one that learnt the
    // Call-ID and tags) is refused before it can touch the dialog, its CSeq included. No live
    // dialog is ever reached over another connection legitimately: a closed flow ends its dialogs.
    if (flowId !== this.dialog.flowId) return { status: 403, reason: "Not Your Call" };
    if (!this.dialog.acceptRemoteCseq(request.message.cseq)) return { status: 500, reason: "CSeq Out Of Order" };
    switch (request.method) {
      case "BYE":
        return this.#farEndBye(transaction);
      case "INVITE":
        return this.#farEndReinvite(request, transaction);
      case "INFO":
        return this.#info(request, transaction);
      case "UPDATE":
        return this.#update(request);
      case "REFER":
        return this.#refer(request, transaction);
      default:
        // OPTIONS inside the dialog: it is alive, and this is what it takes.
        return { status: 200, headers: [["Allow", this.#deps.allow()]] };
    }
  }

  /** BYE once the first ACK is in (§15: not before); resolves when answered or given up on. */
  async hangup(): Promise<void> {
    if (this.#ackWait?.initial) await this.#ackWait.done.catch(() => undefined);
    if (this.dialog.state === "confirmed") await this.#bye("hangup");
  }

  /** This side's re-INVITE with `offer` (hold, new media); resolves with the far end's answer. */
  reinvite(offer: string): Promise<string> {
    return handledToo(this.#reinviteUntilTaken(offer));
  }

  /**
   * A phone that has just answered may still be busy with that INVITE when the server's re-INVITE
   * (a hold, a transfer) reaches it: it answers 500 with Retry-After (RFC 6337 §4.3), or 491 when
   * its own re-INVITE crossed ours. §14.1 and §21.5.1: send it again after the wait they give.
   */
  async #reinviteUntilTaken(offer: string): Promise<string> {
    for (let retries = 0; ; retries++) {
      try {
        return await this.#reinvite(offer);
      } catch (err) {
        const waitMs = retries < REINVITE_RETRIES && err instanceof RefusedByFarEnd ? this.#retryWaitMs(err) : undefined;
        if (waitMs === undefined) throw err;
        await new Promise<void>((resolve) => this.#deps.deadlines.after(waitMs, resolve));
      }
    }
  }

  /** §14.1: after a 491, 2.1 to 4 s in 10 ms steps if this side chose the Call-ID, else 0 to 2 s. */
  #retryWaitMs(err: RefusedByFarEnd): number | undefined {
    if (err.status === 491) {
      const steps = this.#deps.random.bytes(2).readUInt16BE(0);
      return this.#ownsCallId ? 2100 + (steps % 191) * 10 : (steps % 201) * 10;
    }
    if (err.status === 500 && err.retryAfterS !== undefined && err.retryAfterS <= LONGEST_RETRY_AFTER_S) return err.retryAfterS * 1000;
    return undefined;
  }

  async #reinvite(offer: string): Promise<string> {
    // The far end's last offer/answer ends with its ACK, which may still be on its way behind
    // the 200 that made the engine act: wait for it rather than refuse.
    await this.#ackWait?.done.catch(() => undefined);
    if (this.dialog.state !== "confirmed") throw new SignallingError(`no re-INVITE: the dialog is ${this.dialog.state}`);
    // §14.1: not while another INVITE transaction is under way on the dialog, either way.
    if (this.#sending || this.#serving) throw new SignallingError("another INVITE is in progress on this dialog", 491);
    const flow = this.#flow();
    if (!flow) throw new SignallingError("the device's connection is closed", 503);
    const branch = newBranch(this.#deps.random);
    const cseq = this.dialog.nextCseq();
    const text = this.dialog.request(flow, {
      method: "INVITE",
      branch,
      cseq,
      headers: [
        ["Allow", this.#deps.allow()],
        ["Content-Type", "application/sdp"],
      ],
      body: offer,
    });
    this.#sending = true;
    const answered = new Promise<string>((resolve, reject) => {
      let ack: string | null = null;
      this.#deps.transactions.start({
        branch,
        method: "INVITE",
        cseq,
        flowId: flow.id,
        onFinal: (status, response) => {
          this.#sending = false;
          if (response && status < 300) {
            ack = this.dialog.request(flow, { method: "ACK", branch: newBranch(this.#deps.random), cseq });
            flow.send(ack);
            const answer = sdpBody(response.message);
            if (answer === null) reject(new SignallingError("the 2xx to the re-INVITE carried no SDP answer", status));
            else resolve(answer);
            return;
          }
          if (response) {
            const invite = { uri: this.dialog.remoteTarget, via: viaOf(flow, branch), from: this.dialog.localParty, to: this.dialog.remoteParty, callId: this.dialog.callId, cseq };
            flow.send(ackForFailure(invite, response));
          }
          const retryAfter = response ? Number.parseInt(response.message.getHeader("Retry-After") ?? "", 10) : Number.NaN;
          reject(new RefusedByFarEnd(`the re-INVITE was answered ${status}`, status, Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined));
          // §12.2.1.2: the far end no longer knows the dialog, or is gone.
          if ((status === 481 || status === 408) && this.end(`re-INVITE ${status}`)) this.#owner.gone("unreachable", false);
        },
        onLater2xx: () => {
          if (ack !== null) flow.send(ack);
        },
      });
      if (!flow.send(text)) {
        this.#deps.transactions.stop(branch, "INVITE", cseq);
        this.#sending = false;
        reject(new SignallingError("the device's connection is closed", 503));
      }
    });
    return answered;
  }

  /** The dialog's flow closed: nothing more can be said in it. */
  flowClosed(): void {
    const early = this.dialog.state === "early";
    if (this.end("flow closed")) this.#owner.gone("unreachable", early);
  }

  #flow(): Flow | undefined {
    const flow = this.#deps.flows.get(this.dialog.flowId);
    return flow?.isOpen() ? flow : undefined;
  }

  #bye(reason: string): Promise<void> {
    if (!this.end(reason)) return Promise.resolve();
    const flow = this.#flow();
    if (!flow) return Promise.resolve();
    const branch = newBranch(this.#deps.random);
    const cseq = this.dialog.nextCseq();
    return new Promise<void>((resolve) => {
      this.#deps.transactions.start({ branch, method: "BYE", cseq, flowId: flow.id, onFinal: () => resolve() });
      if (!flow.send(this.dialog.request(flow, { method: "BYE", branch, cseq }))) {
        this.#deps.transactions.stop(branch, "BYE", cseq);
        resolve();
      }
    });
  }

  #farEndBye(transaction: ServerTransaction): null {
    const early = this.dialog.state === "early";
    transaction.respond({ status: 200 });
    if (this.end("bye")) this.#owner.gone("bye", early);
    return null;
  }

  #farEndReinvite(request: SipRequest, transaction: ServerTransaction): SipReply | null {
    // §14.2: crossing re-INVITEs (glare) get 491; one arriving while an earlier INVITE is still
    // unanswered or unacknowledged gets 500 with a random Retry-After of 0 to 10 seconds.
    if (this.#sending) return { status: 491 };
    if (this.dialog.state !== "confirmed" || this.#serving || this.#ackWait) {
      return { status: 500, headers: [["Retry-After", String(this.#deps.random.bytes(1).readUInt8(0) % 11)]] };
    }
    // A re-INVITE without an offer would want ours in the 200 and the answer in the ACK; the
    // contract carries only offers to the engine, so it is refused (the far end keeps its media).
    const offer = sdpBody(request.message);
    if (offer === null) return { status: 488 };
    this.#serving = transaction;
    const cseq = request.message.cseq;
    const take = (): boolean => {
      if (this.#serving !== transaction) return false;
      this.#serving = null;
      return true;
    };
    const respond: ReinviteResponder = {
      answer: (sdp) => {
        if (!take()) return;
        const flow = this.#flow();
        if (!flow) return;
        this.awaitAck(cseq, false).catch(() => undefined);
        transaction.respond({
          status: 200,
          headers: [
            ["Contact", serverContact(flow)],
            ["Allow", this.#deps.allow()],
            ...sessionTimerHeaders(request),
            ["Content-Type", "application/sdp"],
          ],
          body: sdp,
        });
      },
      reject: (code) => {
        const status = failureStatus(code);
        if (take()) transaction.respond({ status });
      },
    };
    let taken: boolean;
    try {
      taken = this.#owner.reinvite(offer, respond);
    } catch (err) {
      take();
      throw err;
    }
    if (!taken && take()) return { status: 488 };
    return null;
  }

  /**
   * UPDATE (RFC 3311): a session refresh (RFC 4028, JsSIP's way) is answered 200 with the timer
   * again. An UPDATE carrying an offer would change the media outside an INVITE, which the engine's
   * contract does not carry: 488, and the media stays as it is.
   */
  #update(request: SipRequest): SipReply {
    if (this.dialog.state !== "confirmed") return { status: 481 };
    if (request.message.body.trim() !== "") return { status: 488 };
    const refusal = sessionTimerRefusal(request);
    if (refusal) return refusal;
    const flow = this.#flow();
    return { status: 200, headers: [...(flow ? ([["Contact", serverContact(flow)]] as [string, string][]) : []), ["Allow", this.#deps.allow()], ...sessionTimerHeaders(request)] };
  }

  /**
   * REFER (RFC 3515), from the device in the call over its own connection (checked in receive),
   * once the call is answered. A Replaces (RFC 3891) must name another answered dialog of this server:
   * its to-tag is this server's tag in it, its from-tag the phone's. Refused before the engine
   * hears of it: 403 for a REFER of someone else or naming no call of this server (never 481,
   * which would end the REFER's own dialog at the phone, §12.2.1.2); 400 or 416 for a Refer-To it
   * cannot read. The engine answers the rest (202 and NOTIFYs, or an error).
   */
  #refer(request: SipRequest, transaction: ServerTransaction): SipReply | null {
    if (this.dialog.state !== "confirmed") return { status: 403, reason: "Call Not Answered" };
    const read = readRefer(request);
    if ("status" in read) return read;
    let replaces: string | undefined;
    if (read.replaces) {
      const { callId, toTag, fromTag } = read.replaces;
      const other = this.#deps.table.find(callId, toTag, fromTag);
      if (!other || other === this || other.state !== "confirmed") return { status: 403, reason: "Replaces Names No Other Call" };
      replaces = other.dialog.callId;
    }
    const refer = new InDialogRefer(read, replaces, request, this.dialog, transaction, this.#deps);
    let taken: boolean;
    try {
      taken = this.#owner.refer(refer);
    } catch (err) {
      refer.reject(500);
      throw err;
    }
    if (!taken) refer.reject(603, "Transfer Not Available");
    return null;
  }

  #info(request: SipRequest, transaction: ServerTransaction): SipReply | null {
    // An INFO without a body is a keep-alive some phones send.
    if (request.message.body.trim() === "") return { status: 200 };
    const type = mediaType(request.message);
    if (!DTMF_INFO_TYPES.includes(type)) return { status: 415, headers: [["Accept", DTMF_INFO_TYPES.join(", ")]] };
    const dtmf = parseDtmfInfo(type, request.message.body);
    if (!dtmf) return { status: 400, reason: "Bad DTMF" };
    transaction.respond({ status: 200 });
    this.#owner.dtmf(dtmf);
    return null;
  }
}
