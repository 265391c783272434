// The dialogs alive on this server, found by Call-ID and tags for each request that arrives
// inside one, and by flow when a socket closes under them.
import { dialogId } from "./dialog.js";

export interface TabledDialog {
  readonly id: string;
  readonly flowId: string;
}

export class DialogTable<T extends TabledDialog> {
  readonly #dialogs = new Map<string, T>();

  add(dialog: T): void {
    this.#dialogs.set(dialog.id, dialog);
  }

  remove(dialog: T): void {
    if (this.#dialogs.get(dialog.id) === dialog) this.#dialogs.delete(dialog.id);
  }

  /** The dialog a request belongs to: its To tag is ours, its From tag the far end's (§12.2.2). */
  find(callId: string, toTag: string, fromTag: string): T | undefined {
    return this.#dialogs.get(dialogId(callId, toTag, fromTag));
  }

  onFlow(flowId: string): T[] {
    return [...this.#dialogs.values()].filter((d) => d.flowId === flowId);
  }

  get size(): number {
    return this.#dialogs.size;
  }
}
