// CallSignalling over the SIP layer: INVITE, ACK, CANCEL, BYE, INFO, UPDATE, REFER and in-dialog OPTIONS in the
// method table, the dialogs and pending INVITEs they are matched against, timers, closed flows.
import type { Clock, RandomSource } from "../clock.js";
import type { CallDialog, CallDialogDeps } from "./call-dialog.js";
import type { CallSignalling, DeviceRef, InboundCall, InviteOptions, OutboundCall } from "./call-signalling.js";
import { Deadlines } from "./deadlines.js";
import type { NonceBook } from "./digest.js";
import { DialogTable } from "./dialog-table.js";
import type { Directory } from "./directory.js";
import type { RequestHandler, SipDispatcher, SipLog } from "./dispatcher.js";
import type { FlowTable } from "./flows.js";
import { admitInvite } from "./invite-admission.js";
import { OutboundInvite, type Reachable } from "./invite-client.js";
import { InboundInvite } from "./invite-server.js";
import type { SipRequest } from "./message.js";
import { MAX_CONTACTS_PER_DEVICE, type Registrar } from "./registrar.js";
import type { ClientTransactions } from "./transactions.js";

export interface SipCallsDeps {
  dispatcher: SipDispatcher;
  registrar: Registrar;
  flows: FlowTable;
  transactions: ClientTransactions;
  directory: Directory;
  nonces: NonceBook;
  clock: Clock;
  random: RandomSource;
  log: SipLog;
  /** How long an outbound call may ring unanswered (default 60 s). */
  noAnswerMs?: number;
}

/** §17.2.1 Timer H: how long an INVITE with its final response still matches a late CANCEL. */
const INVITE_LINGER_MS = 32_000;

export class SipCalls implements CallSignalling {
  readonly #deps: SipCallsDeps;
  readonly #deadlines: Deadlines;
  readonly #dialogs = new DialogTable<CallDialog>();
  /** Inbound INVITEs by flow and branch, for CANCEL and retransmissions, until they linger out. */
  readonly #invites = new Map<string, InboundInvite>();
  readonly #handlers: ((call: InboundCall) => void)[] = [];

  constructor(deps: SipCallsDeps) {
    this.#deps = deps;
    this.#deadlines = new Deadlines(deps.clock, (err) => deps.log.error({ err }, "sip: call timer failed"));
    const dispatcher = deps.dispatcher;
    dispatcher.handle("INVITE", this.#invite);
    dispatcher.handle("ACK", this.#ack);
    dispatcher.handle("CANCEL", this.#cancel);
    dispatcher.handle("BYE", this.#inDialog);
    dispatcher.handle("INFO", this.#inDialog);
    dispatcher.handle("UPDATE", this.#inDialog);
    dispatcher.handle("OPTIONS", async (request, flow, transaction) =>
      request.message.toTag ? this.#inDialog(request, flow, transaction) : { status: 200, headers: [["Allow", dispatcher.allow()]] },
    );
  }

  onInbound(handler: (call: InboundCall) => void): void {
    this.#handlers.push(handler);
    // A call engine listens: it takes its calls' transfers too (their dialogs' `refer`), so REFER
    // joins the method table, and with it the Allow list, only now.
    if (this.#handlers.length === 1) this.#deps.dispatcher.handle("REFER", this.#refer);
  }

  invite(target: DeviceRef, options: InviteOptions): OutboundCall | null {
    // One INVITE per socket: a UA answers there for every contact it bound over it, so the
    // latest of them stands for the rest; and never more forks than a device may have contacts.
    const byFlow = new Map<string, Reachable>();
    for (const binding of this.#deps.registrar.bindings(target.accountId, target.deviceId)) {
      const flow = this.#deps.flows.get(binding.flowId);
      const seen = byFlow.get(binding.flowId);
      if (flow?.isOpen() && (!seen || binding.expiresAt >= seen.binding.expiresAt)) byFlow.set(binding.flowId, { binding, flow });
    }
    const reachable = [...byFlow.values()].slice(0, MAX_CONTACTS_PER_DEVICE);
    const first = reachable[0];
    if (!first) return null;
    const call = new OutboundInvite(target, first.binding.aor, options, { ...this.#dialogDeps(), noAnswerMs: this.#deps.noAnswerMs });
    return call.start(reachable) ? call : null;
  }

  /** Runs the call timers that are due on the clock (the SIP housekeeping calls it). */
  sweep(): void {
    this.#deadlines.sweep();
  }

  /** True while a call is being set up or is up over the flow. */
  busy(flowId: string): boolean {
    if (this.#dialogs.onFlow(flowId).length > 0) return true;
    for (const key of this.#invites.keys()) if (key.startsWith(`${flowId}\n`)) return true;
    return false;
  }

  /** A flow closed: its dialogs end (the engine hears `bye`, or `cancel` before an answer). */
  flowClosed(flowId: string): void {
    for (const dialog of this.#dialogs.onFlow(flowId)) {
      // One engine listener that throws must not leave the other calls on the socket hanging.
      try {
        dialog.flowClosed();
      } catch (err) {
        this.#deps.log.error({ err, flow: flowId, callId: dialog.dialog.callId }, "sip: ending a call of a closed flow failed");
      }
    }
  }

  #dialogDeps(): CallDialogDeps & { clock: Clock } {
    return {
      flows: this.#deps.flows,
      transactions: this.#deps.transactions,
      deadlines: this.#deadlines,
      random: this.#deps.random,
      table: this.#dialogs,
      clock: this.#deps.clock,
      allow: () => this.#deps.dispatcher.allow(),
      dialogChanged: (callId, change) => this.#deps.log.debug({ callId, ...change }, "sip: dialog state"),
    };
  }

  readonly #invite: RequestHandler = async (request, flow, transaction) => {
    if (request.message.toTag) return this.#inDialog(request, flow, transaction);
    const key = inviteKey(flow.id, request);
    const known = this.#invites.get(key);
    if (known) {
      known.retransmitted();
      return null;
    }
    const admitted = await admitInvite(request, this.#deps);
    if ("status" in admitted) return admitted;
    // The lookups above awaited: a socket that closed meanwhile has nobody to ring back.
    if (!flow.isOpen()) return null;
    transaction.respond({ status: 100 });
    const call = new InboundInvite(
      { request, flow, transaction, admitted },
      {
        ...this.#dialogDeps(),
        settled: () => this.#deadlines.after(INVITE_LINGER_MS, () => this.#invites.delete(key)),
      },
    );
    this.#invites.set(key, call);
    if (this.#handlers.length === 0) {
      // Nothing routes calls (no call engine running): the caller hears the callee is unavailable.
      call.reject(480);
      return null;
    }
    try {
      for (const handler of this.#handlers) handler(call);
    } catch (err) {
      this.#deps.log.error({ err, flow: flow.id, callId: call.callId }, "sip: inbound call handler failed");
      call.reject(500);
    }
    return null;
  };

  readonly #ack: RequestHandler = async (request, flow) => {
    const { callId, toTag, fromTag } = request.message;
    // An ACK for a non-2xx final response belongs to the INVITE's transaction and ends it quietly.
    if (toTag) this.#dialogs.find(callId, toTag, fromTag)?.receiveAck(request, flow.id);
    return null;
  };

  readonly #cancel: RequestHandler = async (request, flow, transaction) => {
    const call = this.#invites.get(inviteKey(flow.id, request));
    // §9.2: a CANCEL matching no INVITE transaction gets 481.
    if (!call) return { status: 481 };
    transaction.respond({ status: 200, toTag: call.localTag });
    call.cancelled();
    return null;
  };

  /** RFC 3515 inside a call only: an out-of-dialog REFER (a subscription of its own) has no call to transfer. */
  readonly #refer: RequestHandler = async (request, flow, transaction) =>
    request.message.toTag ? this.#inDialog(request, flow, transaction) : { status: 403, reason: "REFER Outside A Call" };

  readonly #inDialog: RequestHandler = async (request, flow, transaction) => {
    const { callId, toTag, fromTag } = request.message;
    const dialog = toTag ? this.#dialogs.find(callId, toTag, fromTag) : undefined;
    // §12.2.2: a request naming a dialog this server does not have (or one out of a dialog: a BYE
    // or an INFO needs one) gets 481.
    if (!dialog) return { status: 481 };
    return dialog.receive(request, transaction, flow.id);
  };
}

/** §17.2.3: a request matches an INVITE server transaction by its top Via branch (on the same flow). */
function inviteKey(flowId: string, request: SipRequest): string {
  return `${flowId}\n${request.message.viaBranch}`;
}
