// The banner the agent sees while the console is cut off from its server: the event websocket
// down or the phone re-registering, when the next attempt is due, and a button to try at once.
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import { useNow } from "./useNow.js";

export function ConnectionBanner() {
  const { events, eventsRetryAt, eventsError, phone, phoneRetryAt, phoneError, reconnectNow } = useAppStore(
    useShallow((state) => ({
      events: state.connection.events,
      eventsRetryAt: state.connection.eventsRetryAt,
      eventsError: state.connection.eventsError,
      phone: state.phone.status,
      phoneRetryAt: state.phone.retryAt,
      phoneError: state.phone.error,
      reconnectNow: state.reconnectNow,
    })),
  );
  const eventsDown = events === "offline";
  const phoneDown = phone === "reconnecting";
  const offline = eventsDown || phoneDown;
  const now = useNow(1000, offline);

  // The live region stays in the page so screen readers announce the banner when it fills.
  if (!offline) return <div role="status" aria-live="polite" className="visually-hidden" />;

  const retryAt = Math.min(eventsDown && eventsRetryAt !== null ? eventsRetryAt : Infinity, phoneDown && phoneRetryAt !== null ? phoneRetryAt : Infinity);
  const seconds = Number.isFinite(retryAt) ? Math.max(0, Math.ceil((retryAt - now) / 1000)) : null;
  const what = eventsDown && phoneDown ? "the server" : eventsDown ? "live updates" : "your phone line";
  const why = (phoneDown ? phoneError : null) ?? (eventsDown ? eventsError : null);

  return (
    <div role="status" aria-live="polite" className="connection-banner">
      <p>
        <strong>Offline:</strong> the console lost {what}.{" "}
        {seconds === null || seconds === 0 ? "Reconnecting…" : `Reconnecting in ${seconds} s.`}
        {why ? <span className="muted"> ({why})</span> : null}
      </p>
      <button type="button" className="button" onClick={reconnectNow}>
        Reconnect now
      </button>
    </div>
  );
}
