// Connecting a call to devices: ring them for it (ringback to a caller already answered, 180 to
// one who is not), answer the caller when a device answers, bridge the two, wait for the end.
import { silence } from "../media/index.js";
import type { BridgeEnd } from "./bridge.js";
import type { Channel } from "./channel.js";
import type { CallContext } from "./context.js";
import { dial, type DialTarget } from "./dial.js";
import type { HangupCause } from "./hangup-cause.js";
import { RINGBACK_TONE } from "./media-library.js";

export interface ConnectRequest {
  /** The call to connect: an inbound caller, or a leg a transfer moves. */
  channel: Channel;
  targets: readonly DialTarget[];
  timeoutMs: number;
  /** The controller's signal: aborting gives up the ringing, and the bridge is then not made. */
  signal: AbortSignal;
}

export type ConnectResult =
  | { kind: "bridged"; end: BridgeEnd }
  | { kind: "failed"; code: number; cause: HangupCause }
  | { kind: "aborted" };

export async function connect(ctx: CallContext, request: ConnectRequest): Promise<ConnectResult> {
  const { channel, signal } = request;
  if (channel.state === "hungup" || signal.aborted) return { kind: "aborted" };
  if (channel.answered) channel.media.play(await ctx.media.player(RINGBACK_TONE));
  const result = await dial(ctx, {
    accountId: channel.accountId,
    realm: channel.identity.realm,
    targets: request.targets,
    caller: channel.self,
    timeoutMs: request.timeoutMs,
    signal,
    origin: channel,
  });
  if (channel.answered && !channel.bridged) channel.media.play(silence);
  if (result.kind !== "answered") return result;
  const callee = result.channel;
  if (!(await channel.answer()) || signal.aborted || channel.over) {
    callee.hangup("NORMAL_CLEARING");
    return { kind: "aborted" };
  }
  if (callee.state !== "answered") {
    // The device hung up before the caller's answer went through.
    return { kind: "failed", code: 480, cause: "NORMAL_CLEARING" };
  }
  channel.setCallee(callee.identity.callee);
  const bridge = ctx.bridge(channel, callee);
  return { kind: "bridged", end: await bridge.ended };
}
