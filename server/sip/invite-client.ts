// A call this server places to a device, the UAC side: one INVITE fork per registered contact,
// the first 2xx wins and the rest are CANCELled, or the best failure is reported (RFC 3261 §16.7).
import { EventEmitter } from "node:events";
import type { Clock } from "../clock.js";
import { CallDialog, SignallingError, type CallDialogDeps, type ReinviteResponder } from "./call-dialog.js";
import type { CallParty, DeviceRef, InfoDtmf, InviteOptions, OutboundCall, OutboundCallEvents, ReferRequest } from "./call-signalling.js";
import type { CancelDeadline } from "./deadlines.js";
import type { Dialog } from "./dialog.js";
import type { Flow } from "./flows.js";
import { InviteFork, type ForkOwner, type ForkRequest } from "./invite-fork.js";
import { randomHex } from "./message.js";
import type { Binding } from "./registrar.js";

/**
 * ```
 *   calling ──the first 2xx──> answered
 *      │
 *      ├── every fork failed, a 6xx, no answer in time ──> rejected
 *      └── cancel(), or hangup() before an answer ──> cancelled
 * ```
 * All three are final for the call's setup; an answered call lives on in its dialog.
 */
export type OutboundState = "calling" | "answered" | "rejected" | "cancelled";

const ALLOWED: Record<OutboundState, readonly OutboundState[]> = {
  calling: ["answered", "rejected", "cancelled"],
  answered: [],
  rejected: [],
  cancelled: [],
};

export class IllegalOutboundTransition extends Error {
  override name = "IllegalOutboundTransition";
}

export interface OutboundInviteDeps extends CallDialogDeps {
  clock: Clock;
  /** How long the forks may ring before the call is given up with 408 (default 60 s). */
  noAnswerMs?: number;
}

/** A live binding and the open flow it registered on. */
export interface Reachable {
  binding: Binding;
  flow: Flow;
}

export interface Failure {
  status: number;
  reason: string;
}

const DEFAULT_NO_ANSWER_MS = 60_000;
/** RFC 3326: why the other forks were CANCELled, so phones do not log a missed call. */
const ANSWERED_ELSEWHERE = 'SIP;cause=200;text="Call completed elsewhere"';
/** Headers the forks write themselves; the engine's extras may not replace them. */
const RESERVED_HEADERS = new Set(["via", "max-forwards", "from", "to", "call-id", "cseq", "contact", "content-type", "content-length", "allow"]);

export class OutboundInvite extends EventEmitter<OutboundCallEvents> implements OutboundCall {
  readonly callId: string;
  readonly device: DeviceRef;
  readonly #request: ForkRequest;
  readonly #deps: OutboundInviteDeps;
  #state: OutboundState = "calling";
  #forks: InviteFork[] = [];
  readonly #failures: Failure[] = [];
  #call: CallDialog | null = null;
  #rang = false;
  #stopNoAnswer: CancelDeadline = () => undefined;

  /** `aor` is the device's address-of-record (`user@realm`): the To of every fork. */
  constructor(device: DeviceRef, aor: string, options: InviteOptions, deps: OutboundInviteDeps) {
    super();
    this.callId = randomHex(deps.random, 16);
    this.device = device;
    this.#deps = deps;
    const realm = aor.slice(aor.lastIndexOf("@") + 1);
    const fromTag = randomHex(deps.random);
    this.#request = {
      callId: this.callId,
      fromTag,
      from: `${nameAddr(options.from, realm)};tag=${fromTag}`,
      to: `${displayName(options.to.display)}<sip:${aor}>`,
      cseq: 1,
      headers: [["Allow", deps.allow()], ...extraHeaders(options.headers ?? []), ["Content-Type", "application/sdp"]],
      body: options.offer,
    };
  }

  get state(): OutboundState {
    return this.#state;
  }

  /** Sends the INVITE to each contact; false when none went out (and nothing more will happen). */
  start(targets: Reachable[]): boolean {
    const owner: ForkOwner = {
      ringing: () => this.#ringing(),
      accepted: (fork, dialog, answer) => this.#accepted(fork, dialog, answer),
      failed: (_fork, status, reason) => this.#failed({ status, reason }),
    };
    for (const { binding, flow } of targets) {
      const fork = new InviteFork(binding, flow, this.#request, owner, this.#deps);
      if (fork.start()) this.#forks.push(fork);
    }
    if (this.#forks.length === 0) {
      this.#move("cancelled");
      return false;
    }
    this.#stopNoAnswer = this.#deps.deadlines.after(this.#deps.noAnswerMs ?? DEFAULT_NO_ANSWER_MS, () => {
      if (this.#state === "calling") this.#reject({ status: 408, reason: "Request Timeout" });
    });
    return true;
  }

  cancel(): void {
    if (this.#state !== "calling") return;
    this.#move("cancelled");
    for (const fork of this.#forks) fork.cancel();
  }

  hangup(): Promise<void> {
    if (this.#call) return this.#call.hangup();
    this.cancel();
    return Promise.resolve();
  }

  reinvite(offer: string): Promise<string> {
    if (!this.#call) return Promise.reject(new SignallingError(`no re-INVITE before an answer (the call is ${this.#state})`));
    return this.#call.reinvite(offer);
  }

  #ringing(): void {
    if (this.#state !== "calling" || this.#rang) return;
    this.#rang = true;
    this.emit("ringing");
  }

  #accepted(winner: InviteFork, dialog: Dialog, answer: string | null): boolean {
    if (this.#state !== "calling") return false;
    // We offered, so the answer must be in the 2xx (RFC 3264 §5; no reliable provisionals here).
    if (answer === null) {
      this.#failed({ status: 488, reason: "No SDP answer" });
      return false;
    }
    this.#move("answered");
    this.#call = new CallDialog(
      dialog,
      {
        gone: () => {
          this.emit("bye");
        },
        reinvite: (offer: string, respond: ReinviteResponder) => this.emit("reinvite", offer, respond),
        dtmf: (dtmf: InfoDtmf) => {
          this.emit("dtmf", dtmf);
        },
        refer: (refer: ReferRequest) => this.emit("refer", refer),
      },
      this.#deps,
      true,
    );
    for (const fork of this.#forks) if (fork !== winner) fork.cancel(ANSWERED_ELSEWHERE);
    this.emit("answered", answer);
    return true;
  }

  #failed(failure: Failure): void {
    if (this.#state !== "calling") return;
    this.#failures.push(failure);
    // §16.7 step 5: a 6xx ends the search at once (the device declined everywhere).
    if (failure.status >= 600) this.#reject(failure);
    else if (this.#forks.every((f) => f.finished)) this.#reject(bestFailure(this.#failures));
  }

  #reject(failure: Failure): void {
    this.#move("rejected");
    for (const fork of this.#forks) fork.cancel();
    this.emit("rejected", failure.status, failure.reason);
  }

  /** The one place the call's setup changes state: checked against the diagram. */
  #move(to: OutboundState): void {
    if (!ALLOWED[this.#state].includes(to)) throw new IllegalOutboundTransition(`outbound call ${this.callId} cannot go from ${this.#state} to ${to}`);
    this.#state = to;
    if (to !== "calling") this.#stopNoAnswer();
  }
}

/** RFC 3261 §16.7 step 6: any 6xx, else the lowest class (3xx, then 4xx, then 5xx), first come first. */
export function bestFailure(failures: readonly Failure[]): Failure {
  const sixes = failures.find((f) => f.status >= 600);
  if (sixes) return sixes;
  let best: Failure = failures[0] ?? { status: 408, reason: "Request Timeout" };
  for (const f of failures) if (Math.floor(f.status / 100) < Math.floor(best.status / 100)) best = f;
  return best;
}

/** `"Display" <sip:user@realm>`, the user part escaped where RFC 3261's grammar wants it. */
function nameAddr(party: CallParty, realm: string): string {
  return `${displayName(party.display)}<sip:${userPart(party.user)}@${realm}>`;
}

function displayName(display: string | undefined): string {
  if (display === undefined || display.trim() === "") return "";
  return `"${display.replace(/[\r\n]+/g, " ").replace(/["\\]/g, "\\$&")}" `;
}

/** An empty caller id becomes `anonymous`, as RFC 3323 writes it. */
function userPart(user: string): string {
  if (user === "") return "anonymous";
  return user.replace(/[^A-Za-z0-9\-_.!~*'()&=+$,;?/]/g, (c) =>
    [...Buffer.from(c, "utf8")].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""),
  );
}

/** The engine's extra headers, refused when they would break the message or replace ours. */
function extraHeaders(headers: [string, string][]): [string, string][] {
  for (const [name, value] of headers) {
    if (!/^[A-Za-z0-9!%*_+`'~.-]+$/.test(name)) throw new TypeError(`not a SIP header name: ${JSON.stringify(name)}`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw new TypeError(`header ${name} is written by sip/ itself`);
    if (/[\r\n]/.test(value)) throw new TypeError(`header ${name} has a line break in its value`);
  }
  return headers;
}
