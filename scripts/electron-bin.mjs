// Finds an Electron binary from files only (ELECTRON_BIN, or the electron package's path.txt
// and dist/); never requires "electron", whose first require tries to download it.
// Used by `npm start` and by the Electron-only tests.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export function findElectronBinary(root = process.cwd(), env = process.env) {
  const fromEnv = env.ELECTRON_BIN;
  if (fromEnv !== undefined && fromEnv !== "") {
    return { path: existsSync(fromEnv) ? fromEnv : null, searched: [`ELECTRON_BIN=${fromEnv}`] };
  }
  const packageDir = join(root, "node_modules", "electron");
  const pathFile = join(packageDir, "path.txt");
  if (!existsSync(pathFile)) return { path: null, searched: ["ELECTRON_BIN (unset)", pathFile] };
  const binary = join(packageDir, "dist", readFileSync(pathFile, "utf8").trim());
  return { path: existsSync(binary) ? binary : null, searched: ["ELECTRON_BIN (unset)", binary] };
}
