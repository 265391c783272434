// What the Electron preload exposes on window. It is absent when the console runs in a plain
// browser tab, so the property is optional and every reader must cope with undefined.
// main/desktop-bridge.ts and main/notifications.ts hold the same contract on the app's side.
export {};

declare global {
  interface DesktopNotificationRequest {
    title: string;
    body: string;
    /** A new notification with the same tag replaces the old one. */
    tag: string;
    /** A call offer: stays until acted on and brings a minimised or hidden window forward at once. */
    urgent?: boolean;
  }

  interface DesktopBridge {
    readonly version: string;
    readonly platform: string;
    /** Shown by the app; answers "click" (the window is brought forward) or "close". */
    notify?(notification: DesktopNotificationRequest): Promise<"click" | "close">;
    closeNotification?(tag: string): Promise<void>;
    /** This install's demo password, shown on the sign-in page; null when there is none. */
    demoPassword?(): Promise<string | null>;
  }

  interface Window {
    desktop?: DesktopBridge;
  }
}
