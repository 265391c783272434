// Call detail records: one per channel, written to the account's "cdrs" collection as the channel
// is destroyed, with a MODB id (YYYYMM-<32hex>) and the fields of the hosted service's CDRs.
import { toGregorianSeconds } from "../clock.js";
import type { Store, StoredDoc } from "../store/index.js";
import type { Channel } from "./channel.js";
import type { Channels } from "./channels.js";
import { interactionOf } from "./interaction.js";

export const CDRS_COLLECTION = "cdrs";

/** The CDR of a channel that has hung up. */
export function cdrOf(channel: Channel): Record<string, unknown> {
  const gregorian = (ms: number | undefined) => (ms === undefined ? undefined : toGregorianSeconds(ms));
  const cdr: Record<string, unknown> = {
    ...channel.eventData(),
    // The stored CDR says call_direction like the events; the hosted API's CDR rows say direction.
    direction: channel.direction,
    answered_timestamp: gregorian(channel.answeredAt),
    hangup_timestamp: gregorian(channel.hungupAt),
    // Whole seconds cannot order calls made within one second; lists sort on this.
    pvt_started_ms: channel.createdAt,
    // Ties the CDRs of one conversation together across transfers (calls/interaction.ts).
    interaction_id: interactionOf(channel),
  };
  for (const key of Object.keys(cdr)) if (cdr[key] === undefined) delete cdr[key];
  return cdr;
}

/** Newest first is this key descending: the start of the call, then the id for a stable order. */
export function cdrSortKey(doc: StoredDoc): string {
  const started = typeof doc.data.pvt_started_ms === "number" ? Math.max(0, Math.floor(doc.data.pvt_started_ms)) : 0;
  return `${String(started).padStart(16, "0")}-${doc.id}`;
}

export class CdrWriter {
  readonly #writes = new Set<Promise<unknown>>();

  constructor(
    private readonly store: Store,
    channels: Channels,
    private readonly onError: (err: unknown, what: string) => void,
  ) {
    channels.on("removed", (channel) => this.#write(channel));
  }

  /** Resolves once every CDR of a call ended so far is stored. */
  async flush(): Promise<void> {
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes]);
  }

  #write(channel: Channel): void {
    const write = this.store
      .account(channel.accountId, CDRS_COLLECTION)
      .then((cdrs) => cdrs.create(cdrOf(channel), { modb: true }))
      .catch((err: unknown) => this.onError(err, `writing the CDR of ${channel.id}`));
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }
}
