// The events layer's public face: the bus, the event log listening to it, document events from
// the store; the websocket and the webhook dispatcher attach to the same bus.
import { join } from "node:path";
import type { Clock } from "../clock.js";
import type { Store } from "../store/index.js";
import { EventBus } from "./bus.js";
import { EventLog } from "./event-log.js";
import { publishDocumentChanges } from "./objects.js";

export interface Events {
  bus: EventBus;
  log: EventLog;
  close(): Promise<void>;
}

export async function startEvents(options: { store: Store; clock: Clock; dataDir: string }): Promise<Events> {
  const { log, lastSeq } = await EventLog.open({ dir: join(options.dataDir, "events") });
  const bus = new EventBus(options.clock, lastSeq);
  const unlog = bus.subscribe((event) => log.append(event));
  const unobjects = publishDocumentChanges(options.store, bus);
  return {
    bus,
    log,
    async close() {
      unobjects();
      unlog();
      await log.flush();
    },
  };
}

export { EventBus, bindingMatches, normaliseBinding, type BusEvent, type NewEvent, type Listener } from "./bus.js";
export { EventLog } from "./event-log.js";
