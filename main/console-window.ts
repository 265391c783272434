// Opens the console window on the server's URL and keeps it there: navigation, pop-ups and
// permission asks are all decided by web-policy.ts against the app origin.
import { BrowserWindow, shell, type Session } from "electron";
import { windowOptions, type WindowInputs } from "./window.js";
import { externalLink, isAppOrigin, permissionGranted, withSecurityHeaders } from "./web-policy.js";

export function openConsoleWindow(inputs: WindowInputs, url: string): BrowserWindow {
  const appOrigin = new URL(url).origin;
  const window = new BrowserWindow(windowOptions(inputs));
  const contents = window.webContents;
  lockPermissions(contents.session, appOrigin);
  contents.session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: withSecurityHeaders(details.url, details.responseHeaders ?? {}, appOrigin) });
  });

  const openOutside = (target: string): void => {
    const link = externalLink(target, appOrigin);
    if (link !== null) shell.openExternal(link).catch((err: unknown) => console.error(`[switchboard] cannot open ${link}:`, err));
  };
  // will-frame-navigate also covers iframes, which will-navigate does not.
  contents.on("will-frame-navigate", (event) => {
    if (isAppOrigin(event.url, appOrigin)) return;
    event.preventDefault();
    if (event.isMainFrame) openOutside(event.url);
  });
  contents.setWindowOpenHandler(({ url: target }) => {
    openOutside(target);
    return { action: "deny" };
  });
  contents.on("will-attach-webview", (event) => event.preventDefault());

  window.once("ready-to-show", () => window.show());
  loadConsole(window, url);
  return window;
}

/**
 * A failed load is not fatal: Chromium shows its error page, and the supervisor loads the console
 * again once the server is back; unhandled, the rejection would reach the main process as an error.
 */
export function loadConsole(window: BrowserWindow, url: string): void {
  window.loadURL(url).catch((err: unknown) => console.error(`[switchboard] cannot load ${url}:`, err));
}

function lockPermissions(session: Session, appOrigin: string): void {
  session.setPermissionRequestHandler((_contents, permission, callback, details) => {
    const origin = "securityOrigin" in details && details.securityOrigin ? details.securityOrigin : details.requestingUrl;
    const mediaTypes = "mediaTypes" in details ? (details.mediaTypes ?? []) : [];
    callback(permissionGranted({ permission, origin, mediaTypes }, appOrigin));
  });
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin, details) => {
    const origin = details.securityOrigin ?? requestingOrigin;
    const mediaTypes = details.mediaType === undefined ? [] : [details.mediaType];
    return permissionGranted({ permission, origin, mediaTypes }, appOrigin);
  });
}
