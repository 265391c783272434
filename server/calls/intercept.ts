// The channel command `intercept`: a device (or a user's devices) rings for the call of a channel
// and, once answered, takes it; the call's other leg (ringing phone or talking party) is hung up.
import { ChannelCommandError } from "./command-error.js";
import type { Channel } from "./channel.js";
import { connect } from "./connect.js";
import type { CallContext } from "./context.js";
import type { DialTarget } from "./dial.js";
import { DEFAULT_RING_TIMEOUT_S } from "./modules/ring.js";
import { deviceTargets, userTargets } from "./targets.js";

export interface InterceptRequest {
  targetType: "device" | "user";
  targetId: string;
  /** Refuse when the call is already bridged (the hosted service's default). */
  unbridgedOnly: boolean;
}

export async function intercept(ctx: CallContext, channel: Channel, request: InterceptRequest): Promise<void> {
  // A leg still ringing a phone is intercepted by taking the call it rings for.
  const call = channel.direction === "outbound" && !channel.answered ? ctx.channels.get(channel.originId ?? "") : channel;
  if (!call || call.state === "hungup") throw new ChannelCommandError("action", "the call this channel rings for is over");
  const targets = await targetsOf(ctx, call.accountId, request);
  const bridge = ctx.bridgeOf(call);
  if (bridge && request.unbridgedOnly) {
    throw new ChannelCommandError("unbridged_only", "the call is bridged; send unbridged_only false to intercept a call in progress");
  }
  if (call.over) throw new ChannelCommandError("action", "the call is over");
  const signal = call.claim("intercept");
  if (bridge) {
    const other = bridge.other(call);
    other.claim("intercept");
    bridge.release();
    other.hangup("PICKED_OFF");
  }
  void connect(ctx, { channel: call, targets, timeoutMs: DEFAULT_RING_TIMEOUT_S * 1000, signal }).then((result) => {
    if (result.kind === "failed") call.hangup(result.cause, result.code);
  }, (err: unknown) => ctx.onError(err, "intercept"));
}

async function targetsOf(ctx: CallContext, accountId: string, request: InterceptRequest): Promise<DialTarget[]> {
  const found =
    request.targetType === "device"
      ? await deviceTargets(ctx.store, accountId, request.targetId)
      : await userTargets(ctx.store, accountId, request.targetId);
  if (!found) throw new ChannelCommandError("target_id", `no ${request.targetType} with id ${request.targetId}`);
  if (found.targets.length === 0) throw new ChannelCommandError("target_id", `the ${request.targetType} ${request.targetId} has no enabled device`);
  return found.targets;
}
