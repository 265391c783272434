// The desktop app hands its demo password to its own console window only (main/demo-password.ts),
// without an Electron binary: a fake ipcMain, a real file.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO_PASSWORD_CHANNEL } from "../../main/desktop-bridge.js";
import { registerDemoPassword } from "../../main/demo-password.js";

type Listener = (event: { sender: unknown }, ...args: unknown[]) => unknown;

let dir: string;
let file: string;
let listener: Listener | undefined;
const consoleContents = { id: "console" };
let contents: unknown;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-demo-bridge-"));
  file = join(dir, "demo-password");
  contents = consoleContents;
  registerDemoPassword({
    ipcMain: { handle: (channel, l) => void (channel === DEMO_PASSWORD_CHANNEL && (listener = l)) },
    file,
    consoleContents: () => contents,
  });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function ask(sender: unknown): Promise<unknown> {
  if (listener === undefined) throw new Error("no handler registered");
  return await listener({ sender });
}

describe("the demo password over IPC", () => {
  it("answers the console window with the file's password", async () => {
    await writeFile(file, "Zq3-per-install-secret\n", { mode: 0o600 });
    expect(await ask(consoleContents)).toBe("Zq3-per-install-secret");
  });

  it("refuses any other sender, and answers nothing when no window is open", async () => {
    await writeFile(file, "Zq3-per-install-secret\n", { mode: 0o600 });
    await expect(ask({ id: "another page" })).rejects.toThrow(/console window only/);
    contents = null;
    await expect(ask(consoleContents)).rejects.toThrow(/console window only/);
  });

  it("answers null when there is no password file (started with --no-demo)", async () => {
    expect(await ask(consoleContents)).toBeNull();
  });
});
