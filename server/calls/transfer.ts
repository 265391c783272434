// The channel command `transfer`, to anything a dialled number reaches (transfer-target.ts).
// Blind: the party runs the target's callflow, the transferor hangs up. Attended: the party hears
// music on hold while the transferor is connected to a loopback call that runs the target's
// callflow (ringing, queue, announcement: whatever its modules do); the transferor hanging up
// completes it (the party takes the transferor's place), the consultation ending (the target side
// hangs up, the consult leg is hung up, or the takeback digits) brings the transferor back. A
// device's own transfer key (calls/refer.ts) runs the same: blind through transfer() with hooks for
// its REFER's 202 and final NOTIFY, attended by Replaces through replaceCalls.
import type { StoredDoc } from "../store/index.js";
import type { B2bua } from "./b2bua.js";
import type { Bridge } from "./bridge.js";
import type { Channel, ChannelChange, ChannelDtmf, ChannelParty } from "./channel.js";
import { ChannelCommandError } from "./command-error.js";
import type { CallContext } from "./context.js";
import { openLoopback, type Loopback } from "./loopback.js";
import { transferCallflow } from "./transfer-target.js";

export interface TransferRequest {
  /** An extension or number, run through the account's callflows; or a user's or device's id. */
  target: string;
  type: "blind" | "attended";
  /** `self`: this channel is the transferor and its party is moved; `bleg`: the other way round. */
  leg: "self" | "bleg";
  /** Media id of the music the party hears while an attended transfer is consulted. */
  moh?: string;
  /** Digits the transferor dials during the consultation to take the call back. */
  takebackDtmf?: string;
}

/**
 * What a transfer's caller hears of its progress (a phone's REFER: its 202 and its final NOTIFY).
 * Both are called synchronously, in the order the transfer takes its steps.
 */
export interface TransferHooks {
  /** Every check passed: the call is moved right after this. */
  started?(): void;
  /**
   * The call has moved (blind: the party runs the target's callflow; by Replaces: the party and
   * the target are joined); called before the transferor's leg is hung up, so what is said to its
   * device here goes before the BYE.
   */
  moved?(): void;
}

/** Modules that bridge a call and only wait for its end: a loopback can bow out of their bridge. */
const BRIDGING_MODULES: ReadonlySet<string> = new Set(["device", "user"]);

/** Channels whose bridges an unfinished attended transfer manages: nothing else may move them. */
const inTransfer = new WeakSet<Channel>();

/** Whether an attended transfer is moving the channel now (its transferor, party or consult leg). */
export function isInTransfer(channel: Channel): boolean {
  return inTransfer.has(channel);
}

/**
 * Checks the transfer can happen, then starts it. A blind transfer resolves at once; an attended
 * one once the transferor is connected to the consult leg (its `other_leg`), so the caller can
 * cancel the consultation by hanging that leg up.
 */
export async function transfer(ctx: CallContext, b2bua: B2bua, channel: Channel, request: TransferRequest, hooks: TransferHooks = {}): Promise<void> {
  checkMovable(ctx, channel);
  const callflow = await transferCallflow(ctx.store, channel.accountId, request.target);
  if (!callflow) throw new ChannelCommandError("target", `nothing answers ${request.target}: no callflow number or pattern matches it, and it is no user or device id`);
  // Looked up again: the call may have ended or moved while the callflow was read.
  const bridge = checkMovable(ctx, channel);
  const transferor = request.leg === "self" ? channel : bridge.other(channel);
  const party = bridge.other(transferor);
  hooks.started?.();
  if (request.type === "blind") {
    blind(ctx, b2bua, bridge, transferor, party, callflow, hooks);
    return;
  }
  await new AttendedTransfer(ctx, b2bua, transferor, party, callflow, request).start(bridge);
}

/** The bridge the channel is in, if a transfer can move it. */
function checkMovable(ctx: CallContext, channel: Channel): Bridge {
  const bridge = ctx.bridgeOf(channel);
  if (!bridge) throw new ChannelCommandError("action", "the channel is not bridged: only a call in progress can be transferred");
  if (inTransfer.has(channel) || inTransfer.has(bridge.other(channel))) {
    throw new ChannelCommandError("action", "an attended transfer of this call is in progress: complete or cancel it first");
  }
  return bridge;
}

function blind(ctx: CallContext, b2bua: B2bua, bridge: Bridge, transferor: Channel, party: Channel, callflow: StoredDoc, hooks: TransferHooks): void {
  // Both legs change hands first, so the logic that bridged them lets go without hanging up.
  transferor.claim("transfer");
  party.claim("transfer");
  bridge.release();
  hooks.moved?.();
  transferor.hangup("BLIND_TRANSFER");
  b2bua.run(party, callflow).catch((err: unknown) => ctx.onError(err, "running the transfer target's callflow"));
}

/**
 * A device's own attended transfer (a REFER whose Refer-To carries Replaces, RFC 5589 §7): `line`
 * is its call with the party, `consult` its call with the target, both its own legs, each bridged.
 * Completed as an API attended transfer is when its loopback bows out: every leg changes hands,
 * both bridges go, the party and the target are told whom they now talk with and are bridged to
 * each other, and the device's two legs hang up (ATTENDED_TRANSFER, FreeSWITCH's cause). Refused
 * (ChannelCommandError) when either call is not bridged or is in an attended transfer already.
 */
export function replaceCalls(ctx: CallContext, line: Channel, consult: Channel, hooks: TransferHooks = {}): void {
  if (line === consult) throw new ChannelCommandError("replaces", "a call cannot replace itself");
  const partyBridge = checkMovable(ctx, line);
  const targetBridge = checkMovable(ctx, consult);
  if (partyBridge === targetBridge) throw new ChannelCommandError("replaces", "the two channels are the two legs of one call");
  const party = partyBridge.other(line);
  const target = targetBridge.other(consult);
  hooks.started?.();
  // Every leg changes hands before its bridge goes, so the logic that bridged them lets go quietly.
  for (const leg of [line, consult, party, target]) leg.claim("transfer");
  partyBridge.release();
  targetBridge.release();
  // Before the new bridge: its CHANNEL_BRIDGE already names each to the other.
  presentTo(party, target.self);
  presentTo(target, party.self);
  hooks.moved?.();
  line.hangup("ATTENDED_TRANSFER");
  consult.hangup("ATTENDED_TRANSFER");
  if (party.state === "answered" && target.state === "answered") ctx.bridge(party, target);
  else for (const leg of [party, target]) if (!leg.bridged) leg.hangup("NORMAL_CLEARING");
}

/** Who `leg`'s device now talks with: its caller if the server rang it, its callee if it called. */
function presentTo(leg: Channel, other: ChannelParty): void {
  if (leg.direction === "outbound") leg.setCaller(other);
  else leg.setCallee(other);
}

/**
 * The consultation and how it ends. While it lasts the transferor is bridged to the loopback's
 * leg `a` and the loopback's leg `b` runs the target's callflow; the party waits with music.
 */
class AttendedTransfer {
  readonly #ctx: CallContext;
  readonly #b2bua: B2bua;
  readonly #transferor: Channel;
  readonly #party: Channel;
  readonly #callflow: StoredDoc;
  readonly #request: TransferRequest;
  #loop: Loopback | undefined;
  #digits = "";
  #settled = false;

  constructor(ctx: CallContext, b2bua: B2bua, transferor: Channel, party: Channel, callflow: StoredDoc, request: TransferRequest) {
    this.#ctx = ctx;
    this.#b2bua = b2bua;
    this.#transferor = transferor;
    this.#party = party;
    this.#callflow = callflow;
    this.#request = request;
  }

  async start(bridge: Bridge): Promise<void> {
    const ctx = this.#ctx;
    const transferor = this.#transferor;
    const party = this.#party;
    transferor.claim("transfer");
    party.claim("transfer");
    bridge.release();
    inTransfer.add(transferor);
    inTransfer.add(party);
    transferor.on("dtmf", this.#onDtmf);
    let loop: Loopback | undefined;
    try {
      party.media.play(await ctx.library.holdMusic(party.accountId, transferor.identity.deviceId, this.#request.moh));
      loop = await openLoopback(ctx, { for: transferor, target: this.#request.target });
    } catch (err) {
      ctx.onError(err, "starting an attended transfer");
    }
    if (!loop) {
      this.#reconnect();
      return;
    }
    this.#loop = loop;
    inTransfer.add(loop.a);
    if (loop.a.state !== "answered") {
      this.#reconnect();
      return;
    }
    if (transferor.over) {
      // Gone while the loopback came up: as if it had hung up during the consultation.
      this.#complete();
    } else {
      ctx.bridge(transferor, loop.a, (_survivor, gone) => (gone === transferor ? this.#complete() : this.#reconnect()));
    }
    this.#b2bua.run(loop.b, this.#callflow).catch((err: unknown) => ctx.onError(err, "running the transfer target's callflow"));
  }

  readonly #onDtmf = (dtmf: ChannelDtmf): void => {
    const takeback = this.#request.takebackDtmf;
    if (!takeback || this.#settled) return;
    this.#digits = (this.#digits + dtmf.digit).slice(-takeback.length);
    // Ending the consult leg brings the transferor back (the consult bridge's afterHangup).
    if (this.#digits === takeback) this.#loop?.a.hangup("NORMAL_CLEARING");
  };

  /**
   * The transferor is gone: the party takes its place. Where the target was reached by a module
   * that only bridges, the loopback bows out and the party is bridged to the target's own leg;
   * otherwise (a queue, an announcement, a target still ringing) the party is joined to the
   * consult leg, and the loopback bows out later if such a module bridges it then.
   */
  #complete(): void {
    if (this.#settle()) return;
    const loop = this.#loop;
    if (!loop) return;
    const party = this.#party;
    // The consult call speaks for the party from now on: a queue that offers it later shows the
    // party to its agent, and so does the CDR of `b`.
    loop.b.setCaller(party.self);
    if (this.#bowOut(loop)) return;
    this.#presentParty(loop);
    this.#join(party, loop.a);
    if (party.bridged && !loop.b.over) {
      const onState = (change: ChannelChange): void => {
        if (change.to !== "bridged" && change.to !== "hungup") return;
        loop.b.off("state", onState);
        // The bridge announces its members while it is being built: look it up once it exists.
        if (change.to !== "bridged") return;
        queueMicrotask(() => {
          if (!this.#bowOut(loop)) this.#presentParty(loop);
        });
      };
      loop.b.on("state", onState);
    }
  }

  /**
   * Where the loopback stays (a queue's bridge, a target still ringing): the leg `b` is bridged to,
   * if any, is told it now talks with the party (its console and CDR name the party, not the
   * transferor), and the party learns who took the call.
   */
  #presentParty(loop: Loopback): void {
    const party = this.#party;
    const far = this.#ctx.bridgeOf(loop.b);
    // A module rings its targets on outbound legs: their caller is who their device sees.
    if (far) far.other(loop.b).setCaller(party.self);
    party.setCallee(loop.b.identity.callee);
  }

  /**
   * Takes the loopback out of a completed transfer: the party is bridged straight to the leg the
   * target's callflow bridged `b` to, and both loopback legs hang up. Only where the module that
   * made that bridge does nothing but wait for its end (device, user): a module that tracks its
   * bridge (a queue's agent offer) keeps the loopback, and with it its bridge, to the end.
   */
  #bowOut(loop: Loopback): boolean {
    const ctx = this.#ctx;
    const party = this.#party;
    const { a, b } = loop;
    const far = ctx.bridgeOf(b);
    const module = this.#b2bua.executorOf(b)?.module;
    if (!far || module === undefined || !BRIDGING_MODULES.has(module) || party.over) return false;
    const partyBridge = ctx.bridgeOf(party);
    if (partyBridge && !partyBridge.has(a)) return false;
    const target = far.other(b);
    // Every leg changes hands before its bridge goes, so the callflow on `b` lets go quietly.
    for (const leg of [b, target, party]) leg.claim("transfer");
    far.release();
    partyBridge?.release();
    party.setCallee(b.identity.callee);
    // Before the new bridge: its CHANNEL_BRIDGE already names the party on the target's leg.
    target.setCaller(party.self);
    a.hangup("NORMAL_CLEARING");
    b.hangup("NORMAL_CLEARING");
    this.#join(party, target);
    return true;
  }

  /** The consultation is over: the transferor and the party talk again. */
  #reconnect(): void {
    if (this.#settle()) return;
    this.#loop?.a.hangup("NORMAL_CLEARING");
    this.#join(this.#transferor, this.#party);
  }

  /** Bridges two legs if both are still up and free; otherwise hangs up whichever is left. */
  #join(x: Channel, y: Channel): void {
    if (x.state === "answered" && y.state === "answered") this.#ctx.bridge(x, y);
    else for (const leg of [x, y]) if (!leg.bridged) leg.hangup("NORMAL_CLEARING");
  }

  /** True when the transfer was already settled; otherwise settles it now. */
  #settle(): boolean {
    if (this.#settled) return true;
    this.#settled = true;
    this.#transferor.off("dtmf", this.#onDtmf);
    for (const leg of [this.#transferor, this.#party, this.#loop?.a]) if (leg) inTransfer.delete(leg);
    return false;
  }
}
