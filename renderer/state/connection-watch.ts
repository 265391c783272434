// The slices that read from the server read again when the event websocket comes back and clear
// themselves when the session ends: one subscription that tells them which.
import type { AppState } from "./store.js";

/** Runs `callback` when the event websocket comes online (first connect, or back after a drop) and when the session ends. */
export function onConnectionChange(
  api: { subscribe(listener: (state: AppState, previous: AppState) => void): () => void },
  handlers: { online(state: AppState): void; signedOut(): void },
): void {
  api.subscribe((state, previous) => {
    if (state.connection.events === "online" && previous.connection.events !== "online") handlers.online(state);
    if (state.session === null && previous.session !== null) handlers.signedOut();
  });
}
