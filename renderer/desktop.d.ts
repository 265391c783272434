// What the Electron preload exposes on window. It is absent when the console runs in a plain
// browser tab, so the property is optional and every reader must cope with undefined.
export {};

declare global {
  interface DesktopBridge {
    readonly version: string;
    readonly platform: string;
  }

  interface Window {
    desktop?: DesktopBridge;
  }
}
