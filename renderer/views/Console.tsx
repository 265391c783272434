// The console frame: a header with the signed-in user and Sign out, the offline banner, the
// navigation to the console's views, calls ringing while another view is open (CallDock), and the
// view itself. CONSOLE_VIEWS is the one list of views: the navigation and the routes (App.tsx) both
// come from it. To add a view, import it and add one line below. It also connects the session
// (events, phone) and owns the keyboard shortcuts, so both work whichever view is open. Docked
// narrow (a softphone at the side of the screen), the navigation folds behind a Menu button.
import { useCallback, useEffect, useRef, useState, type FocusEvent, type KeyboardEvent, type MouseEvent, type ReactNode } from "react";
import { NavLink, Outlet, useLocation, useNavigate } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import { AgentStateBadge } from "../components/AgentState.js";
import { CallFailures } from "../components/CallFailures.js";
import { CallOffer } from "../components/CallOffer.js";
import { ConnectionBanner } from "../components/ConnectionBanner.js";
import { DIAL_INPUT_ID } from "../components/DialPad.js";
import { LineDock } from "../components/LineDock.js";
import { SignOutButton } from "../components/SignOut.js";
import { useShortcuts, type ShortcutAction } from "../components/shortcuts.js";
import { useAppStore, useAppStoreApi } from "../state/context.js";
import { focusedCall, mergePair, swapPair } from "../state/phone.js";
import type { AppState } from "../state/store.js";
import { unreadConversations } from "../state/texting.js";
import { Agent } from "./Agent.js";
import { Directory, useMissedCallsTitle } from "./Directory.js";
import { unseenMissed } from "../state/directory.js";
import { Queues } from "./Queues.js";
import { Admin, isAdminView } from "./admin/Admin.js";
import { AudioSettings } from "./AudioSettings.js";
import { Recordings } from "./Recordings.js";
import { Settings } from "./Settings.js";
import { Supervisor, canSupervise } from "./Supervisor.js";
import { Texting } from "./Texting.js";
import { Training } from "./Training.js";
import { TrainingScorecards } from "./TrainingScorecards.js";
import { isTrainingView } from "../state/training.js";
import { TextingWatcher } from "./texting/TextingWatcher.js";

export interface ConsoleView {
  /** The route under /, without a slash. */
  path: string;
  label: string;
  element: ReactNode;
  /** Who sees it (admins, supervisors); everyone when absent. */
  visible?: (state: AppState) => boolean;
  /** What waits there for the agent, counted beside the label when above 0, and said in words for screen readers. */
  waiting?: { count: (state: AppState) => number; words: (n: number) => string };
}

// In the order an agent's day meets them.
export const CONSOLE_VIEWS: ConsoleView[] = [
  { path: "agent", label: "Agent", element: <Agent /> },
  { path: "queues", label: "Queues", element: <Queues /> },
  { path: "supervisor", label: "Supervisor", element: <Supervisor />, visible: canSupervise },
  { path: "texting", label: "Texting", element: <Texting />, waiting: { count: (state) => unreadConversations(state.texting), words: (n) => (n === 1 ? "unread conversation" : "unread conversations") } },
  { path: "directory", label: "Directory", element: <Directory />, waiting: { count: (state) => unseenMissed(state.directory), words: (n) => (n === 1 ? "missed call" : "missed calls") } },
  { path: "recordings", label: "Recordings", element: <Recordings /> },
  { path: "admin", label: "Admin", element: <Admin />, visible: isAdminView },
  { path: "training", label: "Training", element: <Training />, visible: isTrainingView },
  { path: "scorecards", label: "Scorecards", element: <TrainingScorecards /> },
  { path: "audio", label: "Audio", element: <AudioSettings /> },
  { path: "settings", label: "Settings", element: <Settings /> },
];

const AGENT_PATH = "/agent";
const NAV_ID = "console-nav";

export function Console() {
  const session = useAppStore((state) => state.session);
  useMissedCallsTitle();
  const views = useAppStore(useShallow((state) => CONSOLE_VIEWS.filter((view) => view.visible?.(state) ?? true)));
  const token = useAppStore((state) => state.session?.token ?? null);
  const connect = useAppStore((state) => state.connect);
  const store = useAppStoreApi();
  const navigate = useNavigate();

  // Signed in (or back with a new token): connect, or resume what is connected.
  useEffect(() => {
    if (token !== null) void connect();
  }, [token, connect]);

  const onShortcut = useCallback(
    (action: ShortcutAction): boolean => {
      const state = store.getState();
      const offer = focusedCall(state.phone.calls, "offer");
      const current = focusedCall(state.phone.calls, "current");
      switch (action) {
        case "accept":
          if (offer !== undefined) void state.acceptCall(offer.id);
          return offer !== undefined;
        case "reject":
          if (offer !== undefined) void state.rejectCall(offer.id);
          return offer !== undefined;
        case "hangup":
          if (current !== undefined) void state.hangupCall(current.id);
          return current !== undefined;
        case "mute":
          if (current !== undefined) state.toggleMute(current.id);
          return current !== undefined;
        case "hold":
          if (current !== undefined) void state.toggleHold(current.id);
          return current !== undefined;
        case "swap": {
          const swappable = swapPair(state.phone.calls) !== undefined;
          if (swappable) void state.swapCalls();
          return swappable;
        }
        case "merge": {
          const mergeable = mergePair(state.phone.calls) !== undefined;
          if (mergeable) void state.mergeCalls();
          return mergeable;
        }
        case "ready":
        case "away": {
          // Only for a logged-in recipient; the state shown changes when the server says so.
          const queueState = state.agent.status?.state;
          const loggedIn = queueState !== undefined && queueState !== "Not-Logged-In";
          if (loggedIn) void state.setAgentStatus(action);
          return loggedIn;
        }
        case "keypad":
        case "dial":
          void navigate(AGENT_PATH);
          // After the agent view has rendered: open and focus the keypad, or the number field.
          requestAnimationFrame(() => focusTool(action));
          return true;
      }
    },
    [store, navigate],
  );
  useShortcuts(onShortcut);

  const menu = useNavMenu();

  return (
    <div className="console">
      <a className="skip-link" href="#main" onClick={(event) => {
        event.preventDefault();
        document.getElementById("main")?.focus();
      }}>
        Skip to the view
      </a>
      <header className="console-header">
        <button
          type="button"
          className="button nav-toggle"
          ref={menu.toggleRef}
          aria-expanded={menu.open}
          aria-controls={NAV_ID}
          onClick={menu.toggle}
          onKeyDown={menu.onKeyDown}
          onBlur={menu.onBlur}
        >
          Menu
          {views.map((view) => (view.waiting !== undefined ? <NavCount key={view.path} {...view.waiting} /> : null))}
        </button>
        <p className="brand">Switchboard</p>
        <div className="console-user">
          <AgentStateBadge />
          {session !== null ? (
            <p>
              <span className="visually-hidden">Signed in as </span>
              <strong>{session.username}</strong>
              <span className="muted"> on {session.accountName}</span>
            </p>
          ) : null}
          <SignOutButton />
        </div>
      </header>

      <nav
        className={menu.open ? "console-nav nav-open" : "console-nav"}
        id={NAV_ID}
        aria-label="Console views"
        ref={menu.navRef}
        onKeyDown={menu.onKeyDown}
        onBlur={menu.onBlur}
        onClick={menu.onChoose}
      >
        <ul>
          {views.map((view) => (
            <li key={view.path}>
              <NavLink to={`/${view.path}`} className="nav-item">
                {view.label}
                {view.waiting !== undefined ? <NavCount {...view.waiting} /> : null}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>

      <main className="console-main" id="main" tabIndex={-1}>
        <ConnectionBanner />
        <TextingWatcher />
        <CallDock />
        <CallFailures />
        <Outlet />
      </main>
    </div>
  );
}

/**
 * The folded navigation (shown by CSS only when the window is narrow): the Menu button opens the
 * list and puts focus on the current view's link; Escape closes it and gives focus back to the
 * button; choosing a view, or leaving the list with Tab, closes it.
 */
function useNavMenu() {
  const [open, setOpen] = useState(false);
  const toggleRef = useRef<HTMLButtonElement>(null);
  const navRef = useRef<HTMLElement>(null);
  const location = useLocation();

  useEffect(() => {
    if (!open) return;
    const links = navRef.current?.querySelectorAll<HTMLAnchorElement>("a");
    const current = navRef.current?.querySelector<HTMLAnchorElement>('a[aria-current="page"]');
    (current ?? links?.[0])?.focus();
  }, [open]);

  // A view chosen (or opened by a shortcut or a notification) folds the list away.
  useEffect(() => setOpen(false), [location.pathname]);

  return {
    open,
    toggleRef,
    navRef,
    toggle: () => setOpen((was) => !was),
    onKeyDown: (event: KeyboardEvent) => {
      if (event.key !== "Escape" || !open) return;
      event.preventDefault();
      setOpen(false);
      toggleRef.current?.focus();
    },
    onBlur: (event: FocusEvent) => {
      const to = event.relatedTarget;
      if (to instanceof Node && (navRef.current?.contains(to) === true || toggleRef.current?.contains(to) === true)) return;
      setOpen(false);
    },
    onChoose: (event: MouseEvent) => {
      if (!open || !(event.target instanceof Element) || event.target.closest("a") === null) return;
      setOpen(false);
      // The chosen view takes focus, as the skip link gives it: the link itself is about to hide.
      document.getElementById("main")?.focus();
    },
  };
}

/** Its own component, so a new count re-renders the badge alone, not the frame. */
function NavCount({ count, words }: NonNullable<ConsoleView["waiting"]>) {
  const n = useAppStore(count);
  if (n === 0) return null;
  return (
    <span className="badge nav-count">
      {n}
      <span className="visually-hidden"> {words(n)}</span>
    </span>
  );
}

/**
 * Every line once there are several (on every view), and calls ringing while another view than
 * the agent's is open. Its own component, so that a call's offer, answer and end re-render only
 * this dock and not the whole frame (header, navigation).
 */
function CallDock() {
  const calls = useAppStore((state) => state.phone.calls);
  const location = useLocation();
  const offers = location.pathname === AGENT_PATH ? [] : calls.filter((c) => c.state === "incoming");
  if (offers.length === 0 && calls.length < 2) return null;
  return (
    <div className="call-dock">
      {calls.length > 1 ? <LineDock calls={calls} /> : null}
      {offers.map((call) => (
        <CallOffer key={call.id} call={call} />
      ))}
    </div>
  );
}

function focusTool(action: "keypad" | "dial"): void {
  if (action === "dial") {
    document.getElementById(DIAL_INPUT_ID)?.focus();
    return;
  }
  const keypad = document.querySelector<HTMLDetailsElement>("details.keypad-details");
  if (keypad === null) return;
  keypad.open = true;
  keypad.querySelector<HTMLButtonElement>(".keypad-key")?.focus();
}
