// The contract between main and the preload: what `window.desktop` holds and how its values
// cross into a sandboxed renderer, which can read its own argv but not the app's package.json.
import type { DesktopNotifications } from "./notifications.js";

/** What the preload exposes as `window.desktop`; the renderer must treat it as optional. */
export interface DesktopBridge extends DesktopNotifications {
  version: string;
  platform: string;
  /** This install's demo password (main/demo-password.ts), or null when there is none. */
  demoPassword(): Promise<string | null>;
}

/** Here rather than in demo-password.ts: the sandboxed preload imports it and cannot load node:fs. */
export const DEMO_PASSWORD_CHANNEL = "switchboard:demo-password";

const VERSION_SWITCH = "--switchboard-version=";

export function versionArgument(version: string): string {
  return `${VERSION_SWITCH}${version}`;
}

export function versionFromArgv(argv: readonly string[]): string {
  const argument = argv.find((a) => a.startsWith(VERSION_SWITCH));
  return argument === undefined ? "" : argument.slice(VERSION_SWITCH.length);
}
