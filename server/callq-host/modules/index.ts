// The queue's callflow modules, registered with the call engine by the server's wiring: `callq`
// (a caller waits in a queue) and `callq_recipient` (an agent acts on their state from a phone).
import type { CallEngine } from "../../calls/index.js";
import type { CallqEngine } from "../../callq/engine.js";
import { callqModule } from "./callq.js";
import { callqRecipientModule } from "./callq-recipient.js";

export function registerCallqModules(calls: CallEngine, engine: CallqEngine): void {
  const queue = callqModule(engine);
  const recipient = callqRecipientModule(engine);
  // Callflows written for the hosted product's Qubicle name the same modules `qubicle` and `qubicle_recipient`.
  calls.modules.register("callq", queue).register("callq_recipient", recipient).register("qubicle", queue).register("qubicle_recipient", recipient);
}
