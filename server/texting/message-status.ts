// A texting message's delivery status as one explicit state machine: every change is checked
// here, so the simulated carrier cannot move a message backwards or out of a final state.

/**
 * ```
 * out, through the carrier:   queued ──accepted──> sent ──handset acknowledged──> delivered
 *                                                    └────number unreachable────> failed
 * out, sendStatus "sent":     sent (stored only; the carrier never sees it, so it stays)
 * in:                         received
 * ```
 * `delivered`, `failed` and `received` are final.
 */
export type MessageStatus = "queued" | "sent" | "delivered" | "failed" | "received";

export const MESSAGE_STATUSES: readonly MessageStatus[] = ["queued", "sent", "delivered", "failed", "received"];

const NEXT: Record<MessageStatus, readonly MessageStatus[]> = {
  queued: ["sent"],
  sent: ["delivered", "failed"],
  delivered: [],
  failed: [],
  received: [],
};

export class IllegalStatusChange extends Error {
  override name = "IllegalStatusChange";
}

export function isMessageStatus(value: unknown): value is MessageStatus {
  return typeof value === "string" && (MESSAGE_STATUSES as readonly string[]).includes(value);
}

/** Throws unless `from -> to` is an arrow of the diagram. */
export function checkStatusChange(messageId: string, from: MessageStatus, to: MessageStatus): void {
  if (!NEXT[from].includes(to)) throw new IllegalStatusChange(`message ${messageId} cannot go from ${from} to ${to}`);
}
