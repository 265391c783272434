// Callflow module `device`: rings one device (data.id) with the caller's id for data.timeout
// seconds and bridges its answer; unknown, disabled, in do not disturb (its own or its owner's) or
// unanswered, the flow goes on or ends.
import type { CallflowModule } from "../callflow-executor.js";
import { deviceParty } from "../identity.js";
import { deviceTargets } from "../targets.js";
import { ringAndBridge, withoutCaller, withoutDoNotDisturb } from "./ring.js";

export const deviceModule: CallflowModule = async (run) => {
  const { channel, ctx, data } = run;
  const id = typeof data.id === "string" ? data.id : "";
  const found = await deviceTargets(ctx.store, channel.accountId, id);
  if (!found) {
    ctx.logger.warn({ call_id: channel.id, device_id: id }, "device module: no such device");
    return { kind: "failed", code: 404, cause: "UNALLOCATED_NUMBER" };
  }
  return ringAndBridge(run, {
    targets: withoutDoNotDisturb(withoutCaller(run, found.targets)),
    callee: deviceParty(found.device, found.owner),
    ownerId: found.owner?.id,
    deviceId: found.device.id,
  });
};
