// The callflow modules the engine runs today; `callq` and `callq_recipient` register beside them
// when the queue engine lands (until then a flow naming them ends its call 501, with a log).
import { ModuleRegistry } from "../callflow-executor.js";
import { deviceModule } from "./device.js";
import { playModule } from "./play.js";
import { userModule } from "./user.js";

export function builtinModules(): ModuleRegistry {
  return new ModuleRegistry().register("device", deviceModule).register("user", userModule).register("play", playModule);
}
