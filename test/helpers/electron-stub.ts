// A stand-in Electron distribution for packaging tests (the real one cannot be downloaded here)
// and a reader for the fuse wire electron-builder flips in it, so the real fuse config is checked.
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The marker @electron/fuses looks for; the wire follows it: version, length, one byte per fuse. */
const FUSE_SENTINEL = "dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX";
const FUSE_WIRE_VERSION = 1;

/** Fuse wire V1 in order, with the states an unflipped Electron 41 binary ships with. */
export const FUSES_V1 = [
  ["runAsNode", "1"],
  ["enableCookieEncryption", "0"],
  ["enableNodeOptionsEnvironmentVariable", "1"],
  ["enableNodeCliInspectArguments", "1"],
  ["enableEmbeddedAsarIntegrityValidation", "0"],
  ["onlyLoadAppFromAsar", "0"],
  ["loadBrowserProcessSpecificV8Snapshot", "0"],
  ["grantFileProtocolExtraPrivileges", "1"],
] as const;

export type FuseName = (typeof FUSES_V1)[number][0];
export type FuseState = "enabled" | "disabled" | "removed" | "unknown";

/** Writes `<dir>/electron`: a script that refuses to run, carrying an unflipped fuse wire. */
export async function writeStubElectronDist(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const wire = FUSES_V1.map(([, state]) => state).join("");
  const script = [
    "#!/bin/sh",
    'echo "stub Electron for packaging tests; it cannot run the app" >&2',
    "exit 1",
    `# ${FUSE_SENTINEL}${String.fromCharCode(FUSE_WIRE_VERSION, FUSES_V1.length)}${wire}`,
    "",
  ].join("\n");
  const binary = join(dir, "electron");
  await writeFile(binary, script, "latin1");
  await chmod(binary, 0o755);
  return binary;
}

export async function readFuses(binary: string): Promise<Record<FuseName, FuseState>> {
  const bytes = await readFile(binary);
  const at = bytes.indexOf(FUSE_SENTINEL, 0, "latin1");
  if (at === -1) throw new Error(`${binary} has no fuse wire`);
  const wireAt = at + FUSE_SENTINEL.length;
  if (bytes[wireAt] !== FUSE_WIRE_VERSION) throw new Error(`${binary}: unknown fuse wire version ${bytes[wireAt]}`);
  const entries = FUSES_V1.map(([name], i): [FuseName, FuseState] => [name, stateOf(bytes[wireAt + 2 + i])]);
  return Object.fromEntries(entries) as Record<FuseName, FuseState>;
}

function stateOf(byte: number | undefined): FuseState {
  switch (byte) {
    case 0x30:
      return "disabled";
    case 0x31:
      return "enabled";
    case 0x72:
      return "removed";
    default:
      return "unknown";
  }
}
