// What the device and user modules share: ring the targets for the caller, bridge the first
// answer, and turn how it went into the flow's next step; a miss is noted for the notification.
import type { ChannelParty } from "../channel.js";
import type { ModuleOutcome, ModuleRun } from "../callflow-executor.js";
import { connect } from "../connect.js";
import type { DialTarget } from "../dial.js";
import type { StoredDoc } from "../../store/index.js";

/** How long a module rings, from its `timeout` (seconds, default 20). */
export const DEFAULT_RING_TIMEOUT_S = 20;

export function ringTimeoutMs(data: Record<string, unknown>): number {
  const raw = data.timeout;
  const seconds = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : NaN;
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_RING_TIMEOUT_S) * 1000;
}

/** The caller's own device is left out unless the module says `can_call_self: true`. */
export function withoutCaller(run: ModuleRun, targets: DialTarget[]): DialTarget[] {
  if (run.data.can_call_self === true) return targets;
  return targets.filter((t) => t.device.id !== run.channel.identity.deviceId);
}

function dndOn(doc: StoredDoc | undefined): boolean {
  const dnd = doc?.data.do_not_disturb;
  return typeof dnd === "object" && dnd !== null && (dnd as Record<string, unknown>).enabled === true;
}

/**
 * Kazoo's endpoint rule: a device is left out of a direct call when it or its owner has
 * `do_not_disturb.enabled`, so a user in do not disturb rings nothing and the flow goes on as
 * for a user without devices. Queue offers build their targets elsewhere and are not affected.
 */
export function withoutDoNotDisturb(targets: DialTarget[]): DialTarget[] {
  return targets.filter((t) => !dndOn(t.device) && !dndOn(t.owner));
}

export interface RingTarget {
  targets: DialTarget[];
  /** Who the caller is calling: for the missed-call notification. */
  callee: ChannelParty;
  ownerId?: string;
  deviceId?: string;
}

export async function ringAndBridge(run: ModuleRun, target: RingTarget): Promise<ModuleOutcome> {
  const { channel, ctx, signal } = run;
  ctx.missedCalls.expect(channel, { ownerId: target.ownerId, deviceId: target.deviceId, callee: target.callee });
  if (target.targets.length === 0) return { kind: "failed", code: 480, cause: "SUBSCRIBER_ABSENT" };
  const result = await connect(ctx, { channel, targets: target.targets, timeoutMs: ringTimeoutMs(run.data), signal });
  switch (result.kind) {
    case "bridged":
    case "aborted":
      return { kind: "handled" };
    case "failed":
      return { kind: "failed", code: result.code, cause: result.cause };
  }
}
