// What the call-queue slices (queues, agent, supervisor) share: the call-queue API of the signed-in
// session, and the frame batcher that turns a burst of events into one store change per frame.
import { createCallqApi, type CallqApi, type CallqApiOptions } from "../api/callq.js";
import type { Clock } from "../clock.js";
import type { KeyValueStorage } from "./storage.js";
import type { AppState } from "./store.js";

/** Runs `callback` before the next frame is painted; the answer cancels it. */
export type FrameScheduler = (callback: () => void) => () => void;

export interface CallqDeps {
  clock: Clock;
  storage: KeyValueStorage;
  /** The call-queue API for a session; the HTTP one when absent. */
  callq?: (options: CallqApiOptions) => CallqApi;
  /** Batches event updates per frame: requestAnimationFrame in a page, the clock's 16 ms elsewhere. */
  frame?: FrameScheduler;
}

/** The call-queue API of the signed-in session (one client per token), or null when signed out. */
export function callqAccess(deps: CallqDeps): (state: AppState) => CallqApi | null {
  const make = deps.callq ?? createCallqApi;
  let cached: { key: string; api: CallqApi } | null = null;
  return (state) => {
    const session = state.session;
    if (session === null) return null;
    const key = `${state.endpoints.api} ${session.accountId} ${session.token}`;
    if (cached === null || cached.key !== key) cached = { key, api: make({ baseUrl: state.endpoints.api, token: session.token, accountId: session.accountId }) };
    return cached.api;
  };
}

export function frameScheduler(deps: Pick<CallqDeps, "clock" | "frame">): FrameScheduler {
  if (deps.frame !== undefined) return deps.frame;
  // Typed by hand: the slices also compile without the DOM library (tsconfig.node.json).
  const page = globalThis as { requestAnimationFrame?: (callback: () => void) => number; cancelAnimationFrame?: (handle: number) => void };
  const raf = page.requestAnimationFrame;
  const cancel = page.cancelAnimationFrame;
  if (typeof raf === "function" && typeof cancel === "function") {
    return (callback) => {
      const handle = raf.call(globalThis, () => callback());
      return () => cancel.call(globalThis, handle);
    };
  }
  return (callback) => deps.clock.after(16, callback);
}

/**
 * Collects items and hands them over once per frame: at 200 events a second the store changes
 * (and components render) once a frame, not once an event.
 */
export function frameBatcher<T>(schedule: FrameScheduler, flush: (items: T[]) => void): { push(item: T): void; cancel(): void } {
  let pending: T[] = [];
  let cancel: (() => void) | null = null;
  return {
    push(item) {
      pending.push(item);
      cancel ??= schedule(() => {
        cancel = null;
        const items = pending;
        pending = [];
        flush(items);
      });
    },
    cancel() {
      cancel?.();
      cancel = null;
      pending = [];
    },
  };
}

/**
 * Ids that events touched, handed to `read` together `delayMs` after the first touch: one read of
 * the server for a burst of events, however many ids it touched.
 */
export function touchedReads(clock: Clock, delayMs: number, read: (ids: string[]) => void): { touch(id: string): void; cancel(): void } {
  const touched = new Set<string>();
  let cancel: (() => void) | null = null;
  return {
    touch(id) {
      touched.add(id);
      cancel ??= clock.after(delayMs, () => {
        cancel = null;
        const ids = [...touched];
        touched.clear();
        read(ids);
      });
    },
    cancel() {
      cancel?.();
      cancel = null;
      touched.clear();
    },
  };
}
