// Outgoing calls that did not connect, told in words (busy, no such number, ...) for a while in the
// call dock: the phone slice hands every ended call here; one refused before an answer becomes a
// notice that the agent can dismiss and that goes by itself after NOTICE_MS.
import type { StateCreator } from "zustand/vanilla";
import { callFailureText } from "./failure-reason.js";
import type { Clock } from "../clock.js";
import type { CallInfo } from "../phone/phone-line.js";
import type { AppState } from "./store.js";

/** How long a notice stays unless dismissed: long enough to read, short enough not to pile up. */
export const NOTICE_MS = 8000;

export interface CallFailureNotice {
  /** The call's id on the phone line. */
  id: string;
  /** Who was dialled. */
  target: string;
  /** Why, in words ("Busy"). */
  reason: string;
  /** The SIP status, for whoever needs the detail. */
  code: number;
}

export interface CallFailuresSlice {
  callFailures: CallFailureNotice[];
  /** Every call that ends comes here; only a refused outgoing one leaves a notice. */
  noteCallEnded(call: CallInfo): void;
  dismissCallFailure(id: string): void;
}

export function createCallFailuresSlice(deps: { clock: Clock }): StateCreator<AppState, [], [], CallFailuresSlice> {
  const timers = new Map<string, () => void>();
  return (set, get) => ({
    callFailures: [],

    noteCallEnded(call) {
      if (call.direction !== "outbound" || call.failure === undefined) return;
      const reason = callFailureText(call.failure);
      if (reason === null) return;
      const notice: CallFailureNotice = { id: call.id, target: call.remoteName || call.remoteUser, reason, code: call.failure.code };
      set((state) => ({ callFailures: [...state.callFailures.filter((n) => n.id !== call.id), notice] }));
      timers.get(call.id)?.();
      timers.set(
        call.id,
        deps.clock.after(NOTICE_MS, () => get().dismissCallFailure(call.id)),
      );
    },

    dismissCallFailure(id) {
      timers.get(id)?.();
      timers.delete(id);
      set((state) => ({ callFailures: state.callFailures.filter((n) => n.id !== id) }));
    },
  });
}
