// Desktop notifications for the console window: the renderer asks over IPC (window.desktop.notify
// in the preload), main checks the request (the page is untrusted: only the console window, only
// short strings) and shows it with Electron's Notification. Clicking one brings the window
// forward; an urgent one (a call offer) does so at once when the window is minimised or hidden.
// No runtime import of electron here: index.ts hands in ipcMain, Notification and the window, so
// the checks and the rules can be tested without an Electron binary, and the preload can share
// the channel names.

export const NOTIFY_CHANNEL = "switchboard:notify";
export const CLOSE_NOTIFICATION_CHANNEL = "switchboard:close-notification";

/** Longer than anything the console sends (it shortens bodies itself); a guard, not a format. */
export const NOTIFICATION_LIMITS = { title: 200, body: 1_000, tag: 200 } as const;
/** Notifications kept at once: a page asking for more closes the oldest. */
export const MAX_LIVE_NOTIFICATIONS = 20;

/** What the renderer asks for. */
export interface DesktopNotification {
  title: string;
  body: string;
  /** Identifies the notification: a new one with the same tag replaces it; closeNotification(tag) takes it away. */
  tag: string;
  /** A call offer: stays until acted on, and brings a minimised or hidden window forward at once. */
  urgent?: boolean;
}

/** How a notification ended, as notify's promise answers: clicked, or closed (by the user, the page or a replacement). */
export type NotificationOutcome = "click" | "close";

/** What `window.desktop` offers for notifications. */
export interface DesktopNotifications {
  notify(notification: DesktopNotification): Promise<NotificationOutcome>;
  closeNotification(tag: string): Promise<void>;
}

export class NotificationRefused extends Error {
  override name = "NotificationRefused";
}

const KEYS = new Set(["title", "body", "tag", "urgent"]);

/** The request as sent over IPC, checked field by field; throws NotificationRefused, saying why. */
export function parseNotification(payload: unknown): DesktopNotification {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new NotificationRefused("a notification must be an object with title, body and tag");
  }
  const fields = payload as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !KEYS.has(key));
  if (unknown.length > 0) throw new NotificationRefused(`a notification has no field ${unknown.map((k) => JSON.stringify(k)).join(", ")}`);
  const title = text(fields.title, "title", 1, NOTIFICATION_LIMITS.title);
  const body = text(fields.body, "body", 0, NOTIFICATION_LIMITS.body);
  const tag = parseTag(fields.tag);
  const urgent = fields.urgent;
  if (urgent !== undefined && typeof urgent !== "boolean") throw new NotificationRefused("urgent must be true or false");
  return urgent === undefined ? { title, body, tag } : { title, body, tag, urgent };
}

export function parseTag(payload: unknown): string {
  return text(payload, "tag", 1, NOTIFICATION_LIMITS.tag);
}

function text(value: unknown, name: string, min: number, max: number): string {
  if (typeof value !== "string") throw new NotificationRefused(`${name} must be a string`);
  if (value.length < min || value.length > max) throw new NotificationRefused(`${name} must be ${min} to ${max} characters long`);
  return value;
}

/** The parts of Electron's Notification used here. */
export interface NotificationHandle {
  on(event: "click" | "close", listener: () => void): unknown;
  show(): void;
  close(): void;
}

/** Electron's NotificationConstructorOptions, the fields set here. */
export interface NotificationOptions {
  title: string;
  body: string;
  /** The ring tone already sounds for a call offer. */
  silent: boolean;
  /** Linux: critical stays on screen until acted on. */
  urgency: "normal" | "critical";
  /** Linux and Windows: never = until acted on. */
  timeoutType: "default" | "never";
}

/** The parts of BrowserWindow used here. */
export interface ConsoleWindowHandle {
  readonly webContents: unknown;
  isDestroyed(): boolean;
  isMinimized(): boolean;
  isVisible(): boolean;
  restore(): void;
  show(): void;
  focus(): void;
}

/** The parts of ipcMain used here (handle: the renderer's invoke gets the answer or the error). */
export interface IpcHandlers {
  handle(channel: string, listener: (event: { sender: unknown }, ...args: unknown[]) => unknown): void;
}

export interface NotificationDeps {
  ipcMain: IpcHandlers;
  /** `new Notification(options)`. */
  create(options: NotificationOptions): NotificationHandle;
  /** `Notification.isSupported()`. */
  supported(): boolean;
  /** The console window now, or null when none is open. */
  window(): ConsoleWindowHandle | null;
}

/** Restores, shows and focuses the window, as the agent would by hand. */
export function bringForward(window: ConsoleWindowHandle): void {
  if (window.isDestroyed()) return;
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
}

interface Live {
  notification: NotificationHandle;
  settle(outcome: NotificationOutcome): void;
}

export function registerNotifications(deps: NotificationDeps): void {
  // Insertion order is age: the first entry is the oldest. Holding each notification here also
  // keeps it from being garbage-collected, which would lose its click.
  const live = new Map<string, Live>();

  const end = (tag: string, outcome: NotificationOutcome): void => {
    const entry = live.get(tag);
    if (entry === undefined) return;
    live.delete(tag);
    entry.notification.close();
    entry.settle(outcome);
  };

  /** Only the console window's own page may ask; anything else (a stale or foreign sender) is refused. */
  const consoleWindowOf = (event: { sender: unknown }): ConsoleWindowHandle => {
    const window = deps.window();
    if (window === null || window.isDestroyed() || event.sender !== window.webContents) {
      throw new NotificationRefused("notifications are for the console window only");
    }
    return window;
  };

  deps.ipcMain.handle(NOTIFY_CHANNEL, (event, payload) => {
    const window = consoleWindowOf(event);
    const request = parseNotification(payload);
    if (!deps.supported()) throw new NotificationRefused("this system shows no desktop notifications");
    end(request.tag, "close");
    for (const oldest of live.keys()) {
      if (live.size < MAX_LIVE_NOTIFICATIONS) break;
      end(oldest, "close");
    }
    const urgent = request.urgent === true;
    const notification = deps.create({
      title: request.title,
      body: request.body,
      silent: urgent,
      urgency: urgent ? "critical" : "normal",
      timeoutType: urgent ? "never" : "default",
    });
    return new Promise<NotificationOutcome>((resolve) => {
      let settled = false;
      const entry: Live = {
        notification,
        settle(outcome) {
          if (settled) return;
          settled = true;
          resolve(outcome);
        },
      };
      const forget = () => {
        if (live.get(request.tag) === entry) live.delete(request.tag);
      };
      notification.on("click", () => {
        const current = deps.window();
        if (current !== null) bringForward(current);
        forget();
        entry.settle("click");
      });
      notification.on("close", () => {
        forget();
        entry.settle("close");
      });
      live.set(request.tag, entry);
      notification.show();
      if (urgent && (window.isMinimized() || !window.isVisible())) bringForward(window);
    });
  });

  deps.ipcMain.handle(CLOSE_NOTIFICATION_CHANNEL, (event, payload) => {
    consoleWindowOf(event);
    end(parseTag(payload), "close");
  });
}
