// Packaging smoke test: builds the unpacked Linux app with the real electron-builder.yml against a
// stub Electron, then checks what a user would get: the asar's contents, the assets, the fuses.
import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { extractFile, listPackage } from "@electron/asar";
import { Arch, Platform, build } from "electron-builder";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFuses, writeStubElectronDist, type FuseName, type FuseState } from "../helpers/electron-stub.js";

const root = resolve(import.meta.dirname, "../..");
const BUILT_FILES = ["out/main/index.js", "out/main/server.js", "out/preload/preload.cjs", "out/renderer/index.html"];
/** What electron-builder reads from the project, besides node_modules. */
const PROJECT_FILES = ["package.json", "package-lock.json", "electron-builder.yml", "build", "assets", "out"];

let work = "";
let appDir = "";
let entries = new Set<string>();

beforeAll(async () => {
  const missing = BUILT_FILES.filter((file) => !existsSync(join(root, file)));
  if (missing.length > 0) {
    throw new Error(`the app is not built (missing ${missing.join(", ")}): run \`npm run build\` first`);
  }
  work = await mkdtemp(join(tmpdir(), "switchboard-package-"));
  // Packing a snapshot keeps a rebuild of out/ running meanwhile from pulling files from under us.
  const project = join(work, "project");
  for (const file of PROJECT_FILES.filter((f) => existsSync(join(root, f)))) {
    await cp(join(root, file), join(project, file), { recursive: true });
  }
  await symlink(join(root, "node_modules"), join(project, "node_modules"), "junction");
  const stubDir = join(work, "electron-stub");
  await writeStubElectronDist(stubDir);
  await build({
    projectDir: project,
    targets: Platform.LINUX.createTarget("dir", Arch.x64),
    // electron-builder.yml is found in the project and these are merged over it; fuses stay as configured.
    config: { electronDist: stubDir, directories: { output: join(work, "dist") } },
    publish: "never",
  });
  appDir = join(work, "dist", "linux-unpacked");
  entries = new Set(listPackage(join(appDir, "resources", "app.asar"), { isPack: false }).map(normalise));
}, 180_000);

afterAll(async () => {
  if (work !== "") await rm(work, { recursive: true, force: true });
});

describe("packaged app (linux, unpacked)", () => {
  it("holds the built main, server, preload and renderer in app.asar", () => {
    for (const file of [...BUILT_FILES, "package.json"]) expect(entries, file).toContain(file);
    expect([...entries].filter((e) => e.startsWith("out/tsc"))).toEqual([]);
  });

  it("ships a CommonJS preload, as a sandboxed renderer requires", () => {
    const preload = extractFile(join(appDir, "resources", "app.asar"), "out/preload/preload.cjs").toString("utf8");
    expect(preload).toMatch(/require\(["']electron["']\)/);
    expect(preload).not.toMatch(/^\s*(import|export)\b(?!\s*\()/m);
  });

  it("carries the server's runtime dependencies and none of the renderer's", () => {
    for (const name of ["fastify", "@fastify/static", "@fastify/websocket", "lowdb", "pino"]) {
      expect(entries, name).toContain(`node_modules/${name}/package.json`);
    }
    for (const name of ["react", "react-dom", "react-router-dom", "zustand", "sip.js", "electron", "vite"]) {
      expect(entries, name).not.toContain(`node_modules/${name}/package.json`);
    }
  });

  it("puts the assets beside the asar, where the server is pointed", async () => {
    const shipped = await readdir(join(appDir, "resources", "assets"));
    expect(shipped.sort()).toEqual((await readdir(join(root, "assets"))).sort());
  });

  it("flips the security fuses in the executable", async () => {
    const packageJson: unknown = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
    const name = typeof packageJson === "object" && packageJson !== null && "name" in packageJson ? packageJson.name : "";
    const expected: Partial<Record<FuseName, FuseState>> = {
      runAsNode: "disabled",
      enableCookieEncryption: "enabled",
      enableNodeOptionsEnvironmentVariable: "disabled",
      enableNodeCliInspectArguments: "disabled",
      enableEmbeddedAsarIntegrityValidation: "enabled",
      onlyLoadAppFromAsar: "enabled",
      grantFileProtocolExtraPrivileges: "disabled",
    };
    expect(await readFuses(join(appDir, String(name)))).toMatchObject(expected);
  });
});

function normalise(entry: string): string {
  return entry.replaceAll("\\", "/").replace(/^\//, "");
}
