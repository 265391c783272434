// The commands of POST /channels/{uuid} on a live channel: hangup, transfer, break, callflow,
// intercept and merge. Each is checked against the channel as it is now, then started; a refusal is thrown.
import type { B2bua } from "./b2bua.js";
import type { Channel } from "./channel.js";
import { ChannelCommandError } from "./command-error.js";
import { merge } from "./conference.js";
import type { CallContext } from "./context.js";
import { intercept, type InterceptRequest } from "./intercept.js";
import { transfer, type TransferRequest } from "./transfer.js";

export class ChannelCommands {
  readonly #ctx: CallContext;
  readonly #b2bua: B2bua;

  constructor(ctx: CallContext, b2bua: B2bua) {
    this.#ctx = ctx;
    this.#b2bua = b2bua;
  }

  /** Ends the leg; a bridged party is hung up with it, as when the device hangs up. */
  hangup(channel: Channel): void {
    channel.hangup("NORMAL_CLEARING");
  }

  transfer(channel: Channel, request: TransferRequest): Promise<void> {
    return transfer(this.#ctx, this.#b2bua, channel, request);
  }

  /** Leaves the callflow step the channel is in (ringing, playing) for the step's "_" child. */
  break(channel: Channel): void {
    const executor = this.#b2bua.executorOf(channel);
    if (!executor) throw new ChannelCommandError("action", "no callflow is running on this channel");
    if (!executor.break()) {
      throw new ChannelCommandError("action", channel.bridged ? "the channel is bridged: there is no callflow step to leave" : "the callflow is between steps");
    }
  }

  /**
   * Runs the callflow `id` on the channel instead of what it was doing; a party it was bridged
   * to is hung up. A leg still ringing a device cannot run one: it has no caller side yet.
   */
  async callflow(channel: Channel, id: string): Promise<void> {
    const callflow = (await this.#ctx.store.account(channel.accountId, "callflows")).get(id);
    if (!callflow) throw new ChannelCommandError("id", `no callflow with id ${id}`);
    if (channel.direction === "outbound" && !channel.answered) {
      throw new ChannelCommandError("action", "the channel is still ringing its device; run a callflow on the caller's channel");
    }
    if (channel.state === "hungup") throw new ChannelCommandError("action", "the call is over");
    channel.claim("callflow");
    const bridge = this.#ctx.bridgeOf(channel);
    if (bridge) {
      const other = bridge.other(channel);
      other.claim("callflow");
      bridge.release();
      other.hangup("NORMAL_CLEARING");
    }
    this.#b2bua.run(channel, callflow).catch((err: unknown) => this.#ctx.onError(err, "running a callflow on a channel"));
  }

  intercept(channel: Channel, request: InterceptRequest): Promise<void> {
    return intercept(this.#ctx, channel, request);
  }

  /** Joins the party of `other` (another leg of the same device's user) to the channel's call; `other` hangs up. */
  merge(channel: Channel, other: Channel): void {
    merge(this.#ctx, channel, other);
  }
}
