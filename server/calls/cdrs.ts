// Call detail records: one per channel, written to the account's "cdrs" collection as the channel
// is destroyed, with a MODB id (YYYYMM-<32hex>) and the fields of the hosted service's CDRs.
import { toGregorianSeconds } from "../clock.js";
import type { Store, StoredDoc } from "../store/index.js";
import type { Channel } from "./channel.js";
import type { Channels } from "./channels.js";
import { interactionOf } from "./interaction.js";

export const CDRS_COLLECTION = "cdrs";

/**
 * The custom channel variable naming the queue session a leg belongs to (both legs of a queue
 * call carry it): fields given for that session later (a disposition) land on their CDRs.
 */
export const QUEUE_SESSION_VAR = "callq_session_id";

/**
 * The custom channel variable of both legs of a queue callback (local addition): the number called
 * back. Their CDRs carry it as `callq_callback_number` with the session id as `callq_session_id`,
 * so a report tells a callback from a caller's call; other CDRs are as before.
 */
export const CALLBACK_NUMBER_VAR = "callq_callback_number";

/** Queue sessions whose fields are remembered for CDRs still to be written or to update. */
const ANNOTATED_SESSIONS_KEPT = 10_000;

interface Annotation {
  accountId: string;
  fields: Record<string, unknown>;
  /** The CDR ids written so far for the session's legs. */
  written: string[];
}

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
  const callbackNumber = channel.customVars.get(CALLBACK_NUMBER_VAR);
  if (callbackNumber !== undefined) {
    cdr[CALLBACK_NUMBER_VAR] = callbackNumber;
    cdr[QUEUE_SESSION_VAR] = channel.customVars.get(QUEUE_SESSION_VAR);
  }
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
  /** By queue session id, oldest first; at most ANNOTATED_SESSIONS_KEPT. */
  readonly #annotations = new Map<string, Annotation>();

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

  /**
   * Adds `fields` to the CDRs of a queue session's legs: those written already are updated, those
   * still to come are written with them. Given again, the new fields replace the old.
   */
  annotate(accountId: string, sessionId: string, fields: Record<string, unknown>): void {
    const annotation = this.#annotation(accountId, sessionId);
    annotation.fields = { ...fields };
    for (const id of annotation.written) this.#track(this.#update(annotation, id));
  }

  #annotation(accountId: string, sessionId: string): Annotation {
    let annotation = this.#annotations.get(sessionId);
    if (!annotation) {
      annotation = { accountId, fields: {}, written: [] };
      this.#annotations.set(sessionId, annotation);
      for (const oldest of this.#annotations.keys()) {
        if (this.#annotations.size <= ANNOTATED_SESSIONS_KEPT) break;
        this.#annotations.delete(oldest);
      }
    }
    return annotation;
  }

  async #update(annotation: Annotation, id: string): Promise<void> {
    try {
      const cdrs = await this.store.account(annotation.accountId, CDRS_COLLECTION);
      const doc = cdrs.get(id);
      if (doc) await cdrs.update(id, { ...doc.data, ...annotation.fields });
    } catch (err) {
      this.onError(err, `annotating the CDR ${id}`);
    }
  }

  #write(channel: Channel): void {
    const sessionId = channel.customVars.get(QUEUE_SESSION_VAR);
    const annotation = sessionId === undefined ? undefined : this.#annotation(channel.accountId, sessionId);
    const fields = annotation?.fields;
    const write = this.store
      .account(channel.accountId, CDRS_COLLECTION)
      .then(async (cdrs) => {
        const doc = await cdrs.create({ ...cdrOf(channel), ...fields }, { modb: true });
        if (!annotation) return;
        annotation.written.push(doc.id);
        // Annotated while this CDR was being written: it missed the new fields.
        if (annotation.fields !== fields) await this.#update(annotation, doc.id);
      })
      .catch((err: unknown) => this.onError(err, `writing the CDR of ${channel.id}`));
    this.#track(write);
  }

  #track(write: Promise<unknown>): void {
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }
}
