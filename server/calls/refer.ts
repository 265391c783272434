// A phone's own transfer key: a device's REFER inside one of its calls (RFC 3515; sip/ has read it
// and checked it came over the call's own connection), carried out by the channels API's transfer
// machinery (transfer.ts). Blind: the target is resolved exactly as the API's `transfer` resolves
// it, in the call's account. Attended: the Refer-To's Replaces names another call of the same device
// or of the same user, and the two far ends are joined. A refusal is the REFER's final response
// and changes nothing; an accepted REFER is answered 202 and its outcome told by NOTIFY.
import type { ReferRequest } from "../sip/call-signalling.js";
import type { B2bua } from "./b2bua.js";
import type { Channel } from "./channel.js";
import { ChannelCommandError } from "./command-error.js";
import type { CallContext } from "./context.js";
import { isInTransfer, replaceCalls, transfer, type TransferHooks } from "./transfer.js";

type Refusal = [code: number, reason: string];

export class Refers {
  readonly #ctx: CallContext;
  readonly #b2bua: B2bua;

  constructor(ctx: CallContext, b2bua: B2bua) {
    this.#ctx = ctx;
    this.#b2bua = b2bua;
  }

  /** Answers the REFER `channel`'s device sent in its call; never throws. */
  take(channel: Channel, refer: ReferRequest): void {
    this.#take(channel, refer).catch((err: unknown) => {
      this.#ctx.onError(err, "a transfer asked by REFER");
      if (!refer.answered) refer.reject(500);
      else refer.done(500);
    });
  }

  async #take(channel: Channel, refer: ReferRequest): Promise<void> {
    this.#ctx.logger.info(
      { call_id: channel.id, refer_to: refer.uri, replaces: refer.replaces, referred_by: refer.referredBy },
      "calls: a device asked for a transfer (REFER)",
    );
    // Accepted (202) once every check passed; the final NOTIFY goes before the device's leg is hung up.
    const hooks: TransferHooks = { started: () => refer.accept(), moved: () => refer.done(200) };
    try {
      if (refer.replaces !== undefined) this.#attended(channel, refer.replaces, hooks);
      else await this.#blind(channel, refer.target, hooks);
    } catch (err) {
      if (!(err instanceof ChannelCommandError)) throw err;
      const [code, reason] = refusalOf(err);
      if (!refer.answered) refer.reject(code, reason);
      else refer.done(code, reason);
    }
  }

  async #blind(channel: Channel, target: string, hooks: TransferHooks): Promise<void> {
    if (target === "") throw new ChannelCommandError("target", "the Refer-To names no one to transfer to");
    this.#movable(channel);
    await transfer(this.#ctx, this.#b2bua, channel, { target, type: "blind", leg: "self" }, hooks);
  }

  /**
   * The call the Replaces names must be a live leg of the same device, or of another device of the
   * same user, in the same account; anything else is refused as if it did not exist.
   */
  #attended(channel: Channel, replaces: string, hooks: TransferHooks): void {
    const other = this.#ctx.channels.inAccount(channel.accountId, replaces);
    const mine =
      other !== undefined &&
      (other.identity.deviceId === channel.identity.deviceId || (channel.identity.ownerId !== undefined && other.identity.ownerId === channel.identity.ownerId));
    if (!other || !mine || other === channel) throw new ChannelCommandError("replaces", "the Replaces names no other call of this device or user");
    this.#movable(channel);
    this.#movable(other);
    replaceCalls(this.#ctx, channel, other, hooks);
  }

  /** The API's own checks (transfer.ts repeats them), made here to say which one failed. */
  #movable(channel: Channel): void {
    const bridge = this.#ctx.bridgeOf(channel);
    if (!bridge) throw new ChannelCommandError("action", "the call is not bridged to a party");
    if (isInTransfer(channel) || isInTransfer(bridge.other(channel))) throw new ChannelCommandError("in_transfer", "an attended transfer of this call is in progress");
  }
}

/** The SIP answer to a refused transfer: nothing matches the target 404, a transfer under way 491, the rest 403. */
function refusalOf(err: ChannelCommandError): Refusal {
  switch (err.field) {
    case "target":
      return [404, "No Such Transfer Target"];
    case "in_transfer":
      return [491, "Transfer In Progress"];
    case "replaces":
      return [403, "Replaces Names No Call Of Yours"];
    default:
      return [403, "Call Cannot Be Transferred"];
  }
}
