// Finds an Electron binary from files only (ELECTRON_BIN, or the electron package's path.txt
// and dist/); never requires "electron", whose first require tries to download it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export function findElectronBinary(root = process.cwd()) {
  if (process.env.ELECTRON_BIN) return existsSync(process.env.ELECTRON_BIN) ? process.env.ELECTRON_BIN : null;
  const pkg = join(root, "node_modules", "electron");
  const pathFile = join(pkg, "path.txt");
  if (!existsSync(pathFile)) return null;
  const bin = join(pkg, "dist", readFileSync(pathFile, "utf8").trim());
  return existsSync(bin) ? bin : null;
}
