// REFER inside a call's dialog (RFC 3515): a phone's own transfer key. What the far end asked
// (Refer-To, its Replaces for an attended transfer, Referred-By) is read and checked here; the
// engine decides, and this side answers 202 Accepted and reports the outcome by NOTIFY
// (`Event: refer`, `message/sipfrag`), or refuses the REFER with a final error response.
import { Grammar } from "sip.js";
import type { RandomSource } from "../clock.js";
import type { ReferRequest } from "./call-signalling.js";
import type { Dialog } from "./dialog.js";
import type { ServerTransaction, SipReply } from "./dispatcher.js";
import { serverContact, type FlowTable } from "./flows.js";
import { newBranch, rawHeaders, REASONS, type SipRequest } from "./message.js";
import type { ClientTransactions } from "./transactions.js";

/** The dialog a Replaces names (RFC 3891 §3): to-tag is this server's tag in it, from-tag the phone's. */
export interface ReplacesId {
  callId: string;
  toTag: string;
  fromTag: string;
}

/** What a REFER asks, read from its headers; or the reply refusing a REFER that cannot be read. */
export interface ReadRefer {
  /** The Refer-To URI as sent. */
  uri: string;
  /** The Refer-To URI's user part: the blind transfer's target ("" when it has none). */
  target: string;
  replaces?: ReplacesId;
  referredBy?: string;
}

/** How long the implicit subscription is said to last before its final NOTIFY (RFC 3515 §2.4.4). */
const SUBSCRIPTION_S = 60;

/**
 * Reads a REFER's Refer-To (exactly one, §2.4.1), a sip or sips URI whose user is the target or
 * whose `?Replaces=` names the dialog to replace; anything else is refused as RFC 3515 and 3261 say.
 */
export function readRefer(request: SipRequest): ReadRefer | SipReply {
  // Counted as sent: sip.js's parser keeps only the last Refer-To (and refuses the message, 400,
  // when that one is not a name-addr or URI at all).
  const values = rawHeaders(request.raw, "refer-to");
  if (values.length === 0) return { status: 400, reason: "Missing Refer-To" };
  if (values.length > 1) return { status: 400, reason: "More Than One Refer-To" };
  const parsed: unknown = Grammar.parse(values[0] ?? "", "Refer_To");
  if (parsed === -1 || typeof parsed !== "object" || parsed === null || !("uri" in parsed)) return { status: 400, reason: "Bad Refer-To" };
  const uri = (parsed as { uri: { scheme?: string; user?: string; headers?: Record<string, string[]>; toString(): string } }).uri;
  const scheme = (uri.scheme ?? "").toLowerCase();
  if (scheme !== "sip" && scheme !== "sips") return { status: 416, reason: "Unsupported Refer-To URI Scheme" };
  const referredBy = request.message.getHeader("referred-by");
  const read: ReadRefer = { uri: uri.toString(), target: uri.user ?? "", ...(referredBy ? { referredBy } : {}) };
  const replacesValues = Object.entries(uri.headers ?? {}).find(([name]) => name.toLowerCase() === "replaces")?.[1] ?? [];
  if (replacesValues.length === 0) return read;
  if (replacesValues.length > 1) return { status: 400, reason: "Bad Replaces" };
  const replaces = readReplaces(replacesValues[0] ?? "");
  if (!replaces) return { status: 400, reason: "Bad Replaces" };
  return { ...read, replaces };
}

function readReplaces(escaped: string): ReplacesId | undefined {
  let text: string;
  try {
    text = decodeURIComponent(escaped);
  } catch {
    return undefined;
  }
  const parsed: unknown = Grammar.parse(text, "Replaces");
  if (parsed === -1 || typeof parsed !== "object" || parsed === null) return undefined;
  const { call_id: callId, replaces_to_tag: toTag, replaces_from_tag: fromTag } = parsed as Record<string, unknown>;
  if (typeof callId !== "string" || typeof toTag !== "string" || typeof fromTag !== "string") return undefined;
  return { callId, toTag, fromTag };
}

export interface ReferDeps {
  flows: FlowTable;
  transactions: ClientTransactions;
  random: RandomSource;
}

/**
 * One REFER the engine was handed: its final response (202 or an error) and, once accepted, the
 * NOTIFYs of the implicit subscription in the REFER's dialog: `SIP/2.0 100 Trying` at once, then
 * the outcome with `Subscription-State: terminated`.
 */
export class InDialogRefer implements ReferRequest {
  readonly uri: string;
  readonly target: string;
  readonly replaces: string | undefined;
  readonly referredBy: string | undefined;
  readonly #dialog: Dialog;
  readonly #transaction: ServerTransaction;
  readonly #cseq: number;
  readonly #deps: ReferDeps;
  #state: "asked" | "accepted" | "done" = "asked";

  /** `replaces`: the Call-ID of the live dialog the Replaces named (checked by the caller). */
  constructor(read: ReadRefer, replaces: string | undefined, request: SipRequest, dialog: Dialog, transaction: ServerTransaction, deps: ReferDeps) {
    this.uri = read.uri;
    this.target = read.target;
    this.replaces = replaces;
    this.referredBy = read.referredBy;
    this.#dialog = dialog;
    this.#transaction = transaction;
    this.#cseq = request.message.cseq;
    this.#deps = deps;
  }

  get answered(): boolean {
    return this.#state !== "asked";
  }

  accept(): void {
    if (this.#state !== "asked") return;
    this.#state = "accepted";
    const flow = this.#deps.flows.get(this.#dialog.flowId);
    this.#transaction.respond({ status: 202, headers: flow ? [["Contact", serverContact(flow)]] : [] });
    this.#notify(100, undefined, `active;expires=${SUBSCRIPTION_S}`);
  }

  done(code: number, reason?: string): void {
    if (this.#state !== "accepted") return;
    this.#state = "done";
    this.#notify(code, reason, "terminated;reason=noresource");
  }

  reject(code: number, reason?: string): void {
    if (this.#state !== "asked") return;
    this.#state = "done";
    this.#transaction.respond({ status: code, reason });
  }

  /** §2.4.4-2.4.6: the id is the REFER's CSeq, so a phone with two REFERs in the dialog tells them apart. */
  #notify(code: number, reason: string | undefined, subscriptionState: string): void {
    if (this.#dialog.state !== "confirmed") return;
    const flow = this.#deps.flows.get(this.#dialog.flowId);
    if (!flow?.isOpen()) return;
    const branch = newBranch(this.#deps.random);
    const cseq = this.#dialog.nextCseq();
    const phrase = (reason ?? REASONS[code] ?? "Unknown").replace(/[\r\n]+/g, " ");
    const text = this.#dialog.request(flow, {
      method: "NOTIFY",
      branch,
      cseq,
      headers: [
        ["Contact", serverContact(flow)],
        ["Event", `refer;id=${this.#cseq}`],
        ["Subscription-State", subscriptionState],
        ["Content-Type", "message/sipfrag;version=2.0"],
      ],
      body: `SIP/2.0 ${code} ${phrase}\r\n`,
    });
    this.#deps.transactions.start({ branch, method: "NOTIFY", cseq, flowId: flow.id });
    if (!flow.send(text)) this.#deps.transactions.stop(branch, "NOTIFY", cseq);
  }
}
