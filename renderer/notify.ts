// The console's one way to show a desktop notification: through the desktop app
// (window.desktop.notify, an Electron notification shown by the main process, which brings the
// window forward when clicked) when the page runs there, else the Notification API of the tab
// (asking for permission first if nobody has answered yet), whose click focuses the tab.
// No DOM types: the page's globals are read structurally, so node tests can hand in fakes.

export interface ConsoleNotification {
  title: string;
  body: string;
  /** A new notification with the same tag replaces the one showing. */
  tag: string;
  /** A call offer: stays until acted on; the desktop app also brings a minimised window forward. */
  urgent?: boolean;
  /** After the window is brought forward by a click on the notification. */
  onClick?: () => void;
}

export interface ShownNotification {
  close(): void;
}

/** Shows a notification, or does nothing (null) where none can be shown. */
export type Notify = (notification: ConsoleNotification) => ShownNotification | null;

/** A notification of the tab's Notification API. */
interface TabNotification {
  onclick: (() => void) | null;
  close(): void;
}

/** The parts of the page's globals read here. */
export interface NotifyGlobals {
  desktop?: {
    notify?: (request: { title: string; body: string; tag: string; urgent?: boolean }) => Promise<"click" | "close">;
    closeNotification?: (tag: string) => Promise<void>;
  };
  Notification?: {
    readonly permission: string;
    requestPermission(): Promise<string>;
    new (title: string, options: { body: string; tag: string; requireInteraction: boolean }): TabNotification;
  };
  focus?: () => void;
  console?: { warn(...data: unknown[]): void };
}

/** Longer texts are cut here: a notification shows a few lines at most (the app refuses very long ones). */
export const MAX_TITLE = 120;
export const MAX_BODY = 300;

export function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The notifier for these globals: the desktop app's when it offers one, else the tab's, else none. */
export function notifierFor(page: NotifyGlobals): Notify {
  const desktop = page.desktop;
  if (desktop?.notify !== undefined) return desktopNotifier(page, desktop.notify.bind(desktop), desktop.closeNotification?.bind(desktop));
  const Api = page.Notification;
  if (Api !== undefined) return tabNotifier(page, Api);
  return () => null;
}

/** The notifier for this page. */
export function pageNotifier(): Notify {
  return notifierFor(globalThis as NotifyGlobals);
}

function desktopNotifier(
  page: NotifyGlobals,
  notify: NonNullable<NonNullable<NotifyGlobals["desktop"]>["notify"]>,
  closeNotification: ((tag: string) => Promise<void>) | undefined,
): Notify {
  return (n) => {
    let closed = false;
    const request = { title: shorten(n.title, MAX_TITLE), body: shorten(n.body, MAX_BODY), tag: n.tag, ...(n.urgent === true ? { urgent: true } : {}) };
    notify(request).then(
      (outcome) => {
        if (outcome === "click" && !closed) n.onClick?.();
      },
      (error: unknown) => page.console?.warn("The desktop app did not show a notification:", error),
    );
    return {
      close() {
        if (closed) return;
        closed = true;
        closeNotification?.(n.tag).catch(() => undefined);
      },
    };
  };
}

function tabNotifier(page: NotifyGlobals, Api: NonNullable<NotifyGlobals["Notification"]>): Notify {
  return (n) => {
    let closed = false;
    let shown: TabNotification | null = null;
    const show = () => {
      if (closed || Api.permission !== "granted") return;
      const notification = new Api(shorten(n.title, MAX_TITLE), { body: shorten(n.body, MAX_BODY), tag: n.tag, requireInteraction: n.urgent === true });
      notification.onclick = () => {
        // Brings the tab (or its browser window) forward.
        page.focus?.();
        notification.close();
        n.onClick?.();
      };
      shown = notification;
    };
    if (Api.permission === "granted") show();
    else if (Api.permission === "default") Api.requestPermission().then(show, () => undefined);
    else return null;
    return {
      close() {
        closed = true;
        shown?.close();
      },
    };
  };
}
