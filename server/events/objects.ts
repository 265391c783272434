// Document events: every acknowledged change to an account's documents becomes one
// `object.doc_created|doc_edited|doc_deleted.<type>` event, as the hosted service's object hooks.
import type { Store, StoreChange } from "../store/index.js";
import type { EventBus } from "./bus.js";

/** Collection name to the document type the hosted service names in object events. */
const TYPES: Record<string, string> = {
  users: "user",
  devices: "device",
  callflows: "callflow",
  media: "media",
  blacklists: "blacklist",
  webhooks: "webhook",
  callq_queues: "callq_queue",
  recordings: "call_recording",
  cdrs: "cdr",
};

/** Every type an object event may name, as the object hook's `type` selector lists them. */
export const OBJECT_TYPES: readonly string[] = Object.values(TYPES);

export function objectTypeOf(collection: string): string | undefined {
  return TYPES[collection];
}

export function publishDocumentChanges(store: Store, bus: EventBus): () => void {
  return store.onChange((change: StoreChange) => {
    const type = change.accountId ? objectTypeOf(change.collection) : undefined;
    if (!change.accountId || !type) return;
    const action = `doc_${change.kind}`;
    bus.publish({
      account_id: change.accountId,
      routing_key: `object.${action}.${type}`,
      name: action,
      data: { action, type, id: change.doc.id, account_id: change.accountId, rev: change.doc.rev },
    });
  });
}
