// The console's keyboard shortcuts: one table, read by the key handler (useShortcuts), the
// buttons' aria-keyshortcuts and the list shown to the agent. Alt + a letter, matched by physical
// key so they work on every keyboard layout and inside text fields.
import { useEffect } from "react";

export type ShortcutAction = "accept" | "reject" | "hangup" | "mute" | "hold" | "swap" | "merge" | "keypad" | "dial" | "ready" | "away";

export interface Shortcut {
  action: ShortcutAction;
  /** KeyboardEvent.code of the letter pressed with Alt. */
  code: string;
  /** As aria-keyshortcuts spells it. */
  keys: string;
  label: string;
}

export const SHORTCUTS: readonly Shortcut[] = [
  { action: "accept", code: "KeyA", keys: "Alt+A", label: "Accept the ringing call" },
  { action: "reject", code: "KeyR", keys: "Alt+R", label: "Reject the ringing call" },
  { action: "hangup", code: "KeyE", keys: "Alt+E", label: "End (hang up) the current call" },
  { action: "mute", code: "KeyM", keys: "Alt+M", label: "Mute or unmute" },
  { action: "hold", code: "KeyH", keys: "Alt+H", label: "Hold or resume" },
  { action: "swap", code: "KeyS", keys: "Alt+S", label: "Swap lines: hold the current call, resume the held one" },
  { action: "merge", code: "KeyJ", keys: "Alt+J", label: "Join (merge) two calls into a three-way conference" },
  { action: "keypad", code: "KeyK", keys: "Alt+K", label: "Open the keypad of the current call" },
  { action: "dial", code: "KeyD", keys: "Alt+D", label: "Go to the number to dial" },
  { action: "ready", code: "KeyY", keys: "Alt+Y", label: "Queue state: Ready" },
  { action: "away", code: "KeyW", keys: "Alt+W", label: "Queue state: Away" },
];

export function keysOf(action: ShortcutAction): string {
  return SHORTCUTS.find((s) => s.action === action)?.keys ?? "";
}

/** Calls `handle` for each shortcut pressed anywhere in the page; it answers whether it acted. */
export function useShortcuts(handle: (action: ShortcutAction) => boolean): void {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || event.repeat) return;
      const shortcut = SHORTCUTS.find((s) => s.code === event.code);
      if (shortcut !== undefined && handle(shortcut.action)) event.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [handle]);
}
