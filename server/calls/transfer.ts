// The channel command `transfer`: blind (the party runs the target's callflow, the transferor hangs
// up) and attended (the party on hold while the transferor consults the target, then joined to it).
import { silence } from "../media/index.js";
import type { StoredDoc } from "../store/index.js";
import type { B2bua } from "./b2bua.js";
import type { Bridge } from "./bridge.js";
import { nodeOf } from "./callflow-executor.js";
import type { Channel, ChannelDtmf } from "./channel.js";
import { ChannelCommandError } from "./command-error.js";
import type { CallContext } from "./context.js";
import { dial, type DialTarget } from "./dial.js";
import { RINGBACK_TONE } from "./media-library.js";
import { ringTimeoutMs } from "./modules/ring.js";
import { findCallflow } from "./routing.js";
import { deviceTargets, userTargets } from "./targets.js";

export interface TransferRequest {
  /** An extension or number, run through the account's callflows. */
  target: string;
  type: "blind" | "attended";
  /** `self`: this channel is the transferor and its party is moved; `bleg`: the other way round. */
  leg: "self" | "bleg";
  /** Media id of the music the party hears while an attended transfer is consulted. */
  moh?: string;
  /** Digits the transferor dials during the consultation to take the call back. */
  takebackDtmf?: string;
}

/** Checks the transfer can happen, then starts it; resolves once it is under way. */
export async function transfer(ctx: CallContext, b2bua: B2bua, channel: Channel, request: TransferRequest): Promise<void> {
  if (!ctx.bridgeOf(channel)) throw new ChannelCommandError("action", "the channel is not bridged: only a call in progress can be transferred");
  const callflow = await findCallflow(ctx.store, channel.accountId, request.target);
  if (!callflow) throw new ChannelCommandError("target", `no callflow matches ${request.target}`);
  const targets = request.type === "attended" ? await consultTargets(ctx, channel, callflow) : undefined;
  // Looked up again: the call may have ended while the callflow was read.
  const bridge = ctx.bridgeOf(channel);
  if (!bridge) throw new ChannelCommandError("action", "the call ended before the transfer could start");
  const transferor = request.leg === "self" ? channel : bridge.other(channel);
  const party = bridge.other(transferor);
  if (targets === undefined) {
    blind(ctx, b2bua, bridge, transferor, party, callflow);
    return;
  }
  await new AttendedTransfer(ctx, transferor, party, targets, request).start(bridge);
}

function blind(ctx: CallContext, b2bua: B2bua, bridge: Bridge, transferor: Channel, party: Channel, callflow: StoredDoc): void {
  // Both legs change hands first, so the logic that bridged them lets go without hanging up.
  transferor.claim("transfer");
  party.claim("transfer");
  bridge.release();
  transferor.hangup("BLIND_TRANSFER");
  b2bua.run(party, callflow).catch((err: unknown) => ctx.onError(err, "running the transfer target's callflow"));
}

/** The devices an attended transfer rings: its target's callflow must start with device or user. */
async function consultTargets(ctx: CallContext, channel: Channel, callflow: StoredDoc): Promise<{ targets: DialTarget[]; timeoutMs: number }> {
  const node = nodeOf(callflow.data.flow);
  const id = typeof node?.data.id === "string" ? node.data.id : "";
  const found =
    node?.module === "device"
      ? await deviceTargets(ctx.store, channel.accountId, id)
      : node?.module === "user"
        ? await userTargets(ctx.store, channel.accountId, id)
        : undefined;
  if (!node || !found) {
    throw new ChannelCommandError("transfer-type", "an attended transfer is available for targets whose callflow rings a device or a user; use a blind transfer");
  }
  if (found.targets.length === 0) throw new ChannelCommandError("target", "the transfer target has no enabled device");
  return { targets: found.targets, timeoutMs: ringTimeoutMs(node.data) };
}

/**
 * The consultation and how it ends: the transferor hanging up (even while the target still rings)
 * joins party and target; the target refusing or leaving, or the takeback digits, bring the
 * transferor back to the party.
 */
class AttendedTransfer {
  readonly #ctx: CallContext;
  readonly #transferor: Channel;
  readonly #party: Channel;
  readonly #targets: readonly DialTarget[];
  readonly #timeoutMs: number;
  readonly #request: TransferRequest;
  /** Gives up the ringing of the target (takeback). */
  readonly #ringing = new AbortController();
  #consult: Bridge | undefined;
  #digits = "";
  #settled = false;

  constructor(ctx: CallContext, transferor: Channel, party: Channel, consult: { targets: DialTarget[]; timeoutMs: number }, request: TransferRequest) {
    this.#ctx = ctx;
    this.#transferor = transferor;
    this.#party = party;
    this.#targets = consult.targets;
    this.#timeoutMs = consult.timeoutMs;
    this.#request = request;
  }

  async start(bridge: Bridge): Promise<void> {
    const ctx = this.#ctx;
    const transferor = this.#transferor;
    const party = this.#party;
    transferor.claim("transfer");
    party.claim("transfer");
    bridge.release();
    transferor.on("dtmf", this.#onDtmf);
    party.media.play(await ctx.library.holdMusic(party.accountId, transferor.identity.deviceId, this.#request.moh));
    if (transferor.state !== "hungup") transferor.media.play(await ctx.media.player(RINGBACK_TONE));
    void this.#ring().catch((err: unknown) => {
      ctx.onError(err, "attended transfer");
      this.#reconnect();
    });
  }

  async #ring(): Promise<void> {
    const transferor = this.#transferor;
    const result = await dial(this.#ctx, {
      accountId: transferor.accountId,
      realm: transferor.identity.realm,
      targets: this.#targets,
      caller: transferor.self,
      timeoutMs: this.#timeoutMs,
      signal: this.#ringing.signal,
      origin: transferor,
    });
    if (transferor.state !== "hungup") transferor.media.play(silence);
    if (result.kind !== "answered") {
      this.#reconnect();
      return;
    }
    const target = result.channel;
    if (transferor.state === "hungup") {
      // The transferor left while the target rang: the transfer completes as a blind one.
      this.#complete(target);
      return;
    }
    target.claim("transfer");
    this.#consult = this.#ctx.bridge(transferor, target, (survivor, gone) => {
      if (gone === transferor) this.#complete(survivor);
      else this.#reconnect();
    });
  }

  readonly #onDtmf = (dtmf: ChannelDtmf): void => {
    const takeback = this.#request.takebackDtmf;
    if (!takeback || this.#settled) return;
    this.#digits = (this.#digits + dtmf.digit).slice(-takeback.length);
    if (this.#digits !== takeback) return;
    const consult = this.#consult;
    if (consult && !consult.over) {
      const target = consult.other(this.#transferor);
      consult.release();
      target.hangup("NORMAL_CLEARING");
      this.#reconnect();
    } else {
      // Still ringing: giving up the ringing reconnects once dial() returns.
      this.#ringing.abort("takeback");
    }
  };

  /** The transferor is gone: the party and the target talk, if both are there. */
  #complete(target: Channel): void {
    if (this.#settle()) return;
    const party = this.#party;
    if (party.state === "hungup" || target.state === "hungup") {
      party.hangup("NORMAL_CLEARING");
      target.hangup("NORMAL_CLEARING");
      return;
    }
    party.claim("transfer");
    party.setCallee(target.identity.callee);
    this.#ctx.bridge(party, target);
  }

  /** No target (refused, gone or taken back): the transferor and the party talk again. */
  #reconnect(): void {
    if (this.#settle()) return;
    const transferor = this.#transferor;
    const party = this.#party;
    if (transferor.state === "hungup" || party.state === "hungup") {
      transferor.hangup("NORMAL_CLEARING");
      party.hangup("NORMAL_CLEARING");
      return;
    }
    this.#ctx.bridge(transferor, party);
  }

  /** True when the transfer was already settled; otherwise settles it now. */
  #settle(): boolean {
    if (this.#settled) return true;
    this.#settled = true;
    this.#transferor.off("dtmf", this.#onDtmf);
    return false;
  }
}
