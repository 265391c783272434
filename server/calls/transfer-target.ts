// Where a transfer goes: the callflow its target runs when dialled (a callflow number, then the
// callflows' patterns, exactly as a device's call is routed), else a user or a device of the
// account named by its id, reached as a one-step callflow of the user or device module.
import type { Store, StoredDoc } from "../store/index.js";
import { ID_PATTERN } from "../store/index.js";
import { findCallflow } from "./routing.js";

/** The callflow a transfer to `target` runs; undefined when the target names nothing. */
export async function transferCallflow(store: Store, accountId: string, target: string): Promise<StoredDoc | undefined> {
  const routed = await findCallflow(store, accountId, target);
  if (routed || !ID_PATTERN.test(target)) return routed;
  for (const [collection, module] of [
    ["users", "user"],
    ["devices", "device"],
  ] as const) {
    const doc = (await store.account(accountId, collection)).get(target);
    if (doc) return oneStep(doc, module);
  }
  return undefined;
}

/**
 * A callflow made on the spot for a user or device: not stored, so it carries the document's own
 * id and times, and nothing (call_recording, for one) that a stored callflow could add.
 */
function oneStep(doc: StoredDoc, module: "user" | "device"): StoredDoc {
  return {
    id: doc.id,
    rev: doc.rev,
    created: doc.created,
    modified: doc.modified,
    data: { numbers: [], patterns: [], flow: { module, data: { id: doc.id }, children: {} } },
  };
}
