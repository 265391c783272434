// The callflow modules of calls/ itself; the queue modules `callq` and `callq_recipient` come from
// callq-host/ (server/callq-host/modules) and are registered beside these by the server's wiring.
import { ModuleRegistry } from "../callflow-executor.js";
import { deviceModule } from "./device.js";
import { playModule } from "./play.js";
import { userModule } from "./user.js";

export function builtinModules(): ModuleRegistry {
  return new ModuleRegistry().register("device", deviceModule).register("user", userModule).register("play", playModule);
}
