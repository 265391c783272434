// The desktop app's demo password (the file its server keeps, server/demo.ts), handed to its own
// console window only, so the sign-in page can show it: the password is random per install and
// nobody else on the machine can read it, so the agent would otherwise have to find the file.
// No runtime import of electron here: index.ts hands in ipcMain and the window.
import { readFile } from "node:fs/promises";
import { DEMO_PASSWORD_CHANNEL } from "./desktop-bridge.js";
import type { IpcHandlers } from "./notifications.js";

export interface DemoPasswordDeps {
  ipcMain: IpcHandlers;
  /** The file the server was told to keep the password in. */
  file: string;
  /** The console window's web contents now, or null when none is open. */
  consoleContents(): unknown;
}

export class DemoPasswordRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DemoPasswordRefused";
  }
}

export function registerDemoPassword(deps: DemoPasswordDeps): void {
  deps.ipcMain.handle(DEMO_PASSWORD_CHANNEL, async (event) => {
    const contents = deps.consoleContents();
    if (contents === null || event.sender !== contents) throw new DemoPasswordRefused("the demo password is for the console window only");
    let text: string;
    try {
      text = await readFile(deps.file, "utf8");
    } catch (err) {
      // Started with --no-demo, or before the server made it: there is nothing to show.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
    const password = text.trim();
    return password === "" ? null : password;
  });
}
