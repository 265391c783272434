// The contract between main and the preload: what `window.desktop` holds and how its values
// cross into a sandboxed renderer, which can read its own argv but not the app's package.json.
import type { DesktopNotifications } from "./notifications.js";

/** What the preload exposes as `window.desktop`; the renderer must treat it as optional. */
export interface DesktopBridge extends DesktopNotifications {
  version: string;
  platform: string;
}

const VERSION_SWITCH = "--switchboard-version=";

export function versionArgument(version: string): string {
  return `${VERSION_SWITCH}${version}`;
}

export function versionFromArgv(argv: readonly string[]): string {
  const argument = argv.find((a) => a.startsWith(VERSION_SWITCH));
  return argument === undefined ? "" : argument.slice(VERSION_SWITCH.length);
}
