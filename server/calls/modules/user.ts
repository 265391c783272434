// Callflow module `user`: rings every enabled device the user (data.id) owns at once (those not
// registered are skipped, and none in do not disturb) and bridges the first answer; else the flow
// goes on or ends.
import type { CallflowModule } from "../callflow-executor.js";
import { userParty } from "../identity.js";
import { userTargets } from "../targets.js";
import { ringAndBridge, withoutCaller, withoutDoNotDisturb } from "./ring.js";

export const userModule: CallflowModule = async (run) => {
  const { channel, ctx, data } = run;
  const id = typeof data.id === "string" ? data.id : "";
  const found = await userTargets(ctx.store, channel.accountId, id);
  if (!found) {
    ctx.logger.warn({ call_id: channel.id, user_id: id }, "user module: no such user");
    return { kind: "failed", code: 404, cause: "UNALLOCATED_NUMBER" };
  }
  return ringAndBridge(run, { targets: withoutDoNotDisturb(withoutCaller(run, found.targets)), callee: userParty(found.user), ownerId: found.user.id });
};
